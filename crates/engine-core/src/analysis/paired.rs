//! Paired comparisons: states measured in the same rounds of an interleaved
//! run are compared round by round. Trials of one round run seconds apart
//! under the same machine conditions, so on a machine whose level shifts
//! from one round to the next the within-round ratio is far steadier than
//! either state's mean, and Welch on the two samples (which treats them as
//! independent) throws that away.
//!
//! The estimate is the per-round log ratio d_r = ln(a_r / b_r): its mean m
//! and a t interval over the n rounds (df n − 1); the ratio is exp(m) (the
//! geometric mean of the per-round ratios) with interval exp(m ± t·s/√n).
//! Chosen over a randomised-block ANOVA because with two states it is the
//! same test, and over a round bootstrap because it is exact for normal log
//! ratios at any n ≥ 2 where a bootstrap of 3–10 rounds is not; logs because
//! a level shift multiplies both states (a VM's IOPS move by ±20 %), which a
//! difference would keep and a log ratio cancels. With set-ups the rounds
//! are nested in set-ups: the mean log ratio of each set-up is the unit
//! (df = set-ups − 1), since what changes between set-ups (file layout, a
//! fresh file system) is shared by the rounds inside one.

use super::significance::{ALPHA, Comparison, Rule, Verdict, compare, same_or_undecided_at};
use crate::model::profile::Proportion;
use crate::model::result::ResultEntry;
use crate::stats::Summary;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// One round both states measured: its set-up (0 when set up once), the
/// state's value and the baseline's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pair {
    pub setup: u32,
    pub a: f64,
    pub b: f64,
}

/// `e` against `base`: paired over their shared rounds when both come from
/// the same interleaved run, else unpaired (Welch and Fieller, as merged
/// results and old files without round numbers are).
pub(crate) fn compare_entries(
    e: &ResultEntry,
    base: &ResultEntry,
    p: Proportion,
    unit: &str,
    rule: Rule,
) -> Option<Comparison> {
    if let Some(c) = pairs(e, base).and_then(|pairs| compare_paired(&pairs, p, unit, rule)) {
        return Some(c);
    }
    compare(&e.units(), &base.units(), p, unit, rule)
}

/// The rounds `e` and `base` share, when both were measured in the same
/// interleaved run (one token) with a round for every trial.
pub(crate) fn pairs(e: &ResultEntry, base: &ResultEntry) -> Option<Vec<Pair>> {
    let (Some(x), Some(y)) = (&e.interleave, &base.interleave) else { return None };
    let whole = |r: &ResultEntry| r.trial_rounds.len() == r.trials.len() && !r.trials.is_empty();
    if x != y || !whole(e) || !whole(base) {
        return None;
    }
    let setup = |r: &ResultEntry, k: usize| if r.setups.len() == r.trials.len() { r.setups[k] } else { 0 };
    let mut out = Vec::new();
    for (k, (round, a)) in e.trial_rounds.iter().zip(&e.trials).enumerate() {
        if let Some(j) = base.trial_rounds.iter().position(|r| r == round) {
            out.push(Pair { setup: setup(e, k), a: *a, b: base.trials[j] });
        }
    }
    Some(out)
}

/// The units the interval is over: per-round log ratios, or with two or
/// more set-ups each set-up's mean log ratio. `None` when a value is not
/// positive (a log ratio needs both above zero).
fn units(pairs: &[Pair]) -> Option<Vec<f64>> {
    if pairs.iter().any(|p| !(p.a > 0.0 && p.b > 0.0 && p.a.is_finite() && p.b.is_finite())) {
        return None;
    }
    let logs: Vec<(u32, f64)> = pairs.iter().map(|p| (p.setup, (p.a / p.b).ln())).collect();
    let mut setups: Vec<u32> = logs.iter().map(|(s, _)| *s).collect();
    setups.sort_unstable();
    setups.dedup();
    if setups.len() < 2 {
        return Some(logs.into_iter().map(|(_, d)| d).collect());
    }
    Some(
        setups
            .iter()
            .map(|s| {
                let v: Vec<f64> = logs.iter().filter(|(x, _)| x == s).map(|(_, d)| *d).collect();
                v.iter().sum::<f64>() / v.len() as f64
            })
            .collect(),
    )
}

/// The paired comparison over `pairs`; `None` when it cannot be made (fewer
/// than two units, a value not above zero), for the caller to compare
/// unpaired.
pub(crate) fn compare_paired(pairs: &[Pair], p: Proportion, unit: &str, rule: Rule) -> Option<Comparison> {
    let d = units(pairs)?;
    let n = d.len();
    let s = Summary::of(&d)?;
    let sd = s.sd?;
    let a: Vec<f64> = pairs.iter().map(|p| p.a).collect();
    let b: Vec<f64> = pairs.iter().map(|p| p.b).collect();
    let at_resolution = |v: &[f64]| crate::stats::shape::resolution_limited(v).is_some();
    if at_resolution(&a) || at_resolution(&b) {
        // Nothing to pair: what Welch says of values that never move.
        return compare(&a, &b, p, unit, rule);
    }
    let ratio = s.mean.exp();
    let change_pct = (ratio - 1.0) * 100.0;
    let se = sd / (n as f64).sqrt();
    let dist = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    let interval = |alpha: f64| {
        let q = dist.inverse_cdf(1.0 - alpha / 2.0);
        ((s.mean - q * se).exp(), (s.mean + q * se).exp())
    };
    let (p_value, ci95, ci90) = if se == 0.0 {
        (if s.mean == 0.0 { 1.0 } else { 0.0 }, (ratio, ratio), (ratio, ratio))
    } else {
        ((2.0 * (1.0 - dist.cdf((s.mean / se).abs()))).clamp(0.0, 1.0), interval(ALPHA), interval(2.0 * ALPHA))
    };
    let beyond = {
        let noise = rule.noise_pct / 100.0;
        p_value < ALPHA && (ci95.0 >= 1.0 + noise || ci95.1 <= 1.0 - noise)
    };
    let verdict = if beyond {
        let better = match p {
            Proportion::Hib => change_pct > 0.0,
            Proportion::Lib => change_pct < 0.0,
        };
        if better { Verdict::Better(change_pct.abs()) } else { Verdict::Worse(change_pct.abs()) }
    } else {
        same_or_undecided_at(ratio, Some(ci90), n as f64, rule)
    };
    Some(Comparison {
        change_pct,
        p_value: Some(p_value),
        ci: difference(pairs, &dist),
        ratio,
        ratio_ci: Some(ci95),
        verdict,
        proportion: p,
        unit: unit.into(),
        paired: Some(n as u32),
    })
}

/// The 95 % interval of the mean per-round difference, in the result's unit.
fn difference(pairs: &[Pair], dist: &StudentsT) -> Option<(f64, f64)> {
    let d: Vec<f64> = pairs.iter().map(|p| p.a - p.b).collect();
    let s = Summary::of(&d)?;
    let h = dist.inverse_cdf(1.0 - ALPHA / 2.0) * s.sd? / (d.len() as f64).sqrt();
    Some((s.mean - h, s.mean + h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::test_rng::Rng;

    /// Rounds of two states under a machine whose level moves between
    /// rounds (a shift of ±`shift` and AR(1) drift) with `noise` within a
    /// round; the state's true ratio to the baseline is `ratio`.
    fn rounds(rng: &mut Rng, n: usize, ratio: f64, shift: f64, noise: f64) -> Vec<Pair> {
        let mut drift = 0.0;
        (0..n)
            .map(|_| {
                drift = 0.7 * drift + 0.05 * rng.normal();
                let level = 100.0 * (1.0 + shift * rng.normal() + drift).max(0.2);
                let a = level * ratio * (1.0 + noise * rng.normal());
                let b = level * (1.0 + noise * rng.normal());
                Pair { setup: 0, a: a.max(0.01), b: b.max(0.01) }
            })
            .collect()
    }

    #[test]
    fn per_round_log_ratios_by_hand() {
        // Ratios 1.1, 1.2, 1.0 in rounds at very different levels.
        let p = [
            Pair { setup: 0, a: 110.0, b: 100.0 },
            Pair { setup: 0, a: 24.0, b: 20.0 },
            Pair { setup: 0, a: 500.0, b: 500.0 },
        ];
        let c = compare_paired(&p, Proportion::Hib, "IOPS", Rule::default()).unwrap();
        let d = [1.1f64.ln(), 1.2f64.ln(), 0.0];
        let m = d.iter().sum::<f64>() / 3.0;
        assert!((c.ratio - m.exp()).abs() < 1e-12);
        let sd = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        // t(0.975, 2) = 4.302653.
        let h = 4.302652730 * sd / 3f64.sqrt();
        let (lo, hi) = c.ratio_ci.unwrap();
        assert!((lo - (m - h).exp()).abs() < 1e-6 && (hi - (m + h).exp()).abs() < 1e-6, "{lo} {hi}");
        assert_eq!(c.paired, Some(3));
        assert!(c.describe().contains("paired over 3 rounds"), "{}", c.describe());
    }

    #[test]
    fn set_ups_are_the_units_when_there_are_two_or_more() {
        let p: Vec<Pair> = [(1, 1.10), (1, 1.12), (2, 1.02), (2, 1.04), (3, 1.06), (3, 1.08)]
            .iter()
            .enumerate()
            .map(|(k, (s, r))| Pair { setup: *s, a: (90.0 + k as f64) * r, b: 90.0 + k as f64 })
            .collect();
        assert_eq!(units(&p).unwrap().len(), 3);
        let c = compare_paired(&p, Proportion::Hib, "MB/s", Rule::default()).unwrap();
        assert_eq!(c.paired, Some(3));
    }

    /// The machine's level moves ±20 % between rounds, 1 % within one: the
    /// paired 95 % interval covers the true ratio in ≥ 93 % of runs and is
    /// far narrower than the unpaired one (whose coverage is shown beside).
    #[test]
    fn the_paired_interval_covers_the_ratio_and_is_narrower() {
        let mut rng = Rng(0x5EED_0055_0000_0001);
        let (reps, truth) = (2000, 1.03);
        let (mut covered, mut covered_unpaired, mut width, mut width_unpaired) = (0, 0, 0.0, 0.0);
        for _ in 0..reps {
            let p = rounds(&mut rng, 8, truth, 0.2, 0.01);
            let c = compare_paired(&p, Proportion::Hib, "IOPS", Rule::default()).unwrap();
            let (lo, hi) = c.ratio_ci.unwrap();
            covered += (lo <= truth && truth <= hi) as usize;
            width += hi - lo;
            let a: Vec<f64> = p.iter().map(|p| p.a).collect();
            let b: Vec<f64> = p.iter().map(|p| p.b).collect();
            if let Some((lo, hi)) = compare(&a, &b, Proportion::Hib, "IOPS", Rule::default()).unwrap().ratio_ci {
                covered_unpaired += (lo <= truth && truth <= hi) as usize;
                width_unpaired += hi - lo;
            } else {
                width_unpaired += f64::INFINITY;
            }
        }
        let coverage = covered as f64 / reps as f64;
        eprintln!(
            "paired: coverage {coverage:.3}, mean width {:.4}; unpaired: coverage {:.3}, mean width {:.4}",
            width / reps as f64,
            covered_unpaired as f64 / reps as f64,
            width_unpaired / reps as f64
        );
        assert!(coverage >= 0.93, "{coverage}");
        assert!(width * 5.0 < width_unpaired, "paired {width} vs unpaired {width_unpaired}");
    }

    /// Equal states under the same moving machine: "better" or "worse" in
    /// at most 5 % of runs; a 5 % change with 1 % noise in 8 rounds is
    /// called in nearly all.
    #[test]
    fn false_changes_at_most_five_percent_and_real_ones_found() {
        let mut rng = Rng(0x5EED_0055_0000_0002);
        let reps = 2000;
        let changed = |rng: &mut Rng, ratio: f64| {
            (0..reps)
                .filter(|_| {
                    let p = rounds(rng, 8, ratio, 0.2, 0.01);
                    compare_paired(&p, Proportion::Hib, "IOPS", Rule::default()).unwrap().verdict.is_change()
                })
                .count() as f64
                / reps as f64
        };
        let false_rate = changed(&mut rng, 1.0);
        let power = changed(&mut rng, 1.05);
        eprintln!("false changes {false_rate:.3}, power at 5 % {power:.3}");
        assert!(false_rate <= 0.05, "{false_rate}");
        assert!(power >= 0.95, "{power}");
        // Equal states are mostly found equivalent within ±2 %.
        let eq = (0..reps)
            .filter(|_| {
                let p = rounds(&mut rng, 8, 1.0, 0.2, 0.01);
                matches!(
                    compare_paired(&p, Proportion::Hib, "IOPS", Rule::default()).unwrap().verdict,
                    Verdict::Equivalent(_)
                )
            })
            .count() as f64
            / reps as f64;
        assert!(eq >= 0.8, "{eq}");
    }

    #[test]
    fn entries_pair_only_within_one_interleaved_run() {
        let mut a = ResultEntry::from_trials("A", vec![10.0, 20.0, 30.0], None, vec![], String::new().into()).unwrap();
        let mut b = ResultEntry::from_trials("B", vec![11.0, 19.0, 33.0], None, vec![], String::new().into()).unwrap();
        assert!(pairs(&a, &b).is_none(), "no rounds: unpaired");
        a.trial_rounds = vec![1, 2, 3];
        b.trial_rounds = vec![2, 1, 3];
        a.interleave = Some("x".into());
        b.interleave = Some("y".into());
        assert!(pairs(&a, &b).is_none(), "two runs: unpaired");
        b.interleave = Some("x".into());
        let p = pairs(&a, &b).unwrap();
        assert_eq!(
            p,
            [
                Pair { setup: 0, a: 10.0, b: 19.0 },
                Pair { setup: 0, a: 20.0, b: 11.0 },
                Pair { setup: 0, a: 30.0, b: 33.0 }
            ]
        );
    }
}
