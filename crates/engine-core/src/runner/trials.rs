//! The trials of one test: warm-ups, then trials until the statistics rule
//! (`crate::stats`) is met, each in its own scratch directory, each result
//! read from the trial's output or taken from what the workload returned.

use super::RunSettings;
use super::executor::{ExecError, Executor, TestEnv, TrialEnv, TrialRun};
use super::span::{Figures, Measured};
use crate::events::Events;
use crate::expand::Test;
use crate::model::profile::{ParserDef, ResultDef, ScratchScope, Stream};
use crate::model::result::TrialIo;
use crate::model::template;
use crate::monitor::Recorder;
use crate::parse::{Configured, Plugins, RawOutput};
use crate::state::switch::Switch;
use crate::stats::adaptive::Stop;
use crate::stats::{AdaptivePlan, Decision};
use crate::sys::interrupt;
use crate::sys::safepath::Dir;
use crate::sysinfo::diskstats::Counters;
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A trial's scratch directory, removed when dropped (after the trial,
/// also a failed one), unless it is the test's own. Held open: engine
/// never reaches it through a path the trial's command could have changed.
struct TrialDir {
    path: PathBuf,
    dir: Dir,
    remove: bool,
}

/// The name of the trials' scratch directory in the test's.
const TRIAL: &str = "trial";

impl TrialDir {
    /// The trial's scratch directory: `TEST/trial`, empty. The previous
    /// trial's is reused when it left it empty (most do) — creating and
    /// removing a directory per trial is an inode allocated and freed each
    /// time, a measurable part of a short trial's cost on ext4.
    /// `kept`: what the previous trial left in place, empty ([`TrialDir::finish`]).
    fn new(test: &Dir, scope: ScratchScope, kept: Option<Dir>) -> Result<TrialDir, ExecError> {
        let io = |source| ExecError::Io { what: format!("cannot create {}/{TRIAL}", test.path().display()), source };
        if scope == ScratchScope::PerTest {
            let dir = test.open_dir(Path::new("")).map_err(io)?;
            return Ok(TrialDir { path: test.path().to_path_buf(), dir, remove: false });
        }
        let path = test.path().join(TRIAL);
        if let Some(dir) = kept {
            return Ok(TrialDir { path, dir, remove: true });
        }
        // Whatever is there (a link a command planted, a tree) is replaced
        // without being followed.
        let dir = test.fresh_dir(TRIAL, None).map_err(io)?;
        Ok(TrialDir { path, dir, remove: true })
    }

    /// Cleans up after the trial; the directory when it stays, empty and
    /// still the test's `trial`, for the next one.
    fn finish(mut self, test: &Dir) -> Option<Dir> {
        if !std::mem::take(&mut self.remove) {
            return None;
        }
        let same = test.open_dir(Path::new(TRIAL)).is_ok_and(|d| d.same_as(&self.dir));
        if same && self.dir.is_empty() {
            return test.open_dir(Path::new(TRIAL)).ok();
        }
        clean(test);
        None
    }
}

/// Removes the test's `trial`, whatever it is; what cannot be removed (a
/// mount a tool left inside) is moved aside, to go with the test folder.
fn clean(test: &Dir) {
    if test.remove(Path::new(TRIAL)).is_err() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let _ = test.rename(Path::new(TRIAL), Path::new(&format!("trial-left-{}", nanos.as_nanos())));
    }
}

impl Drop for TrialDir {
    fn drop(&mut self) {
        if std::mem::take(&mut self.remove)
            && let Ok(test) = Dir::open(self.path.parent().unwrap_or(Path::new("/nonexistent")))
        {
            clean(&test);
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
) -> Result<Vec<(&'a ResultDef, Source)>, SourcesError> {
    let p = &test.profile.profile;
    let fill = |s: &str| template::render(s, |n| b.get(n).map(String::as_str), false);
    let applies = |d: &ParserDef| d.when.iter().all(|(k, v)| b.get(k).is_some_and(|x| x == v.as_str()));
    let mut out = Vec::new();
    for r in &p.results {
        if let Some(def) = p.parsers.iter().find(|d| d.result == r.id && applies(d)) {
            let parser = Configured::build(def, &fill, r, Some(plugins))?;
            out.push((r, Source::Parser(parser)));
        } else if p.executor.returns_values() {
            out.push((r, Source::Direct));
        }
    }
    if out.is_empty() {
        return Err(SourcesError::NoneApplies(p.id.clone()));
    }
    Ok(out)
}

/// Why a test's results cannot be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum SourcesError {
    #[error(transparent)]
    Parser(#[from] crate::parse::ParseError),
    #[error("no parser of {0} applies to this test's options")]
    NoneApplies(String),
}

/// What the trials of a test measured.
pub(super) struct TrialData {
    /// Per result source, the value of each trial.
    pub values: Vec<Vec<f64>>,
    pub walls: Vec<Duration>,
    /// Why each added trial was added.
    pub added: Vec<String>,
    /// Per result: why its trials stopped, and the warning when that was
    /// short of the target.
    pub stops: Vec<(Stop, Option<String>)>,
    /// The time budget the trials had.
    pub budget: Duration,
    /// Values of the warm-up trials (discarded), per first result.
    pub warmups: Vec<f64>,
    /// Per trial: what reached the device and the CPU time.
    pub io: Vec<TrialIo>,
    /// Why there are no device counters, when there are none.
    pub no_counters: Option<String>,
    /// The monitor's series, for the store to keep beside the logs.
    pub series: Option<Box<crate::model::series::Series>>,
    /// What the series showed at its limit (for what bounded the results).
    pub signals: crate::monitor::bound::Signals,
    /// Each measured trial's set-up (`--setups N`); empty when set up once.
    pub setups: Vec<u32>,
    /// In an interleaved run, each measured trial's round; empty otherwise.
    pub rounds: Vec<u32>,
    /// The interleaved run's token, shared by its states (pairs by round).
    pub interleave: Option<String>,
}

impl TrialData {
    fn new(results: usize, plan: &AdaptivePlan, no_counters: &Option<String>) -> TrialData {
        TrialData {
            values: vec![Vec::new(); results],
            walls: Vec::new(),
            added: Vec::new(),
            stops: Vec::new(),
            budget: plan.budget,
            warmups: Vec::new(),
            io: Vec::new(),
            no_counters: no_counters.clone(),
            series: None,
            signals: Default::default(),
            setups: Vec::new(),
            rounds: Vec::new(),
            interleave: None,
        }
    }
}

/// The value of every result of one trial.
fn read_values(sources: &[(&ResultDef, Source)], run: &TrialRun, k: &str) -> Result<Vec<f64>, ExecError> {
    let raw = RawOutput { stdout: &run.stdout, stderr: &run.stderr, wall: run.wall };
    let bad = |rid: &str, cause: String, read: &str| ExecError::Parse {
        result: rid.to_string(),
        trial: k.to_string(),
        cause,
        log: run.log.clone(),
        tail: super::trial_log::last_lines(read, 5),
    };
    sources
        .iter()
        .map(|(def, src)| match src {
            Source::Parser(p) => {
                let read = match p.stream() {
                    Stream::Stdout => &run.stdout,
                    Stream::Stderr => &run.stderr,
                };
                p.parse(&raw).map_err(|e| {
                    let cut = if crate::sys::bounded::was_cut(read) {
                        " (the output was cut to its first and last 4 MiB: what the parser looks for may have been in the part not kept)"
                    } else {
                        ""
                    };
                    bad(&def.id, format!("{e}{cut}"), read)
                })
            }
            Source::Direct => {
                let v = run
                    .values
                    .iter()
                    .find(|(id, _)| *id == def.id)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| bad(&def.id, "the workload returned no value for it".into(), ""))?;
                if !v.is_finite() {
                    return Err(bad(
                        &def.id,
                        format!("the workload returned {}: not a finite number", crate::units::exact(v)),
                        "",
                    ));
                }
                if v < 0.0 && !def.signed {
                    return Err(bad(
                        &def.id,
                        format!("the workload returned {}: a negative value where none can be", crate::units::exact(v)),
                        "",
                    ));
                }
                Ok(v)
            }
        })
        .collect()
}

/// Runs trials of one test: one trial at a time in a fresh scratch
/// directory (unless the profile shares one), with the hygiene asked for.
pub(super) struct Trials<'a> {
    test: &'a Test,
    env: &'a TestEnv<'a>,
    exec: &'a mut dyn Executor,
    sources: &'a [(&'a ResultDef, Source)],
    drop_caches: bool,
    pending: &'a mut Vec<(PathBuf, String)>,
    /// What `pending` may still hold (`sys::bounded::TEST`).
    budget: crate::sys::bounded::Budget,
    counters: Option<Counters>,
    /// Where trial logs go: the current state's folder.
    pub(super) logs: PathBuf,
    /// The last trial left its scratch directory in place, empty.
    scratch_kept: Option<Dir>,
    /// The test's bindings with `scratch_dir` (the same path every trial).
    bindings: Option<indexmap::IndexMap<String, String>>,
    /// The sampler around the trials, and the state they run in now.
    monitor: Option<Recorder>,
    pub(super) state: usize,
}

impl Trials<'_> {
    /// Trial `k` (`1`, `warmup-2`): its run, its log kept for later, and
    /// what its span measured (a measured trial's devices and CPU time).
    fn one(&mut self, k: &str, measured: Option<u32>) -> Result<(TrialRun, Figures), ExecError> {
        if self.drop_caches {
            crate::state::hygiene::drop_caches().map_err(|e| ExecError::Setup(e.to_string()))?;
        }
        let dir = TrialDir::new(self.env.dir, self.test.profile.profile.scratch, self.scratch_kept.take())?;
        let b = self.bindings.get_or_insert_with(|| {
            let mut b = self.env.bindings.clone();
            b.insert("scratch_dir".into(), dir.path.display().to_string());
            b
        });
        // The monitors' slice and the counters of a measured trial: the
        // executor's workload, not the cache drop, the scratch directory
        // or the profile's steps around it.
        let span = Measured::new(self.monitor.as_ref(), self.counters.as_ref(), self.state, measured);
        let tenv = TrialEnv {
            bindings: b,
            scratch: &dir.path,
            dir: &dir.dir,
            test: self.env.dir,
            logs: &self.logs,
            label: k,
            interval: self.monitor.as_ref().filter(|_| measured.is_some()).map(Recorder::interval),
            span: &span,
        };
        let mut run = self.exec.trial(&tenv);
        let figures = span.finish();
        self.scratch_kept = dir.finish(self.env.dir);
        if let (Some(m), Some(trial), Ok(r)) = (self.monitor.as_mut(), measured, run.as_mut())
            && let Some(iv) = r.intervals.take()
        {
            m.intervals(self.state, trial, iv);
        }
        run.map(|r| (r, figures))
    }

    /// A measured trial, with what reached the device and the CPU it took,
    /// its servers' included (counters that fail to read mid-test leave the
    /// devices out).
    fn counted(&mut self, trial: u32, k: &str) -> Result<(TrialRun, TrialIo), ExecError> {
        let (run, f) = self.one(k, Some(trial))?;
        let io = TrialIo {
            devices: f.devices,
            user_seconds: (f.user + run.servers.0).as_secs_f64(),
            system_seconds: (f.system + run.servers.1).as_secs_f64(),
            cgroup: run.cgroup,
        };
        Ok((run, io))
    }

    /// Measured trial `k`, its values, time and counters added to `d`.
    pub(super) fn measured(&mut self, k: u32, d: &mut TrialData) -> Result<Duration, ExecError> {
        let label = k.to_string();
        let (mut run, io) = self.counted(k, &label)?;
        d.io.push(io);
        let parsed = read_values(self.sources, &run, &label);
        self.hold(&mut run);
        for (r, v) in parsed?.into_iter().enumerate() {
            d.values[r].push(v);
        }
        d.walls.push(run.wall);
        Ok(run.wall)
    }

    /// Starts the sampler (when on, every the flag's interval, else the
    /// test's suite's or profile's) and hands the display its device line.
    fn start_monitor(&mut self, on: crate::monitor::Monitoring, devices: &[String], events: &dyn Events) {
        let own = self.test.profile.profile.trials.monitor_interval.as_ref().map(crate::units::Duration::get);
        let interval = on.interval(self.test.monitor_interval.or(own));
        let live = devices.first().map(|d| std::sync::Arc::new(crate::events::Live::new(d)));
        self.monitor = interval.and_then(|every| crate::monitor::start(devices, every, on.points(), live.clone()));
        if self.monitor.is_some() {
            events.monitoring(live);
        }
    }

    /// Stops the sampler and derives each state's series (the store keeps
    /// it beside the logs).
    fn take_series(&mut self, data: &mut [TrialData]) {
        let Some(rec) = self.monitor.take().and_then(Recorder::finish) else { return };
        let in_process = self.test.profile.profile.executor.returns_values();
        for (i, d) in data.iter_mut().enumerate() {
            let series = crate::monitor::derive::series(&rec, i);
            d.signals = crate::monitor::bound::signals(&series, &d.io, &d.walls, in_process, rec.cpus);
            d.series = Some(Box::new(series));
        }
    }

    /// `n` warm-up trials; the first result's values are kept apart.
    pub(super) fn warmups(&mut self, n: u32, events: &dyn Events, data: &mut TrialData) -> Result<(), ExecError> {
        for w in 1..=n {
            events.trial_started(w, n, true);
            let k = format!("warmup-{w}");
            let (mut run, _) = self.one(&k, None)?;
            if let Ok(v) = read_values(self.sources, &run, &k) {
                data.warmups.extend(v.first());
            }
            events.trial_done(w, true, run.wall.as_secs_f64());
            self.hold(&mut run);
        }
        Ok(())
    }

    /// Keeps the trial's log to write after the test, within the test's budget.
    fn hold(&mut self, run: &mut TrialRun) {
        let text = self.budget.keep(std::mem::take(&mut run.log_text));
        self.pending.push((std::mem::take(&mut run.log), text));
    }
}

impl Trials<'_> {
    /// Sets the test up afresh: the executor's teardown, the test's folder
    /// emptied (never following what its commands left there), its set-up
    /// again.
    pub(super) fn renew(&mut self) -> Result<(), ExecError> {
        self.exec.teardown(self.env)?;
        self.scratch_kept = None;
        let dir = self.env.dir;
        let io = |source| ExecError::Io { what: format!("cannot empty {}", dir.path().display()), source };
        for entry in std::fs::read_dir(dir.fd_path()).map_err(io)? {
            dir.remove(Path::new(&entry.map_err(io)?.file_name())).map_err(io)?;
        }
        self.exec.setup(self.env)
    }
}

/// Whether `plan` wants another trial after `data`, `elapsed` into the
/// trials: every result counts, any that wants more gets them
/// (`Some(reason)`); when all stop, each keeps why and its own warning (its
/// own CI, drift, groups).
fn decide(plan: &AdaptivePlan, data: &mut TrialData, elapsed: Duration) -> Option<Option<String>> {
    let mut stops = Vec::with_capacity(data.values.len());
    for v in &data.values {
        match plan.decide(v, elapsed) {
            Decision::More(r) => return Some(r),
            Decision::Stop(why, w) => stops.push((why, w)),
        }
    }
    data.stops = stops;
    None
}

/// What one test's trials run with.
pub(super) struct Job<'a> {
    pub test: &'a Test,
    pub settings: &'a RunSettings,
    pub env: &'a TestEnv<'a>,
    /// `logs[i]` is state `i`'s log folder.
    pub logs: &'a [&'a Path],
    /// `names[i]` is state `i`'s identifier.
    pub names: &'a [&'a str],
    /// Where each result's value comes from.
    pub sources: &'a [(&'a ResultDef, Source)],
    pub events: &'a dyn Events,
}

/// The stopping rule's plan of `test`; with `--rounds N` each round gets
/// its share of the trials and the time (rounds that are set-ups at least
/// two trials each, unless `--runs` says).
fn plan_of(test: &Test, settings: &RunSettings) -> AdaptivePlan {
    let mut plan = test.profile.profile.trials.plan(settings.runs, settings.budget.or(test.budget));
    if settings.rounds > 1 {
        let r = settings.rounds;
        plan.budget /= r;
        // A round that is a set-up keeps two trials or more: one set-up's
        // trials measure the level below it.
        let least = if settings.rounds_are_setups { 2 } else { 1 };
        plan.times = plan.times.div_ceil(r).max(least);
        plan.min = plan.min.div_ceil(r).min(plan.times);
        plan.forced = plan.forced.map(|f| f.div_ceil(r));
    }
    plan
}

/// A test set up and warmed up, its measured trials still to run: what the
/// repetition (balanced [`rounds`], or set-ups of them) works on.
pub(super) struct Started<'a> {
    pub t: Trials<'a>,
    /// Each state's data so far.
    pub data: Vec<TrialData>,
    pub plan: AdaptivePlan,
    /// The first round's order (its first state had the warm-ups).
    pub order: Vec<usize>,
    /// What setting the test up cost.
    pub setup_cost: Duration,
}

/// Sets up the executor once, runs the warm-ups (in the first state of the
/// first round) and starts the monitor; the caller then repeats the
/// measured trials — rounds of one trial per state that still wants more,
/// in the order `switch` gives, each state's trials stopping by the rule on
/// their own values and their own time — and ends with
/// [`Started::finish`]. Trial logs to write are added to `pending`.
pub(super) fn start<'a>(
    job: &Job<'a>,
    exec: &'a mut dyn Executor,
    switch: &mut dyn Switch,
    pending: &'a mut Vec<(PathBuf, String)>,
) -> Result<Started<'a>, ExecError> {
    let Job { test, settings, env, logs, sources, events, .. } = *job;
    let profile = &test.profile.profile;
    let plan = plan_of(test, settings);
    let began = Instant::now();
    exec.setup(env)?;
    let setup_cost = began.elapsed();
    let drop_caches = settings.drop_caches || profile.hygiene.drop_caches;
    let (counters, no_counters) = match Counters::under(env.test_dir) {
        Ok(c) => (Some(c), None),
        Err(why) => (None, Some(why.to_string())),
    };
    let devices: Vec<String> = counters.iter().flat_map(|c| c.names().map(str::to_string)).collect();
    let mut t = Trials {
        test,
        env,
        exec,
        sources,
        drop_caches,
        pending,
        budget: Default::default(),
        counters,
        logs: logs.first().map(|p| p.to_path_buf()).unwrap_or_else(|| env.logs.to_path_buf()),
        scratch_kept: None,
        bindings: None,
        monitor: None,
        state: 0,
    };
    let n = switch.count();
    let mut data: Vec<TrialData> = (0..n).map(|_| TrialData::new(sources.len(), &plan, &no_counters)).collect();
    if n > 1 {
        // The states of this run share a token: their trials pair by round.
        let token = format!("{:016x}", fastrand::u64(..));
        data.iter_mut().for_each(|d| d.interleave = Some(token.clone()));
    }
    let order = switch.order();
    let first = order[0];
    switch.enter(first)?;
    t.logs = logs[first].to_path_buf();
    t.warmups(settings.warmup.unwrap_or(profile.trials.warmup), events, &mut data[first])?;
    t.start_monitor(settings.monitor, &devices, events);
    Ok(Started { t, data, plan, order, setup_cost })
}

impl Started<'_> {
    /// The measured trials are done: the monitor's series go to the data.
    pub(super) fn finish(mut self, events: &dyn Events) -> Vec<TrialData> {
        self.t.take_series(&mut self.data);
        events.monitoring(None);
        self.data
    }
}

/// Balanced rounds: every round measures every state once, in the order
/// `switch` gives (`order` first), and the rounds go on while any state's
/// results want more — states never drop out one by one, so whatever the
/// machine does in a round falls on all of them alike, and each round's
/// trials are a pair (`analysis::paired`).
pub(super) fn rounds(
    t: &mut Trials<'_>,
    job: &Job<'_>,
    switch: &mut dyn Switch,
    plan: &AdaptivePlan,
    data: &mut [TrialData],
    mut order: Vec<usize>,
) -> Result<(), ExecError> {
    let Job { settings, logs, events, test, names, .. } = *job;
    let n = switch.count();
    let mut elapsed = vec![Duration::ZERO; n];
    for k in 1u32.. {
        for &i in &order {
            if interrupt::requested() {
                return Err(ExecError::Interrupted);
            }
            let start = Instant::now();
            if n > 1 {
                switch.enter(i)?;
                t.logs = logs[i].to_path_buf();
                events.trial_state(k, names.get(i).copied().unwrap_or(""));
            }
            t.state = i;
            events.trial_started(k, settings.runs.unwrap_or(test.profile.profile.trials.times), false);
            let d = &mut data[i];
            let wall = t.measured(k, d)?;
            if n > 1 {
                d.rounds.push(k);
            }
            events.trial_done(k, false, wall.as_secs_f64());
            elapsed[i] += start.elapsed();
        }
        let verdicts = baseline(job, plan, n);
        if !another_round(plan, data, &elapsed, k, verdicts.as_ref()) {
            break;
        }
        order = switch.order();
    }
    Ok(())
}

/// The comparisons of an interleaved run of `job` with two or more states
/// whose trials are not fixed (`--runs`); `None` otherwise, and each
/// state's own rule decides.
pub(super) fn baseline<'a>(job: &Job<'a>, plan: &AdaptivePlan, states: usize) -> Option<super::verdicts::Baseline<'a>> {
    (states > 1 && plan.forced.is_none()).then(|| super::verdicts::Baseline {
        results: job.sources.iter().map(|(d, _)| (d.id.as_str(), d.proportion, d.unit.as_str())).collect(),
        names: job.names,
        rule: crate::analysis::significance::Rule {
            equivalence_pct: job.settings.equivalence_pct,
            ..crate::analysis::significance::Rule::default()
        },
    })
}

/// After round `k`: whether to run another. Without a baseline to compare
/// with, while any state's results want another trial (each state that did
/// not is still measured, its added trial said so); with one (an
/// interleaved run's first state), while a comparison with it is undecided
/// and the budget can likely settle it (`super::verdicts`).
pub(super) fn another_round(
    plan: &AdaptivePlan,
    data: &mut [TrialData],
    elapsed: &[Duration],
    k: u32,
    baseline: Option<&super::verdicts::Baseline<'_>>,
) -> bool {
    let wants: Vec<Option<Option<String>>> = data.iter_mut().zip(elapsed).map(|(d, e)| decide(plan, d, *e)).collect();
    if let Some(b) = baseline {
        let measured: Vec<super::verdicts::Measured<'_>> =
            data.iter().map(|d| super::verdicts::Measured { values: &d.values, setups: &d.setups }).collect();
        let Some(why) = super::verdicts::wants_more(b, plan, &measured, elapsed, k) else {
            // Stopped by the verdicts: a state whose own rule wanted more says why it stopped.
            for (d, w) in data.iter_mut().zip(&wants) {
                if w.is_some() {
                    d.stops = vec![(Stop::Verdict, None); d.values.len()];
                }
            }
            return false;
        };
        if !why.is_empty() {
            data.iter_mut().for_each(|d| d.added.push(format!("trial {}: {why}", k + 1)));
        }
        return true;
    }
    if wants.iter().all(Option::is_none) {
        return false;
    }
    for (d, w) in data.iter_mut().zip(wants) {
        match w {
            Some(Some(reason)) => d.added.push(format!("trial {}: {reason}", k + 1)),
            Some(None) => {}
            None => d.added.push(format!("trial {}: a balanced round (another state wanted more)", k + 1)),
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_gets_an_empty_scratch_directory_reused_only_when_left_empty() {
        let d = tempfile::tempdir().unwrap();
        let test = Dir::open(d.path()).unwrap();
        let first = TrialDir::new(&test, ScratchScope::PerTrial, None).unwrap();
        let path = first.path.clone();
        let kept = first.finish(&test);
        assert!(kept.is_some() && path.is_dir(), "left empty: kept for the next trial");
        let second = TrialDir::new(&test, ScratchScope::PerTrial, kept).unwrap();
        std::fs::create_dir(second.path.join("sub")).unwrap();
        std::fs::write(second.path.join("sub/f"), "x").unwrap();
        assert!(second.finish(&test).is_none());
        assert!(!path.exists(), "what a trial wrote goes with it");
        let third = TrialDir::new(&test, ScratchScope::PerTrial, None).unwrap();
        assert!(third.dir.is_empty());
        drop(third);
        assert!(!path.exists(), "dropped: removed");
        let shared = TrialDir::new(&test, ScratchScope::PerTest, None).unwrap();
        assert_eq!(shared.path, d.path());
        drop(shared);
        assert!(d.path().is_dir());
    }

    #[test]
    fn a_trial_directory_swapped_for_a_link_is_neither_reused_nor_followed() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "k").unwrap();
        let test = Dir::open(d.path()).unwrap();
        let t = TrialDir::new(&test, ScratchScope::PerTrial, None).unwrap();
        // The trial's command moves its directory away and plants a link.
        std::fs::rename(d.path().join(TRIAL), d.path().join("away")).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join(TRIAL)).unwrap();
        assert!(t.finish(&test).is_none(), "a link is not the trial's directory");
        assert!(outside.path().join("keep").exists(), "engine followed the link");
        // Planted before the next trial: replaced by a real directory.
        std::os::unix::fs::symlink(outside.path(), d.path().join(TRIAL)).unwrap();
        let next = TrialDir::new(&test, ScratchScope::PerTrial, None).unwrap();
        assert!(!std::fs::symlink_metadata(d.path().join(TRIAL)).unwrap().file_type().is_symlink());
        assert!(next.dir.is_empty() && outside.path().join("keep").exists());
    }
}
