//! The storage group (fio, iozone, io-patterns, tiobench): every entry engine
//! claims under a PTS label runs PTS's fio command line, and engine's parser
//! reads PTS's quantity from the real tool's output; the group's own variants
//! carry titles PTS never uses.
//!
//! PTS's side of fio-2.2.0 is read from the fixture: the options and their
//! values from test-definition.xml, the job file from the wrapper script that
//! install.sh writes (run as PTS runs it, with a stand-in `fio` that keeps the
//! job file), the parser rules from results-definition.xml. Both sides become
//! command lines the same way: fio's own `--showcmd` of PTS's job file against
//! engine's arguments. pts/fio-1.11 (the seeds' profile) is not among the
//! fixtures: its job file is quoted below.

use super::{PtsOption, child, engine_commands, load, pts_file, pts_options};
use crate::common::{Env, repo};
use engine::expand::{self, Batch};
use engine::model::profile::LoadedProfile;
use engine::model::template;
use engine::parse::{Configured, RawOutput};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One `<ResultsParser>` of a results-definition.xml.
#[derive(Debug)]
struct PtsParser {
    template: String,
    line_hint: Option<String>,
    line_before_hint: Option<String>,
    after: Option<String>,
    strip: Option<String>,
    divide: f64,
    multiply: f64,
    scale: Option<String>,
}

fn pts_parsers(xml: &str) -> Vec<PtsParser> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let num = |p, t| child(p, t).map(|v| v.parse::<f64>().unwrap()).unwrap_or(1.0);
    doc.descendants()
        .filter(|n| n.has_tag_name("ResultsParser"))
        .map(|p| PtsParser {
            template: child(p, "OutputTemplate").unwrap_or_default(),
            line_hint: child(p, "LineHint"),
            line_before_hint: child(p, "LineBeforeHint"),
            after: child(p, "ResultAfterString"),
            strip: child(p, "StripFromResult"),
            divide: num(p, "DivideResultBy"),
            multiply: num(p, "MultiplyResultBy"),
            scale: child(p, "ResultScale"),
        })
        .collect()
}

/// A line as PTS's parser splits it: `=` spaced out, `(`, `)` and tabs (and
/// `/` when the template has one next to the result) turned into spaces.
fn pts_tokens(line: &str, slash: bool) -> Vec<String> {
    let mut s = line.replace('=', " = ").replace(['(', ')', '\t'], " ");
    if slash {
        s = s.replace('/', " ");
    }
    s.split_whitespace().map(str::to_string).collect()
}

/// The value one line gives under `p`'s rules, and the token it came from.
fn pts_value_on(p: &PtsParser, line: &str) -> Option<(f64, String)> {
    let key = "#_RESULT_#";
    let tline = p.template.lines().find(|l| l.contains(key))?;
    let at = tline.find(key)?;
    let slash = tline[..at].ends_with('/') || tline[at + key.len()..].starts_with('/');
    let toks = pts_tokens(line, slash);
    let raw = match &p.after {
        // ResultAfterString: the first token after it that is not `:`, `,`, `-` or `=`.
        Some(a) => {
            let i = toks.iter().position(|t| t == a)?;
            toks[i + 1..].iter().find(|t| !matches!(t.as_str(), ":" | "," | "-" | "="))?.clone()
        }
        None => {
            let i = pts_tokens(tline, slash).iter().position(|t| t == key)?;
            toks.get(i)?.clone()
        }
    };
    let stripped = p.strip.as_ref().map_or(raw.clone(), |s| raw.replace(s.as_str(), ""));
    let v: f64 = stripped.parse().ok()?;
    Some((v / p.divide * p.multiply, raw))
}

/// PTS's parser (pts_test_result_parser, PTS 10.8) on `output`: with
/// LineBeforeHint the line after the hint's last occurrence; with LineHint
/// the last line holding it, then the earlier ones as PTS's backup lines when
/// a line gives no number. One value: no averaging (no MultiMatch here).
fn pts_parse(p: &PtsParser, output: &str) -> Option<(f64, String)> {
    let lines: Vec<&str> = output.lines().collect();
    let candidates: Vec<&str> = match (&p.line_before_hint, &p.line_hint) {
        (Some(h), _) => {
            let i = lines.iter().rposition(|l| l.contains(h.as_str()))?;
            vec![*lines.get(i + 1)?]
        }
        (None, Some(h)) => lines.iter().rev().filter(|l| l.contains(h.as_str())).copied().collect(),
        (None, None) => return None,
    };
    candidates.into_iter().find_map(|l| pts_value_on(p, l))
}

/// The one value PTS reports in `scale` from `output`: its parsers of that
/// scale in file order; more than one answering would be two PTS results.
fn pts_result(parsers: &[PtsParser], scale: &str, output: &str) -> (f64, String) {
    let got: Vec<_> =
        parsers.iter().filter(|p| p.scale.as_deref() == Some(scale)).filter_map(|p| pts_parse(p, output)).collect();
    assert_eq!(got.len(), 1, "PTS's {scale} parsers on this output gave {got:?}\n{output}");
    got.into_iter().next().unwrap()
}

/// The `fio` on PATH: it renders job files as command lines (`--showcmd`)
/// and runs the tiny trials.
fn real_fio() -> PathBuf {
    which::which("fio").expect("fio is installed (scripts/install-deps.sh)")
}

/// Writes, in `home`, the wrapper script fio-2.2.0's install.sh writes
/// (`fio-run`), by running install.sh's own `echo` of it, and the folder it
/// changes into, with a stand-in `fio` that prints the job file it is given.
/// Returns the wrapper's path.
fn pts_fio_wrapper(home: &Path) -> PathBuf {
    let install = pts_file("fio-2.2.0", "install.sh");
    let lines: Vec<&str> = install.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("echo \"#!/bin/sh")).expect("install.sh writes a wrapper");
    let end = start + lines[start..].iter().position(|l| l.ends_with("> fio-run")).expect("… into fio-run");
    let snippet = lines[start..=end].join("\n");
    let out = Command::new("sh").arg("-c").arg(&snippet).current_dir(home).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let wrapper = home.join("fio-run");
    let text = std::fs::read_to_string(&wrapper).unwrap();
    let dir = text.lines().find_map(|l| l.strip_prefix("cd ")).expect("the wrapper changes into fio's folder");
    std::fs::create_dir_all(home.join(dir)).unwrap();
    let stand_in = home.join(dir).join("fio");
    std::fs::write(&stand_in, "#!/bin/sh\ncat \"$1\"\n").unwrap();
    let exec = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&stand_in, exec).unwrap();
    wrapper
}

/// The job file PTS's wrapper hands fio for `arguments` (the wrapper's `$@`).
fn pts_fio_job(wrapper: &Path, arguments: &str) -> String {
    let home = wrapper.parent().unwrap();
    let log = home.join("log");
    let mut c = Command::new("sh");
    // PTS hands the joined option values to the wrapper through the shell: word-split.
    c.arg(wrapper).args(arguments.split_whitespace());
    let out = c.current_dir(home).env("HOME", home).env("LOG_FILE", &log).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::read_to_string(&log).unwrap()
}

/// The command lines fio's own `--showcmd` makes of `jobs` (job files), in
/// order: one fio for all of them (each fio start costs about 0.2 s here).
fn showcmd_all(dir: &Path, jobs: &[String]) -> Vec<Vec<String>> {
    let mut files = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let f = dir.join(format!("job-{i}.fio"));
        std::fs::write(&f, job).unwrap();
        files.push(f);
    }
    let out = Command::new(real_fio()).arg("--showcmd").args(&files).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout).lines().map(showcmd_tokens).collect();
    assert_eq!(lines.len(), jobs.len(), "one line per job file");
    lines
}

/// `fio --showcmd` output as arguments. It prints a section's name as
/// `--name=X` and then the section's own `name=X` option the same way: one
/// job, so the second is dropped.
fn showcmd_tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in text.split_whitespace().skip_while(|t| *t == "fio" || t.ends_with("/fio")) {
        if t.starts_with("--name=") && out.last().is_some_and(|l| l == t) {
            continue;
        }
        out.push(t.to_string());
    }
    out
}

/// PTS's arguments for one test: per option, in the test-definition's order,
/// prefix + the chosen entry's value + postfix, joined with spaces. An option
/// the test does not name (PTS's Disk Target) takes "Default Test Directory",
/// whose value is empty.
fn pts_arguments(opts: &[PtsOption], pairs: &[(String, String)]) -> String {
    let mut args = Vec::new();
    for o in opts {
        if let Some((_, entry)) = pairs.iter().find(|(n, _)| *n == o.name) {
            let (_, v) = o.menu.iter().find(|(name, _)| name == entry).expect("a PTS entry");
            args.push(format!("{}{v}{}", o.prefix, o.postfix));
        }
    }
    args.join(" ")
}

/// `Type: Random Read - Engine: IO_uring` as (option name, entry label) pairs.
fn pairs_of(description: &str) -> Vec<(String, String)> {
    description
        .split(" - ")
        .map(|p| {
            let (k, v) = p.split_once(": ").expect("Name: Label");
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// Whether every (option, entry) pair names a PTS option and one of its entries.
fn claims_pts(opts: &[PtsOption], pairs: &[(String, String)]) -> bool {
    pairs.iter().all(|(n, e)| opts.iter().any(|o| o.name == *n && o.menu.iter().any(|(m, _)| m == e)))
}

/// The words of a `--dry-run` command line (it single-quotes what a shell
/// would expand, `'\''` for a quote).
fn shell_words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => (quoted, any) = (!quoted, true),
            '\\' if !quoted => cur.extend(chars.next()),
            c if c.is_whitespace() && !quoted => {
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

/// engine's fio arguments from a test's `trial: fio …` line, put in PTS's
/// terms: the one addition (`--output-format=json`: the value is read from
/// fio's JSON, not its text) is removed, and the file in the test's
/// directories is PTS's `fiofile` in fio's folder.
fn engine_fio_tokens(commands: &[String]) -> Vec<String> {
    let trial = commands.iter().find_map(|c| c.strip_prefix("trial: ")).expect("a trial command");
    let words = shell_words(trial);
    assert_eq!(words[0], "fio", "{trial}");
    assert_eq!(words[1], "--output-format=json", "{trial}");
    words[2..]
        .iter()
        .map(|w| match w.as_str() {
            "--filename=$SCRATCH_DIR/fiofile" | "--filename=$TEST_DIR/fiofile" => "--filename=fiofile".to_string(),
            _ => w.clone(),
        })
        .collect()
}

/// For each option of engine's profile, the labels of its entries that are
/// also PTS's (`-o id=a,b` for the dry run), and which of its entries are not.
fn pts_presets(p: &LoadedProfile, opts: &[PtsOption]) -> (Vec<String>, Vec<String>) {
    let (mut presets, mut own) = (Vec::new(), Vec::new());
    for o in &p.profile.options {
        let pts = opts.iter().find(|x| x.name == o.name);
        let mut labels = Vec::new();
        for e in &o.entries {
            if pts.is_some_and(|x| x.menu.iter().any(|(m, _)| *m == e.label)) {
                labels.push(e.label.clone());
            } else {
                own.push(format!("{}: {}", o.name, e.label));
            }
        }
        presets.push(format!("{}={}", o.id, labels.join(",")));
    }
    (presets, own)
}

/// PTS's fio job file for one test's option pairs.
type JobOf<'a> = &'a dyn Fn(&[(String, String)]) -> String;

/// Compares, test by test, engine's fio arguments (`tests`: label and
/// dry-run commands) with the command lines fio's `--showcmd` makes of PTS's
/// job files (`job` of the test's option pairs); fails showing both lines of
/// every test that differs.
fn assert_same_fio_commands(prefix: &str, tests: &[(String, Vec<String>)], job: JobOf<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let jobs: Vec<String> =
        tests.iter().map(|(label, _)| job(&pairs_of(label.strip_prefix(prefix).unwrap()))).collect();
    let pts = showcmd_all(dir.path(), &jobs);
    let mut differ = Vec::new();
    for ((label, commands), pts) in tests.iter().zip(&pts) {
        let mine = engine_fio_tokens(commands);
        if *pts != mine {
            differ.push(format!("{label}\n  PTS:    fio {}\n  engine: fio {}", pts.join(" "), mine.join(" ")));
        }
    }
    let shown = differ.iter().take(10).cloned().collect::<Vec<_>>().join("\n");
    assert!(differ.is_empty(), "{} of {} command lines differ (the first 10):\n{shown}", differ.len(), tests.len());
}

#[test]
fn fio_entries_under_pts_labels_run_pts_fio_2_2_0_command_lines() {
    let opts = pts_options(&pts_file("fio-2.2.0", "test-definition.xml"));
    let profile = load("fio");
    let (presets, own) = pts_presets(&profile, &opts);
    // Entries of engine's own say so in their label, so none is a PTS entry by mistake.
    assert!(own.iter().all(|e| e.contains("(engine")), "entries neither PTS's nor marked as engine's: {own:?}");
    assert_eq!(own.len(), 2, "{own:?}");
    // Every PTS entry has its counterpart, but Windows AIO (Windows only) and
    // the Disk Target (engine's --target-dir).
    for o in opts.iter().filter(|o| o.name != "Disk Target") {
        let mine = profile.profile.options.iter().find(|x| x.name == o.name).unwrap_or_else(|| panic!("{}", o.name));
        for (name, _) in o.menu.iter().filter(|(_, v)| v != "windowsaio") {
            assert!(mine.entries.iter().any(|e| e.label == *name), "PTS's {}: {name} is missing", o.name);
        }
    }
    let home = tempfile::tempdir().unwrap();
    let wrapper = pts_fio_wrapper(home.path());
    let refs: Vec<&str> = presets.iter().map(String::as_str).collect();
    let tests = engine_commands(&Env::new(), "fio", &refs);
    assert_eq!(tests.len(), 4 * 4 * 2 * 12, "{presets:?}");
    for (label, _) in &tests {
        assert!(claims_pts(&opts, &pairs_of(label.strip_prefix("fio: ").unwrap())), "{label}");
    }
    assert_same_fio_commands("fio: ", &tests, &|pairs| pts_fio_job(&wrapper, &pts_arguments(&opts, pairs)));
}

/// pts/fio-1.11.5's job file (install.sh's wrapper, for PTS's "Default Test
/// Directory"; 1.11.1-1.11.4 write the same job), `$1`-`$5` being Type, IO
/// Engine, Buffered, Direct and Block Size. Quoted: 1.11 is not a fixture.
const FIO_1_11_JOB: &str = "[global]\nrw=$1\nioengine=$2\niodepth=64\nsize=1g\ndirect=$4\nbuffered=$3\n\
startdelay=5\nramp_time=5\nruntime=20\ntime_based\ndisk_util=0\nclat_percentiles=0\ndisable_lat=1\n\
disable_clat=1\ndisable_slat=1\nfilename=fiofile\n\n[test]\nname=test\nbs=$5\nstonewall\n";

/// pts/fio-1.11.5's options (test-definition.xml), in order; Disk Target left out.
fn fio_1_11_options() -> Vec<PtsOption> {
    let opt = |name: &str, menu: &[(&str, &str)]| PtsOption {
        name: name.into(),
        prefix: String::new(),
        postfix: String::new(),
        menu: menu.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
    };
    let sizes: Vec<(String, String)> = ["4K", "8K", "16K", "32K", "64K", "128K", "256K", "512K"]
        .iter()
        .map(|s| (format!("{s}B"), s.to_lowercase()))
        .chain(["1", "2", "4", "8", "16", "32", "64", "128"].iter().map(|n| (format!("{n}MB"), format!("{n}m"))))
        .collect();
    let sizes: Vec<(&str, &str)> = sizes.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    vec![
        opt(
            "Type",
            &[
                ("Random Read", "randread"),
                ("Random Write", "randwrite"),
                ("Sequential Read", "read"),
                ("Sequential Write", "write"),
            ],
        ),
        opt(
            "IO Engine",
            &[("POSIX AIO", "posixaio"), ("Sync", "sync"), ("Linux AIO", "libaio"), ("Windows AIO", "windowsaio")],
        ),
        opt("Buffered", &[("Yes", "1"), ("No", "0")]),
        opt("Direct", &[("No", "0"), ("Yes", "1")]),
        opt("Block Size", &sizes),
    ]
}

/// pts/fio-1.11.5's job file for `arguments`, `$N` being the Nth word.
fn fio_1_11_job(arguments: &str) -> String {
    let args: Vec<&str> = arguments.split_whitespace().collect();
    let mut job = FIO_1_11_JOB.to_string();
    for (i, a) in args.iter().enumerate() {
        job = job.replace(&format!("${}", i + 1), a);
    }
    job
}

#[test]
fn fio_v1_entries_run_pts_fio_1_11_command_lines() {
    let opts = fio_1_11_options();
    let profile = load("fio-v1");
    let (presets, own) = pts_presets(&profile, &opts);
    assert!(own.is_empty(), "fio-v1 has only PTS's entries: {own:?}");
    let refs: Vec<&str> = presets.iter().map(String::as_str).collect();
    let tests = engine_commands(&Env::new(), "fio-v1", &refs);
    assert_eq!(tests.len(), 4 * 3 * 2 * 2 * 16, "{presets:?}");
    assert_same_fio_commands("fio-v1: ", &tests, &|pairs| fio_1_11_job(&pts_arguments(&opts, pairs)));
}

/// Runs real fio with PTS's command line made tiny (16 MiB, 1 s, no delay or
/// ramp, in `dir`), printing both its JSON (what engine reads) and its text
/// (what PTS reads). Returns (JSON, text).
fn run_tiny(pts: &[String], dir: &Path) -> (String, String) {
    let args: Vec<String> = pts
        .iter()
        .map(|a| match a.split_once('=').map(|(k, _)| k) {
            Some("--size") => "--size=16m".to_string(),
            Some("--startdelay") => "--startdelay=0".to_string(),
            Some("--ramp_time") => "--ramp_time=0".to_string(),
            Some("--runtime") => "--runtime=1".to_string(),
            Some("--filename") => format!("--filename={}", dir.join("fiofile").display()),
            _ => a.clone(),
        })
        // At most 4 GiB/s: past 10 GiB/s (a write into the page cache here)
        // fio prints GiB/s, which PTS's MiB/s parsers read as nothing.
        .chain(["--rate=4g".to_string()])
        .collect();
    let out = Command::new(real_fio()).arg("--output-format=json,normal").args(&args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let all = String::from_utf8(out.stdout).unwrap();
    let start = all.find('{').expect("fio's JSON");
    let mut it = serde_json::Deserializer::from_str(&all[start..]).into_iter::<serde_json::Value>();
    it.next().unwrap().unwrap();
    let end = start + it.byte_offset();
    (all[start..end].to_string(), format!("{}{}", &all[..start], &all[end..]))
}

/// engine's values for the test `presets` picks of profile `id`, from `stdout`.
fn engine_parse(id: &str, presets: &[&str], stdout: &str) -> Vec<(String, f64)> {
    let p = load(id);
    let presets: Vec<_> = presets.iter().map(|s| expand::parse_cli_option(s).unwrap()).collect();
    let tests = expand::expand(&p, &presets, &Batch, true).unwrap();
    assert_eq!(tests.len(), 1, "presets pick one test");
    let b = tests[0].bindings();
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false);
    let raw = RawOutput { stdout, stderr: "", wall: Duration::from_secs(1) };
    p.profile
        .parsers
        .iter()
        .map(|d| {
            let r = p.profile.results.iter().find(|r| r.id == d.result).unwrap();
            (d.result.clone(), Configured::build(d, &fill, r, None).unwrap().parse(&raw).unwrap())
        })
        .collect()
}

/// One unit of the last digit fio printed (`221MiB/s` → 1, `9.77` → 0.01).
fn last_digit(raw: &str) -> f64 {
    let num: String =
        raw.chars().skip_while(|c| !c.is_ascii_digit()).take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    num.split_once('.').map_or(1.0, |(_, d)| 10f64.powi(-(d.len() as i32)))
}

/// engine's MiB/s against PTS's "MB/s": the same number to fio's printed
/// precision when fio printed MiB/s; when it printed KiB/s, PTS divided by
/// 1000 and engine's exact MiB/s is PTS's × 1000/1024.
fn assert_same_bandwidth(engine_mib: f64, (pts, raw): &(f64, String), label: &str) {
    let unit = if raw.ends_with("KiB/s") { 1024.0 / 1000.0 } else { 1.0 };
    assert!(raw.ends_with("MiB/s") || raw.ends_with("KiB/s"), "{label}: fio printed {raw}");
    let tol = last_digit(raw) / if unit == 1.0 { 1.0 } else { 1000.0 };
    assert!(
        (engine_mib * unit - pts).abs() <= tol,
        "{label}: engine {engine_mib} MiB/s, PTS {pts} \"MB/s\" from `{raw}` (± {tol})"
    );
}

#[test]
fn fio_values_are_pts_quantity_in_exact_mib() {
    let parsers = pts_parsers(&pts_file("fio-2.2.0", "results-definition.xml"));
    let opts = pts_options(&pts_file("fio-2.2.0", "test-definition.xml"));
    let home = tempfile::tempdir().unwrap();
    let wrapper = pts_fio_wrapper(home.path());
    let dir = tempfile::tempdir().unwrap();
    for choice in [["Random Read", "Linux AIO", "No", "4KB"], ["Sequential Write", "Sync", "No", "2MB"]] {
        let pairs: Vec<(String, String)> = ["Type", "Engine", "Direct", "Block Size"]
            .iter()
            .zip(choice)
            .map(|(n, e)| (n.to_string(), e.to_string()))
            .collect();
        let job = pts_fio_job(&wrapper, &pts_arguments(&opts, &pairs));
        let pts_cmd = showcmd_all(dir.path(), &[job]).remove(0);
        // Past 10 GiB/s (a write into the page cache on a fast day) fio
        // prints `BW=10.4GiB/s`, which PTS's MiB/s parsers read as nothing,
        // as they would in PTS: run again, up to five times, for a MiB/s line.
        let runs = (0..5).map(|_| run_tiny(&pts_cmd, dir.path()));
        let mut runs = runs.skip_while(|(_, text)| text.contains("GiB/s"));
        let (json, text) = runs.next().unwrap_or_else(|| run_tiny(&pts_cmd, dir.path()));
        let label = choice.join(" - ");
        let presets = [
            format!("type={}", choice[0]),
            format!("engine={}", choice[1]),
            format!("direct={}", choice[2]),
            format!("block_size={}", choice[3]),
        ];
        let presets: Vec<&str> = presets.iter().map(String::as_str).collect();
        let mine = engine_parse("fio", &presets, &json);
        assert_eq!(mine.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(), ["bandwidth", "iops"]);
        assert_same_bandwidth(mine[0].1, &pts_result(&parsers, "MB/s", &text), &label);
        let (iops, raw) = pts_result(&parsers, "IOPS", &text);
        let tol = last_digit(&raw) * if raw.contains('k') { 1000.0 } else { 1.0 };
        assert!((mine[1].1 - iops).abs() <= tol, "{label}: engine {} IOPS, PTS {iops} from `{raw}`", mine[1].1);
        // fio-v1 reads the same fields the same way.
        let v1 = [
            format!("type={}", choice[0]),
            format!("block_size={}", choice[3]),
            "buffered=Yes".into(),
            "direct=No".into(),
        ];
        let v1: Vec<&str> = v1.iter().map(String::as_str).collect();
        assert_eq!(engine_parse("fio-v1", &v1, &json), mine, "{label}");
    }
}

/// PTS's titles of the tests this group's own variants stand in for.
fn pts_storage_titles() -> Vec<String> {
    let iozone = pts_file("iozone-1.9.6", "test-definition.xml");
    let doc = roxmltree::Document::parse(&iozone).unwrap();
    let title = doc.descendants().find(|n| n.has_tag_name("Title")).and_then(|n| n.text()).unwrap().to_string();
    // Not among the fixtures: the titles of PTS's tiobench, aio-stress and fio profiles.
    vec![title, "Threaded I/O Tester".into(), "AIO-Stress".into(), "Flexible IO Tester".into()]
}

#[test]
fn own_storage_variants_never_carry_a_pts_title() {
    let pts = pts_storage_titles();
    for id in ["iozone", "tiobench", "tiobench-io", "io-patterns", "io"] {
        let p = load(id);
        assert!(!pts.contains(&p.profile.title), "{id} is engine's own but is titled {:?}, as PTS's", p.profile.title);
    }
}

/// the book's storage rows name each profile of the group with the
/// major.minor it has: a version change that is not in the table fails.
#[test]
fn readme_storage_rows_name_the_profiles_as_they_are() {
    let readme = std::fs::read_to_string(repo().join("book/src/pts.md")).unwrap();
    let start = readme.find("<!-- pts-rows: storage").expect("the storage rows");
    let end = readme.find("<!-- /pts-rows: storage -->").expect("their end");
    let rows = &readme[start..end];
    for id in ["fio", "fio-v1", "iozone", "io-patterns", "tiobench", "tiobench-io"] {
        let v = semver::Version::parse(&load(id).profile.version).unwrap();
        let name = format!("`{id}@{}.{}`", v.major, v.minor);
        assert!(rows.contains(&name), "the book's storage rows do not name {name}");
    }
}
