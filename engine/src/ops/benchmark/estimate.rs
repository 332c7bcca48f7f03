//! `--dry-run`: the tests, their trials, and the time their scheduled trials
//! took before (from the result the run would save to, when it exists).

use super::Request;
use super::request::{Estimate, Scheduled};
use super::work::Work;
use crate::ops::Context;

pub(super) fn estimate(cx: &Context, req: &Request, work: &Work) -> Estimate {
    let file = req.save.as_deref().or(work.rerun.as_deref()).and_then(|n| cx.store.load(n).ok());
    let tests = work
        .tests
        .iter()
        .map(|t| {
            let tr = &t.profile.profile.trials;
            let trials = req.runs.unwrap_or(tr.times) + req.warmup.unwrap_or(tr.warmup);
            let plan = tr.plan(req.runs, req.budget.or(t.budget));
            let most = plan.most();
            let per = file.as_ref().and_then(|f| {
                let secs: Vec<f64> = f
                    .results
                    .iter()
                    .filter(|r| r.test == t.key())
                    .flat_map(|r| r.entries.iter().flat_map(|e| e.trial_seconds.iter().copied()))
                    .collect();
                (!secs.is_empty()).then(|| secs.iter().sum::<f64>() / secs.len() as f64)
            });
            Scheduled { label: t.label(), trials, most, budget: plan.budget, seconds: per.map(|s| s * trials as f64) }
        })
        .collect();
    Estimate { tests, not_runnable: work.not_runnable.clone() }
}
