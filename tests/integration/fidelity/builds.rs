//! The build group's fixtures (compilebench 1.0.3, build-linux-kernel
//! 1.17.1, git 1.1.0): what engine would run under PTS's label against what
//! PTS's test-definition.xml, install.sh, pre.sh, interim.sh and post.sh
//! run, read from the fixture files. Where engine's work differs, the
//! profile must carry a title of its own, and the test says so instead.
//!
//! Both sides become lists of simple commands, words without quotes, per
//! phase: PTS's pre.sh is engine's `pre_test`, its wrapper (the script
//! install.sh writes) the `trial`, interim.sh `post_trial` (PTS runs it
//! between trials, engine after each: untimed either way) and post.sh
//! `post_test`. What is not work is dropped on both sides: comments,
//! `set -e`, a bare `echo` (a message for PTS's log), PTS's bookkeeping in
//! `~` (`echo $? > ~/test-exit-status`) and `2>&1` (engine logs both
//! streams). Paths are the one other difference: PTS runs every script in
//! its install directory, which holds the download and the tree; engine
//! keeps the download in its install directory and the tree in the test's
//! directory, so both prefixes are removed.

use super::{engine_commands, pts_file};
use crate::common::{Env, repo};
use std::collections::BTreeMap;

/// Phase name → commands.
type Phases = BTreeMap<String, Vec<String>>;

/// Shell words of `s`, quotes removed (`'…'`, `"…"` with `\"`, `\\`, `\$`
/// escapes, a backslash outside quotes escaping the next character).
fn words(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut any) = (Vec::new(), String::new(), false);
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\'' => {
                any = true;
                cur.extend(it.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                any = true;
                while let Some(c) = it.next() {
                    match c {
                        '"' => break,
                        '\\' if matches!(it.peek(), Some('"' | '\\' | '$')) => cur.push(it.next().unwrap()),
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                any = true;
                cur.extend(it.next());
            }
            c if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `$N`, `"$@"` and `$NAME` of `vars` replaced in `text` (longest names
/// first, so `$10` is not `$1` followed by 0).
fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let mut t = text.to_string();
    for n in names {
        t = t.replace(&format!("${{{n}}}"), &vars[n]).replace(&format!("${n}"), &vars[n]);
    }
    t
}

/// One command as compared: its words, `2>&1` dropped, the install and
/// test directories removed from paths, joined by single spaces.
fn normalize(cmd: &str) -> String {
    let strip = |w: &str| -> String {
        let w = w.replace("$TEST_DIR/", "");
        match w.find("/installed/") {
            // `<home>/installed/<id>@<version>/file` → `file`
            Some(i) => w[i + "/installed/".len()..].split_once('/').map(|(_, f)| f.to_string()).unwrap_or(w),
            None => w,
        }
    };
    words(cmd).iter().filter(|w| *w != "2>&1").map(|w| strip(w)).collect::<Vec<_>>().join(" ")
}

/// Whether `cmd` (normalized) is not work: a message or PTS's bookkeeping.
fn is_noise(cmd: &str) -> bool {
    let w = words(cmd);
    let bare_echo = w.first().is_some_and(|c| c == "echo") && !w.iter().any(|x| x.starts_with('>'));
    let bookkeeping = w.iter().any(|x| x.starts_with("~/"));
    cmd.is_empty() || cmd.starts_with('#') || cmd == "set -e" || bare_echo || bookkeeping
}

/// Simple commands of a script: lines split at `&&` and `;`, `exec`
/// dropped, then normalized; noise left out.
fn commands_of(script: &str) -> Vec<String> {
    script
        .lines()
        .flat_map(|l| l.split("&&").flat_map(|p| p.split(';')).map(str::trim).collect::<Vec<_>>())
        .map(|c| c.strip_prefix("exec ").unwrap_or(c))
        .map(normalize)
        .filter(|c| !is_noise(c))
        .collect()
}

/// A PTS shell script run with `args` and `env`: the subset PTS's scripts
/// use — `if [ -z "$@" ]` / `then` / `else` / `fi` and `export X="v"` —
/// interpreted; anything else of that kind fails the test, so a change in
/// PTS's scripts is seen, not misread.
fn pts_script(text: &str, args: &[&str], env: &[(&str, String)]) -> Vec<String> {
    let mut vars: BTreeMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    vars.insert("@".into(), args.join(" "));
    for (i, a) in args.iter().enumerate() {
        vars.insert((i + 1).to_string(), a.to_string());
    }
    let (mut out, mut taking) = (String::new(), vec![true]);
    for line in text.lines().map(str::trim).filter(|l| !l.starts_with("#!")) {
        match line.split_whitespace().next().unwrap_or("") {
            "if" => {
                let cond = line.strip_prefix("if [ -z \"$@\" ]").expect("PTS's only test: `if [ -z \"$@\" ]`");
                assert!(cond.trim().is_empty(), "{line}");
                taking.push(args.is_empty());
            }
            "then" => {}
            "else" => *taking.last_mut().unwrap() ^= true,
            "fi" => _ = taking.pop(),
            _ if !taking.iter().all(|&t| t) => {}
            "export" => {
                let (k, v) = line["export ".len()..].split_once('=').expect("export NAME=value");
                let v = words(&substitute(v, &vars)).join(" ");
                vars.insert(k.to_string(), v);
            }
            _ => out.push_str(&format!("{}\n", substitute(line, &vars))),
        }
    }
    commands_of(&out)
}

/// The wrapper install.sh writes (`echo "…" > NAME`), unescaped as the
/// shell writes it.
fn pts_wrapper(install_sh: &str) -> String {
    let start = install_sh.find("echo \"#!/bin/sh").expect("install.sh writes its wrapper with echo") + 6;
    let body = &install_sh[start..];
    let end = body.find("\" > ").expect("the wrapper's closing quote");
    body[..end].replace("\\$", "$").replace("\\\"", "\"").replace("\\\\", "\\")
}

/// `sh -c SCRIPT NAME ARGS…` → the script's commands with its positional
/// parameters filled in; any other command line → itself.
fn engine_line(line: &str) -> Vec<String> {
    let w = words(line);
    if w.len() >= 3 && w[0] == "sh" && w[1] == "-c" {
        let script = w[2].replace("\\n", "\n").replace("\\t", "\t");
        let vars: BTreeMap<String, String> =
            w.iter().skip(4).enumerate().map(|(i, a)| ((i + 1).to_string(), a.clone())).collect();
        commands_of(&substitute(&script, &vars))
    } else {
        commands_of(line)
    }
}

/// A test's `--dry-run` lines as phases (`pre_test`, `trial`, …).
fn engine_phases(lines: &[String]) -> Phases {
    let mut out = Phases::new();
    for l in lines {
        let (phase, cmd) = l.split_once(": ").unwrap_or_else(|| panic!("a phase: {l}"));
        out.entry(phase.to_string()).or_default().extend(engine_line(cmd));
    }
    out
}

/// Fails with both sides shown, phase by phase, unless they are the same.
fn assert_same(what: &str, engine: &Phases, pts: &Phases) {
    let show = |p: &Phases| -> String {
        p.iter()
            .map(|(k, v)| format!("  {k}:\n{}", v.iter().map(|c| format!("    {c}\n")).collect::<String>()))
            .collect()
    };
    assert!(engine == pts, "{what}: engine runs\n{}PTS runs\n{}", show(engine), show(pts));
}

/// The number of CPUs engine's `{{num_cpus}}` and PTS's `$NUM_CPU_CORES` give.
fn cpus() -> String {
    std::thread::available_parallelism().unwrap().get().to_string()
}

/// A shipped profile, as JSON.
fn profile(id: &str) -> serde_json::Value {
    let p = repo().join("test-profiles").join(id).join("profile.yaml");
    serde_saphyr::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

/// Every shipped profile's id and title.
fn shipped_titles() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(repo().join("test-profiles")).unwrap().flatten() {
        if e.path().join("profile.yaml").exists() {
            let v = profile(&e.file_name().to_string_lossy());
            out.push((v["id"].as_str().unwrap().to_string(), v["title"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// A tag's text in a PTS XML file (`Title`, `AppVersion`, `ResultScale`).
fn xml_text(xml: &str, tag: &str) -> Option<String> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.descendants().find(|n| n.has_tag_name(tag)).and_then(|n| n.text()).map(|t| t.trim().to_string())
}

/// The entries of PTS's option menu: (Name, Value).
fn pts_menu(test_definition: &str) -> Vec<(String, String)> {
    let doc = roxmltree::Document::parse(test_definition).unwrap();
    let text = |n: roxmltree::Node, tag: &str| {
        n.children().find(|c| c.has_tag_name(tag)).and_then(|c| c.text()).unwrap_or("").trim().to_string()
    };
    doc.descendants().filter(|n| n.has_tag_name("Entry")).map(|e| (text(e, "Name"), text(e, "Value"))).collect()
}

/// Titles compare as words, ignoring case, as the PTS import does.
fn same_title(a: &str, b: &str) -> bool {
    a.split_whitespace().map(str::to_lowercase).eq(b.split_whitespace().map(str::to_lowercase))
}

/// What PTS runs for profile `p` with `args`, as phases (empty ones left out).
fn pts_phases(p: &str, args: &[&str]) -> Phases {
    let env = [("NUM_CPU_CORES", cpus())];
    let mut out = Phases::new();
    for (file, phase) in [("pre.sh", "pre_test"), ("interim.sh", "post_trial"), ("post.sh", "post_test")] {
        if super::pts_profile(p).join(file).exists() {
            out.insert(phase.into(), pts_script(&pts_file(p, file), args, &env));
        }
    }
    out.insert("trial".into(), pts_script(&pts_wrapper(&pts_file(p, "install.sh")), args, &env));
    out.retain(|_, v| !v.is_empty());
    out
}

/// PTS's number is the wrapper's run time (results-definition's only
/// sensor is `sys.time`): engine's one result must be the trial's wall
/// time, in PTS's unit and proportion, under PTS's subtitle.
fn assert_wall_time_result(pts: &str, id: &str) {
    let results = pts_file(pts, "results-definition.xml");
    assert_eq!(xml_text(&results, "Sensor").as_deref(), Some("sys.time"), "{pts} no longer times its wrapper");
    assert!(!results.contains("<ResultsParser>"), "{pts} parses output now");
    let def = pts_file(pts, "test-definition.xml");
    let ours = profile(id);
    let r = &ours["results"].as_array().unwrap()[..];
    assert_eq!(r.len(), 1, "{id}: {r:?}");
    assert_eq!(r[0]["unit"].as_str(), xml_text(&def, "ResultScale").as_deref(), "{id}");
    assert_eq!(r[0]["proportion"].as_str(), xml_text(&def, "Proportion").as_deref(), "{id}");
    assert_eq!(r[0]["description"].as_str(), xml_text(&def, "SubTitle").as_deref(), "{id}");
    let parsers = ours["parsers"].as_array().unwrap();
    assert_eq!(parsers.len(), 1, "{id}: {parsers:?}");
    assert_eq!(parsers[0]["result"], r[0]["id"], "{id}");
    assert_eq!(parsers[0]["wall_time"], true, "{id}: {parsers:?}");
}

/// Engine's kernel.org entries are PTS's build-linux-kernel 1.17.1: the
/// same tarball, the same build names, and for each the commands of
/// pre.sh, the wrapper, interim.sh and post.sh.
#[test]
fn build_linux_kernel_runs_what_pts_runs_for_each_of_its_builds() {
    const PTS: &str = "build-linux-kernel-1.17.1";
    let def = pts_file(PTS, "test-definition.xml");
    let ours = profile("build-linux-kernel");
    assert!(same_title(ours["title"].as_str().unwrap(), &xml_text(&def, "Title").unwrap()), "{ours}");
    // The default Source is PTS's: kernel.org's tarball of PTS's version, by hash.
    let app = xml_text(&def, "AppVersion").unwrap();
    let source = &ours["options"].as_array().unwrap().iter().find(|o| o["id"] == "source").unwrap()["default"][0];
    assert_eq!(source.as_str(), Some(format!("Linux {app} (kernel.org)").as_str()));
    let pts_sha = xml_text(&pts_file(PTS, "downloads.xml"), "SHA256").unwrap();
    assert_eq!(ours["install"]["downloads"][0]["sha256"].as_str(), Some(pts_sha.as_str()));
    let env = Env::new();
    let menu = pts_menu(&def);
    assert!(!menu.is_empty());
    for (name, value) in menu {
        let tests = engine_commands(&env, "build-linux-kernel", &[&format!("build={name}")]);
        assert_eq!(tests.len(), 1, "{tests:?}");
        assert_eq!(tests[0].0, format!("build-linux-kernel: Build: {name} - Source: Linux {app} (kernel.org)"));
        let what = format!("build-linux-kernel, Build: {name}");
        assert_same(&what, &engine_phases(&tests[0].1), &pts_phases(PTS, &[&value]));
    }
    assert_wall_time_result(PTS, "build-linux-kernel");
}

/// PTS's Git clones GTK, which cannot be downloaded here: engine runs PTS's
/// command sequence word for word on a repository it generates, under a
/// title of its own, so no PTS Git result is compared with it.
#[test]
fn git_runs_pts_commands_on_its_own_repository_under_its_own_title() {
    const PTS: &str = "git-1.1.0";
    let title = xml_text(&pts_file(PTS, "test-definition.xml"), "Title").unwrap();
    assert!(pts_file(PTS, "install.sh").contains("git clone https://github.com/michaellarabel/gtk"));
    for (id, t) in shipped_titles() {
        assert!(!same_title(&t, &title), "`{id}` is titled `{t}`, PTS's Git: its repository is not PTS's GTK");
    }
    let env = Env::new();
    let tests = engine_commands(&env, "git", &[]);
    assert_eq!(tests.len(), 1, "{tests:?}");
    let ours = engine_phases(&tests[0].1);
    let pts = pts_script(&pts_wrapper(&pts_file(PTS, "install.sh")), &[], &[("NUM_CPU_CORES", cpus())]);
    assert_same(
        "git's trial",
        &ours.into_iter().filter(|(k, _)| k == "trial").collect(),
        &[("trial".into(), pts)].into(),
    );
    // The repository has what the commands name.
    let pre = &tests[0].1.iter().find(|l| l.starts_with("pre_test: ")).unwrap();
    for needed in ["gtk/gtkaccelmap.c", "refs/remotes/origin/master", "refs/tags/2.24.0", "refs/tags/3.22.11"] {
        assert!(pre.contains(needed), "the generated repository lacks {needed}");
    }
    assert_wall_time_result(PTS, "git");
}

/// compilebench cannot run here (no Python 2, its download unreachable):
/// no engine profile carries PTS's compilebench label, and the built-in that
/// stood in for it has a title of its own.
#[test]
fn no_engine_profile_carries_compilebench_s_label() {
    const PTS: &str = "compilebench-1.0.3";
    let title = xml_text(&pts_file(PTS, "test-definition.xml"), "Title").unwrap();
    let pts_id = PTS.rsplit_once('-').unwrap().0;
    for (id, t) in shipped_titles() {
        assert_ne!(id, pts_id);
        assert!(!same_title(&t, &title), "`{id}` is titled `{t}`, PTS's compilebench: it does not run compilebench");
    }
    assert_eq!(profile("compile")["title"], "Compile Trees (engine)");
}

/// The profiles of this group, whose rows the book's PTS compatibility
/// table holds between its `builds` markers.
const GROUP: [&str; 16] = [
    "compile",
    "build-linux-kernel",
    "build-gcc",
    "git",
    "unpack-linux",
    "compress-gzip",
    "compress-pbzip2",
    "compress-xz",
    "compress-7zip",
    "compress-zstd",
    "john-the-ripper",
    "openssl",
    "gnupg",
    "startup-time",
    "apache",
    "nginx",
];

/// the book's rows name each profile by its current title: a rename (or a
/// profile that stops doing PTS's work) shows up there.
#[test]
fn readme_rows_name_each_profile_of_the_group_by_its_title() {
    let readme = std::fs::read_to_string(repo().join("book/src/pts.md")).unwrap();
    let start = readme.find("<!-- pts-rows: builds").expect("the builds marker");
    let end = readme.find("<!-- /pts-rows: builds -->").expect("its end marker");
    let rows = &readme[start..end];
    for id in GROUP {
        let title = profile(id)["title"].as_str().unwrap().to_string();
        assert!(rows.contains(&format!("`{id}`")) && rows.contains(&title), "no README row names `{id}` ({title})");
    }
}

#[test]
fn the_shell_reader_splits_quotes_as_sh_does() {
    assert_eq!(
        words(r#"git config user.name "Phoronix Test Suite""#),
        ["git", "config", "user.name", "Phoronix Test Suite"]
    );
    assert_eq!(words(r"sh -c 'a '\''b'\'' c' x"), ["sh", "-c", "a 'b' c", "x"]);
    assert_eq!(words(r#"echo "a \"q\" \$x" '' end"#), ["echo", r#"a "q" $x"#, "", "end"]);
    let vars = [("1".to_string(), "defconfig".to_string())].into();
    assert_eq!(commands_of(&substitute("set -e\ncd x && make \"$1\"; echo hi\n", &vars)), ["cd x", "make defconfig"]);
}
