//! Wins and losses: per result, the best identifier wins and the worst loses
//! (higher or lower is better as the result says) — but only when the
//! difference is real: the best must be significantly better than the
//! runner-up, the worst significantly worse than the next (Welch's test and
//! the noise threshold, as the verdicts). Ties share. Across the tests, an
//! identifier's wins and losses are one family (`super::fdr`): a test's
//! claims count only when Benjamini–Hochberg over the identifier's tests
//! keeps them, so a sweep of many results does not hand out wins by chance.

use super::Matrix;
use super::significance::{self, Verdict};
use crate::model::facts::Identifier;
use crate::model::profile::Proportion;
use crate::model::result::{ResultEntry, ResultFile};
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub identifier: Identifier,
    pub wins: usize,
    pub losses: usize,
}

/// Whether `a` is significantly better (`Some(true)`) or worse than `b`, with the p.
fn beats(a: &ResultEntry, b: &ResultEntry, p: Proportion, rule: significance::Rule) -> Option<(bool, f64)> {
    let c = super::paired::compare_entries(a, b, p, "", rule)?;
    match c.verdict {
        Verdict::Better(_) => Some((true, c.p_value.unwrap_or(0.0))),
        Verdict::Worse(_) => Some((false, c.p_value.unwrap_or(0.0))),
        _ => None,
    }
}

/// A win (`true`) or loss of identifier `id` in `test`, with its p.
struct Claim<'a> {
    id: usize,
    test: &'a str,
    win: bool,
    p: f64,
}

/// Wins and losses per identifier, a test counting once: io's bandwidth and
/// IOPS, or pgbench's TPS and latency, are one effect, not two.
pub(crate) fn tally(f: &ResultFile, m: &Matrix<'_>, rule: significance::Rule) -> Vec<Tally> {
    let mut t: Vec<Tally> = m.ids.iter().map(|id| Tally { identifier: id.clone(), wins: 0, losses: 0 }).collect();
    let (claims, family) = claims(f, m, rule);
    // (identifier, test) already counted as a win, as a loss.
    let (mut won, mut lost) = (HashSet::new(), HashSet::new());
    for (i, tally) in t.iter_mut().enumerate() {
        let mine: Vec<&Claim> = claims.iter().filter(|c| c.id == i).collect();
        // The family: every test the identifier was compared in; a test
        // without a claim is a member with p = 1.
        let tests: Vec<&str> = family[i].iter().copied().collect();
        let p: Vec<f64> = tests
            .iter()
            .map(|test| {
                let ps: Vec<f64> = mine.iter().filter(|c| c.test == *test).map(|c| c.p).collect();
                if ps.is_empty() { 1.0 } else { super::fdr::simes(&ps) }
            })
            .collect();
        let found = super::fdr::benjamini_hochberg(&p, super::significance::ALPHA);
        for c in mine.iter().filter(|c| tests.iter().zip(&found).any(|(t, f)| *f && *t == c.test)) {
            if c.win && won.insert((i, c.test)) {
                tally.wins += 1;
            }
            if !c.win && lost.insert((i, c.test)) {
                tally.losses += 1;
            }
        }
    }
    t
}

/// Every result's claims (its best significantly better than the runner-up,
/// its worst significantly worse than the next), and per identifier the
/// tests it was compared in.
fn claims<'f>(
    f: &'f ResultFile,
    m: &Matrix<'_>,
    rule: significance::Rule,
) -> (Vec<Claim<'f>>, Vec<std::collections::BTreeSet<&'f str>>) {
    let mut out = Vec::new();
    let mut family = vec![std::collections::BTreeSet::new(); m.ids.len()];
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
        vals.iter().for_each(|(i, _)| {
            family[*i].insert(r.test.as_str());
        });
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
            let test = r.test.as_str();
            if v == best
                && let Some((true, p)) = after_best.and_then(|n| beats(e, n, r.proportion, rule))
            {
                out.push(Claim { id: i, test, win: true, p });
            }
            if v == worst
                && let Some((false, p)) = before_worst.and_then(|n| beats(e, n, r.proportion, rule))
            {
                out.push(Claim { id: i, test, win: false, p });
            }
        }
    }
    (out, family)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::{System, TestResult};

    fn result(test: &str, a: &[f64], b: &[f64]) -> TestResult {
        let e =
            |id: &str, v: &[f64]| ResultEntry::from_trials(id, v.to_vec(), None, vec![], String::new().into()).unwrap();
        TestResult { profile_version: "1".into(), entries: vec![e("A", a), e("B", b)], ..TestResult::sample(test, "r") }
    }

    #[test]
    fn a_marginal_win_among_many_tests_is_not_counted_a_clear_one_is() {
        let mut f = ResultFile::new("t");
        f.systems = ["A", "B"].iter().map(|i| System { identifier: (*i).into(), ..Default::default() }).collect();
        let same = [100.0, 101.0, 99.0, 100.5, 99.5];
        // B ahead by 1.4 %, p ≈ 0.03 alone: over 20 tests, not a discovery.
        let marginal = [101.0, 102.5, 100.2, 101.8, 101.5];
        f.results = (0..19).map(|i| result(&format!("t{i}"), &same, &same)).collect();
        f.results.push(result("t19", &same, &marginal));
        let t = tally(&f, &Matrix::new(&f), significance::Rule::noise(0.0));
        let p = significance::compare(&marginal, &same, Proportion::Hib, "", significance::Rule::noise(0.0))
            .unwrap()
            .p_value
            .unwrap();
        assert!(p < 0.05 && p > 0.05 / 20.0, "alone significant, not across 20: p = {p}");
        assert_eq!((t[1].wins, t[0].losses), (0, 0), "{t:?}");
        // Alone, the same comparison is a win.
        f.results.drain(..19);
        let t = tally(&f, &Matrix::new(&f), significance::Rule::noise(0.0));
        assert_eq!((t[1].wins, t[0].losses), (1, 1), "{t:?}");
        // A clear win among the 20 still counts.
        let clear = [120.0, 121.0, 119.0, 120.5, 119.5];
        f.results = (0..19).map(|i| result(&format!("t{i}"), &same, &same)).collect();
        f.results.push(result("t19", &same, &clear));
        let t = tally(&f, &Matrix::new(&f), significance::Rule::noise(0.0));
        assert_eq!((t[1].wins, t[0].losses), (1, 1), "{t:?}");
    }
}
