//! Results and trials: units, proportions, the stopping rule's settings.

use super::*;

/// Results declared, with unique ids and a unit; every parser; every result
/// parsed (unless the executor returns values itself).
pub(super) fn check_results(c: &mut Checker, p: &Profile, known: &BTreeSet<String>) {
    let mut result_ids = HashSet::new();
    if p.results.is_empty() {
        c.at_value(
            path!["results"],
            "no results declared",
            Some("declare what a trial yields: `- {id: bandwidth, unit: MB/s, proportion: HIB}`".into()),
        );
    }
    for (i, r) in p.results.iter().enumerate() {
        if !result_ids.insert(r.id.as_str()) {
            c.at_value(
                path!["results", i, "id"],
                format!("duplicate result id `{}`", r.id),
                Some("each result needs its own id".into()),
            );
        }
        if r.unit.trim().is_empty() {
            c.at_value(
                path!["results", i, "unit"],
                "unit is empty",
                Some("state the exact unit: `MB/s` (10^6 B/s), `MiB/s` (2^20 B/s), `IOPS`, `Seconds`".into()),
            );
        } else if let Some(exact) = units::loose_unit(&r.unit) {
            c.at_value(
                path!["results", i, "unit"],
                format!("unit `{}` is not an exact spelling", r.unit),
                Some(format!("write `{exact}`: MB/s = 10^6 B/s, MiB/s = 2^20 B/s")),
            );
        }
    }
    let mut parsed = HashSet::new();
    for (i, pd) in p.parsers.iter().enumerate() {
        check_parser(c, i, pd, p, known);
        parsed.insert(pd.result.as_str());
    }
    for (i, r) in p.results.iter().enumerate() {
        if !parsed.contains(r.id.as_str()) && !p.executor.returns_values() {
            c.at_value(
                path!["results", i, "id"],
                format!("result `{}` has no parser", r.id),
                Some(format!("add a parser with `result: {}`", r.id)),
            );
        }
    }
}

/// `trials:`: at least one, `max` and `min` around `times`, a positive `target_ci`.
pub(super) fn check_trials(c: &mut Checker, p: &Profile) {
    let t = &p.trials;
    if t.times == 0 {
        c.at_value(
            path!["trials", "times"],
            "times must be at least 1",
            Some("3 is the usual number of scheduled trials".into()),
        );
    }
    if let Some(max) = t.max
        && max < t.times
    {
        c.at_value(
            path!["trials", "max"],
            format!("max ({max}) is below times ({})", t.times),
            Some("max caps the count of trials whatever the budget; it must be at least `times`".into()),
        );
    }
    if let Some(min) = t.min
        && (min == 0 || min > t.times)
    {
        c.at_value(
            path!["trials", "min"],
            format!("min ({min}) must be between 1 and times ({})", t.times),
            Some("min is the fewest trials a spent budget may leave".into()),
        );
    }
    if t.budget.as_ref().is_some_and(|b| b.get().is_zero()) {
        c.at_value(
            path!["trials", "budget"],
            "budget must be longer than zero",
            Some("the time the trials may take, such as `30s` or `10 min`".into()),
        );
    }
    if let Some(Err(why)) = t.monitor_interval.as_ref().map(|m| crate::monitor::check_interval(m.get())) {
        c.at_value(
            path!["trials", "monitor_interval"],
            why.to_string(),
            Some("how often the monitors sample during its trials, such as `250ms`".into()),
        );
    }
    if t.setups == Some(0) {
        c.at_value(
            path!["trials", "setups"],
            "setups must be at least 1",
            Some("how many times the test is set up afresh in a run, such as `3`".into()),
        );
    }
    if !(t.target_ci.is_finite() && t.target_ci > 0.0) {
        c.at_value(
            path!["trials", "target_ci"],
            "target_ci must be a positive percentage",
            Some("5 means trials are added while the 95 % CI of the mean is wider than ±5 % of it".into()),
        );
    }
}
