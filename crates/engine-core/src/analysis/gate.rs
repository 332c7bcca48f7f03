//! The regression gate: which comparisons against the baseline are
//! regressions a CI job should fail on. A regression is a result that is
//! significantly worse (its verdict, which already needs the whole ratio
//! interval beyond the noise threshold) by at least the gate's percentage —
//! judged on the interval's near end, so a rough interval cannot fail a
//! build on its far end alone. Improvements and "no significant
//! difference" never fail.

use super::significance::{Comparison, Verdict};
use crate::model::facts::Identifier;
use crate::model::profile::Proportion;

/// One comparison, by result index and identifier.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    pub result: usize,
    pub identifier: &'a str,
    pub comparison: &'a Comparison,
}

/// The comparisons sorted for a gate.
#[derive(Debug, Clone, Default)]
pub struct Gate<'a> {
    pub regressions: Vec<Change<'a>>,
    pub improvements: Vec<Change<'a>>,
    /// Comparisons equivalent within the margin (worse ones under the
    /// gate's percentage count here only when their interval says so).
    pub equivalent: usize,
    /// The others: a worse that is not worse enough, undecided, too few
    /// trials, at the tool's resolution.
    pub undecided: usize,
}

/// Whether `c` is worse than its baseline by at least `pct` percent.
pub(crate) fn worse_by_at_least(c: &Comparison, pct: f64) -> bool {
    if !matches!(c.verdict, Verdict::Worse(_)) {
        return false;
    }
    let limit = pct / 100.0;
    match (c.ratio_ci, c.proportion) {
        // Higher is better: even the interval's top is that far down.
        (Some((_, hi)), Proportion::Hib) => hi <= 1.0 - limit,
        // Lower is better: even its bottom is that far up.
        (Some((lo, _)), Proportion::Lib) => lo >= 1.0 + limit,
        (None, _) => c.change_pct.abs() >= pct,
    }
}

/// Sorts `comparisons` (per result index, per identifier) for a gate at `pct`.
pub fn gate(comparisons: &[(usize, Vec<(Identifier, Comparison)>)], pct: f64) -> Gate<'_> {
    let mut g = Gate::default();
    for (result, cs) in comparisons {
        for (id, c) in cs {
            let change = Change { result: *result, identifier: id, comparison: c };
            if worse_by_at_least(c, pct) {
                g.regressions.push(change);
            } else if matches!(c.verdict, Verdict::Better(_)) {
                g.improvements.push(change);
            } else if matches!(c.verdict, Verdict::Equivalent(_)) {
                g.equivalent += 1;
            } else {
                g.undecided += 1;
            }
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(ratio: f64, ci: Option<(f64, f64)>, verdict: Verdict, p: Proportion) -> Comparison {
        Comparison {
            change_pct: (ratio - 1.0) * 100.0,
            p_value: Some(0.001),
            ci: None,
            ratio,
            ratio_ci: ci,
            verdict,
            proportion: p,
            unit: "MB/s".into(),
            paired: None,
        }
    }

    #[test]
    fn only_significant_losses_beyond_the_percentage_fail() {
        let hib = Proportion::Hib;
        // 15 % slower with the whole interval 10–20 % down.
        let slow = cmp(0.85, Some((0.80, 0.90)), Verdict::Worse(15.0), hib);
        assert!(worse_by_at_least(&slow, 5.0));
        assert!(worse_by_at_least(&slow, 10.0));
        assert!(!worse_by_at_least(&slow, 12.0), "the interval's near end is 10 % down");
        // Lower is better: 8 % more time, interval 1.06–1.10.
        let lib = cmp(1.08, Some((1.06, 1.10)), Verdict::Worse(8.0), Proportion::Lib);
        assert!(worse_by_at_least(&lib, 5.0) && !worse_by_at_least(&lib, 7.0));
        // Improvements and no verdict never fail.
        assert!(!worse_by_at_least(&cmp(1.2, Some((1.1, 1.3)), Verdict::Better(20.0), hib), 0.0));
        assert!(!worse_by_at_least(&cmp(0.7, Some((0.3, 1.1)), Verdict::Undecided(None), hib), 0.0));
        let all = vec![
            (0, vec![("b".into(), slow.clone()), ("c".into(), cmp(1.2, Some((1.1, 1.3)), Verdict::Better(20.0), hib))]),
            (1, vec![("b".into(), cmp(1.0, Some((0.98, 1.02)), Verdict::Undecided(None), hib))]),
        ];
        let g = gate(&all, 5.0);
        assert_eq!((g.regressions.len(), g.improvements.len(), g.undecided), (1, 1, 1));
        assert_eq!((g.regressions[0].result, g.regressions[0].identifier), (0, "b"));
    }
}
