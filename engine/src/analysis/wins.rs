//! Wins and losses: per result, the best identifier wins and the worst loses
//! (higher or lower is better as the result says) — but only when the
//! difference is real: the best must be significantly better than the
//! runner-up, the worst significantly worse than the next (Welch's test and
//! the noise threshold, as the verdicts). Ties share.

use super::Matrix;
use super::significance::{self, Verdict};
use crate::model::profile::Proportion;
use crate::model::result::{ResultEntry, ResultFile};
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub identifier: String,
    pub wins: usize,
    pub losses: usize,
}

/// Whether `a` is significantly better (`Some(true)`) or worse than `b`.
fn beats(a: &ResultEntry, b: &ResultEntry, p: Proportion, rule: significance::Rule) -> Option<bool> {
    match significance::compare(&a.trials, &b.trials, p, "", rule)?.verdict {
        Verdict::Better(_) => Some(true),
        Verdict::Worse(_) => Some(false),
        _ => None,
    }
}

/// Wins and losses per identifier, a test counting once: io's bandwidth and
/// IOPS, or pgbench's TPS and latency, are one effect, not two.
pub(crate) fn tally(f: &ResultFile, m: &Matrix<'_>, rule: significance::Rule) -> Vec<Tally> {
    let mut t: Vec<Tally> = m.ids.iter().map(|id| Tally { identifier: id.clone(), wins: 0, losses: 0 }).collect();
    // (identifier, test) already counted as a win, as a loss.
    let (mut won, mut lost) = (HashSet::new(), HashSet::new());
    for (r, row) in f.results.iter().zip(&m.rows) {
        let vals: Vec<(usize, f64)> = row
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.map(|e| (i, e.value)))
            .filter(|(_, v)| v.is_finite())
            .collect();
        if vals.len() < 2 {
            continue;
        }
        let (best, worst) = match r.proportion {
            Proportion::Hib => {
                (vals.iter().map(|v| v.1).fold(f64::MIN, f64::max), vals.iter().map(|v| v.1).fold(f64::MAX, f64::min))
            }
            Proportion::Lib => {
                (vals.iter().map(|v| v.1).fold(f64::MAX, f64::min), vals.iter().map(|v| v.1).fold(f64::MIN, f64::max))
            }
        };
        if best == worst {
            continue;
        }
        // The runner-up of each end: the nearest value that is not tied with it.
        let next = |end: f64| {
            vals.iter()
                .filter(|(_, v)| *v != end)
                .min_by(|a, b| (a.1 - end).abs().total_cmp(&(b.1 - end).abs()))
                .map(|(i, _)| row[*i].unwrap())
        };
        let (after_best, before_worst) = (next(best), next(worst));
        for (i, v) in vals {
            let e = row[i].unwrap();
            if v == best
                && after_best.is_some_and(|n| beats(e, n, r.proportion, rule) == Some(true))
                && won.insert((i, r.test.as_str()))
            {
                t[i].wins += 1;
            }
            if v == worst
                && before_worst.is_some_and(|n| beats(e, n, r.proportion, rule) == Some(false))
                && lost.insert((i, r.test.as_str()))
            {
                t[i].losses += 1;
            }
        }
    }
    t
}
