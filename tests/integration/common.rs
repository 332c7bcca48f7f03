//! Shared by every test module: a fresh ENGINE_HOME, target directory and
//! profile folder per test, a command builder for the real binary, profiles
//! the tests write, checks on result files, the root check, and waiting.

use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

pub struct Env {
    pub home: tempfile::TempDir,
    pub target: tempfile::TempDir,
    /// Extra profile root (`test-profiles/`, `suites/`) on ENGINE_PROFILE_PATH.
    pub profiles: tempfile::TempDir,
    _shared: Shared,
}

/// Tests that judge the machine's own load (what bounded a result, the
/// monitors against iostat) run with no other test's engine running: they
/// hold this for writing ([`alone`]); every [`Env`] holds it for reading,
/// once per thread.
static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// This thread's read guard and how many Envs share it; whether it
    /// holds the machine alone.
    static READ: RefCell<(usize, Option<RwLockReadGuard<'static, ()>>)> = const { RefCell::new((0, None)) };
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// An Env's share of the machine.
struct Shared;

impl Shared {
    fn take() -> Shared {
        if !ALONE.get() {
            READ.with_borrow_mut(|(n, guard)| {
                if *n == 0 {
                    *guard = Some(MACHINE.read().unwrap_or_else(|e| e.into_inner()));
                }
                *n += 1;
            });
        }
        Shared
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if !ALONE.get() {
            READ.with_borrow_mut(|(n, guard)| {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    *guard = None;
                }
            });
        }
    }
}

/// The machine to this test alone (until the guard drops): it waits for the
/// tests running now, and tests that start later wait for it.
pub struct Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>);

pub fn alone() -> Alone {
    let g = MACHINE.write().unwrap_or_else(|e| e.into_inner());
    ALONE.set(true);
    Alone(g)
}

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.set(false);
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}", self.code, self.stdout, self.stderr)
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_engine")
}

/// The repository root (for shipped profiles, suites, schemas and fixtures).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Root-only tests are `#[ignore = "needs root"]`: `cargo test` skips them
/// visibly, and CI (root) runs them with `--include-ignored`. Run without
/// root, they fail here instead of passing without checking anything.
pub fn require_root() {
    assert!(is_root(), "this test needs root: run it as root with `cargo test -- --include-ignored`");
}

impl Env {
    pub fn new() -> Self {
        Env {
            home: tempfile::tempdir().unwrap(),
            target: tempfile::tempdir().unwrap(),
            profiles: tempfile::tempdir().unwrap(),
            _shared: Shared::take(),
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .env("ENGINE_HOME", self.home.path())
            .env("ENGINE_PROFILE_PATH", self.profiles.path())
            // Tests run in parallel: each its own "machine" for the machine-wide lock.
            .env("ENGINE_MACHINE_LOCK", self.home.path().join("machine.lock"))
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            // The person's own config.toml never reaches a test.
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env_remove("XDG_DATA_HOME");
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.cmd(args).output().expect("engine runs").into()
    }

    /// `engine ARGS`, killed and failed if it is still running after
    /// `limit` (for a command that must not hang: the test ends either way).
    pub fn run_within(&self, args: &[&str], limit: Duration) -> Run {
        let (out, err) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
        let mut child =
            self.cmd(args).stdout(out.try_clone().unwrap()).stderr(err.try_clone().unwrap()).spawn().unwrap();
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`engine {}` still ran after {limit:?}", args.join(" "));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let read = |mut f: std::fs::File| {
            use std::io::{Read, Seek};
            let mut s = String::new();
            f.rewind().unwrap();
            f.read_to_string(&mut s).unwrap();
            s
        };
        Run { code: status.code().unwrap_or(-1), stdout: read(out), stderr: read(err) }
    }

    /// `engine benchmark … --target-dir T -y` plus `args`.
    pub fn bench(&self, args: &[&str]) -> Run {
        let mut all = vec!["benchmark", "-y", "--target-dir", self.target.path().to_str().unwrap()];
        all.extend_from_slice(args);
        self.run(&all)
    }

    /// Writes `test-profiles/<id>/profile.yaml` into the extra profile root.
    pub fn profile(&self, id: &str, yaml: &str) -> PathBuf {
        let dir = self.profiles.path().join("test-profiles").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("profile.yaml");
        std::fs::write(&p, yaml).unwrap();
        p
    }

    pub fn suite(&self, id: &str, yaml: &str) -> PathBuf {
        let dir = self.profiles.path().join("suites");
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("{id}.yaml"));
        std::fs::write(&p, yaml).unwrap();
        p
    }

    pub fn result_path(&self, name: &str) -> PathBuf {
        self.home.path().join("results").join(name).join("result.json")
    }

    pub fn result(&self, name: &str) -> serde_json::Value {
        let text = std::fs::read_to_string(self.result_path(name)).unwrap_or_else(|e| panic!("result {name}: {e}"));
        serde_json::from_str(&text).unwrap()
    }
}

/// Runs `cmd`, failing the test (with its output) unless it succeeds.
pub fn succeed(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        o.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A profile whose one trial prints `value: <v>` for the entry's value `v`.
pub fn echo_profile(id: &str, values: &[&str]) -> String {
    let entries: Vec<String> = values.iter().map(|v| format!("      - {{label: \"V{v}\", value: \"{v}\"}}")).collect();
    format!(
        r#"id: {id}
version: 1.0.0
title: Echo {id}
app_version: "1"
test_type: other
options:
  - id: v
    name: Value
    entries:
{}
executor:
  external:
    program: sh
    args: ["-c", "echo value: {{{{v}}}}"]
results:
  - {{id: number, unit: Items/s, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}
"#,
        entries.join("\n")
    )
}

/// A profile whose k-th trial runs `script` with `$n` = k (a counter kept in
/// the test's directory, which outlives the trials' scratch directories).
pub fn counter_profile(id: &str, script: &str, extra: &str) -> String {
    let body =
        format!("c={{{{test_dir}}}}/count; n=$(cat $c 2>/dev/null || echo 0); n=$((n+1)); echo $n > $c; {script}");
    format!(
        r#"id: {id}
version: 1.0.0
title: Counter {id}
test_type: other
executor:
  external:
    program: sh
    args: ["-c", {body:?}]
{extra}
results:
  - {{id: number, unit: Items, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>-?[0-9.]+)'}}
"#
    )
}

/// A profile whose one trial sleeps 2 s, then prints `value: 1`.
pub const SLOW: &str = "id: slow\nversion: 1.0.0\ntitle: Slow\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'sleep 2; echo value: 1']\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n";

pub fn stats_of(values: &[f64]) -> (f64, f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    (mean, sd, sd / n.sqrt())
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The entries (one per identifier) of result `result_idx` in result file `r`.
pub fn entries(r: &Value, result_idx: usize) -> &Vec<Value> {
    r["results"][result_idx]["entries"].as_array().unwrap()
}

/// An entry's n, mean, SD, SE and minimum are those of its trials.
pub fn check_entry_stats(e: &Value) {
    let trials: Vec<f64> = e["trials"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(e["n"].as_u64().unwrap() as usize, trials.len());
    let (mean, sd, se) = stats_of(&trials);
    assert!(close(e["value"].as_f64().unwrap(), mean), "{e}");
    if trials.len() > 1 {
        assert!(close(e["sd"].as_f64().unwrap(), sd), "{e}");
        assert!(close(e["se"].as_f64().unwrap(), se), "{e}");
    }
    let min = trials.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(e["min"].as_f64().unwrap(), min);
}

/// Every file under `dir`, recursively, links not followed (a link to a
/// folder is listed as itself); an unreadable folder lists nothing. The one
/// walk the tests share.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// Waits until `cond` holds (or fails the test after 20 s).
pub fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(30));
    }
}

pub trait SpawnScript {
    fn spawn_script(&mut self, cmdline: &str) -> std::process::Child;
}

impl SpawnScript for std::process::Command {
    /// Runs `cmdline` under `script`, on a pseudo-terminal, with this command's environment.
    fn spawn_script(&mut self, cmdline: &str) -> std::process::Child {
        let mut c = std::process::Command::new("script");
        c.args(["-qfec", cmdline, "/dev/null"]);
        for (k, v) in self.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        c.spawn().expect("script (util-linux) runs")
    }
}

/// Processes below `pid` (its children, theirs, …; not zombies) whose
/// command line mentions `needle`.
pub fn descendants_mentioning(pid: u32, needle: &str) -> Vec<String> {
    let parent = |p: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().nth(1)).and_then(|x| x.parse().ok())
    };
    processes_mentioning(needle)
        .into_iter()
        .filter(|line| {
            let mut p = line.split(':').next().and_then(|x| x.parse::<u32>().ok());
            for _ in 0..64 {
                match p.and_then(parent) {
                    Some(q) if q == pid => return true,
                    Some(q) if q > 1 => p = Some(q),
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Waits until no process mentions `needle` (20 s at most): what a killed
/// process would have done is asserted after this, not after a sleep.
pub fn wait_gone(needle: &str) {
    wait_for(&format!("no process mentioning {needle}"), || processes_mentioning(needle).is_empty());
}

/// A command on a pseudo-terminal (`script`), its output read as it comes,
/// so a test types only once the prompt is on the screen.
pub struct OnPty {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    out: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    seen: Cell<usize>,
}

impl OnPty {
    pub fn spawn(cmd: &mut Command, cmdline: &str) -> OnPty {
        let mut child = cmd.spawn_script(cmdline);
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().unwrap();
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = out.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        OnPty { child, stdin, out, reader: Some(reader), seen: Cell::new(0) }
    }

    /// Waits (20 s at most) until `needle` is on the screen after what the
    /// last wait found.
    pub fn wait_text(&self, needle: &str) {
        let t0 = Instant::now();
        loop {
            let text = String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned();
            if let Some(i) = text.get(self.seen.get()..).and_then(|rest| rest.find(needle)) {
                self.seen.set(self.seen.get() + i + needle.len());
                return;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "`{needle}` never came:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn type_keys(&mut self, keys: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("input still open");
        stdin.write_all(keys).unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the input, waits for the end; the status and all it printed.
    pub fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        self.reader.take().unwrap().join().unwrap();
        let text = String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned();
        (status, text)
    }
}

/// Processes (not zombies) whose command line mentions `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next()).unwrap_or("Z");
        if state == "Z" || pid == std::process::id() {
            continue;
        }
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

/// The files in `env`'s journal: what a run changed and has not undone yet.
pub fn journal_files(env: &Env) -> Vec<String> {
    std::fs::read_dir(env.home.path().join("journal"))
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// Trial `stem`'s log (`trial-2`) from the `trials.log` of a test's log folder.
pub fn trial_log_in(dir: &Path, stem: &str) -> String {
    let all = std::fs::read_to_string(dir.join("trials.log")).unwrap();
    let head = format!("=== {stem} ===\n");
    let start = all.find(&head).unwrap_or_else(|| panic!("no {stem} in {}:\n{all}", dir.display())) + head.len();
    let rest = &all[start..];
    rest[..rest.find("\n=== trial-").map_or(rest.len(), |i| i + 1)].to_string()
}
