//! `--dry-run`: the tests, their trials, their budgets, and the time their
//! scheduled trials take — from an earlier run of the same test anywhere in
//! ENGINE_HOME (the result the run would save to first), else from the
//! profile's fixed run time, times the sweep's states.

use super::Request;
use super::request::{Estimate, Scheduled, Timing};
use super::work::Work;
use crate::Context;
use engine::expand::Test;
use engine::model::result::ResultFile;
use std::collections::HashMap;

pub(super) fn estimate(cx: &Context, req: &Request, work: &Work, states: Option<usize>) -> Estimate {
    let earlier = earlier_timings(cx, req.save.as_deref().or(work.rerun.as_deref()));
    let mut e = estimate_with(&earlier, req, work, states);
    let installed = cx.home.installed();
    for (s, t) in e.tests.iter_mut().zip(&work.tests) {
        s.commands = engine::runner::commands(t, &installed);
    }
    e
}

/// What `engine benchmark REF --dry-run` would estimate for each of `refs`
/// (suites, for `list suites` and `info`), with the earlier runs read once;
/// for a reference that does not expand, why.
pub fn estimate_refs(cx: &Context, refs: &[String]) -> Vec<Result<Estimate, crate::Failure>> {
    let earlier = earlier_timings(cx, None);
    refs.iter()
        .map(|r| {
            let req = Request { refs: vec![r.clone()], yes: true, dry_run: true, ..Request::default() };
            let work = super::work::expand(cx, &req, &engine::events::Silent)?;
            Ok(estimate_with(&earlier, &req, &work, None))
        })
        .collect()
}

fn estimate_with(
    earlier: &HashMap<String, (f64, String)>,
    req: &Request,
    work: &Work,
    states: Option<usize>,
) -> Estimate {
    let states = states.unwrap_or(1).max(1);
    let tests = work
        .tests
        .iter()
        .map(|t| {
            let tr = &t.profile.profile.trials;
            let trials = req.runs.unwrap_or(tr.times) + req.warmup.unwrap_or(tr.warmup);
            let plan = tr.plan(req.runs, req.budget.or(t.budget));
            let timing = match earlier.get(&t.key()) {
                Some((secs, name)) => Some((secs * trials as f64, Timing::Earlier(name.clone()))),
                None => fixed_run_time(t).map(|s| (s * trials as f64, Timing::RunTime)),
            };
            let (seconds, timing) = match timing {
                Some((s, how)) => (Some(s * states as f64), how),
                None => (None, Timing::Unknown),
            };
            Scheduled {
                label: t.label(),
                trials,
                most: plan.most(),
                budget: plan.budget * states as u32,
                seconds,
                timing,
                commands: Vec::new(),
            }
        })
        .collect();
    Estimate { tests, not_runnable: work.not_runnable.clone(), place: None }
}

/// Per test key, the mean trial time of its latest earlier run and the
/// result it comes from — `first` (the result this run saves to) before
/// the others.
fn earlier_timings(cx: &Context, first: Option<&str>) -> HashMap<String, (f64, String)> {
    let mut names = cx.store.list();
    if let Some(f) = first {
        names.retain(|n| n != f);
        names.push(f.to_string()); // inserted last: it wins
    }
    let mut out: HashMap<String, (f64, String, String)> = HashMap::new();
    for name in names {
        let Ok(file) = cx.store.load_lean(&name) else { continue };
        for (key, secs, stamp) in timings(&file) {
            let newer = out.get(&key).is_none_or(|(_, _, s)| *s <= stamp || first == Some(name.as_str()));
            if newer {
                out.insert(key, (secs, name.clone(), stamp));
            }
        }
    }
    out.into_iter().map(|(k, (s, n, _))| (k, (s, n))).collect()
}

/// Per test of `file`: its mean trial seconds and when it last ran.
fn timings(file: &ResultFile) -> Vec<(String, f64, String)> {
    let mut out: Vec<(String, f64, String)> = Vec::new();
    for r in &file.results {
        if out.iter().any(|(k, _, _)| *k == r.test) {
            continue;
        }
        let secs: Vec<f64> = r.entries.iter().flat_map(|e| e.trial_seconds.iter().copied()).collect();
        let stamp = r.entries.iter().map(|e| e.timestamp.clone()).max().unwrap_or_default();
        if !secs.is_empty() {
            out.push((r.test.clone(), secs.iter().sum::<f64>() / secs.len() as f64, stamp.into()));
        }
    }
    out
}

/// A trial's length when the test fixes it: a chosen value named like a run
/// time (`runtime: 2s`, fio's `runtime: 20` seconds), plus a ramp.
fn fixed_run_time(t: &Test) -> Option<f64> {
    let b = t.bindings();
    // The profile says how long a trial runs: its word over any guess.
    if let Some(rt) = &t.profile.profile.trials.run_time {
        let filled = engine::model::template::render(rt, |n| b.get(n).map(String::as_str), false).ok()?;
        return engine::units::parse_seconds_expr(&filled).ok();
    }
    let secs = |k: &str| {
        let v = b.get(k)?;
        v.parse::<f64>().ok().or_else(|| engine::units::parse_duration(v).ok().map(|d| d.as_secs_f64()))
    };
    match ["runtime", "run_time", "duration"].iter().find_map(|k| secs(k)) {
        Some(run) => Some(run + secs("ramp").unwrap_or(0.0)),
        None => command_line_time(t, &b),
    }
}

/// A fixed-time command's length from its own flags, as fio takes them:
/// `--runtime=20 --ramp_time=5 --startdelay=5` (seconds, or with a unit)
/// is 30 s; none given, nothing is guessed.
fn command_line_time(t: &Test, b: &indexmap::IndexMap<String, String>) -> Option<f64> {
    let engine::model::profile::ExecutorDef::External(x) = &t.profile.profile.executor else { return None };
    // Placeholders the run fills later (its directories) do not matter here.
    let args = engine::model::template::render_args(&x.args, |n| b.get(n).map(String::as_str).or(Some(""))).ok()?;
    let flag = |name: &str| {
        args.iter().find_map(|a| {
            let v = a.strip_prefix(name)?.strip_prefix('=')?;
            v.parse::<f64>().ok().or_else(|| engine::units::parse_duration(v).ok().map(|d| d.as_secs_f64()))
        })
    };
    let run = flag("--runtime")?;
    Some(run + flag("--ramp_time").unwrap_or(0.0) + flag("--startdelay").unwrap_or(0.0))
}
