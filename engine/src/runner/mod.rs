//! Running tests: scratch directory, executor, trials until the statistics
//! rule is met, parsing, and the entries that go into the result file.

pub mod executor;
pub mod external;
pub mod interrupt;
pub mod process;
pub mod requirements;

use crate::expand::Test;
use crate::parse::{Configured, RawOutput};
use crate::profile::model::{Executor as ExecDef, ParserDef};
use crate::profile::template;
use crate::result::{ResultEntry, TestResult};
use crate::stats::{AdaptivePlan, Decision};
use executor::{ExecError, Executor, TestEnv};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Hears about trials as they run (a progress line on a TTY).
pub trait Progress {
    fn trial(&self, _label: &str, _k: u32, _planned: u32) {}
    fn done(&self) {}
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
    /// Parent of the scratch directories.
    pub target_dir: PathBuf,
    pub logs: LogPolicy,
    /// Sync and drop the page cache before every trial (needs root).
    pub drop_caches: bool,
}

/// How one test ended.
pub enum Outcome {
    /// One (template, entry) per result the test yielded.
    Completed(Vec<(TestResult, ResultEntry)>),
    Failed(String),
    Interrupted,
}

/// The built-in placeholders plus the test's named values.
pub fn bindings(test: &Test, scratch: &Path, target: &Path) -> IndexMap<String, String> {
    let mut b = test.bindings();
    b.insert("scratch_dir".into(), scratch.display().to_string());
    b.insert("target_dir".into(), target.display().to_string());
    let profile_dir = match &test.profile.origin {
        crate::profile::load::Origin::File(p) => p.parent().map(|d| d.display().to_string()).unwrap_or_default(),
        crate::profile::load::Origin::Builtin => String::new(),
    };
    b.insert("profile_dir".into(), profile_dir);
    b.insert("num_cpus".into(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).to_string());
    b
}

/// The parser for each result this test yields: the first whose `when` matches.
fn parsers_for<'a>(test: &'a Test, b: &IndexMap<String, String>) -> Result<Vec<(&'a str, Configured)>, String> {
    let p = &test.profile.profile;
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false).map_err(|e| e.to_string());
    let applies = |d: &ParserDef| d.when.iter().all(|(k, v)| b.get(k).is_some_and(|x| x == v.as_str()));
    let mut out = Vec::new();
    for r in &p.results {
        if let Some(def) = p.parsers.iter().find(|d| d.result == r.id && applies(d)) {
            out.push((r.id.as_str(), Configured::build(def, &fill).map_err(|e| e.to_string())?));
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

/// Runs one test to completion: setup, trials (warm-up, scheduled, added),
/// teardown. `logs` is this test's log folder; `logs_rel` how the result file names it.
pub fn run_test(test: &Test, settings: &RunSettings, logs: &Path, logs_rel: &str, progress: &dyn Progress) -> Outcome {
    let fail = |m: String| Outcome::Failed(m);
    if let Err(e) = std::fs::create_dir_all(logs) {
        return fail(format!("cannot create log folder {}: {e}", logs.display()));
    }
    let scratch = match tempfile::Builder::new().prefix("engine-").tempdir_in(&settings.target_dir) {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot create a scratch directory in {}: {e}", settings.target_dir.display())),
    };
    let b = bindings(test, scratch.path(), &settings.target_dir);
    let parsers = match parsers_for(test, &b) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let env = TestEnv { bindings: &b, scratch: scratch.path(), logs };
    let mut exec: Box<dyn Executor> = match &test.profile.profile.executor {
        ExecDef::External(x) => Box::new(external::External::new(x.clone())),
    };
    let mut pending = Vec::new();
    let result = trials(test, settings, &env, exec.as_mut(), &parsers, progress, &mut pending);
    let teardown = exec.teardown(&env);
    progress.done();
    // Trial logs are written after the test, not between trials; all of them
    // when something failed, since they explain the failure.
    if settings.logs == LogPolicy::All || result.is_err() {
        for (path, text) in pending {
            if let Err(e) = std::fs::write(&path, text) {
                return fail(format!("cannot write {}: {e}", path.display()));
            }
        }
    }
    let (values, walls, added, warning) = match result {
        Ok(r) => r,
        Err(ExecError::Interrupted) => return Outcome::Interrupted,
        Err(e) => return fail(e.to_string()),
    };
    if interrupt::requested() {
        return Outcome::Interrupted;
    }
    if let Err(e) = teardown {
        return fail(e.to_string());
    }
    let p = &test.profile.profile;
    let mut out = Vec::new();
    let stamp = now();
    for (i, (rid, _)) in parsers.iter().enumerate() {
        let def = p.results.iter().find(|r| r.id == *rid).expect("parser results exist");
        if values[i].is_empty() {
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
        };
        let mut entry = ResultEntry::from_trials(
            "",
            values[i].clone(),
            None,
            walls.iter().map(Duration::as_secs_f64).collect(),
            stamp.clone(),
        )
        .expect("a completed test has trials");
        entry.added_trials = added.clone();
        entry.warning = warning.clone();
        entry.logs = Some(logs_rel.to_string());
        out.push((template, entry));
    }
    Outcome::Completed(out)
}

type TrialData = (Vec<Vec<f64>>, Vec<Duration>, Vec<String>, Option<String>);

fn trials(
    test: &Test,
    settings: &RunSettings,
    env: &TestEnv<'_>,
    exec: &mut dyn Executor,
    parsers: &[(&str, Configured)],
    progress: &dyn Progress,
    pending: &mut Vec<(PathBuf, String)>,
) -> Result<TrialData, ExecError> {
    let t = &test.profile.profile.trials;
    let plan = AdaptivePlan::new(t.times, t.min, t.max, t.target_rse, settings.runs);
    let label = test.label();
    exec.setup(env)?;
    let mut first = true;
    let drop_caches = settings.drop_caches || test.profile.profile.hygiene.drop_caches;
    let hygiene = || -> Result<(), ExecError> {
        if drop_caches {
            crate::state::hygiene::drop_caches().map_err(ExecError::Setup)?;
        }
        Ok(())
    };
    for w in 1..=t.warmup {
        hygiene()?;
        progress.trial(&format!("{label} (warm-up)"), w, t.warmup);
        let run = exec.trial(env, &format!("warmup-{w}"), first)?;
        pending.push((run.log, run.log_text));
        first = false;
    }
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); parsers.len()];
    let mut walls: Vec<Duration> = Vec::new();
    let mut added = Vec::new();
    let mut warning = None;
    let mut k = 0u32;
    loop {
        if interrupt::requested() {
            return Err(ExecError::Interrupted);
        }
        k += 1;
        let planned = settings.runs.unwrap_or(t.times).max(k);
        hygiene()?;
        progress.trial(&label, k, planned);
        let run = exec.trial(env, &k.to_string(), first)?;
        first = false;
        let raw = RawOutput { stdout: &run.stdout, stderr: &run.stderr, wall: run.wall };
        let parsed: Result<Vec<f64>, ExecError> = parsers
            .iter()
            .map(|(rid, p)| {
                p.parse(&raw).map_err(|e| {
                    let log = run.log.display();
                    ExecError::Setup(format!("result `{rid}` could not be read from trial {k}: {e}; see {log}"))
                })
            })
            .collect();
        let wall = run.wall;
        pending.push((run.log, run.log_text));
        for (i, v) in parsed?.into_iter().enumerate() {
            values[i].push(v);
        }
        walls.push(wall);
        let longest = walls.iter().copied().max().unwrap_or_default();
        // Every result counts: the noisiest decides.
        let mut decision = Decision::Stop;
        for v in &values {
            match plan.decide(v, longest) {
                Decision::Stop => {}
                d @ Decision::More(_) => {
                    decision = d;
                    break;
                }
                d @ Decision::StopAtCap(_) => decision = d,
            }
        }
        match decision {
            Decision::Stop => break,
            Decision::StopAtCap(w) => {
                warning = Some(w);
                break;
            }
            Decision::More(Some(reason)) => added.push(format!("trial {}: {reason}", k + 1)),
            Decision::More(None) => {}
        }
    }
    Ok((values, walls, added, warning))
}
