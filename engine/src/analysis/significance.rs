//! Is a difference real? Against a baseline identifier, per result: Welch's
//! t-test (unequal variances) when both sides have 5 or more trials, else a
//! bootstrap 95 % confidence interval of the difference of means. A change is
//! reported only when it is significant at 5 % **and** larger than the noise
//! threshold; otherwise the verdict is "no significant difference".

use crate::profile::model::Proportion;
use crate::stats::Summary;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Trials below which the bootstrap is used instead of Welch's t-test.
pub const SMALL_N: usize = 5;
/// Default noise threshold, percent of the baseline mean.
pub const NOISE_PCT: f64 = 1.0;
/// Bootstrap resamples.
pub const RESAMPLES: usize = 10_000;

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Better than the baseline by this many percent.
    Better(f64),
    /// Worse than the baseline by this many percent.
    Worse(f64),
    NoSignificantDifference,
    /// One side has a single trial: nothing can be said.
    NotEnoughTrials,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Better(p) => write!(f, "better by {p:.1} %"),
            Verdict::Worse(p) => write!(f, "worse by {p:.1} %"),
            Verdict::NoSignificantDifference => f.write_str("no significant difference"),
            Verdict::NotEnoughTrials => f.write_str("not enough trials to tell"),
        }
    }
}

/// The comparison of one identifier's trials with the baseline's.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Change of the mean against the baseline, percent (signed, in the value's direction).
    pub change_pct: f64,
    /// Welch's two-sided p-value, when Welch's test was used.
    pub p_value: Option<f64>,
    /// Bootstrap 95 % interval of the difference of means (value − baseline), when used.
    pub ci: Option<(f64, f64)>,
    pub verdict: Verdict,
}

impl Comparison {
    /// `+3.2 %, p = 0.004: better by 3.2 %`.
    pub fn describe(&self) -> String {
        let how = match (self.p_value, self.ci) {
            (Some(p), _) => format_p(p),
            (None, Some((lo, hi))) => format!("95 % CI of the difference [{lo:.4}, {hi:.4}]"),
            _ => "N = 1".to_string(),
        };
        format!("{:+.1} %, {how}: {}", self.change_pct, self.verdict)
    }
}

fn format_p(p: f64) -> String {
    if p < 0.001 { "p < 0.001".into() } else { format!("p = {p:.3}") }
}

/// Welch's t statistic, degrees of freedom and two-sided p-value.
pub fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
    let (va, vb) = (sa.sd?.powi(2) / a.len() as f64, sb.sd?.powi(2) / b.len() as f64);
    let se2 = va + vb;
    if se2 == 0.0 {
        // No spread at all: the means either differ or they do not.
        return Some(if sa.mean == sb.mean { (0.0, f64::INFINITY, 1.0) } else { (f64::INFINITY, f64::INFINITY, 0.0) });
    }
    let t = (sa.mean - sb.mean) / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (a.len() as f64 - 1.0) + vb.powi(2) / (b.len() as f64 - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * (1.0 - dist.cdf(t.abs()));
    Some((t, df, p.clamp(0.0, 1.0)))
}

/// Every distinct resample of `x` (a multiset of its indexes) as (mean,
/// probability): the exact bootstrap distribution of the mean.
fn resample_means(x: &[f64]) -> Vec<(f64, f64)> {
    let n = x.len();
    let mut out = Vec::new();
    let mut counts = vec![0usize; n];
    let fact = |k: usize| (1..=k).map(|i| i as f64).product::<f64>();
    let total = (n as f64).powi(n as i32);
    fn rec(
        i: usize,
        left: usize,
        counts: &mut Vec<usize>,
        x: &[f64],
        out: &mut Vec<(f64, f64)>,
        fact: &dyn Fn(usize) -> f64,
        total: f64,
    ) {
        let n = x.len();
        if i == n - 1 {
            counts[i] = left;
            let ways = fact(n) / counts.iter().map(|&k| fact(k)).product::<f64>();
            let mean = counts.iter().zip(x).map(|(&k, v)| k as f64 * v).sum::<f64>() / n as f64;
            out.push((mean, ways / total));
            return;
        }
        for k in 0..=left {
            counts[i] = k;
            rec(i + 1, left - k, counts, x, out, fact, total);
        }
    }
    rec(0, n, &mut counts, x, &mut out, &fact, total);
    out
}

/// Distinct resamples of a sample of `n`: C(2n − 1, n).
fn multisets(n: usize) -> f64 {
    (1..=n).map(|i| (n - 1 + i) as f64 / i as f64).product()
}

/// Largest number of resample pairs enumerated exactly.
const EXACT_LIMIT: f64 = 250_000.0;

/// A 95 % percentile-bootstrap interval of mean(a) − mean(b). Small samples
/// are enumerated exactly (every distinct resample, weighted by its
/// multinomial probability); larger ones use 10,000 resamples from a
/// generator seeded from the data, so the same data always gives the same interval.
pub fn bootstrap_ci(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    if multisets(a.len()) * multisets(b.len()) <= EXACT_LIMIT {
        let (da, db) = (resample_means(a), resample_means(b));
        let mut diffs: Vec<(f64, f64)> = Vec::with_capacity(da.len() * db.len());
        for (ma, pa) in &da {
            for (mb, pb) in &db {
                diffs.push((ma - mb, pa * pb));
            }
        }
        diffs.sort_by(|x, y| x.0.total_cmp(&y.0));
        let quantile = |q: f64| {
            let mut acc = 0.0;
            for (d, p) in &diffs {
                acc += p;
                if acc >= q - 1e-12 {
                    return *d;
                }
            }
            diffs.last().map(|d| d.0).unwrap_or(0.0)
        };
        return Some((quantile(0.025), quantile(0.975)));
    }
    let mut seed: u64 = 0x9E3779B97F4A7C15;
    for v in a.iter().chain(b) {
        seed = (seed ^ v.to_bits()).wrapping_mul(0x100000001B3);
    }
    let mut x = seed | 1;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut diffs = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let ma = (0..a.len()).map(|_| a[next(a.len())]).sum::<f64>() / a.len() as f64;
        let mb = (0..b.len()).map(|_| b[next(b.len())]).sum::<f64>() / b.len() as f64;
        diffs.push(ma - mb);
    }
    diffs.sort_by(f64::total_cmp);
    let at = |q: f64| diffs[((q * (RESAMPLES - 1) as f64).round() as usize).min(RESAMPLES - 1)];
    Some((at(0.025), at(0.975)))
}

/// Compares `trials` with the `baseline` trials of a result with proportion `p`.
pub fn compare(trials: &[f64], baseline: &[f64], p: Proportion, noise_pct: f64) -> Option<Comparison> {
    let (s, b) = (Summary::of(trials)?, Summary::of(baseline)?);
    if b.mean == 0.0 {
        return None;
    }
    let change_pct = (s.mean - b.mean) / b.mean.abs() * 100.0;
    if trials.len() < 2 || baseline.len() < 2 {
        return Some(Comparison { change_pct, p_value: None, ci: None, verdict: Verdict::NotEnoughTrials });
    }
    let (p_value, ci, significant) = if trials.len() >= SMALL_N && baseline.len() >= SMALL_N {
        let (_, _, pv) = welch(trials, baseline)?;
        (Some(pv), None, pv < 0.05)
    } else {
        let (lo, hi) = bootstrap_ci(trials, baseline)?;
        (None, Some((lo, hi)), lo > 0.0 || hi < 0.0)
    };
    let verdict = if significant && change_pct.abs() >= noise_pct {
        let better = match p {
            Proportion::Hib => change_pct > 0.0,
            Proportion::Lib => change_pct < 0.0,
        };
        if better { Verdict::Better(change_pct.abs()) } else { Verdict::Worse(change_pct.abs()) }
    } else {
        Verdict::NoSignificantDifference
    };
    Some(Comparison { change_pct, p_value, ci, verdict })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_against_a_closed_form() {
        // Means 11 and 21, variances 1 and 1, n = 3 each:
        // t = −10 / √(2/3) = −12.2474, df = 4.
        let (t, df, p) = welch(&[10.0, 11.0, 12.0], &[20.0, 21.0, 22.0]).unwrap();
        assert!((t + 10.0 / (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((df - 4.0).abs() < 1e-12);
        // For df = 4 the two-sided p is I_x(2, 1/2) with x = df/(df + t²),
        // which is 1 − 1.5·√(1−x) + 0.5·(1−x)^1.5.
        let x = 4.0 / (4.0 + t * t);
        let want = 1.0 - 1.5 * (1.0 - x).sqrt() + 0.5 * (1.0 - x).powf(1.5);
        assert!((p - want).abs() < 1e-9, "{p} vs {want}");
        assert!((p - 0.000255).abs() < 1e-6);
    }

    #[test]
    fn welch_with_unequal_variances_and_sizes() {
        // a: mean 5, s² = 2.5 (n 5); b: mean 8, s² = 10 (n 5) →
        // se² = 0.5 + 2 = 2.5, t = −3/√2.5 = −1.8974, df = 6.25 / (0.0625 + 1) = 5.882.
        let a = [3.0, 4.0, 5.0, 6.0, 7.0];
        let b = [4.0, 6.0, 8.0, 10.0, 12.0];
        let (t, df, p) = welch(&a, &b).unwrap();
        assert!((t + 3.0 / 2.5f64.sqrt()).abs() < 1e-12);
        assert!((df - 6.25 / 1.0625).abs() < 1e-12);
        assert!(p > 0.05 && p < 0.2, "{p}");
        let c = compare(&b, &a, Proportion::Hib, 1.0).unwrap();
        assert_eq!(c.verdict, Verdict::NoSignificantDifference, "+60 % is not significant with this spread");
        assert!((c.change_pct - 60.0).abs() < 1e-9);
    }

    #[test]
    fn verdicts_follow_the_proportion_and_the_noise_threshold() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5];
        let faster = [110.0, 111.0, 109.0, 110.5, 109.5];
        assert_eq!(compare(&faster, &base, Proportion::Hib, 1.0).unwrap().verdict, Verdict::Better(10.0));
        // The same numbers as seconds: more is worse.
        assert_eq!(compare(&faster, &base, Proportion::Lib, 1.0).unwrap().verdict, Verdict::Worse(10.0));
        // Significant, but under a 15 % noise threshold.
        assert_eq!(compare(&faster, &base, Proportion::Hib, 15.0).unwrap().verdict, Verdict::NoSignificantDifference);
        assert_eq!(compare(&[1.0], &base, Proportion::Hib, 1.0).unwrap().verdict, Verdict::NotEnoughTrials);
    }

    #[test]
    fn small_samples_use_a_bootstrap_interval() {
        let c = compare(&[20.0, 20.2, 20.1], &[10.0, 10.1, 10.2], Proportion::Hib, 1.0).unwrap();
        assert!(c.p_value.is_none());
        let (lo, hi) = c.ci.unwrap();
        assert!(lo > 9.7 && hi < 10.3, "{lo} {hi}");
        assert_eq!(c.verdict, Verdict::Better(c.change_pct));
        let c = compare(&[10.0, 20.0, 15.0], &[12.0, 18.0, 14.0], Proportion::Hib, 1.0).unwrap();
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        assert_eq!(c.describe().split(':').next_back().unwrap().trim(), "no significant difference");
        // The same data gives the same interval.
        assert_eq!(bootstrap_ci(&[1.0, 2.0], &[3.0, 4.0]), bootstrap_ci(&[1.0, 2.0], &[3.0, 4.0]));
    }

    #[test]
    fn the_exact_bootstrap_by_hand() {
        // Resamples of [0, 2]: means 0 (1/4), 1 (1/2), 2 (1/4). Against [0, 0]
        // the difference has the same distribution: 2.5 % → 0, 97.5 % → 2.
        assert_eq!(bootstrap_ci(&[0.0, 2.0], &[0.0, 0.0]), Some((0.0, 2.0)));
        let d = resample_means(&[1.0, 2.0, 3.0]);
        assert_eq!(d.len(), 10, "C(5, 3) distinct resamples");
        assert!((d.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-12);
        let mean: f64 = d.iter().map(|(m, p)| m * p).sum();
        assert!((mean - 2.0).abs() < 1e-12, "the bootstrap mean of the mean is the mean");
        assert_eq!(multisets(3), 10.0);
        // Large samples fall back to resampling and stay deterministic.
        let big: Vec<f64> = (0..12).map(|i| i as f64).collect();
        assert_eq!(bootstrap_ci(&big, &[1.0, 2.0, 3.0]), bootstrap_ci(&big, &[1.0, 2.0, 3.0]));
    }
}
