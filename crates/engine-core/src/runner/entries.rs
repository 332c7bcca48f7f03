//! A finished test's results as the result file stores them: one template
//! (what the result is) and one entry (this identifier's trials and their
//! statistics) per result.

use super::trials::{Source, TrialData};
use crate::expand::Test;
use crate::model::profile::ResultDef;
use crate::model::result::{ResultEntry, TestResult};
use std::time::Duration;

/// What the test is, for result `def`.
fn template(test: &Test, def: &ResultDef) -> TestResult {
    let p = &test.profile.profile;
    let mut description = test.description();
    if let Some(extra) = &def.description {
        description = if description.is_empty() { extra.clone() } else { format!("{description} - {extra}") };
    }
    TestResult {
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
        about: p.description.clone(),
    }
}

/// One (template, entry) per result with values; `logs_rel` names the
/// test's log folder in the result folder.
pub(super) fn build(
    test: &Test,
    sources: &[(&ResultDef, Source)],
    data: &TrialData,
    logs_rel: &str,
) -> Vec<(TestResult, ResultEntry)> {
    let stamp = crate::model::facts::Timestamp::now();
    let walls: Vec<f64> = data.walls.iter().map(Duration::as_secs_f64).collect();
    let mut out = Vec::new();
    for (i, (def, _)) in sources.iter().enumerate() {
        if data.values[i].is_empty() {
            continue;
        }
        let Some(mut entry) = ResultEntry::from_trials("", data.values[i].clone(), None, walls.clone(), stamp.clone())
        else {
            continue;
        };
        if !data.setups.is_empty() {
            entry = entry.with_setups(data.setups.clone());
        }
        entry.added_trials = data.added.clone();
        // Rounds pair an interleaved run's states only when every trial has one.
        if data.rounds.len() == entry.trials.len() && data.interleave.is_some() {
            entry.trial_rounds = data.rounds.clone();
            entry.interleave = data.interleave.clone();
        }
        if let Some((why, warning)) = data.stops.get(i) {
            entry.stopped = Some(*why);
            entry.warning = warning.clone();
        }
        entry.budget = Some(data.budget.as_secs_f64());
        entry.trial_io = data.io.clone();
        entry.no_counters = data.no_counters.clone();
        entry.served_from_memory = super::reached::served_from_memory(
            test.profile.profile.test_type == crate::model::profile::TestType::Disk,
            &def.unit,
            &data.values[i],
            &walls,
            &data.io,
        );
        entry.bound = crate::monitor::bound::bound(&data.signals, entry.served_from_memory.as_deref());
        entry.notes = crate::stats::shape::notes(&entry.units());
        if let Some(l) = crate::stats::levels::Levels::of(&entry.trials, &entry.setups) {
            entry.notes.push(format!(
                "{} set-ups: {:.0} % of a trial's variance is between set-ups (the book, \"Statistics\": set-ups)",
                l.k,
                l.setup_share_pct()
            ));
        }
        entry.warmup_trials = data.warmups.clone();
        entry.logs = Some(logs_rel.to_string());
        out.push((template(test, def), entry));
    }
    out
}
