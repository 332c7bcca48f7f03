//! `engine profile new NAME --from-command "CMD …"`: a profile folder to
//! start from: the schema line, commented fields, the command as it was
//! given (with a commented example of turning one of its settings —
//! `--bs=4k`, `-n 1000`, `count=64` — into an option, not one option per
//! value), output paths moved into the scratch directory, and a parser: a
//! regex built from the command's output when it is run once (`--run`),
//! else the wall time.

use std::fmt::Write as _;
use std::time::Duration;

/// One guessed option: its id, the text it replaces and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Guess {
    pub id: String,
    pub value: String,
}

/// Arguments that name a file the command writes: `of=out`, `--output=x`, `-o x`.
const OUTPUT_KEYS: [&str; 7] = ["of", "o", "out", "output", "outfile", "output-file", "log"];

fn is_output_key(k: &str) -> bool {
    OUTPUT_KEYS.contains(&k.trim_start_matches('-'))
}

/// `v` (a path the command writes) inside the trial's scratch directory.
fn into_scratch(v: &str) -> String {
    let base = v.trim_end_matches('/').rsplit('/').next().filter(|b| !b.is_empty()).unwrap_or("out");
    format!("{{{{scratch_dir}}}}/{base}")
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

/// The command's words with output paths in the scratch directory (and
/// the files a sample run created there, `created`), and the settings that
/// could become options, each with the word that holds it.
pub(crate) fn guess(words: &[String], created: &[String]) -> (Vec<String>, Vec<(usize, Guess)>) {
    let (with, guesses) = placeholders(words, created);
    let mut plain = words.to_vec();
    // Keep the command literal but for its output paths.
    for (i, w) in with.iter().enumerate() {
        if w.contains("{{scratch_dir}}") {
            plain[i] = w.clone();
        }
    }
    (plain, guesses)
}

fn placeholders(words: &[String], created: &[String]) -> (Vec<String>, Vec<(usize, Guess)>) {
    let mut out = Vec::new();
    let mut guesses: Vec<(usize, Guess)> = Vec::new();
    let add = |at: usize, id: String, value: &str, guesses: &mut Vec<(usize, Guess)>| -> String {
        let mut id = id;
        while guesses.iter().any(|(_, g)| g.id == id) {
            id.push('_');
        }
        guesses.push((at, Guess { id: id.clone(), value: value.to_string() }));
        format!("{{{{{id}}}}}")
    };
    let written = |v: &str| created.iter().any(|c| c == v.trim_start_matches("./"));
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
            let output = (v.contains('/') || is_output_key(k) || written(v)) && !v.starts_with("/dev/");
            if output && !v.is_empty() {
                // An output path: into the trial's scratch directory.
                out.push(format!("{k}={}", into_scratch(v)));
            } else if is_setting_value(v) {
                let ph = add(i, clean_id(k), v, &mut guesses);
                out.push(format!("{k}={ph}"));
            } else {
                out.push(w.clone());
            }
            i += 1;
            continue;
        }
        // -o out / --output out
        if is_output_key(w) && w.starts_with('-') && i + 1 < words.len() && !words[i + 1].starts_with("/dev/") {
            out.push(w.clone());
            out.push(into_scratch(&words[i + 1]));
            i += 2;
            continue;
        }
        // -n 1000 / --size 4k
        if w.starts_with('-') && w.len() > 1 && i + 1 < words.len() && numeric(&words[i + 1]) {
            out.push(w.clone());
            let ph = add(i + 1, clean_id(w), &words[i + 1], &mut guesses);
            out.push(ph);
            i += 2;
            continue;
        }
        if written(w) {
            out.push(into_scratch(w));
        } else if numeric(w) {
            let ph = add(i, format!("arg{}", i), w, &mut guesses);
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
    /// `MB/s` (or `MB`, `Mbit/s`) when the sample printed a rate or size
    /// with a decimal prefix that changes with the value (dd prints kB/s,
    /// MB/s or GB/s as it goes): any prefix is read (`si`) and the value
    /// divided to mega-units.
    pub unit: Option<String>,
    pub divide_by: Option<f64>,
}

/// `GB/s`, `kB/s`, `B/s` → `B/s`: a rate or size with a decimal prefix (or
/// none), which the regex parser reads as `si`.
fn si_unit(after: &str) -> Option<&str> {
    let rest = after.strip_prefix(['k', 'K', 'M', 'G', 'T']).unwrap_or(after);
    ["B/s", "B", "bit/s", "b/s"].contains(&rest).then_some(rest)
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
    if let Some(rest) = si_unit(after) {
        // Whatever prefix this run printed, the result is in mega-units
        // (MB/s, as fio and the seeds report), exact: MB = 10^6 B.
        return Some(ParserGuess {
            regex: format!("{}{value}\\s*(?P<si>[kKMGT]?){}", regex::escape(before), regex::escape(rest)),
            unit: Some(format!("M{rest}")),
            divide_by: Some(1e6),
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
    /// A profile built from a failing run would measure its error message.
    #[error(
        "`{program}` exited {code} in the sample run; a profile is made from a run that works. Its output ended:\n{tail}"
    )]
    Failed { program: String, code: i32, tail: String },
}

/// What one run of the command printed, and the files it left in its folder.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub stdout: String,
    pub stderr: String,
    /// Names the run created in its (empty) working folder: output paths.
    pub created: Vec<String>,
}

/// Runs the command once (at most `limit`) in an empty temporary folder.
pub fn run_once(words: &[String], limit: Duration) -> Result<Sample, RunError> {
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
    if !out.status.success() {
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail =
            lines[lines.len().saturating_sub(5)..].iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n");
        return Err(RunError::Failed { program: words[0].clone(), code: out.status.code().unwrap_or(-1), tail });
    }
    let mut created: Vec<String> = std::fs::read_dir(dir.path())
        .map_err(io)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    created.sort();
    Ok(Sample {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        created,
    })
}

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The profile text for `id` running `words`; `sample`: what one run
/// printed and wrote, for the parser and the output paths; `schema`: the
/// schema file the editor line points at.
pub fn profile_yaml(id: &str, words: &[String], sample: Option<&Sample>, schema: &str) -> String {
    let created = sample.map(|s| s.created.as_slice()).unwrap_or_default();
    let (args, guesses) = guess(words, created);
    let mut y = String::new();
    let _ = writeln!(y, "# yaml-language-server: $schema={schema}");
    let _ = writeln!(y, "# Made by `engine profile new {id} --from-command {}`.", q(&words.join(" ")));
    let _ = writeln!(y, "# Check it with `engine validate`, then run it with `engine benchmark {id}`.");
    let _ = writeln!(y, "id: {id}\nversion: 1.0.0              # bump it when the test changes");
    let _ = writeln!(y, "title: {}", q(&format!("{} benchmark", words[0])));
    let _ = writeln!(y, "# app_version: \"\"          # the version of {} it was written for", words[0]);
    let _ = writeln!(y, "description: {}", q(&format!("Runs `{}`.", words.join(" "))));
    let _ = writeln!(y, "test_type: other            # disk, processor, system, memory, network, graphics, other");
    if let Some((at, g)) = guesses.first() {
        // One worked example, commented: options are for values to compare.
        let word = &words[*at];
        let templated = word.replacen(&g.value, &format!("{{{{{}}}}}", g.id), 1);
        let _ = writeln!(y, "# To compare values of a setting, make it an option and use it in args, e.g.");
        let _ = writeln!(y, "# options:\n#   - id: {}\n#     name: {}\n#     entries:", g.id, q(&g.id));
        let _ = writeln!(y, "#       - {{label: {}, value: {}}}", q(&g.value), q(&g.value));
        let _ = writeln!(y, "#       - {{label: \"…\", value: \"…\"}}");
        let _ = writeln!(y, "# and write {} for {} below.", q(&templated), q(word));
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
    let parser = sample.and_then(|s| {
        parser_for(&s.stdout)
            .map(|r| (r, "stdout", &s.stdout))
            .or_else(|| parser_for(&s.stderr).map(|r| (r, "stderr", &s.stderr)))
    });
    match parser {
        Some((g, stream, text)) => {
            let line = text.lines().rev().find(|l| l.chars().any(|c| c.is_ascii_digit())).unwrap_or("");
            let unit = g.unit.as_deref().map(q).unwrap_or_else(|| "Units".into());
            let _ =
                writeln!(y, "results:\n  - {{id: value, unit: {unit}, proportion: HIB}}   # set the unit; HIB or LIB");
            let _ = writeln!(y, "parsers:\n  # from its output: {}", line.trim());
            let _ = writeln!(y, "  - result: value\n    stream: {stream}\n    regex: {}", q(&g.regex));
            if let Some(d) = g.divide_by {
                let _ = writeln!(y, "    divide_by: {d:.0}   # to {unit}: the `si` prefix (k, M, G, T) multiplies");
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
        let (args, g) = guess(&w("dd if=/dev/zero of=/tmp/x bs=1M count=64 conv=fsync"), &[]);
        assert_eq!(args, w("dd if=/dev/zero of={{scratch_dir}}/x bs=1M count=64 conv=fsync"), "literal but the output");
        assert_eq!(g.len(), 3);
        assert_eq!(g[0], (3, Guess { id: "bs".into(), value: "1M".into() }));
        // Relative output paths too: by name, or because the sample run wrote them.
        let (args, _) = guess(&w("dd if=/dev/zero of=out bs=1M"), &[]);
        assert_eq!(args, w("dd if=/dev/zero of={{scratch_dir}}/out bs=1M"));
        let (args, _) = guess(&w("tool -o res.txt --size 4 data.bin"), &["data.bin".into(), "res.txt".into()]);
        assert_eq!(args, w("tool -o {{scratch_dir}}/res.txt --size 4 {{scratch_dir}}/data.bin"));
        let (args, g) = guess(&w("fs_mark -d scratch -n 1000 -s 1048576"), &[]);
        assert_eq!(args, w("fs_mark -d scratch -n 1000 -s 1048576"));
        assert_eq!(g[0], (4, Guess { id: "n".into(), value: "1000".into() }));
        let g = parser_for("67108864 bytes (67 MB, 64 MiB) copied, 0.0333929 s, 2.0 GB/s\n").unwrap();
        assert_eq!((g.unit.as_deref(), g.divide_by), (Some("MB/s"), Some(1e6)));
        let re = regex::Regex::new(&g.regex).unwrap();
        let c = re.captures("67108864 bytes (67 MB, 64 MiB) copied, 0.05 s, 1.3 GB/s").expect(&g.regex);
        assert_eq!((&c["value"], &c["si"]), ("1.3", "G"));
        // dd prints the prefix the rate calls for: another run reads as well.
        let c = re.captures("1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.00102369 s, 980 MB/s").expect(&g.regex);
        assert_eq!((&c["value"], &c["si"]), ("980", "M"));
        let c = re.captures("512 bytes copied, 0.000106 s, 4.8 kB/s").expect(&g.regex);
        assert_eq!((&c["value"], &c["si"]), ("4.8", "k"));
        let c = re.captures("1 bytes copied, 1 s, 1 B/s").expect(&g.regex);
        assert_eq!((&c["value"], &c["si"]), ("1", ""));
        let plain = parser_for("elapsed: 12.5 ms\n").unwrap();
        assert_eq!((plain.unit, plain.divide_by), (None, None));
        assert!(plain.regex.ends_with("\\s*ms"), "{}", plain.regex);
    }
}
