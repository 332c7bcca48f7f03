//! Running one test: its folder in the target directory, its executor,
//! trials until the statistics rule is met, parsing, and the entries that go
//! into the result file. The runner drives an [`Executor`] without knowing
//! which one it is; [`Executors`] says which one a test gets.

pub mod builtin;
mod commands;
mod dispatch;
mod entries;
pub mod executor;
pub mod external;
pub mod reached;
pub mod requirements;
pub mod sandbox;
pub mod server;
mod setups;
mod span;
mod trial_log;
mod trials;
mod verdicts;
pub mod wasm;
pub(crate) mod watchdog;

use crate::events::Events;
use crate::expand::Test;
use crate::model::result::{ResultEntry, TestResult};
use crate::plugin::cache::Cache;
use crate::state::scratch::Scratch;
use crate::state::server::Servers;
use crate::state::switch::Switch;
use crate::sys::interrupt;
pub use commands::commands;
pub use dispatch::ProfileExecutors;
pub use executor::{ExecError, Executor, Executors, TestEnv, TrialEnv, TrialRun};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};

/// Which trial logs are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogPolicy {
    /// Every trial's log (the default).
    #[default]
    All,
    /// Only the logs of failed trials (for micro-benchmarks where creating a
    /// file per trial costs more than the trial).
    Failed,
}

/// Settings of one run that apply to every test.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// `--runs N`.
    pub runs: Option<u32>,
    /// `--budget`: the time each test's trials may take.
    pub budget: Option<std::time::Duration>,
    /// `--rounds N`: this run is one of N blocks of the same trials, each
    /// with its share of the scheduled trials and of the budget.
    pub rounds: u32,
    /// `--warmup N`: trials run first and discarded (overrides the profile).
    pub warmup: Option<u32>,
    /// Parent of the test folders.
    pub target_dir: PathBuf,
    pub logs: LogPolicy,
    /// Sync and drop the page cache before every trial (needs root).
    pub drop_caches: bool,
    /// Whether and how often the devices and the system are sampled
    /// around every trial.
    pub monitor: crate::monitor::Monitoring,
    /// `--setups N`: how many times each test is set up afresh (over the
    /// suite's and the profile's); `None`: theirs, else once.
    pub setups: Option<u32>,
    /// Each round is a set-up (`--setups N` on a --device): each round at
    /// least two trials unless `--runs` says otherwise.
    pub rounds_are_setups: bool,
    /// `--equivalence`, else config.toml's, else 2: the margin the verdict
    /// stop of an interleaved run settles "equivalent" within, percent.
    pub equivalence_pct: f64,
}

/// What running a test needs from outside it.
pub struct Env<'a> {
    /// Where profiles are installed (`ENGINE_HOME/installed`): `{{install_dir}}`.
    pub installed: &'a Path,
    /// Compiled WASM plugins.
    pub plugins: &'a Cache,
    /// The run's test folders, journaled.
    pub scratch: &'a Scratch,
    /// The journal of the servers tests start.
    pub servers: &'a Servers,
    /// Which executor a test gets.
    pub executors: &'a dyn Executors,
    /// The PATH engine was started with (programs found off it are added to it).
    pub path: Option<&'a str>,
    /// The sandbox's settings, when some test runs confined.
    pub sandbox: Option<&'a sandbox::Config>,
}

/// Where a test's logs go: the folder the store staged for them (the
/// runner writes into no result folder), and where the result file will
/// find them once the store has kept them.
pub struct Logs<'a> {
    pub dir: &'a Path,
    pub rel: &'a str,
    /// The state's identifier, for the progress line of an interleaved run.
    pub name: &'a str,
}

/// Why a test failed, for the person running it and the result file.
#[derive(Debug, Clone, PartialEq)]
pub struct TestFailure {
    pub reason: String,
    /// The log that explains it.
    pub log: Option<PathBuf>,
    /// The last lines of what explains it: the stream a parser could not
    /// read, else the tool's standard error.
    pub stderr_tail: Vec<String>,
}

impl TestFailure {
    fn new(reason: impl Into<String>) -> Self {
        TestFailure { reason: reason.into(), log: None, stderr_tail: Vec::new() }
    }

    fn of(e: &ExecError) -> Self {
        let log = e.log().map(Path::to_path_buf);
        let stderr_tail = match e {
            ExecError::Parse { tail, .. } => tail.clone(),
            _ => log.as_deref().map(stderr_tail).unwrap_or_default(),
        };
        TestFailure { reason: e.to_string(), log, stderr_tail }
    }
}

/// The last five lines of standard error in a trial log.
fn stderr_tail(log: &Path) -> Vec<String> {
    // The end of the log only (it is as large as the test made it): its
    // standard error is the last section.
    const TAIL: u64 = 64 << 10;
    let text = crate::sys::fs::read_tail(log, TAIL);
    let tail = trial_log::stderr_tail(&text, 5);
    let larger = std::fs::symlink_metadata(log).is_ok_and(|m| m.len() > TAIL);
    if tail.is_empty() && larger && !text.contains(trial_log::STDOUT) {
        return trial_log::last_lines(&text, 5);
    }
    tail
}

/// How one test ended.
pub enum Outcome {
    /// One (template, entry) per result the test yielded, and the
    /// monitor's series for the store to keep beside the logs.
    Completed {
        results: Vec<(TestResult, ResultEntry)>,
        series: Option<Box<crate::model::series::Series>>,
    },
    Failed(TestFailure),
    Interrupted,
}

/// The built-in placeholders plus the test's named values.
pub(crate) fn bindings(test: &Test, test_dir: &Path, target: &Path, installed: &Path) -> IndexMap<String, String> {
    let mut b = test.bindings();
    b.insert("scratch_dir".into(), test_dir.display().to_string());
    b.insert("test_dir".into(), test_dir.display().to_string());
    b.insert("target_dir".into(), target.display().to_string());
    let profile_dir = test.profile.dir().map(|d| d.display().to_string()).unwrap_or_default();
    b.insert("profile_dir".into(), profile_dir);
    b.insert("num_cpus".into(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).to_string());
    // A TCP port on 127.0.0.1 free when the test starts, for servers it runs.
    b.insert("free_port".into(), server::free_port().map(|p| p.to_string()).unwrap_or_default());
    let install_dir = crate::install::dir_of(installed, &test.profile.profile);
    b.insert("install_dir".into(), install_dir.display().to_string());
    b
}

/// Runs one test with its trials interleaved across the states of `switch`
/// (set up once, trials round-robin): one outcome per state, `logs[i]`
/// holding state `i`'s logs. A failure fails the test in every state.
pub fn run_states(
    test: &Test,
    settings: &RunSettings,
    env: &Env<'_>,
    logs: &[Logs<'_>],
    events: &dyn Events,
    switch: &mut dyn Switch,
) -> Vec<Outcome> {
    let outcome = test_folder(env.scratch, &settings.target_dir).and_then(|dir| {
        let o = run(test, settings, env, logs, events, switch, &dir);
        // The folder goes once everything that used it has: a tree the
        // test left that cannot be removed in time is moved aside, and said.
        if let Some(w) = dir.remove() {
            events.message(&w);
        }
        o
    });
    match outcome {
        Ok(o) => o,
        Err(f) => (0..logs.len()).map(|_| Outcome::Failed(f.clone())).collect(),
    }
}

fn run(
    test: &Test,
    settings: &RunSettings,
    env: &Env<'_>,
    logs: &[Logs<'_>],
    events: &dyn Events,
    switch: &mut dyn Switch,
    test_dir: &TestFolder,
) -> Result<Vec<Outcome>, TestFailure> {
    for l in logs {
        std::fs::create_dir_all(l.dir)
            .map_err(|e| TestFailure::new(format!("cannot create log folder {}: {e}", l.dir.display())))?;
    }
    say_confined(test, env, test_dir.path(), events);
    let b = bindings(test, test_dir.path(), &settings.target_dir, env.installed);
    let plugins = crate::parse::Plugins { profile: &test.profile, cache: env.plugins };
    let sources = trials::sources_for(test, &b, plugins).map_err(|e| TestFailure::new(e.to_string()))?;
    let mut executor = env.executors.executor(test, env);
    let dir = crate::sys::safepath::Dir::open(test_dir.path())
        .map_err(|e| TestFailure::new(format!("cannot open {}: {e}", test_dir.path().display())))?;
    let tenv = TestEnv { bindings: &b, test_dir: test_dir.path(), dir: &dir, logs: logs[0].dir };
    let dirs: Vec<&Path> = logs.iter().map(|l| l.dir).collect();
    let names: Vec<&str> = logs.iter().map(|l| l.name).collect();
    let mut pending = Vec::new();
    let job = trials::Job { test, settings, env: &tenv, logs: &dirs, names: &names, sources: &sources, events };
    let setups = settings.setups.or(test.setups).or(test.profile.profile.trials.setups).unwrap_or(1);
    let result = trials::start(&job, executor.as_mut(), switch, &mut pending).and_then(|mut s| {
        let (t, data, plan, order) = (&mut s.t, &mut s.data, &s.plan, s.order.clone());
        if setups > 1 {
            setups::Rounds { job: &job, switch, plan, order, round: 0 }.run(t, data, setups, s.setup_cost)?;
        } else {
            trials::rounds(t, &job, switch, plan, data, order)?;
        }
        Ok(s.finish(events))
    });
    let teardown = executor.teardown(&tenv);
    // Trial logs are written after the test, not between trials: all of
    // them when something failed, each in its own file, since they explain
    // the failure (its message names the file); else, with `--logs all`,
    // one `trials.log` per folder — a file per trial cost more than a short
    // trial itself (an inode allocated each time).
    if result.is_err() {
        for (path, text) in pending {
            crate::sys::fs::write_new(&path, text.as_bytes())
                .map_err(|e| TestFailure::new(format!("cannot write {}: {e}", path.display())))?;
        }
    } else if settings.logs == LogPolicy::All {
        write_trials_logs(pending)?;
    }
    let interrupted = || (0..logs.len()).map(|_| Outcome::Interrupted).collect();
    let data = match result {
        Ok(r) => r,
        Err(e) if e.interrupted() || interrupt::requested() => return Ok(interrupted()),
        Err(e) => return Err(TestFailure::of(&e)),
    };
    if interrupt::requested() {
        return Ok(interrupted());
    }
    teardown.map_err(|e| TestFailure::of(&e))?;
    Ok(data
        .into_iter()
        .zip(logs)
        .map(|(mut d, l)| {
            let results = entries::build(test, &sources, &d, l.rel);
            Outcome::Completed { results, series: d.series.take() }
        })
        .collect())
}

/// A confined test says so as it starts: what it may write, and its network.
fn say_confined(test: &Test, env: &Env<'_>, test_dir: &Path, events: &dyn Events) {
    let external = matches!(test.profile.profile.executor, crate::model::profile::ExecutorDef::External(_));
    if !external || !env.sandbox.is_some_and(|c| sandbox::applies(c.mode, &test.profile)) {
        return;
    }
    events.message(&format!(
        "{} runs confined: it writes only {} and a private /tmp; network: lo only; root inside is not root outside",
        crate::sys::text::one_line(&test.label()),
        test_dir.display()
    ));
}

/// Each folder's trial logs as one `trials.log`: a `=== trial-K ===` line
/// before each trial's log, in run order.
fn write_trials_logs(pending: Vec<(PathBuf, String)>) -> Result<(), TestFailure> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for (path, text) in pending {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let i = match files.iter().position(|(d, _)| *d == dir) {
            Some(i) => i,
            None => {
                files.push((dir, String::new()));
                files.len() - 1
            }
        };
        let out = &mut files[i].1;
        out.push_str(&format!("=== {name} ===\n"));
        out.push_str(&text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    for (dir, text) in files {
        let path = dir.join(TRIALS_LOG);
        crate::sys::fs::write_new(&path, text.as_bytes())
            .map_err(|e| TestFailure::new(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// The file a test's trial logs go into (one per identifier).
pub(crate) const TRIALS_LOG: &str = "trials.log";

/// The test's own folder in `target`, named so that what a kill -9 leaves
/// is found and removed; removed when dropped, level by level with a
/// constant number of descriptors, what is left past the deadline moved
/// into the target's quarantine ([`crate::sys::remove`]).
fn test_folder(scratch: &Scratch, target: &Path) -> Result<TestFolder, TestFailure> {
    let prefix = scratch.prefix(target);
    let dir = tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(target)
        .map_err(|e| TestFailure::new(format!("cannot create a scratch directory in {}: {e}", target.display())))?;
    Ok(TestFolder { path: dir.keep() })
}

struct TestFolder {
    path: PathBuf,
}

impl TestFolder {
    fn path(&self) -> &Path {
        &self.path
    }

    /// Removes it; what to tell the person when it could not be.
    fn remove(&self) -> Option<String> {
        use crate::sys::remove::{Removed, remove_or_quarantine};
        match remove_or_quarantine(&self.path, None) {
            Ok(Removed::Gone) => None,
            Ok(Removed::Quarantined(to)) => Some(format!(
                "the test left a tree engine could not remove in time: moved to {} (the next run and `engine recover` clear it)",
                to.display()
            )),
            Err(e) => Some(format!("cannot remove the test's folder {}: {e}", self.path.display())),
        }
    }
}
