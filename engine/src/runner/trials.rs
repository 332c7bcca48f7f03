//! The trials of one test: warm-ups, then trials until the statistics rule
//! (`crate::stats`) is met, each in its own scratch directory, each result
//! read from the trial's output or taken from what the workload returned.

use super::RunSettings;
use super::executor::{ExecError, Executor, TestEnv, TrialEnv, TrialRun};
use crate::events::Events;
use crate::expand::Test;
use crate::model::profile::{ParserDef, ResultDef, ScratchScope};
use crate::model::template;
use crate::parse::{Configured, Plugins, RawOutput};
use crate::stats::{AdaptivePlan, Decision};
use crate::sys::interrupt;
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// How each result of a test is read: a parser (the first whose `when`
/// matches), or the value the workload returns itself.
pub(super) enum Source {
    Parser(Configured),
    Direct,
}

/// The results of `test` and how each is read.
pub(super) fn sources_for<'a>(
    test: &'a Test,
    b: &IndexMap<String, String>,
    plugins: Plugins<'_>,
) -> Result<Vec<(&'a ResultDef, Source)>, String> {
    let p = &test.profile.profile;
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false).map_err(|e| e.to_string());
    let applies = |d: &ParserDef| d.when.iter().all(|(k, v)| b.get(k).is_some_and(|x| x == v.as_str()));
    let mut out = Vec::new();
    for r in &p.results {
        if let Some(def) = p.parsers.iter().find(|d| d.result == r.id && applies(d)) {
            let parser = Configured::build(def, &fill, r.signed, Some(plugins)).map_err(|e| e.to_string())?;
            out.push((r, Source::Parser(parser)));
        } else if p.executor.returns_values() {
            out.push((r, Source::Direct));
        }
    }
    if out.is_empty() {
        return Err(format!("no parser of {} applies to this test's options", p.id));
    }
    Ok(out)
}

/// What the trials of a test measured.
pub(super) struct TrialData {
    /// Per result source, the value of each trial.
    pub values: Vec<Vec<f64>>,
    pub walls: Vec<Duration>,
    /// Why each added trial was added.
    pub added: Vec<String>,
    /// Per result: why it stopped short of the target, if it did.
    pub warnings: Vec<Option<String>>,
    /// Values of the warm-up trials (discarded), per first result.
    pub warmups: Vec<f64>,
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

/// Runs trials of one test: one trial at a time in a fresh scratch
/// directory (unless the profile shares one), with the hygiene asked for.
struct Trials<'a> {
    test: &'a Test,
    env: &'a TestEnv<'a>,
    exec: &'a mut dyn Executor,
    sources: &'a [(&'a ResultDef, Source)],
    drop_caches: bool,
    pending: &'a mut Vec<(PathBuf, String)>,
}

impl Trials<'_> {
    /// Trial `k` (`1`, `warmup-2`): its run, its log kept for later.
    fn one(&mut self, k: &str) -> Result<TrialRun, ExecError> {
        if self.drop_caches {
            crate::state::hygiene::drop_caches().map_err(|e| ExecError::Setup(e.to_string()))?;
        }
        let dir = TrialDir::new(self.env.test_dir, k, self.test.profile.profile.scratch)?;
        let mut b = self.env.bindings.clone();
        b.insert("scratch_dir".into(), dir.path.display().to_string());
        let tenv = TrialEnv { bindings: &b, scratch: &dir.path, logs: self.env.logs, label: k };
        self.exec.trial(&tenv)
    }

    /// `n` warm-up trials; the first result's values are kept apart.
    fn warmups(&mut self, n: u32, events: &dyn Events, data: &mut TrialData) -> Result<(), ExecError> {
        for w in 1..=n {
            events.trial_started(w, n, true);
            let k = format!("warmup-{w}");
            let mut run = self.one(&k)?;
            if let Ok(v) = read_values(self.sources, &run, &k) {
                data.warmups.extend(v.first());
            }
            events.trial_done(w, true, run.wall.as_secs_f64());
            self.pending.push((std::mem::take(&mut run.log), std::mem::take(&mut run.log_text)));
        }
        Ok(())
    }
}

/// Whether `plan` wants another trial after `data`: every result counts, any
/// that wants more gets them (`Some(reason)`); when all stop, each keeps its
/// own warning (its own CI, drift, groups).
fn decide(plan: &AdaptivePlan, data: &mut TrialData) -> Option<Option<String>> {
    let longest = data.walls.iter().copied().max().unwrap_or_default();
    let mut warnings = Vec::with_capacity(data.values.len());
    for v in &data.values {
        match plan.decide(v, longest) {
            Decision::More(r) => return Some(r),
            Decision::Stop(w) => warnings.push(w),
        }
    }
    data.warnings = warnings;
    None
}

/// Sets up the executor and runs the warm-ups and trials of `test`.
pub(super) fn run(
    test: &Test,
    settings: &RunSettings,
    env: &TestEnv<'_>,
    exec: &mut dyn Executor,
    sources: &[(&ResultDef, Source)],
    events: &dyn Events,
    pending: &mut Vec<(PathBuf, String)>,
) -> Result<TrialData, ExecError> {
    let profile = &test.profile.profile;
    let plan = profile.trials.plan(settings.runs);
    exec.setup(env)?;
    let drop_caches = settings.drop_caches || profile.hygiene.drop_caches;
    let mut t = Trials { test, env, exec, sources, drop_caches, pending };
    let mut data = TrialData {
        values: vec![Vec::new(); sources.len()],
        walls: Vec::new(),
        added: Vec::new(),
        warnings: Vec::new(),
        warmups: Vec::new(),
    };
    t.warmups(settings.warmup.unwrap_or(profile.trials.warmup), events, &mut data)?;
    for k in 1u32.. {
        if interrupt::requested() {
            return Err(ExecError::Interrupted);
        }
        events.trial_started(k, settings.runs.unwrap_or(profile.trials.times).max(k), false);
        let mut run = t.one(&k.to_string())?;
        let parsed = read_values(sources, &run, &k.to_string());
        t.pending.push((std::mem::take(&mut run.log), std::mem::take(&mut run.log_text)));
        for (i, v) in parsed?.into_iter().enumerate() {
            data.values[i].push(v);
        }
        events.trial_done(k, false, run.wall.as_secs_f64());
        data.walls.push(run.wall);
        match decide(&plan, &mut data) {
            None => break,
            Some(Some(reason)) => data.added.push(format!("trial {}: {reason}", k + 1)),
            Some(None) => {}
        }
    }
    Ok(data)
}
