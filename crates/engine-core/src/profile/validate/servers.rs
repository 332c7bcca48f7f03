//! External steps and the servers they start: ready checks, removal, placeholders inside quotes.

use super::*;

/// Most servers one test may start: each has a log engine copies (up to
/// 8 MiB of it held in memory) and a stop engine waits for.
pub(crate) const MAX_SERVERS: usize = 16;

/// Path of `rest` inside the `server:` of step `i` of the `list` steps.
pub(super) fn server_path(list: &str, i: usize, rest: &[&str]) -> Path {
    let mut p = path!["executor", "external", list, i, "server"];
    p.extend(rest.iter().map(|r| (*r).into()));
    p
}

/// A `server:` step (`list` step `i`): no keys of its own beside `server`,
/// not after the trial, a unique name, a program, a ready condition, a stop
/// signal and timeout engine knows, and only the test's files to remove.
pub(super) fn check_server(
    c: &mut Checker,
    list: &str,
    i: usize,
    s: &Step,
    known: &BTreeSet<String>,
    names: &mut HashSet<String>,
) {
    let Some(d) = &s.server else { return };
    check_server_step(c, list, i, s);
    let at = |rest: &[&str]| server_path(list, i, rest);
    if !is_valid_id(&d.name) {
        c.at_value(
            at(&["name"]),
            format!("server name `{}` is not valid", d.name),
            Some("use lower-case letters, digits, `-` and `_` (`postgres`)".into()),
        );
    } else if !names.insert(d.name.clone()) {
        c.at_value(
            at(&["name"]),
            format!("two servers are named `{}`", d.name),
            Some("each server needs its own name (it names its log)".into()),
        );
    } else if names.len() == MAX_SERVERS + 1 {
        c.at_key(
            server_path(list, i, &[]),
            format!("more than {MAX_SERVERS} servers in one test"),
            Some("a test starts the few servers it measures (engine keeps each one's log and its stop in hand)".into()),
        );
    }
    if d.program.trim().is_empty() {
        c.at_value(at(&["program"]), "server program is empty", Some("name the program, like `postgres`".into()));
    }
    c.text(at(&["program"]), &d.program, known);
    for (j, a) in d.args.iter().enumerate() {
        let mut p = at(&["args"]);
        p.push(j.into());
        c.arg(p, a, known);
    }
    for (k, v) in &d.env {
        c.text(at(&["env", k.as_str()]), v, known);
    }
    check_ready(c, list, i, &d.ready, known);
    if let Some(sig) = &d.stop_signal
        && crate::sys::proc::signal_by_name(sig).is_none()
    {
        c.at_value(
            at(&["stop_signal"]),
            format!("unknown signal `{sig}`"),
            Some("use TERM, INT, QUIT, HUP, WINCH, USR1 or USR2".into()),
        );
    }
    check_server_remove(c, list, i, &d.remove, known);
}

/// The step around a server says nothing of its own, and is not in a
/// list that runs after the trial.
pub(super) fn check_server_step(c: &mut Checker, list: &str, i: usize, s: &Step) {
    for (key, set) in [("program", s.program.is_some()), ("shell", s.shell.is_some()), ("args", !s.args.is_empty())] {
        if set {
            c.at_key(
                path!["executor", "external", list, i, key],
                format!("a `server` step has no `{key}`: the server's own `program` and `args` say what runs"),
                Some("move it into `server:`".into()),
            );
        }
    }
    if list == "post_trial" || list == "post_test" {
        c.at_key(
            path!["executor", "external", list, i, "server"],
            format!("a server cannot start in `{list}`: nothing would run while it does"),
            Some("start it in `pre_test` (it runs for the whole test) or `pre_trial` (for one trial)".into()),
        );
    }
}

/// A server's `ready:` names a condition, each one valid.
pub(super) fn check_ready(c: &mut Checker, list: &str, i: usize, r: &ReadyDef, known: &BTreeSet<String>) {
    let at = |rest: &[&str]| server_path(list, i, rest);
    if r.socket.is_none() && r.tcp.is_none() && r.command.is_empty() {
        c.at_value(
            at(&["ready"]),
            "`ready` names no condition",
            Some(
                "say when the server is ready: `socket: PATH`, `tcp: \"{{free_port}}\"` or `command: [prog, args…]`"
                    .into(),
            ),
        );
    }
    if let Some(sock) = &r.socket {
        c.text(at(&["ready", "socket"]), sock, known);
    }
    if let Some(t) = &r.tcp {
        c.text(at(&["ready", "tcp"]), t, known);
        if template::names(t).is_ok_and(|n| n.is_empty())
            && t.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()).is_none()
        {
            c.at_value(
                at(&["ready", "tcp"]),
                format!("`{t}` is not a TCP port"),
                Some("write a port (`8080`) or `\"{{free_port}}\"`".into()),
            );
        }
    }
    for (j, a) in r.command.iter().enumerate() {
        let mut p = at(&["ready", "command"]);
        p.push(j.into());
        c.arg(p, a, known);
    }
}

/// A server's `remove:` paths lie inside the test's directory.
pub(super) fn check_server_remove(c: &mut Checker, list: &str, i: usize, remove: &[String], known: &BTreeSet<String>) {
    for (j, r) in remove.iter().enumerate() {
        let mut p = server_path(list, i, &["remove"]);
        p.push(j.into());
        c.text(p.clone(), r, known);
        let inside = ["{{test_dir}}/", "{{scratch_dir}}/"].iter().any(|pre| r.starts_with(pre) && r.len() > pre.len());
        if !inside || r.split('/').any(|part| part == "..") {
            c.at_value(
                p,
                format!("`remove` path `{r}` is not inside the test's directory"),
                Some("engine (and `engine recover`, as root) deletes these: start them with `{{test_dir}}/` or `{{scratch_dir}}/`".into()),
            );
        }
    }
}

pub(super) fn check_steps(
    c: &mut Checker,
    list: &str,
    steps: &[Step],
    known: &BTreeSet<String>,
    servers: &mut HashSet<String>,
) {
    for (i, s) in steps.iter().enumerate() {
        if s.server.is_some() {
            check_server(c, list, i, s, known, servers);
            continue;
        }
        match (&s.program, &s.shell) {
            (Some(_), Some(_)) => c.at_key(
                path!["executor", "external", list, i, "shell"],
                "step sets both `program` and `shell`",
                Some("use one of them".into()),
            ),
            (None, None) => c.at_value(
                path!["executor", "external", list, i],
                "step has neither `program`, `shell` nor `server`",
                Some("write `- shell: \"…\"`, `- program: …` or `- server: {…}`".into()),
            ),
            (None, Some(sh)) => {
                c.text(path!["executor", "external", list, i, "shell"], sh, known);
                for name in quoted_placeholders(sh) {
                    c.at_value(
                        path!["executor", "external", list, i, "shell"],
                        format!("`{{{{{name}}}}}` is inside quotes in a shell step: engine quotes placeholder values for the shell, and the extra quotes undo that"),
                        Some(format!("write {{{{{name}}}}} without quotes around it")),
                    );
                }
                if !s.args.is_empty() {
                    c.at_key(
                        path!["executor", "external", list, i, "args"],
                        "`args` only applies to a `program` step",
                        Some("put the arguments in the shell line, or use `program:`".into()),
                    );
                }
            }
            (Some(pr), None) => {
                c.text(path!["executor", "external", list, i, "program"], pr, known);
                for (j, a) in s.args.iter().enumerate() {
                    c.arg(path!["executor", "external", list, i, "args", j], a, known);
                }
            }
        }
    }
}

/// Placeholders written inside the author's own single or double quotes in
/// a shell line (`rm -rf '{{target_dir}}'`): the value, quoted by engine,
/// would end up unquoted between the two pairs of quotes.
pub fn quoted_placeholders(sh: &str) -> Vec<String> {
    let b = sh.as_bytes();
    let (mut i, mut single, mut double) = (0, false, false);
    let mut out = Vec::new();
    while i < b.len() {
        match b[i] {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'{' if b.get(i + 1) == Some(&b'{') && (single || double) => {
                if let Some(end) = sh[i + 2..].find("}}") {
                    out.push(sh[i + 2..i + 2 + end].trim().trim_start_matches('@').to_string());
                    i += end + 3;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod quoting_tests {
    use super::quoted_placeholders;

    #[test]
    fn placeholders_inside_quotes_are_found() {
        assert_eq!(quoted_placeholders("rm -rf '{{target_dir}}'/x"), ["target_dir"]);
        assert_eq!(quoted_placeholders("echo \"n={{files}}\" {{ok}}"), ["files"]);
        assert!(quoted_placeholders("rm -rf {{target_dir}}/x && echo 'done'").is_empty());
        assert!(quoted_placeholders("echo \\'{{x}}").is_empty(), "an escaped quote opens nothing");
        assert!(quoted_placeholders("awk -v n={{inserts}} 'BEGIN { print n }'").is_empty());
    }
}
