//! Running tests: scratch directory, executor, trials until the statistics
//! rule is met, parsing, and the entries that go into the result file.

pub mod builtin;
pub mod executor;
pub mod external;
pub mod interrupt;
pub mod privilege;
pub mod process;
pub mod requirements;
pub mod server;
pub mod wasm;

use crate::expand::Test;
use crate::parse::{Configured, RawOutput};
use crate::profile::model::{Executor as ExecDef, ParserDef, ResultDef, ScratchScope};
use crate::profile::template;
use crate::result::{ResultEntry, TestResult};
use crate::stats::{AdaptivePlan, Decision};
use executor::{ExecError, Executor, TestEnv, TrialEnv, TrialRun};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Hears about trials as they run (a progress line on a TTY).
pub trait Progress {
    /// Trial `k` of `planned` starts.
    fn trial(&self, _label: &str, _k: u32, _planned: u32) {}
    /// Trial `k` ended and its values were read (`warmup`: a discarded warm-up
    /// trial); `seconds` is its wall time.
    fn trial_done(&self, _k: u32, _warmup: bool, _seconds: f64) {}
    /// The test is over: how it ended.
    fn done(&self, _ended: Ended) {}
}

/// How a test ended, as its progress display hears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Completed,
    Failed,
    /// Stopped by Ctrl-C or SIGTERM: nothing of it is saved.
    Interrupted,
}

/// No progress output.
pub struct Quiet;
impl Progress for Quiet {}

/// Which trial logs are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogPolicy {
    /// Every trial's log (the default).
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
    /// `--warmup N`: trials run first and discarded (overrides the profile).
    pub warmup: Option<u32>,
    /// Parent of the scratch directories.
    pub target_dir: PathBuf,
    pub logs: LogPolicy,
    /// Sync and drop the page cache before every trial (needs root).
    pub drop_caches: bool,
}

/// Why a test failed, for the person running it and the result file.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub reason: String,
    /// The log that explains it.
    pub log: Option<PathBuf>,
    /// The last lines the tool wrote to its standard error.
    pub stderr_tail: Vec<String>,
}

impl Failure {
    fn new(reason: impl Into<String>) -> Self {
        Failure { reason: reason.into(), log: None, stderr_tail: Vec::new() }
    }

    fn of(e: &ExecError) -> Self {
        let log = e.log().map(Path::to_path_buf);
        let stderr_tail = log.as_deref().map(stderr_tail).unwrap_or_default();
        Failure { reason: e.to_string(), log, stderr_tail }
    }
}

/// The last five lines of standard error in a trial log.
fn stderr_tail(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let Some((_, err)) = text.rsplit_once("--- stderr ---\n") else { return Vec::new() };
    let lines: Vec<String> = err.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect();
    lines[lines.len().saturating_sub(5)..].to_vec()
}

/// How one test ended.
pub enum Outcome {
    /// One (template, entry) per result the test yielded.
    Completed(Vec<(TestResult, ResultEntry)>),
    Failed(Failure),
    Interrupted,
}

/// The built-in placeholders plus the test's named values.
pub fn bindings(test: &Test, scratch: &Path, test_dir: &Path, target: &Path) -> IndexMap<String, String> {
    let mut b = test.bindings();
    b.insert("scratch_dir".into(), scratch.display().to_string());
    b.insert("test_dir".into(), test_dir.display().to_string());
    b.insert("target_dir".into(), target.display().to_string());
    let profile_dir = match &test.profile.origin {
        crate::profile::load::Origin::File(p) => p.parent().map(|d| d.display().to_string()).unwrap_or_default(),
        crate::profile::load::Origin::Builtin => String::new(),
    };
    b.insert("profile_dir".into(), profile_dir);
    b.insert("num_cpus".into(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).to_string());
    // A TCP port on 127.0.0.1 free when the test starts, for servers it runs.
    b.insert("free_port".into(), server::free_port().map(|p| p.to_string()).unwrap_or_default());
    let install_dir = crate::install::dir_of(&crate::home::Home::from_env(), &test.profile.profile);
    b.insert("install_dir".into(), install_dir.display().to_string());
    b
}

/// How each result of a test is read: a parser (the first whose `when`
/// matches), or the value the workload returns itself.
enum Source {
    Parser(Configured),
    Direct,
}

fn sources_for<'a>(
    test: &'a Test,
    b: &IndexMap<String, String>,
    direct: bool,
) -> Result<Vec<(&'a ResultDef, Source)>, String> {
    let p = &test.profile.profile;
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false).map_err(|e| e.to_string());
    let applies = |d: &ParserDef| d.when.iter().all(|(k, v)| b.get(k).is_some_and(|x| x == v.as_str()));
    let mut out = Vec::new();
    for r in &p.results {
        if let Some(def) = p.parsers.iter().find(|d| d.result == r.id && applies(d)) {
            out.push((r, Source::Parser(Configured::build(def, &fill, r.signed).map_err(|e| e.to_string())?)));
        } else if direct {
            out.push((r, Source::Direct));
        }
    }
    if out.is_empty() {
        return Err(format!("no parser of {} applies to this test's options", p.id));
    }
    Ok(out)
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// A trial's scratch directory, removed when dropped (after the trial,
/// also a failed one), unless it is the test's own.
struct TrialDir {
    path: PathBuf,
    remove: bool,
}

impl TrialDir {
    fn new(test_dir: &Path, label: &str, scope: ScratchScope) -> Result<TrialDir, ExecError> {
        if scope == ScratchScope::PerTest {
            return Ok(TrialDir { path: test_dir.to_path_buf(), remove: false });
        }
        let path = test_dir.join(format!("trial-{label}"));
        std::fs::create_dir(&path)
            .map_err(|source| ExecError::Io { what: format!("cannot create {}", path.display()), source })?;
        Ok(TrialDir { path, remove: true })
    }
}

impl Drop for TrialDir {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Runs one test to completion: setup, trials (warm-up, scheduled, added),
/// teardown. `logs` is this test's log folder; `logs_rel` how the result file names it.
pub fn run_test(test: &Test, settings: &RunSettings, logs: &Path, logs_rel: &str, progress: &dyn Progress) -> Outcome {
    let outcome = run_test_inner(test, settings, logs, logs_rel, progress);
    progress.done(match outcome {
        Outcome::Completed(_) => Ended::Completed,
        Outcome::Failed(_) => Ended::Failed,
        Outcome::Interrupted => Ended::Interrupted,
    });
    outcome
}

fn run_test_inner(
    test: &Test,
    settings: &RunSettings,
    logs: &Path,
    logs_rel: &str,
    progress: &dyn Progress,
) -> Outcome {
    let fail = |m: String| Outcome::Failed(Failure::new(m));
    if let Err(e) = std::fs::create_dir_all(logs) {
        return fail(format!("cannot create log folder {}: {e}", logs.display()));
    }
    let prefix = crate::state::journal::scratch_prefix(&crate::home::Home::from_env().journal(), &settings.target_dir);
    let test_dir = match tempfile::Builder::new().prefix(&prefix).tempdir_in(&settings.target_dir) {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot create a scratch directory in {}: {e}", settings.target_dir.display())),
    };
    let b = bindings(test, test_dir.path(), test_dir.path(), &settings.target_dir);
    let mut exec = executor_for(test);
    let sources = match sources_for(test, &b, exec.returns_values()) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let env = TestEnv { bindings: &b, test_dir: test_dir.path(), logs };
    let mut pending = Vec::new();
    let result = trials(test, settings, &env, exec.executor.as_mut(), &sources, progress, &mut pending);
    let teardown = exec.executor.teardown(&env);
    // Trial logs are written after the test, not between trials; all of them
    // when something failed, since they explain the failure.
    if settings.logs == LogPolicy::All || result.is_err() {
        for (path, text) in pending {
            if let Err(e) = crate::fsutil::write_new(&path, text.as_bytes()) {
                return fail(format!("cannot write {}: {e}", path.display()));
            }
        }
    }
    let data = match result {
        Ok(r) => r,
        Err(ExecError::Interrupted) => return Outcome::Interrupted,
        Err(e) => return Outcome::Failed(Failure::of(&e)),
    };
    if interrupt::requested() {
        return Outcome::Interrupted;
    }
    if let Err(e) = teardown {
        return Outcome::Failed(Failure::of(&e));
    }
    let p = &test.profile.profile;
    let mut out = Vec::new();
    let stamp = now();
    for (i, (def, _)) in sources.iter().enumerate() {
        if data.values[i].is_empty() {
            continue;
        }
        let mut description = test.description();
        if let Some(extra) = &def.description {
            description = if description.is_empty() { extra.clone() } else { format!("{description} - {extra}") };
        }
        let template = TestResult {
            test: test.key(),
            profile: p.id.clone(),
            profile_version: p.version.clone(),
            result: def.id.clone(),
            title: p.title.clone(),
            app_version: p.app_version.as_ref().map(|v| v.0.clone()),
            description,
            options: test.choices(),
            unit: def.unit.clone(),
            proportion: def.proportion,
            entries: Vec::new(),
            pts: None,
            repository: test.profile.source.clone(),
        };
        let Some(mut entry) = ResultEntry::from_trials(
            "",
            data.values[i].clone(),
            None,
            data.walls.iter().map(Duration::as_secs_f64).collect(),
            stamp.clone(),
        ) else {
            continue;
        };
        entry.added_trials = data.added.clone();
        entry.warning = data.warnings.get(i).cloned().flatten();
        entry.notes = crate::stats::shape::notes(&data.values[i]);
        entry.warmup_trials = data.warmups.clone();
        entry.logs = Some(logs_rel.to_string());
        out.push((template, entry));
    }
    Outcome::Completed(out)
}

/// The executor of a test, and whether it returns values itself.
pub struct Built {
    pub executor: Box<dyn Executor>,
    direct: bool,
}

impl Built {
    fn returns_values(&self) -> bool {
        self.direct
    }
}

/// The executor for `test`'s profile.
fn executor_for(test: &Test) -> Built {
    match &test.profile.profile.executor {
        ExecDef::External(x) => {
            let extra = requirements::extra_path(&test.profile.profile);
            Built { executor: Box::new(external::External::new(x.clone()).with_extra_path(extra)), direct: false }
        }
        ExecDef::Builtin(b) => {
            Built { executor: Box::new(builtin::Builtin::new(b.clone(), &test.profile.profile.id)), direct: true }
        }
        ExecDef::Wasm(w) => {
            let p = &test.profile.profile;
            let dir = match &test.profile.origin {
                crate::profile::load::Origin::File(f) => {
                    Some(f.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf())
                }
                crate::profile::load::Origin::Builtin => None,
            };
            let direct: Vec<String> = p
                .results
                .iter()
                .filter(|r| !p.parsers.iter().any(|d| d.result == r.id))
                .map(|r| r.id.clone())
                .collect();
            Built { executor: Box::new(wasm::Wasm::new(w.clone(), &p.id, dir, direct)), direct: true }
        }
    }
}

struct TrialData {
    /// Per result source, the value of each trial.
    values: Vec<Vec<f64>>,
    walls: Vec<Duration>,
    added: Vec<String>,
    /// Per result: why it stopped short of the target, if it did.
    warnings: Vec<Option<String>>,
    /// Values of the warm-up trials (discarded), per first result.
    warmups: Vec<f64>,
}

/// The value of every result of one trial.
fn read_values(sources: &[(&ResultDef, Source)], run: &TrialRun, k: &str) -> Result<Vec<f64>, ExecError> {
    let raw = RawOutput { stdout: &run.stdout, stderr: &run.stderr, wall: run.wall };
    let bad = |rid: &str, cause: String| ExecError::Parse {
        result: rid.to_string(),
        trial: k.to_string(),
        cause,
        log: run.log.clone(),
    };
    sources
        .iter()
        .map(|(def, src)| match src {
            Source::Parser(p) => p.parse(&raw).map_err(|e| bad(&def.id, e.to_string())),
            Source::Direct => {
                let v = run
                    .values
                    .iter()
                    .find(|(id, _)| *id == def.id)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| bad(&def.id, "the workload returned no value for it".into()))?;
                if !v.is_finite() {
                    return Err(bad(&def.id, format!("the workload returned {v}: not a finite number")));
                }
                if v < 0.0 && !def.signed {
                    return Err(bad(&def.id, format!("the workload returned {v}: a negative value where none can be")));
                }
                Ok(v)
            }
        })
        .collect()
}

fn trials(
    test: &Test,
    settings: &RunSettings,
    env: &TestEnv<'_>,
    exec: &mut dyn Executor,
    sources: &[(&ResultDef, Source)],
    progress: &dyn Progress,
    pending: &mut Vec<(PathBuf, String)>,
) -> Result<TrialData, ExecError> {
    let profile = &test.profile.profile;
    let t = &profile.trials;
    let plan = AdaptivePlan::new(t.times, t.min, t.max, t.target_ci, settings.runs);
    let label = test.label();
    exec.setup(env)?;
    let drop_caches = settings.drop_caches || profile.hygiene.drop_caches;
    let hygiene = || -> Result<(), ExecError> {
        if drop_caches {
            crate::state::hygiene::drop_caches().map_err(ExecError::Setup)?;
        }
        Ok(())
    };
    let mut one = |k: &str| -> Result<TrialRun, ExecError> {
        let dir = TrialDir::new(env.test_dir, k, profile.scratch)?;
        let b = {
            let mut b = env.bindings.clone();
            b.insert("scratch_dir".into(), dir.path.display().to_string());
            b
        };
        let tenv = TrialEnv { bindings: &b, scratch: &dir.path, logs: env.logs, label: k };
        exec.trial(&tenv)
    };
    let mut data = TrialData {
        values: vec![Vec::new(); sources.len()],
        walls: Vec::new(),
        added: Vec::new(),
        warnings: Vec::new(),
        warmups: Vec::new(),
    };
    let warmup = settings.warmup.unwrap_or(t.warmup);
    for w in 1..=warmup {
        hygiene()?;
        progress.trial(&format!("{label} (warm-up)"), w, warmup);
        let k = format!("warmup-{w}");
        let run = one(&k)?;
        if let Ok(v) = read_values(sources, &run, &k) {
            data.warmups.extend(v.first());
        }
        progress.trial_done(w, true, run.wall.as_secs_f64());
        pending.push((run.log, run.log_text));
    }
    let mut k = 0u32;
    loop {
        if interrupt::requested() {
            return Err(ExecError::Interrupted);
        }
        k += 1;
        let planned = settings.runs.unwrap_or(t.times).max(k);
        hygiene()?;
        progress.trial(&label, k, planned);
        let run = one(&k.to_string())?;
        let parsed = read_values(sources, &run, &k.to_string());
        let wall = run.wall;
        pending.push((run.log, run.log_text));
        for (i, v) in parsed?.into_iter().enumerate() {
            data.values[i].push(v);
        }
        progress.trial_done(k, false, wall.as_secs_f64());
        data.walls.push(wall);
        let longest = data.walls.iter().copied().max().unwrap_or_default();
        // Every result counts: any that wants more trials gets them. When
        // all stop, each keeps its own warning (its own CI, drift, groups).
        let mut more = None;
        let mut warnings = Vec::with_capacity(data.values.len());
        for v in &data.values {
            match plan.decide(v, longest) {
                Decision::More(r) => {
                    more = Some(r);
                    break;
                }
                Decision::Stop(w) => warnings.push(w),
            }
        }
        match more {
            None => {
                data.warnings = warnings;
                break;
            }
            Some(Some(reason)) => data.added.push(format!("trial {}: {reason}", k + 1)),
            Some(None) => {}
        }
    }
    Ok(data)
}
