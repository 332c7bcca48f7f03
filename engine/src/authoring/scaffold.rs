//! `engine profile new NAME --from-command "CMD …"`: a profile folder to
//! start from: the schema line, commented fields, one option per value in
//! the command that looks like a setting (`--bs=4k`, `-n 1000`, `count=64`),
//! output paths moved into the scratch directory, and a parser: a regex
//! built from the command's output when it is run once (`--run`), else the
//! wall time.

use std::fmt::Write as _;
use std::time::Duration;

/// One guessed option: its id, the text it replaces and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Guess {
    pub id: String,
    pub value: String,
}

fn is_setting_value(v: &str) -> bool {
    // 1000, 4k, 1M, 2.5, 64MiB, randread — not paths, not flags.
    !v.is_empty() && !v.contains('/') && !v.starts_with('-') && v.len() <= 32 && !v.contains(char::is_whitespace)
}

fn numeric(v: &str) -> bool {
    v.chars().next().is_some_and(|c| c.is_ascii_digit())
        && v.trim_end_matches(|c: char| c.is_ascii_alphabetic()).chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn clean_id(s: &str) -> String {
    let id: String = s
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let id = id.trim_matches('_').to_string();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) { format!("opt_{id}") } else { id }
}

/// The command's words with placeholders, and the options guessed.
pub fn guess(words: &[String]) -> (Vec<String>, Vec<Guess>) {
    let mut out = Vec::new();
    let mut guesses: Vec<Guess> = Vec::new();
    let add = |id: String, value: &str, guesses: &mut Vec<Guess>| -> String {
        let mut id = id;
        while guesses.iter().any(|g| g.id == id) {
            id.push('_');
        }
        guesses.push(Guess { id: id.clone(), value: value.to_string() });
        format!("{{{{{id}}}}}")
    };
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if i == 0 {
            out.push(w.clone());
            i += 1;
            continue;
        }
        // key=value and --key=value
        if let Some((k, v)) = w.split_once('=')
            && !k.is_empty()
            && !k.contains('/')
        {
            if v.contains('/') && !v.starts_with("/dev/") {
                // An output path: into the trial's scratch directory.
                let base = v.rsplit('/').next().unwrap_or("out");
                out.push(format!("{k}={{{{scratch_dir}}}}/{base}"));
            } else if is_setting_value(v) {
                let ph = add(clean_id(k), v, &mut guesses);
                out.push(format!("{k}={ph}"));
            } else {
                out.push(w.clone());
            }
            i += 1;
            continue;
        }
        // -n 1000 / --size 4k
        if w.starts_with('-') && w.len() > 1 && i + 1 < words.len() && numeric(&words[i + 1]) {
            out.push(w.clone());
            let ph = add(clean_id(w), &words[i + 1], &mut guesses);
            out.push(ph);
            i += 2;
            continue;
        }
        if numeric(w) {
            let ph = add(format!("arg{}", i), w, &mut guesses);
            out.push(ph);
        } else {
            out.push(w.clone());
        }
        i += 1;
    }
    (out, guesses)
}

/// The parser `profile new` writes for a sample output.
#[derive(Debug, Clone, PartialEq)]
pub struct ParserGuess {
    pub regex: String,
    /// The unit the sample printed (`MB/s`), when it is a rate or size with
    /// a decimal prefix that changes with the value (dd prints kB/s, MB/s or
    /// GB/s as it goes): any prefix is read (`si`) and the value divided back
    /// to the sample's.
    pub unit: Option<String>,
    pub divide_by: Option<f64>,
}

/// `MB/s` → (1e6, `B/s`): a decimal prefix the regex parser reads as `si`.
fn si_unit(after: &str) -> Option<(f64, &str)> {
    let mut c = after.chars();
    let scale = match c.next()? {
        'k' | 'K' => 1e3,
        'M' => 1e6,
        'G' => 1e9,
        _ => return None,
    };
    let rest = c.as_str();
    ["B/s", "B", "bit/s", "/s"].contains(&rest).then_some((scale, rest))
}

/// A regex for the last number on the last output line that has one, with
/// a little of the text before it as the anchor.
pub fn parser_for(output: &str) -> Option<ParserGuess> {
    let num = regex::Regex::new(r"[0-9]+(?:\.[0-9]+)?").expect("a valid regex");
    let line = output.lines().rev().find(|l| num.is_match(l))?;
    let all: Vec<regex::Match> = num.find_iter(line).collect();
    let m = *all.last()?;
    // The anchor is the text since the previous number (which changes from run to run).
    let from = all.len().checked_sub(2).map(|i| all[i].end()).unwrap_or(0);
    let before: String = line[from..m.start()].chars().rev().take(24).collect::<Vec<_>>().into_iter().rev().collect();
    let before = before.trim_start();
    let after: String = line[m.end()..].chars().take(8).collect();
    let after = after.split_whitespace().next().unwrap_or("");
    let value = "(?P<value>[0-9]+(?:\\.[0-9]+)?)";
    if let Some((scale, rest)) = si_unit(after) {
        return Some(ParserGuess {
            regex: format!("{}{value}\\s*(?P<si>[kKMG]?){}", regex::escape(before), regex::escape(rest)),
            unit: Some(after.to_string()),
            divide_by: Some(scale),
        });
    }
    let tail = if after.is_empty() { String::new() } else { format!("\\s*{}", regex::escape(after)) };
    Some(ParserGuess { regex: format!("{}{value}{tail}", regex::escape(before)), unit: None, divide_by: None })
}

/// Why the sample run of a command gave no output to read.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot run `{0}`: {1}")]
    Io(String, std::io::Error),
    #[error("`{program}` ran longer than {} s; stopped", limit.as_secs())]
    TooLong { program: String, limit: Duration },
}

/// Runs the command once (at most `limit`) and returns what it printed (stdout, then stderr).
pub fn run_once(words: &[String], limit: Duration) -> Result<(String, String), RunError> {
    let io = |e: std::io::Error| RunError::Io(words[0].clone(), e);
    let dir = tempfile::tempdir().map_err(io)?;
    let mut child = std::process::Command::new(&words[0])
        .args(&words[1..])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(io)?;
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().map_err(io)?.is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::TooLong { program: words[0].clone(), limit });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().map_err(io)?;
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
}

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The profile text for `id` running `words`; `output`: what one run printed
/// (stdout, stderr), for the parser.
pub fn profile_yaml(id: &str, words: &[String], output: Option<&(String, String)>) -> String {
    let (args, guesses) = guess(words);
    let mut y = String::new();
    let _ = writeln!(y, "# yaml-language-server: $schema=https://engine.invalid/schemas/profile.schema.json");
    let _ = writeln!(y, "# Made by `engine profile new {id} --from-command {}`.", q(&words.join(" ")));
    let _ = writeln!(y, "# Check it with `engine validate`, then run it with `engine benchmark {id}`.");
    let _ = writeln!(y, "id: {id}\nversion: 1.0.0              # bump it when the test changes");
    let _ = writeln!(y, "title: {}", q(&format!("{} benchmark", words[0])));
    let _ = writeln!(y, "# app_version: \"\"          # the version of {} it was written for", words[0]);
    let _ = writeln!(y, "description: {}", q(&format!("Runs `{}`.", words.join(" "))));
    let _ = writeln!(y, "test_type: other            # disk, processor, system, memory, network, graphics, other");
    if !guesses.is_empty() {
        let _ = writeln!(y, "options:                    # one entry per value to test; add entries to compare values");
        for g in &guesses {
            let _ = writeln!(
                y,
                "  - id: {}\n    name: {}\n    entries:\n      - {{label: {}, value: {}}}",
                g.id,
                q(&g.id),
                q(&g.value),
                q(&g.value)
            );
        }
    }
    let _ = writeln!(y, "executor:\n  external:\n    program: {}\n    args:", q(&args[0]));
    for a in &args[1..] {
        let _ = writeln!(y, "      - {}", q(a));
    }
    if args.len() == 1 {
        y = y.trim_end_matches("\n    args:\n").to_string();
        y.push_str("\n    args: []\n");
    }
    let _ = writeln!(y, "    # timeout: 10m");
    let _ = writeln!(y, "requirements:\n  programs:\n    - name: {}", q(&words[0]));
    let parser = output
        .and_then(|(o, e)| parser_for(o).map(|r| (r, "stdout", o)).or_else(|| parser_for(e).map(|r| (r, "stderr", e))));
    match parser {
        Some((g, stream, text)) => {
            let line = text.lines().rev().find(|l| l.chars().any(|c| c.is_ascii_digit())).unwrap_or("");
            let unit = g.unit.as_deref().map(q).unwrap_or_else(|| "Units".into());
            let _ =
                writeln!(y, "results:\n  - {{id: value, unit: {unit}, proportion: HIB}}   # set the unit; HIB or LIB");
            let _ = writeln!(y, "parsers:\n  # from its output: {}", line.trim());
            let _ = writeln!(y, "  - result: value\n    stream: {stream}\n    regex: {}", q(&g.regex));
            if let Some(d) = g.divide_by {
                let _ = writeln!(y, "    divide_by: {d:.0}   # to {unit} from what the `si` prefix makes it");
            }
        }
        None => {
            let _ = writeln!(y, "results:\n  - {{id: seconds, unit: Seconds, proportion: LIB}}");
            let _ = writeln!(
                y,
                "parsers:\n  # the wall time; write a regex on its output instead (`--run` makes one from a run)\n  - {{result: seconds, wall_time: true}}"
            );
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn guesses_settings_and_paths() {
        let (args, g) = guess(&w("dd if=/dev/zero of=/tmp/x bs=1M count=64 conv=fsync"));
        assert_eq!(args, w("dd if=/dev/zero of={{scratch_dir}}/x bs={{bs}} count={{count}} conv={{conv}}"));
        assert_eq!(g.len(), 3);
        let (args, g) = guess(&w("fs_mark -d scratch -n 1000 -s 1048576"));
        assert_eq!(args, w("fs_mark -d scratch -n {{n}} -s {{s}}"));
        assert_eq!(g[0], Guess { id: "n".into(), value: "1000".into() });
        let g = parser_for("67108864 bytes (67 MB, 64 MiB) copied, 0.0333929 s, 2.0 GB/s\n").unwrap();
        assert_eq!((g.unit.as_deref(), g.divide_by), (Some("GB/s"), Some(1e9)));
        let re = regex::Regex::new(&g.regex).unwrap();
        let c = re.captures("67108864 bytes (67 MB, 64 MiB) copied, 0.05 s, 1.3 GB/s").expect(&g.regex);
        assert_eq!((&c["value"], &c["si"]), ("1.3", "G"));
        // dd prints the prefix the rate calls for: another run reads as well.
        let c = re.captures("1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.00102369 s, 980 MB/s").expect(&g.regex);
        assert_eq!((&c["value"], &c["si"]), ("980", "M"));
        let plain = parser_for("elapsed: 12.5 ms\n").unwrap();
        assert_eq!((plain.unit, plain.divide_by), (None, None));
        assert!(plain.regex.ends_with("\\s*ms"), "{}", plain.regex);
    }
}
