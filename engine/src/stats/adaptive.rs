//! When to stop (README.md, "Statistics"): after the scheduled trials, add one
//! at a time while the 95 % confidence interval of the mean (t-distribution)
//! is wider than the target, up to a cap — but only while more trials can
//! help. Drift and two groups of values are reported and end the test; so
//! does noise that would need more trials than the cap to reach the target.
//! Outliers are information, never a reason to continue: a warm-up trial
//! stays an outlier however many trials follow it.
//!
//! The cap is 4× the scheduled trials (or the profile's `max`), lowered to 3×
//! when a trial takes over 2 minutes and 2× over 4 minutes, never below `min`.

use super::summary::Summary;
use super::{shape, trend};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::time::Duration;

/// Default target: the 95 % CI half-width, percent of the mean.
pub const TARGET_CI: f64 = 5.0;
/// Fewest trials for a drift to be judged.
pub const DRIFT_MIN_N: usize = 6;

/// The trial plan of one test.
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptivePlan {
    /// Trials scheduled.
    pub times: u32,
    /// Fewest trials a lowered cap may leave.
    pub min: u32,
    /// Most trials (before lowering for long trials).
    pub max: u32,
    /// Target half-width of the 95 % CI of the mean, percent of the mean.
    pub target_ci: f64,
    /// `--runs N`: exactly this many, no additions.
    pub forced: Option<u32>,
}

/// What to do after a trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run another trial; the reason is recorded when it is an added one.
    More(Option<String>),
    /// Enough trials; with a warning when the target was not reached.
    Stop(Option<String>),
}

/// t quantile for a two-sided 95 % interval with `df` degrees of freedom.
pub fn t975(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map(|d| d.inverse_cdf(0.975)).unwrap_or(f64::INFINITY)
}

/// Half-width of the 95 % CI of the mean of `values`, percent of the mean
/// (`None` below 2 values; 0 without spread; infinite for a zero mean with spread).
pub fn ci_half_pct(values: &[f64]) -> Option<f64> {
    let s = Summary::of(values)?;
    let se = s.se?;
    if se == 0.0 {
        return Some(0.0);
    }
    if s.mean == 0.0 {
        return Some(f64::INFINITY);
    }
    Some(t975(s.n as f64 - 1.0) * se / s.mean.abs() * 100.0)
}

/// Trials needed for the CI half-width to reach `target` percent if the
/// mean and SD stay what they are (`u32::MAX` beyond 10,000).
pub fn trials_needed(values: &[f64], target: f64) -> u32 {
    let Some(s) = Summary::of(values) else { return u32::MAX };
    let (Some(sd), mean) = (s.sd, s.mean.abs()) else { return u32::MAX };
    if sd == 0.0 {
        return values.len() as u32;
    }
    if mean == 0.0 {
        return u32::MAX;
    }
    let rsd = sd / mean * 100.0;
    (values.len().max(2) as u32..=10_000)
        .find(|&m| t975(m as f64 - 1.0) * rsd / (m as f64).sqrt() <= target)
        .unwrap_or(u32::MAX)
}

impl AdaptivePlan {
    pub fn new(times: u32, min: Option<u32>, max: Option<u32>, target_ci: f64, forced: Option<u32>) -> Self {
        let times = times.max(1);
        AdaptivePlan {
            times,
            min: min.unwrap_or(times).clamp(1, times),
            max: max.unwrap_or(times * 4).max(times),
            target_ci,
            forced,
        }
    }

    /// The most trials this plan runs (before lowering for long trials).
    pub fn most(&self) -> u32 {
        self.forced.unwrap_or(self.max)
    }

    /// The cap for trials that take `longest` each.
    pub fn cap(&self, longest: Duration) -> u32 {
        let factor_cap = if longest > Duration::from_secs(240) {
            self.times * 2
        } else if longest > Duration::from_secs(120) {
            self.times * 3
        } else {
            u32::MAX
        };
        self.max.min(factor_cap).max(self.min)
    }

    /// Decides after the trials so far (`values` of one result, in run order).
    pub fn decide(&self, values: &[f64], longest: Duration) -> Decision {
        let n = values.len() as u32;
        if let Some(f) = self.forced {
            return if n < f { Decision::More(None) } else { Decision::Stop(None) };
        }
        if n < self.times {
            return Decision::More(None);
        }
        let Some(half) = ci_half_pct(values) else {
            return Decision::Stop(None); // one trial scheduled: nothing to judge
        };
        let target = self.target_ci;
        if half <= target {
            return Decision::Stop(None);
        }
        let ci = format!("95 % CI ±{half:.2} % > target ±{target} %");
        if values.len() >= DRIFT_MIN_N
            && let Some(t) = trend::mann_kendall(values).filter(|t| t.p < 0.05)
        {
            let mean = Summary::of(values).map(|s| s.mean.abs()).unwrap_or(0.0);
            let per = if mean > 0.0 { t.slope / mean * 100.0 } else { 0.0 };
            return Decision::Stop(Some(format!(
                "drift: values {} {} % per trial (Mann-Kendall p = {:.3}); more trials would not settle the mean ({ci})",
                if t.slope < 0.0 { "fall" } else { "rise" },
                shape::short(per.abs()),
                t.p
            )));
        }
        if let Some(b) = shape::bimodal(values) {
            return Decision::Stop(Some(format!("{b}; more trials would not narrow the interval ({ci})")));
        }
        let cap = self.cap(longest);
        if n >= cap {
            return Decision::Stop(Some(format!("stopped at the cap of {n} trials: {ci}")));
        }
        // Add trials only while the target is within reach of the cap.
        let need = trials_needed(values, target);
        if need > cap {
            let need = if need == u32::MAX { "over 10,000".to_string() } else { format!("about {need}") };
            return Decision::Stop(Some(format!(
                "noisy: {ci} after {n} trials; the target would take {need} trials, more than the cap of {cap}"
            )));
        }
        Decision::More(Some(ci))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Duration = Duration::from_secs(1);

    /// Feeds a recorded sequence trial by trial, as the runner does, and
    /// returns how many trials ran and the final warning.
    fn replay(plan: &AdaptivePlan, seq: &[f64]) -> (usize, Option<String>, Vec<String>) {
        let mut reasons = Vec::new();
        for k in 1..=seq.len() {
            match plan.decide(&seq[..k], SHORT) {
                Decision::More(r) => reasons.extend(r),
                Decision::Stop(w) => return (k, w, reasons),
            }
        }
        panic!("the sequence ran out after {} trials: {reasons:?}", seq.len());
    }

    fn plan() -> AdaptivePlan {
        AdaptivePlan::new(3, None, None, TARGET_CI, None)
    }

    #[test]
    fn t_quantiles() {
        assert!((t975(2.0) - 4.302653).abs() < 1e-5);
        assert!((t975(11.0) - 2.200985).abs() < 1e-5);
    }

    #[test]
    fn runs_the_scheduled_trials_first_and_stops_inside_the_target() {
        let p = plan();
        assert_eq!(p.decide(&[1.0], SHORT), Decision::More(None));
        assert_eq!(p.decide(&[1.0, 1.0], SHORT), Decision::More(None));
        // mean 100, SE 0.289: ±1.24 %.
        assert_eq!(p.decide(&[100.0, 100.5, 99.5], SHORT), Decision::Stop(None));
    }

    #[test]
    fn plain_noise_adds_a_few_trials_and_converges() {
        // RSD about 3 %: at 3 trials ±7.5 %; the target needs about 6.
        let seq = [100.0, 103.0, 97.0, 101.5, 98.5, 102.0, 99.0, 100.5, 101.0, 99.5, 100.0, 100.2];
        let (n, warning, reasons) = replay(&plan(), &seq);
        assert!(n > 3 && n < 12, "{n}");
        assert_eq!(warning, None);
        assert_eq!(reasons.len(), n - 3);
        assert!(reasons[0].starts_with("95 % CI ±"), "{reasons:?}");
        assert!(ci_half_pct(&seq[..n]).unwrap() <= TARGET_CI);
    }

    #[test]
    fn a_warm_up_outlier_is_not_chased() {
        // The PTS fixture's shape: one slow first trial, then tight values.
        // Old rule: an outlier is a reason to add trials, so all 12 ran.
        let seq = [184.3, 320.9, 318.0, 322.5, 319.7, 321.2, 320.4, 318.8, 321.9, 319.3, 320.0, 320.6];
        let (n, warning, _) = replay(&plan(), &seq);
        assert!(n < 12, "{n}");
        let w = warning.expect("the target was not reached");
        assert!(w.starts_with("noisy: 95 % CI ±"), "{w}");
        // The report names the warm-up.
        assert!(shape::notes(&seq[..n])[0].starts_with("trial 1 (184.3) is far from the rest"));
    }

    #[test]
    fn drift_is_reported_instead_of_adding_trials() {
        // Each trial 1.5 % slower than the last, with a little noise.
        let seq: Vec<f64> = (0..12).map(|i| 100.0 * (1.0 - 0.015 * i as f64) + [0.3, -0.2, 0.1][i % 3]).collect();
        let plan = AdaptivePlan::new(3, None, None, 2.0, None);
        let (n, warning, _) = replay(&plan, &seq);
        let w = warning.expect("drift is reported");
        assert!(w.starts_with("drift: values fall 1.5"), "{w}");
        assert_eq!(n, DRIFT_MIN_N, "stops as soon as the drift can be judged");
    }

    #[test]
    fn a_bimodal_test_stops_with_both_groups_named() {
        // Two levels 30 % apart (a cache that sometimes hits).
        let seq = [100.0, 130.2, 100.4, 129.8, 99.8, 130.0, 100.1, 130.1, 100.3, 129.9, 99.9, 100.2];
        // With 3 scheduled trials the spread is plainly beyond reach: it stops at once.
        let (n, warning, _) = replay(&plan(), &seq);
        assert_eq!(n, 3);
        assert!(warning.unwrap().starts_with("noisy: "));
        // With 8 scheduled (enough to see the shape) the warning names both groups.
        let (n, warning, _) = replay(&AdaptivePlan::new(8, None, None, 5.0, None), &seq);
        assert_eq!(n, 8);
        let w = warning.unwrap();
        assert!(w.starts_with("the values form two groups (4 near 100.1, 4 near 130.0)"), "{w}");
        assert!(shape::notes(&seq[..8]).iter().any(|n| n.starts_with("the values form two groups")));
    }

    #[test]
    fn hopeless_noise_stops_early_and_says_how_many_trials_it_would_take() {
        // RSD about 20 % (fs_mark on a busy VM): ±5 % would take ~65 trials.
        let seq = [320.9, 621.8, 574.7, 480.0, 500.0];
        let (n, warning, _) = replay(&plan(), &seq);
        assert_eq!(n, 3);
        let w = warning.unwrap();
        assert!(w.contains("more than the cap of 12"), "{w}");
        assert!(trials_needed(&seq[..3], 5.0) > 12);
    }

    #[test]
    fn the_cap_still_holds() {
        // Noise that looks within reach at every step but never gets there.
        let p = AdaptivePlan::new(3, None, Some(5), 5.0, None);
        let seq = [100.0, 104.0, 96.0, 100.0, 108.0, 100.0];
        let (n, warning, reasons) = replay(&p, &seq);
        assert_eq!(n, 5, "{reasons:?}");
        let w = warning.unwrap();
        assert!(w.starts_with("stopped at the cap of 5 trials"), "{w}");
    }

    #[test]
    fn long_trials_lower_the_cap() {
        let p = plan();
        assert_eq!(p.cap(SHORT), 12);
        assert_eq!(p.cap(Duration::from_secs(150)), 9);
        assert_eq!(p.cap(Duration::from_secs(300)), 6);
        let p = AdaptivePlan::new(3, None, Some(5), 5.0, None);
        assert_eq!(p.cap(Duration::from_secs(300)), 5);
    }

    #[test]
    fn forced_runs_are_exact() {
        let p = AdaptivePlan::new(3, None, None, 5.0, Some(2));
        assert_eq!(p.decide(&[1.0], SHORT), Decision::More(None));
        assert_eq!(p.decide(&[1.0, 50.0], SHORT), Decision::Stop(None));
    }

    #[test]
    fn trials_needed_by_hand() {
        // RSD 10 %: t(m−1)·10/√m ≤ 5 first holds at m = 18 (t(17) = 2.110, 2.110·10/√18 = 4.97).
        let v = [90.0, 100.0, 110.0];
        assert_eq!(trials_needed(&v, 5.0), 18);
        assert_eq!(trials_needed(&[5.0, 5.0, 5.0], 5.0), 3);
    }
}
