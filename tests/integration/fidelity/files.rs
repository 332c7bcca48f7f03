//! The file and database group (fs-mark, dbench, PostMark, SQLite, pgbench):
//! every entry engine has under a PTS label runs PTS's work, and engine's
//! parser reads PTS's number from the real tool's output.
//!
//! PTS's side is read from the fixtures (tests/fixtures/pts-profiles):
//! the arguments from test-definition.xml, the wrapper script by running the
//! `echo` in install.sh that writes it, and the commands by running that
//! wrapper as PTS does (`exec ./wrapper ARGS`, with PTS's environment) with
//! recording stand-ins for the tools. Engine's side is its `--dry-run` lines
//! run with the same stand-ins. What each tool was asked to do is compared
//! after the differences that are not work are named (the directory a tool
//! runs in, connection flags, a default written out) — and any other
//! difference fails with both command lines.

use super::{PtsOption, child, engine_commands, load, pts_file, pts_options};
use crate::common::{Env, repo};
use engine::expand::{self, Batch};
use engine::model::profile::{ExecutorDef, LoadedProfile};
use engine::model::template;
use engine::parse::{Configured, RawOutput};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

// ---------------------------------------------------------------- PTS's tests

/// What a test-definition.xml says a test is and how its arguments are made.
struct PtsDef {
    title: String,
    app_version: String,
    default_args: String,
    options: Vec<PtsOption>,
}

/// One test of a PTS profile: its `Name: Entry` pairs and the arguments
/// PTS hands the wrapper.
#[derive(Debug, Clone)]
struct PtsTest {
    pairs: Vec<(String, String)>,
    args: String,
}

fn pts_def(profile: &str) -> PtsDef {
    let xml = pts_file(profile, "test-definition.xml");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let find = |tag: &str| doc.descendants().find(|n| n.has_tag_name(tag)).and_then(|n| n.text()).unwrap_or("");
    let options = pts_options(&xml);
    let default_args =
        doc.descendants().find(|n| n.has_tag_name("Default")).and_then(|d| child(d, "Arguments")).unwrap_or_default();
    PtsDef { title: find("Title").into(), app_version: find("AppVersion").into(), default_args, options }
}

/// Every test the profile's options make (PTS's batch mode), with PTS's
/// arguments: per option prefix + value + postfix, joined by spaces after
/// the default arguments, trimmed (pts_test_execution, PTS 10.8).
fn pts_tests(def: &PtsDef) -> Vec<PtsTest> {
    let mut tests = vec![PtsTest { pairs: Vec::new(), args: String::new() }];
    for o in &def.options {
        let mut next = Vec::new();
        for t in &tests {
            for (name, value) in &o.menu {
                let mut pairs = t.pairs.clone();
                pairs.push((o.name.clone(), name.clone()));
                let args = format!("{} {}{value}{}", t.args, o.prefix, o.postfix);
                next.push(PtsTest { pairs, args });
            }
        }
        tests = next;
    }
    for t in &mut tests {
        t.args = format!("{} {}", def.default_args, t.args).trim().to_string();
    }
    tests
}

// ---------------------------------------------------------- PTS's parser

/// One `<ResultsParser>` of a results-definition.xml.
struct PtsParser {
    template: String,
    line_hint: Option<String>,
    line_before_hint: Option<String>,
    scale: Option<String>,
}

fn pts_parsers(profile: &str) -> Vec<PtsParser> {
    let xml = pts_file(profile, "results-definition.xml");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("ResultsParser"))
        .map(|p| PtsParser {
            template: child(p, "OutputTemplate").unwrap_or_default(),
            line_hint: child(p, "LineHint"),
            line_before_hint: child(p, "LineBeforeHint"),
            scale: child(p, "ResultScale"),
        })
        .collect()
}

const KEY: &str = "#_RESULT_#";

/// A line as PTS splits it: `=` spaced out; `(`, `)` and tabs are spaces.
fn pts_tokens(line: &str) -> Vec<String> {
    line.replace('=', " = ").replace(['(', ')', '\t'], " ").split_whitespace().map(str::to_string).collect()
}

/// The template's line holding the result, and the result's token position.
fn template_line(p: &PtsParser) -> (String, usize) {
    let line = p.template.lines().find(|l| l.contains(KEY)).expect("a template with #_RESULT_#").replace(":#", " #");
    let pos = pts_tokens(&line).iter().position(|t| t == KEY).expect("the result is a token of its own");
    (line, pos)
}

/// PTS's parser (pts_test_result_parser at the fixtures' commit) on
/// `output`: LineBeforeHint takes the line after the hint's last
/// occurrence; otherwise the search key — LineHint when the template's line
/// holds it, else the template line's text before the result when the
/// output has it — picks the last line holding it, and earlier ones only as
/// backups when a line gives no number. One value: no MultiMatch here.
fn pts_parse(p: &PtsParser, output: &str) -> Option<f64> {
    let (tline, pos) = template_line(p);
    let value = |line: &str| pts_tokens(line).get(pos).and_then(|t| t.parse::<f64>().ok());
    let lines: Vec<&str> = output.lines().collect();
    if let Some(h) = &p.line_before_hint {
        let i = lines.iter().rposition(|l| l.contains(h.as_str()))?;
        return value(lines.get(i + 1)?);
    }
    let before = tline[..tline.find(KEY).unwrap()].trim().to_string();
    let key = match &p.line_hint {
        Some(h) if tline.contains(h.as_str()) => h.trim().to_string(),
        _ if !before.is_empty() && output.contains(&before) => before,
        _ => return None,
    };
    lines.iter().rev().filter(|l| l.contains(&key)).find_map(|l| value(l))
}

// ---------------------------------------------------------- engine's side

/// Engine's value of `result` from `output`, for the test `presets` pick.
fn engine_value(id: &str, presets: &[&str], result: &str, output: &str) -> f64 {
    let p = load(id);
    let presets: Vec<_> = presets.iter().map(|s| expand::parse_cli_option(s).unwrap()).collect();
    let tests = expand::expand(&p, &presets, &Batch, true).unwrap();
    let b = tests[0].bindings();
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false);
    let raw = RawOutput { stdout: output, stderr: "", wall: Duration::from_secs(1) };
    let def = p.profile.parsers.iter().find(|d| d.result == result).expect("a parser of the result");
    let r = p.profile.results.iter().find(|r| r.id == result).unwrap();
    Configured::build(def, &fill, r, None).unwrap().parse(&raw).unwrap()
}

/// The option ids engine gives PTS's option names.
fn option_ids(p: &LoadedProfile) -> BTreeMap<String, String> {
    p.profile.options.iter().map(|o| (o.name.clone(), o.id.clone())).collect()
}

/// Engine's test carrying PTS's labels, and its `--dry-run` command lines.
/// Fails when engine has no entry of that label.
fn engine_test(env: &Env, id: &str, t: &PtsTest) -> Vec<String> {
    let ids = option_ids(&load(id));
    let presets: Vec<String> = t
        .pairs
        .iter()
        .map(|(n, e)| format!("{}={e}", ids.get(n).unwrap_or_else(|| panic!("{id} has no option `{n}`"))))
        .collect();
    let presets: Vec<&str> = presets.iter().map(String::as_str).collect();
    let tests = engine_commands(env, id, &presets);
    let want: Vec<String> = t.pairs.iter().map(|(n, e)| format!("{n}: {e}")).collect();
    let want = format!("{id}: {}", want.join(" - "));
    let (label, lines) = tests.into_iter().next().unwrap_or_else(|| panic!("no {id} test for {want}"));
    assert_eq!(label, want, "engine's test for PTS's {:?}", t.pairs);
    lines
}

// ------------------------------------------------- recording stand-ins

/// A stand-in for a tool: one line per call in $CALLS — its name, its
/// arguments, what came on standard input (lines and checksum) and the
/// text of any argument that names a file (a configuration) — tab-separated.
const RECORDER: &str = "#!/bin/sh
line=$(basename \"$0\")
for a in \"$@\"; do line=\"$line\t$a\"; done
for a in \"$@\"; do
  if [ -f \"$a\" ]; then line=\"$line\tfile=$(tr '\\n' '|' < \"$a\")\"; fi
done
data=$(cat; echo x); data=${data%x}
if [ -n \"$data\" ]; then
  line=\"$line\tstdin=$(printf %s \"$data\" | wc -l | tr -d ' '):$(printf %s \"$data\" | cksum | cut -d' ' -f1)\"
fi
printf '%s\\n' \"$line\" >> \"$CALLS\"
";

/// One recorded call: the tool's name, then its arguments, stdin and files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Call(Vec<String>);

impl Call {
    fn name(&self) -> &str {
        &self.0[0]
    }
    fn args(&self) -> &[String] {
        &self.0[1..]
    }
    fn shown(&self) -> String {
        self.0.iter().map(|w| template::quote(w)).collect::<Vec<_>>().join(" ")
    }
}

fn shown(calls: &[Call]) -> String {
    calls.iter().map(|c| format!("\n    {}", c.shown())).collect()
}

/// Writes the recorder as each of `paths` (relative to `dir`).
fn stand_ins(dir: &Path, paths: &[&str]) {
    for p in paths {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, RECORDER).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn read_calls(path: &Path) -> Vec<Call> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().map(|l| Call(l.split('\t').map(str::to_string).collect())).collect()
}

/// A place where commands run with the stand-ins first on PATH.
struct Bench {
    dir: tempfile::TempDir,
}

impl Bench {
    /// Stand-ins for `tools` on PATH.
    fn new(tools: &[&str]) -> Self {
        let b = Bench { dir: tempfile::tempdir().unwrap() };
        let bin: Vec<String> = tools.iter().map(|t| format!("bin/{t}")).collect();
        stand_ins(b.dir.path(), &bin.iter().map(String::as_str).collect::<Vec<_>>());
        b
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn calls(&self) -> Vec<Call> {
        read_calls(&self.path().join("calls"))
    }

    /// Runs `argv` in `cwd` with the stand-ins first on PATH, `env` added,
    /// standard input empty; fails on a non-zero exit.
    fn run(&self, cwd: &Path, argv: &[&str], env: &[(&str, String)]) {
        let path = format!("{}:{}", self.path().join("bin").display(), std::env::var("PATH").unwrap_or_default());
        let mut c = Command::new(argv[0]);
        c.args(&argv[1..]).current_dir(cwd).env("PATH", path).env("CALLS", self.path().join("calls"));
        c.env("HOME", self.path()).env("LOG_FILE", self.path().join("log")).stdin(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{argv:?} in {}: {out:?}", cwd.display());
    }
}

// ------------------------------------------------------------ PTS's runs

/// The wrapper script `profile`'s install.sh writes: its last `echo "#!…"`,
/// run by `sh` so the escapes come out as PTS's install writes them.
fn pts_wrapper(profile: &str) -> String {
    let install = pts_file(profile, "install.sh");
    let start = install.rfind("echo \"#!").expect("install.sh writes a wrapper script");
    let body = &install[start..];
    let b = body.as_bytes();
    let open = body.find('"').unwrap();
    let close = (open + 1..b.len()).find(|&i| b[i] == b'"' && b[i - 1] != b'\\').expect("the echo's closing quote");
    let out = Command::new("sh").arg("-c").arg(&body[..=close]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// PTS's environment for test scripts (pts_client, PTS 10.8): NUM_CPU_CORES
/// the online CPUs, SYS_MEMORY MemTotal in MiB rounded up as phodevi does.
fn pts_env() -> Vec<(&'static str, String)> {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cores = match online.trim().strip_prefix("0-") {
        Some(n) => n.parse::<u64>().unwrap() + 1,
        None => 1,
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap();
    let mb = kb / 1024;
    let round = |step: u64| mb.div_ceil(step) * step;
    let mem = match mb {
        m if m > 4608 => round(1024),
        m if m > 1536 => round(512),
        m if m > 950 => round(256),
        m => m,
    };
    vec![("NUM_CPU_CORES", cores.to_string()), ("SYS_MEMORY", mem.to_string())]
}

/// What PTS's wrapper for `profile` asks of the tools for arguments `args`:
/// the wrapper runs in a folder holding stand-ins at `tools` (its own
/// paths) and the files `data`, as PTS runs it (`exec ./wrapper ARGS`).
fn pts_calls(profile: &str, args: &str, tools: &[&str], data: &[(&str, &Path)]) -> Vec<Call> {
    let bench = Bench::new(&["sleep"]);
    let home = bench.path().join("install");
    std::fs::create_dir_all(&home).unwrap();
    stand_ins(&home, tools);
    for (name, from) in data {
        std::fs::copy(from, home.join(name)).unwrap();
    }
    let w = home.join("pts-wrapper");
    std::fs::write(&w, pts_wrapper(profile)).unwrap();
    std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o755)).unwrap();
    bench.run(&home, &["sh", "-c", &format!("exec ./pts-wrapper {args}")], &pts_env());
    bench.calls().into_iter().filter(|c| c.name() != "sleep").collect()
}

// ------------------------------------------------------------ engine's runs

/// Runs a test's `--dry-run` lines as engine would: `pre_test` and
/// `post_test` in the test's directory, the rest in a trial's; directories
/// filled in, `\n` back to line breaks (the display escapes them). `prepare`
/// may put in the test's directory what a stand-in would have made.
fn engine_calls(lines: &[String], tools: &[&str], prepare: impl Fn(&Path)) -> (Vec<Call>, Bench) {
    let bench = Bench::new(tools);
    let (test, scratch) = (bench.path().join("test"), bench.path().join("test/trial"));
    std::fs::create_dir_all(&scratch).unwrap();
    prepare(&test);
    for line in lines {
        let (kind, cmd) = line.split_once(": ").expect("`kind: command`");
        let cmd = cmd
            .replace("$SCRATCH_DIR", scratch.to_str().unwrap())
            .replace("$TEST_DIR", test.to_str().unwrap())
            .replace("$TARGET_DIR", bench.path().to_str().unwrap())
            .replace("\\n", "\n")
            .replace("\\t", "\t");
        let cwd = if kind.ends_with("_test") { &test } else { &scratch };
        bench.run(cwd, &["sh", "-c", &cmd], &[]);
    }
    (bench.calls(), bench)
}

/// Fails with both sides' commands when `same` does not hold.
fn check(same: bool, what: &str, pts: &[Call], ours: &[Call]) {
    assert!(same, "{what}\n  PTS runs:{}\n  engine runs:{}", shown(pts), shown(ours));
}

/// `-x V` pairs of `args` (every flag takes a value) and the words left.
fn flags(args: &[String]) -> (BTreeMap<String, String>, Vec<String>) {
    let (mut map, mut rest) = (BTreeMap::new(), Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a.starts_with('-') && a.len() > 1 {
            map.insert(a.clone(), it.next().cloned().unwrap_or_default());
        } else {
            rest.push(a.clone());
        }
    }
    (map, rest)
}

/// The PTS labels of engine's entries that are not PTS's: they must say so.
fn own_entries_are_marked(id: &str, def: &PtsDef) {
    let p = load(id);
    for o in &p.profile.options {
        let pts = def.options.iter().find(|x| x.name == o.name);
        for e in &o.entries {
            let is_pts = pts.is_some_and(|x| x.menu.iter().any(|(n, _)| *n == e.label));
            assert!(
                is_pts || e.label.contains("(engine quick"),
                "{id}'s `{}: {}` is neither PTS's nor marked",
                o.name,
                e.label
            );
        }
    }
}

/// A captured sample of a tool's output (tests/fixtures/output).
fn sample(name: &str) -> String {
    std::fs::read_to_string(repo().join("tests/fixtures/output").join(name)).unwrap()
}

/// The profile's title and tool version, for PTS's Title and AppVersion.
fn title_line(id: &str) -> (String, String) {
    let p = load(id);
    (p.profile.title.clone(), p.profile.app_version.as_ref().map(|v| v.0.clone()).unwrap_or_default())
}

// -------------------------------------------------------------- fs-mark

/// fs_mark's defaults for the flags engine writes out and PTS leaves out
/// (`fs_marks_defaults_are_the_flags_engine_writes_out` asks fs_mark).
const FS_MARK_DEFAULTS: [(&str, &str); 3] = [("-t", "1"), ("-S", "1"), ("-L", "1")];

/// fs_mark's arguments as the work they ask for, and its loop count: the
/// defaults filled in, the directory left out — each run's own fresh one
/// on both sides (PTS's wrapper makes `scratch` and removes it after every
/// run; engine's trial directory is new).
fn fs_mark_work(c: &Call) -> (BTreeMap<String, String>, u64) {
    let (mut f, rest) = flags(c.args());
    assert!(rest.is_empty(), "fs_mark takes flags only: {}", c.shown());
    f.remove("-d");
    for (k, v) in FS_MARK_DEFAULTS {
        f.entry(k.to_string()).or_insert_with(|| v.to_string());
    }
    let loops = f.remove("-L").unwrap().parse().unwrap();
    (f, loops)
}

fn fs_mark_same(t: &PtsTest, lines: &[String]) {
    let pts = pts_calls("fs-mark-1.0.3", &t.args, &["fs_mark-3.3/fs_mark"], &[]);
    let (ours, _bench) = engine_calls(lines, &["fs_mark"], |_| {});
    check(pts.len() == 1 && ours.len() == 1, "one fs_mark run a trial", &pts, &ours);
    let ((pw, pl), (ow, ol)) = (fs_mark_work(&pts[0]), fs_mark_work(&ours[0]));
    check(pw == ow, &format!("{:?}: fs_mark is asked for other work", t.pairs), &pts, &ours);
    // PTS's later loops are never read: its parser takes the line after the
    // header, the first loop's (fs_mark_reads_the_line_pts_reads).
    check(ol == 1 && pl >= 1, &format!("{:?}: engine runs fs_mark's first loop only", t.pairs), &pts, &ours);
}

/// The tests of the PTS result in tests/fixtures/pts (its local profile
/// `local/fs-mark-sys`: fs-mark-1.0.3's wrapper and default arguments with
/// 100-file entries), as (Test label, arguments).
fn composite_fs_mark(default_args: &str) -> Vec<PtsTest> {
    let xml = std::fs::read_to_string(repo().join("tests/fixtures/pts/loop-fsmark.composite.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("Result"))
        .map(|r| {
            let d = child(r, "Description").unwrap();
            let label = d.strip_prefix("Test: ").unwrap().to_string();
            let args = format!("{default_args} {}", child(r, "Arguments").unwrap()).trim().to_string();
            PtsTest { pairs: vec![("Test".into(), label)], args }
        })
        .collect()
}

#[test]
fn fs_mark_entries_ask_fs_mark_for_pts_work() {
    let def = pts_def("fs-mark-1.0.3");
    assert_eq!(title_line("fs-mark"), (def.title.clone(), def.app_version.clone()));
    let env = Env::new();
    let mut tests = pts_tests(&def);
    assert_eq!(tests.len(), 4, "PTS's four entries");
    tests.extend(composite_fs_mark(&def.default_args));
    for t in &tests {
        fs_mark_same(t, &engine_test(&env, "fs-mark", t));
    }
    let labels: Vec<String> = tests.iter().map(|t| t.pairs[0].1.clone()).collect();
    let p = load("fs-mark");
    for e in &p.profile.options[0].entries {
        assert!(labels.contains(&e.label) || e.label.contains("(engine quick"), "`{}` is no PTS test", e.label);
    }
}

/// A tiny fs_mark run in a folder of its own: its standard output.
fn fs_mark_run(extra: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let mut args = vec!["-d", "fsm", "-s", "4096", "-n", "2"];
    args.extend(extra);
    let out = Command::new("fs_mark").args(&args).current_dir(d.path()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// fs_mark says how it runs before it runs: threads, sync method,
/// directories, file sizes; one data line a loop. Engine writes `-t 1 -S 1
/// -L 1` where PTS leaves them to fs_mark: the same run.
#[test]
fn fs_marks_defaults_are_the_flags_engine_writes_out() {
    let how = |out: &str| -> Vec<String> {
        let said = out.lines().filter(|l| l.starts_with('#') && !l.starts_with("#  fs_mark"));
        let mut v: Vec<String> = said.map(|l| l.split(" starting at").next().unwrap().to_string()).collect();
        v.push(format!("{} data line(s)", out.lines().skip_while(|l| !l.contains("Files/sec")).count() - 1));
        v
    };
    let defaults: Vec<&str> = FS_MARK_DEFAULTS.iter().flat_map(|(k, v)| [*k, *v]).collect();
    let (pts, ours) = (how(&fs_mark_run(&[])), how(&fs_mark_run(&defaults)));
    assert!(pts.iter().any(|l| l.contains("1 thread(s)")) && pts.iter().any(|l| l.contains("fsync()")), "{pts:?}");
    assert_eq!(pts, ours);
}

/// PTS reads the line after fs_mark's header (the first loop's); so does
/// engine — on captured samples and on one fs_mark writes now, 3 loops.
#[test]
fn fs_mark_reads_the_line_pts_reads() {
    let parsers = pts_parsers("fs-mark-1.0.3");
    assert_eq!(parsers.len(), 1);
    let live = fs_mark_run(&["-L", "3"]);
    for out in [sample("fs_mark-3.3-4-threads-32-dirs-3-loops.txt"), sample("fs_mark-3.3-100-files.txt"), live] {
        let pts = pts_parse(&parsers[0], &out).expect("PTS reads a value");
        let ours = engine_value("fs-mark", &["test=1000 Files, 1MB Size"], "files_per_second", &out);
        assert_eq!(pts, ours, "{out}");
    }
    assert_eq!(pts_parse(&parsers[0], &sample("fs_mark-3.3-4-threads-32-dirs-3-loops.txt")), Some(3017.5));
}

// --------------------------------------------------------------- dbench

/// dbench's default time limit (`dbench_runs_600_seconds_by_default` asks dbench).
const DBENCH_DEFAULT_TIME: &str = "600";

/// dbench's arguments as the work they ask for: its default time filled in;
/// the directory left out (PTS runs in its install folder, engine in the
/// trial's fresh one); PTS's `-c client.txt` is dbench 4.0's own load file,
/// which Debian's dbench 4.0 reads by default.
fn dbench_work(c: &Call) -> (BTreeMap<String, String>, Vec<String>) {
    let (mut f, rest) = flags(c.args());
    f.remove("-D");
    f.entry("-t".into()).or_insert_with(|| DBENCH_DEFAULT_TIME.into());
    if f.get("-c").is_some_and(|v| v == "client.txt") {
        f.remove("-c");
    }
    (f, rest)
}

#[test]
fn dbench_entries_ask_dbench_for_pts_work() {
    let def = pts_def("dbench-1.0.2");
    assert_eq!(title_line("dbench"), (def.title.clone(), def.app_version.clone()));
    let env = Env::new();
    for t in pts_tests(&def) {
        dbench_same(&t, &engine_test(&env, "dbench", &t));
    }
    own_entries_are_marked("dbench", &def);
}

fn dbench_same(t: &PtsTest, lines: &[String]) {
    let pts = pts_calls("dbench-1.0.2", &t.args, &["dbench_/bin/dbench"], &[]);
    let (ours, _bench) = engine_calls(lines, &["dbench"], |_| {});
    check(pts.len() == 1 && ours.len() == 1, "one dbench run a trial", &pts, &ours);
    check(dbench_work(&pts[0]) == dbench_work(&ours[0]), &format!("{:?}: other work", t.pairs), &pts, &ours);
}

/// The line dbench prints before it starts: time, load file, warm-up.
fn dbench_plan(args: &[&str]) -> String {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    let mut c = Command::new("dbench");
    c.args(["-D", d.path().to_str().unwrap()]).args(args).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = c.process_group(0).spawn().unwrap();
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let plan = lines.map_while(Result::ok).find(|l| l.starts_with("Running for"));
    // SAFETY: the group is dbench's own (process_group(0) above).
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    child.wait().unwrap();
    plan.expect("dbench says what it will run")
}

/// PTS runs `dbench N -c client.txt`; engine `dbench -t 600 N`: dbench
/// plans the same run for both.
#[test]
fn dbench_runs_600_seconds_by_default() {
    let pts = dbench_plan(&["1", "-c", "/usr/share/dbench/client.txt"]);
    let ours = dbench_plan(&["-t", DBENCH_DEFAULT_TIME, "1"]);
    assert_eq!(pts, ours);
    assert!(pts.starts_with("Running for 600 seconds"), "{pts}");
}

#[test]
fn dbench_reads_the_line_pts_reads() {
    let parsers = pts_parsers("dbench-1.0.2");
    for name in ["dbench-4.00-1-client-5s.txt", "dbench-4.00-2-clients.txt"] {
        let out = sample(name);
        let pts = pts_parse(&parsers[0], &out).expect("PTS reads a value");
        assert_eq!(pts, engine_value("dbench", &["clients=1"], "throughput", &out), "{name}");
    }
}

// ------------------------------------------------------------- PostMark

/// The configuration PostMark reads: the text of the file it is given.
fn postmark_config(c: &Call) -> &str {
    let file = c.args().iter().find_map(|a| a.strip_prefix("file=")).expect("postmark reads a file");
    assert_eq!(c.args().len(), 2, "postmark FILE: {}", c.shown());
    file
}

/// PTS's PostMark writes benchmark.pmrc and runs `postmark benchmark.pmrc`;
/// engine's entry of the same transactions writes the same file. PTS
/// 1.1.x runs 250,000 transactions; 1.0.0 (seeds 002 and 004, not among the
/// fixtures) ran the same wrapper with 25,000.
#[test]
fn postmark_entries_give_postmark_pts_configuration() {
    let def = pts_def("postmark-1.1.2");
    assert_eq!(title_line("postmark"), (def.title.clone(), def.app_version.clone()));
    let env = Env::new();
    let args = pts_tests(&def).remove(0).args;
    for (pts_args, entry) in [(args.clone(), "250000"), (args.replacen("250000", "25000", 1), "25000")] {
        let tests = engine_commands(&env, "postmark", &[&format!("transactions={entry}")]);
        assert_eq!(tests[0].0, format!("postmark: Transactions: {entry}"));
        postmark_same(&pts_args, &tests[0].1);
    }
    let p = load("postmark");
    let labels: Vec<&str> = p.profile.options[0].entries.iter().map(|e| e.label.as_str()).collect();
    assert_eq!(labels, ["250000", "25000", "2500 (engine quick)"]);
}

fn postmark_same(pts_args: &str, lines: &[String]) {
    let pts = pts_calls("postmark-1.1.2", pts_args, &["postmark-1.51/postmark"], &[]);
    let (ours, _bench) = engine_calls(lines, &["postmark"], |_| {});
    check(pts.len() == 1 && ours.len() == 1, "one postmark run a trial", &pts, &ours);
    check(postmark_config(&pts[0]) == postmark_config(&ours[0]), "another configuration", &pts, &ours);
}

#[test]
fn postmark_reads_the_line_pts_reads() {
    let parsers = pts_parsers("postmark-1.1.2");
    let out = sample("postmark-1.51-2500-transactions.txt");
    let pts = pts_parse(&parsers[0], &out).expect("PTS reads a value");
    assert_eq!(pts, engine_value("postmark", &["transactions=250000"], "tps", &out));
}

// --------------------------------------------------------------- SQLite

/// PTS's statements are in pts-sqlite-tests-1.tar.gz, not reachable here:
/// 2,500 lines of this shape, which engine's pre_test writes.
const INSERT_SHAPE: &str =
    r"^INSERT INTO 'pts1' \('I', 'DT', 'F1', 'F2'\) VALUES \('\d+', CURRENT_TIMESTAMP, '\d{4}', '\d{16}'\);$";

/// PTS's sqlite-benchmark and engine's trial, each with a recording
/// sqlite3 and the same statements: every sqlite3 call, its arguments and
/// what it reads, the same — per copy, in parallel (so compared sorted).
#[test]
fn sqlite_entries_run_pts_script() {
    let def = pts_def("sqlite-2.3.0");
    let (title, version) = title_line("sqlite");
    assert_eq!(title, def.title);
    // SQLite 3.40 here, 3.50.4 in PTS 2.3.x: one release line (the book).
    assert_eq!(version.split('.').next(), def.app_version.split('.').next());
    let env = Env::new();
    for t in pts_tests(&def) {
        sqlite_same(&t, &engine_test(&env, "sqlite", &t));
    }
    own_entries_are_marked("sqlite", &def);
}

fn sqlite_same(t: &PtsTest, lines: &[String]) {
    let (mut ours, bench) = engine_calls(lines, &["sqlite3"], |_| {});
    let data = bench.path().join("test/sqlite-2500-insertions.txt");
    let statements = std::fs::read_to_string(&data).unwrap();
    let shape = regex::Regex::new(INSERT_SHAPE).unwrap();
    assert_eq!(statements.lines().filter(|l| shape.is_match(l)).count(), 2500, "{statements}");
    let tools = ["sqlite_/bin/sqlite3"];
    let mut pts = pts_calls("sqlite-2.3.0", &t.args, &tools, &[("sqlite-2500-insertions.txt", &data)]);
    let copies: usize = t.pairs[0].1.parse().unwrap();
    check(pts.len() == 5 * copies, "CREATE, PRAGMA and 3 passes a copy", &pts, &ours);
    pts.sort();
    ours.sort();
    check(pts == ours, &format!("{:?}: sqlite3 is asked for other work", t.pairs), &pts, &ours);
}

/// PTS times its whole script (results-definition.xml is the sys.time
/// sensor, no parser); engine's one parser is the trial's wall time, and
/// the trial is the script; each trial in a fresh directory, where PTS's
/// pre.sh and interim.sh remove benchmark*.db.
#[test]
fn sqlite_times_what_pts_times() {
    let rd = pts_file("sqlite-2.3.0", "results-definition.xml");
    assert!(rd.contains("<Sensor>sys.time</Sensor>") && !rd.contains("ResultsParser"), "{rd}");
    for f in ["pre.sh", "interim.sh"] {
        assert_eq!(pts_file("sqlite-2.3.0", f).trim(), "#!/bin/sh\nrm -f benchmark*.db");
    }
    let p = load("sqlite");
    assert_eq!(p.profile.parsers.len(), 1);
    assert!(p.profile.parsers[0].wall_time, "{:?}", p.profile.parsers[0]);
    assert_eq!(p.profile.scratch, engine::model::profile::ScratchScope::PerTrial);
    let ExecutorDef::External(x) = &p.profile.executor else { panic!("sqlite runs the sqlite3 shell") };
    assert_eq!((x.program.as_str(), x.args[0].as_str()), ("bash", "-c"));
}

/// The quick entry with the real sqlite3: each copy's table has its rows
/// three times over, in WAL mode.
#[test]
fn sqlite_quick_entry_runs_with_the_real_sqlite3() {
    let env = Env::new();
    let tests = engine_commands(&env, "sqlite", &["copies=1 (engine quick: 3 x 100 inserts)"]);
    let (_, bench) = engine_calls(&tests[0].1, &[], |_| {});
    let db = bench.path().join("test/trial/benchmark-1.db");
    let out = Command::new("sqlite3").arg(&db).arg("SELECT count(*) FROM pts1; PRAGMA journal_mode;").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "300\nwal\n", "{out:?}");
}

// -------------------------------------------------------------- pgbench

/// Arguments without the ones that say where the server is (PTS: PGPORT
/// and the default socket; engine: its own socket folder and user).
fn unconnected(c: &Call) -> Vec<String> {
    let mut out = vec![c.name().to_string()];
    let mut it = c.args().iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "-U" | "-p" => {
                it.next();
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// `-c key=value` settings in `args`.
fn settings_of(args: &[String]) -> BTreeMap<String, String> {
    let words: Vec<&str> = args.iter().flat_map(|a| a.split_whitespace()).collect();
    words
        .windows(2)
        .filter(|w| w[0] == "-c")
        .filter_map(|w| w[1].split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

/// PTS's trial — between `pg_ctl start` and `pg_ctl stop` — and the
/// settings it starts the server with.
fn pts_pgbench_trial(pts: &[Call]) -> (Vec<Vec<String>>, BTreeMap<String, String>) {
    let start = pts.iter().position(|c| c.name() == "pg_ctl" && c.args()[0] == "start").expect("pg_ctl start");
    let stop = pts.iter().position(|c| c.name() == "pg_ctl" && c.args()[0] == "stop").expect("pg_ctl stop");
    (pts[start + 1..stop].iter().map(unconnected).collect(), settings_of(pts[start].args()))
}

/// Engine's trial — after its server starts — and the settings the server
/// reads (its `-c` flags, then postgresql.conf as pre_test appended it).
fn engine_pgbench_trial(ours: &[Call], conf: &str) -> (Vec<Vec<String>>, BTreeMap<String, String>) {
    let server = ours.iter().position(|c| c.name() == "postgres" && c.args()[0] == "-D").expect("the server");
    let mut settings = settings_of(ours[server].args());
    for l in conf.lines() {
        if let Some((k, v)) = l.split_once(" = ") {
            settings.insert(k.trim().to_string(), v.trim().trim_matches('\'').to_string());
        }
    }
    (ours[server + 1..].iter().map(unconnected).collect(), settings)
}

fn pgbench_same(t: &PtsTest, lines: &[String]) {
    let tools = ["pg_/bin/pg_ctl", "pg_/bin/createdb", "pg_/bin/pgbench", "pg_/bin/dropdb"];
    let pts = pts_calls("pgbench-1.16.2", &t.args, &tools, &[]);
    let stand_ins = ["initdb", "postgres", "createdb", "pgbench", "dropdb"];
    let (ours, bench) = engine_calls(lines, &stand_ins, |test| std::fs::create_dir(test.join("pgdata")).unwrap());
    let conf = std::fs::read_to_string(bench.path().join("test/pgdata/postgresql.conf")).unwrap();
    let ((pt, ps), (ot, os)) = (pts_pgbench_trial(&pts), engine_pgbench_trial(&ours, &conf));
    check(pt == ot, &format!("{:?}: another trial", t.pairs), &pts, &ours);
    for (k, v) in &ps {
        check(os.get(k) == Some(v), &format!("{:?}: the server's {k} is not PTS's {v}", t.pairs), &pts, &ours);
    }
    let initdb = ours.iter().find(|c| c.name() == "initdb").expect("engine makes its cluster");
    let install = pts_file("pgbench-1.16.2", "install.sh");
    let pts_initdb = install.lines().find(|l| l.contains("/bin/initdb ")).expect("PTS's initdb");
    for flag in pts_initdb.split_whitespace().filter(|w| w.starts_with("--")) {
        assert!(initdb.args().iter().any(|a| a == flag), "engine's initdb lacks PTS's {flag}: {}", initdb.shown());
    }
}

/// Each trial starts the server, creates the database, loads it, runs the
/// timed pgbench, drops the database and stops the server, as PTS's wrapper
/// does; the server's settings and the cluster's are PTS's. The PostgreSQL
/// is this machine's (its major version is engine's app_version, not PTS's
/// 18), so PTS's rows are never engine's (the book, "PTS compatibility").
#[test]
fn pgbench_entries_run_pts_commands_on_this_postgresql() {
    let def = pts_def("pgbench-1.16.2");
    let (title, version) = title_line("pgbench");
    assert_eq!(title, def.title);
    let out = Command::new("postgres").arg("--version").output().expect("postgres (scripts/install-deps.sh)");
    let here = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(here.contains(&format!("(PostgreSQL) {version}.")), "app_version {version} but {here}");
    assert_ne!(version, def.app_version, "another PostgreSQL than PTS's: its own version label");
    let p = load("pgbench");
    let ExecutorDef::External(x) = &p.profile.executor else { panic!("pgbench is external") };
    assert!(x.pre_trial.iter().any(|s| s.server.is_some()), "the server starts every trial, as PTS's");
    let env = Env::new();
    for t in pts_tests(&def) {
        pgbench_same(&t, &engine_test(&env, "pgbench", &t));
    }
    own_entries_are_marked("pgbench", &def);
}

/// PTS reads the last `tps = ` and `latency average` lines; so does engine,
/// on pgbench 15's output of PTS's command (prepared, `-r`).
#[test]
fn pgbench_reads_the_lines_pts_reads() {
    let parsers = pts_parsers("pgbench-1.16.2");
    for name in ["pgbench-15-prepared-r-select-only-scale-1.txt", "pgbench-15-prepared-r-tpc-b-scale-1.txt"] {
        let out = sample(name);
        for (scale, result) in [("TPS", "tps"), ("ms", "latency")] {
            let p = parsers.iter().find(|p| p.scale.as_deref() == Some(scale)).unwrap();
            let pts = pts_parse(p, &out).expect("PTS reads a value");
            let ours = engine_value("pgbench", &["scaling_factor=1", "clients=1", "mode=Read Only"], result, &out);
            assert_eq!(pts, ours, "{name} {scale}");
        }
    }
}

// ------------------------------------------------- engine's own titles

/// Engine's stand-ins carry titles PTS never uses, so PTS's rows never
/// land on them: BlogBench (blogbench cannot run here; the `blog`
/// workload's counts are its own), fs_mark's and SQLite's built-ins.
#[test]
fn built_in_stand_ins_have_titles_of_their_own() {
    for (id, pts_title) in [("blogbench", "BlogBench"), ("files", "FS-Mark"), ("sqlite-embedded", "SQLite")] {
        let p = load(id);
        assert_ne!(p.profile.title.to_lowercase(), pts_title.to_lowercase(), "{id}");
        assert!(p.profile.results.iter().all(|r| r.unit != "Final Score"), "{id}");
    }
}

// ------------------------------------------ a difference is caught

/// The message of a failed comparison, or None when it held.
fn failure(f: impl FnOnce()) -> Option<String> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    r.err().map(|e| e.downcast_ref::<String>().cloned().unwrap_or_else(|| format!("{e:?}")))
}

/// A shipped profile with `from` replaced by `to`, shadowing it in `env`.
fn shadow(env: &Env, id: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(repo().join("test-profiles").join(id).join("profile.yaml")).unwrap();
    assert!(text.contains(from), "{id}: `{from}` is not in the profile");
    env.profile(id, &text.replacen(from, to, 1));
}

/// The first PTS test of `profile` whose entries contain `label`.
fn pts_test(profile: &str, label: &str) -> PtsTest {
    pts_tests(&pts_def(profile)).into_iter().find(|t| t.pairs.iter().any(|(_, e)| e == label)).unwrap()
}

/// The comparison above of engine's `id` test labelled `label` with PTS's.
fn compare(env: &Env, id: &str, label: &str) {
    let fixture = |pts: &str| {
        let t = pts_test(pts, label);
        let lines = engine_test(env, id, &t);
        (t, lines)
    };
    match id {
        "fs-mark" => {
            let (t, l) = fixture("fs-mark-1.0.3");
            fs_mark_same(&t, &l)
        }
        "dbench" => {
            let (t, l) = fixture("dbench-1.0.2");
            dbench_same(&t, &l)
        }
        "sqlite" => {
            let (t, l) = fixture("sqlite-2.3.0");
            sqlite_same(&t, &l)
        }
        "pgbench" => {
            let (t, l) = fixture("pgbench-1.16.2");
            pgbench_same(&t, &l)
        }
        _ => postmark_same(
            &pts_tests(&pts_def("postmark-1.1.2"))[0].args,
            &engine_commands(env, id, &["transactions=250000"])[0].1,
        ),
    }
}

/// What the checks above are for: each profile changed back to a mistake
/// the audit found (or one like it) fails, showing both command lines.
#[test]
fn a_difference_fails_with_both_command_lines() {
    let cases: [(&str, &str, &str, &str, &[&str]); 5] = [
        (
            "fs-mark",
            "{files: 5000, threads: 4",
            "{files: 1250, threads: 4",
            "5000 Files, 1MB Size, 4 Threads",
            &["-n 5000", "-n 1250"],
        ),
        (
            "dbench",
            "{clients: 6, run_time: 600}",
            "{clients: 6, run_time: 60}",
            "6",
            &["dbench 6 -c client.txt", "-t 60 6"],
        ),
        (
            "sqlite",
            "PRAGMA journal_mode='wal';",
            "PRAGMA journal_mode='delete';",
            "8",
            &["journal_mode='\\''wal", "journal_mode='\\''delete"],
        ),
        ("pgbench", "      - --protocol=prepared\n", "", "Read Only", &["--protocol=prepared", "pgbench -j"]),
        ("postmark", "echo set number 500", "echo set number 400", "", &["set number 500", "set number 400"]),
    ];
    for (id, from, to, label, shows) in cases {
        let env = Env::new();
        shadow(&env, id, from, to);
        let why = failure(|| compare(&env, id, label));
        let why = why.unwrap_or_else(|| panic!("{id} with `{to}` for `{from}` passed"));
        assert!(why.contains("PTS runs:") && why.contains("engine runs:"), "{why}");
        assert!(shows.iter().all(|s| why.contains(s)), "{id}: {shows:?} in {why}");
    }
}
