//! Stop on the verdict: an interleaved run with a baseline (its first
//! state) adds rounds while a comparison with the baseline is undecided and
//! the rounds the budget still affords would likely settle it; it stops
//! when every comparison is better, worse or equivalent, when the budget is
//! spent, or when no affordable number of rounds could settle the rest. The
//! question a sweep asks is "which state is faster, and by how much", not
//! "how precisely is each state's mean known".

use crate::analysis::paired::{Pair, compare_paired};
use crate::analysis::significance::{Rule, Verdict};
use crate::model::profile::Proportion;
use crate::stats::AdaptivePlan;
use std::time::Duration;

/// What the comparisons are of: each result's id, proportion and unit;
/// each state's identifier (state 0 is the baseline); the verdicts' rule.
pub(super) struct Baseline<'a> {
    pub results: Vec<(&'a str, Proportion, &'a str)>,
    pub names: &'a [&'a str],
    pub rule: Rule,
}

/// One state's trials so far: per result its values (the j-th is round
/// j's), and each trial's set-up (empty when set up once).
pub(super) struct Measured<'a> {
    pub values: &'a [Vec<f64>],
    pub setups: &'a [u32],
}

/// After round `k`: why another round is worth running (an undecided
/// comparison the budget can likely settle), or `None` to stop.
pub(super) fn wants_more(
    b: &Baseline<'_>,
    plan: &AdaptivePlan,
    data: &[Measured<'_>],
    elapsed: &[Duration],
    k: u32,
) -> Option<String> {
    if k < plan.min.max(2) {
        return Some(String::new());
    }
    if k >= plan.max {
        return None;
    }
    let left = affordable(plan.budget, elapsed, k);
    // The comparison that needs the fewest rounds among those the budget
    // affords goes first: it is the likeliest to settle.
    let mut best: Option<(u32, String)> = None;
    for i in 1..data.len() {
        for (r, (id, p, unit)) in b.results.iter().enumerate() {
            let Some(c) = compare_paired(&pairs(&data[i], &data[0], r), *p, unit, b.rule) else { continue };
            if let Verdict::Undecided(Some(need)) = c.verdict
                && need <= k.saturating_add(left)
                && best.as_ref().is_none_or(|(n, _)| need < *n)
            {
                let vs = format!("{} vs {}", b.names.get(i).unwrap_or(&"?"), b.names.first().unwrap_or(&"?"));
                best = Some((
                    need,
                    format!("{id} {vs} undecided ({}); about {need} rounds would likely settle it", c.ratio_text()),
                ));
            }
        }
    }
    best.map(|(_, why)| why)
}

/// State `a`'s and the baseline's values of result `r`, round by round
/// (balanced rounds: the j-th trial of each is round j), with their set-ups.
fn pairs(a: &Measured<'_>, base: &Measured<'_>, r: usize) -> Vec<Pair> {
    let setup = |j: usize| a.setups.get(j).copied().unwrap_or(0);
    a.values[r]
        .iter()
        .zip(&base.values[r])
        .enumerate()
        .map(|(j, (x, y))| Pair { setup: setup(j), a: *x, b: *y })
        .collect()
}

/// Rounds the budget still affords at the slowest state's pace so far.
fn affordable(budget: Duration, elapsed: &[Duration], k: u32) -> u32 {
    elapsed
        .iter()
        .map(|e| {
            let per = e.as_secs_f64() / k.max(1) as f64;
            match per > 0.0 {
                true => (budget.saturating_sub(*e).as_secs_f64() / per).floor().min(u32::MAX as f64) as u32,
                false => u32::MAX,
            }
        })
        .min()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(values: &[f64]) -> Vec<Vec<f64>> {
        vec![values.to_vec()]
    }

    fn m(v: &[Vec<f64>]) -> Measured<'_> {
        Measured { values: v, setups: &[] }
    }

    fn plan() -> AdaptivePlan {
        AdaptivePlan { times: 3, min: 2, max: 1000, target_ci: 1.0, budget: Duration::from_secs(60), forced: None }
    }

    #[test]
    fn rounds_go_on_while_a_comparison_can_be_settled_and_stop_when_decided() {
        let names = ["NONE", "KYBER"];
        let b = Baseline { results: vec![("iops", Proportion::Hib, "IOPS")], names: &names, rule: Rule::default() };
        let second = [Duration::from_secs(1); 2];
        // Levels move ±20 % between rounds; KYBER is 10 % better in each.
        let base = data(&[100.0, 80.0, 120.0]);
        let clear = data(&[110.0, 88.0, 132.5]);
        assert_eq!(wants_more(&b, &plan(), &[m(&base), m(&clear)], &second, 3), None, "decided: better");
        // Ratios 1.0, 1.04, 0.98: undecided, and more rounds would likely settle it.
        let base = data(&[100.0, 80.0, 120.0]);
        let unsure = data(&[100.0, 83.2, 117.6]);
        let why = wants_more(&b, &plan(), &[m(&base), m(&unsure)], &second, 3).expect("more rounds");
        assert!(why.starts_with("iops KYBER vs NONE undecided ("), "{why}");
        // The budget spent: no more.
        let base = data(&[100.0, 80.0, 120.0]);
        let unsure = data(&[100.0, 83.2, 117.6]);
        let spent = [Duration::from_secs(60); 2];
        assert_eq!(wants_more(&b, &plan(), &[m(&base), m(&unsure)], &spent, 3), None);
    }

    #[test]
    fn two_rounds_at_least() {
        let names = ["A", "B"];
        let b = Baseline { results: vec![("x", Proportion::Hib, "U")], names: &names, rule: Rule::default() };
        let (x, y) = (data(&[1.0]), data(&[2.0]));
        assert!(wants_more(&b, &plan(), &[m(&x), m(&y)], &[Duration::from_secs(1); 2], 1).is_some());
    }
}
