//! When to stop (the book, "Statistics"): after the scheduled trials, add one
//! at a time while the 95 % confidence interval of the mean (t-distribution)
//! is wider than the target, within the test's time budget — and only while
//! the budget can reach the target. Drift and two groups of values are
//! reported and end the test. Outliers are information, never a reason to
//! continue: a warm-up trial stays an outlier however many trials follow it.
//!
//! The budget counts the measured trials' wall time including engine's own
//! time between them (warm-ups are outside it). A hard cap on the count
//! keeps sub-millisecond trials from running thousands of times.

use super::summary::Summary;
use super::{shape, trend};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::time::Duration;

/// Default target: the 95 % CI half-width, percent of the mean.
pub const TARGET_CI: f64 = 5.0;
/// Default time budget of a test's trials: quick trials get many, hour-long
/// builds their scheduled ones.
pub const BUDGET: Duration = Duration::from_secs(60);
/// Default cap on the count, for trials of a millisecond or less.
pub const SAFETY_CAP: u32 = 1000;
/// Fewest trials for a drift to be judged.
pub const DRIFT_MIN_N: usize = 6;
/// Significance of each look for drift. Drift is judged at 6, 12, 24, …
/// trials (not after every trial, which would find one in any long enough
/// run of noise), so the false alarms of all looks together stay under 5 %.
const DRIFT_ALPHA: f64 = 0.01;

/// The trial plan of one test.
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptivePlan {
    /// Trials scheduled: run before anything is judged.
    pub times: u32,
    /// Fewest trials a spent budget may leave (at most `times`).
    pub min: u32,
    /// Most trials, whatever the budget.
    pub max: u32,
    /// Target half-width of the 95 % CI of the mean, percent of the mean.
    pub target_ci: f64,
    /// Time the trials may take.
    pub budget: Duration,
    /// `--runs N`: exactly this many, no additions.
    pub forced: Option<u32>,
}

/// Why the trials of a result stopped (stored in the result file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The 95 % CI reached the target.
    Target,
    /// `--runs N` asked for exactly this many.
    Forced,
    /// One trial scheduled: nothing to judge.
    Single,
    /// The budget was spent before the target was reached.
    Budget,
    /// The target would take more time than the budget left.
    Projection,
    /// The cap on the count of trials.
    Cap,
    /// The values trend across trials.
    Drift,
    /// The values form two groups.
    Groups,
    /// An interleaved run's comparisons with its baseline state were all
    /// decided (better, worse, equivalent) or could not be within the budget.
    Verdict,
}

impl Stop {}

/// What to do after a trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run another trial; the reason is recorded when it is an added one.
    More(Option<String>),
    /// Enough trials: why, with a warning when the target was not reached.
    Stop(Stop, Option<String>),
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
/// mean and SD stay what they are (`u32::MAX` beyond 100,000).
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
    // t(m−1) > 1.96, so m ≥ (1.96·rsd/target)²: start the search there.
    let floor = ((1.96 * rsd / target).powi(2)).min(1e6) as u32;
    (values.len().max(2).max(floor as usize) as u32..=100_000)
        .find(|&m| t975(m as f64 - 1.0) * rsd / (m as f64).sqrt() <= target)
        .unwrap_or(u32::MAX)
}

/// The factor that takes a sample SD of `n` values to the lower end of the
/// SD's 90 % interval: √((n − 1) / χ²₀.₉₅(n − 1)).
pub fn optimistic_sd(n: usize) -> f64 {
    use statrs::distribution::ChiSquared;
    if n < 2 {
        return 1.0;
    }
    let df = (n - 1) as f64;
    ChiSquared::new(df).map(|c| (df / c.inverse_cdf(0.95)).sqrt()).unwrap_or(1.0)
}

/// A duration for messages: `850 ms`, `12.5 s`, `3 min 20 s`.
pub fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 60.0 {
        // Three significant digits, no trailing zeros.
        let d = crate::units::decimals_for_sig(s).saturating_sub(1);
        let t = format!("{s:.d$}");
        let t = if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.') } else { &t };
        format!("{t} s")
    } else if s < 3600.0 {
        format!("{} min {} s", (s / 60.0).floor(), (s % 60.0).round())
    } else {
        format!("{} h {} min", (s / 3600.0).floor(), ((s % 3600.0) / 60.0).round())
    }
}

impl AdaptivePlan {
    pub fn new(
        times: u32,
        min: Option<u32>,
        max: Option<u32>,
        target_ci: f64,
        budget: Option<Duration>,
        forced: Option<u32>,
    ) -> Self {
        let times = times.max(1);
        AdaptivePlan {
            times,
            min: min.unwrap_or(times).clamp(1, times),
            max: max.unwrap_or(SAFETY_CAP).max(times),
            target_ci,
            budget: budget.unwrap_or(BUDGET),
            forced,
        }
    }

    /// The most trials this plan runs (whatever the budget).
    pub fn most(&self) -> u32 {
        self.forced.unwrap_or(self.max)
    }

    /// Decides after the trials so far (`values` of one result, in run
    /// order), `elapsed` since the first measured trial began.
    pub fn decide(&self, values: &[f64], elapsed: Duration) -> Decision {
        let n = values.len() as u32;
        if let Some(f) = self.forced {
            if n < f {
                return Decision::More(None);
            }
            // Say so when the count asked for leaves the interval wide.
            let wide = ci_half_pct(values).filter(|h| *h > self.target_ci).map(|h| {
                format!(
                    "--runs {f}: 95 % CI ±{h:.2} % > target ±{} %; without --runs trials would be added",
                    self.target_ci
                )
            });
            return Decision::Stop(Stop::Forced, wide);
        }
        let per = elapsed / n.max(1);
        let spent = elapsed + per > self.budget;
        if n < self.min || (n < self.times && !spent) {
            return Decision::More(None);
        }
        let Some(half) = ci_half_pct(values) else {
            return Decision::Stop(Stop::Single, None);
        };
        let target = self.target_ci;
        if half <= target {
            return Decision::Stop(Stop::Target, None);
        }
        let ci = format!("95 % CI ±{half:.2} % > target ±{target} %");
        if let Some(stop) = self.shape(values, &ci) {
            return stop;
        }
        if n >= self.max {
            return Decision::Stop(Stop::Cap, Some(format!("stopped at the cap of {n} trials: {ci}")));
        }
        let need = trials_needed(values, target);
        let took = format!("{n} trials in {}", seconds(elapsed));
        if spent {
            return Decision::Stop(
                Stop::Budget,
                Some(format!("budget spent: {ci} after {took}; the budget is {}", seconds(self.budget))),
            );
        }
        // Add trials only while the budget can reach the target — judged
        // with an optimistic SD (the lower end of its 90 % interval): an SD
        // from 3 or 4 values is rough, and a test that might reach the
        // target keeps trying until the budget is spent.
        // (An SD scaled by f needs the trials a target scaled by 1/f does.)
        let hope = trials_needed(values, target / optimistic_sd(values.len()));
        let left = hope.saturating_sub(n).min(self.max - n);
        if hope > self.max || elapsed + per * left > self.budget {
            let would = if need == u32::MAX {
                "over 100,000 trials".to_string()
            } else {
                format!("about {need} trials / {}", seconds(per * need))
            };
            return Decision::Stop(
                Stop::Projection,
                Some(format!(
                    "noisy: {ci} after {took}; ±{target} % would take {would}, more than the budget of {}",
                    seconds(self.budget)
                )),
            );
        }
        Decision::More(Some(ci))
    }

    /// Drift (judged at 6, 12, 24, … trials) and two groups: shapes more
    /// trials would not settle.
    fn shape(&self, values: &[f64], ci: &str) -> Option<Decision> {
        let n = values.len();
        let look = n >= DRIFT_MIN_N && (n / DRIFT_MIN_N).is_power_of_two() && n.is_multiple_of(DRIFT_MIN_N);
        if look && let Some(t) = trend::mann_kendall(values).filter(|t| t.p < DRIFT_ALPHA) {
            let mean = Summary::of(values).map(|s| s.mean.abs()).unwrap_or(0.0);
            let per = if mean > 0.0 { t.slope / mean * 100.0 } else { 0.0 };
            return Some(Decision::Stop(
                Stop::Drift,
                Some(format!(
                    "drift: values {} {} % per trial (Mann-Kendall p = {:.3}); more trials would not settle the mean ({ci})",
                    if t.slope < 0.0 { "fall" } else { "rise" },
                    shape::short(per.abs()),
                    t.p
                )),
            ));
        }
        shape::bimodal(values).map(|b| {
            Decision::Stop(Stop::Groups, Some(format!("{b}; more trials would not narrow the interval ({ci})")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds a recorded sequence trial by trial, as the runner does, each
    /// trial taking `each`, and returns how many trials ran, why they
    /// stopped, the final warning and the reasons for added trials.
    fn replay_at(plan: &AdaptivePlan, seq: &[f64], each: Duration) -> (usize, Stop, Option<String>, Vec<String>) {
        let mut reasons = Vec::new();
        for k in 1..=seq.len() {
            match plan.decide(&seq[..k], each * k as u32) {
                Decision::More(r) => reasons.extend(r),
                Decision::Stop(why, w) => return (k, why, w, reasons),
            }
        }
        panic!("the sequence ran out after {} trials: {reasons:?}", seq.len());
    }

    fn replay(plan: &AdaptivePlan, seq: &[f64]) -> (usize, Stop, Option<String>, Vec<String>) {
        replay_at(plan, seq, Duration::from_millis(100))
    }

    fn plan() -> AdaptivePlan {
        AdaptivePlan::new(3, None, None, TARGET_CI, None, None)
    }

    /// `n` values of a steady noise with relative SD about `rsd` percent
    /// (a fixed pseudo-random sequence: the replay is the same every time).
    fn noise(n: usize, rsd: f64) -> Vec<f64> {
        noise_from(0x2545F4914F6CDD1D, n, rsd)
    }

    /// [`noise`] from seed `x` (odd: xorshift never leaves zero).
    fn noise_from(mut x: u64, n: usize, rsd: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                // Sum of 12 uniforms − 6: close to a standard normal.
                let z: f64 = (0..12)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x >> 11) as f64 / (1u64 << 53) as f64
                    })
                    .sum::<f64>()
                    - 6.0;
                100.0 * (1.0 + rsd / 100.0 * z)
            })
            .collect()
    }

    #[test]
    fn t_quantiles() {
        assert!((t975(2.0) - 4.302653).abs() < 1e-5);
        assert!((t975(11.0) - 2.200985).abs() < 1e-5);
    }

    #[test]
    fn runs_the_scheduled_trials_first_and_stops_inside_the_target() {
        let p = plan();
        let t = Duration::from_secs(1);
        assert_eq!(p.decide(&[1.0], t), Decision::More(None));
        assert_eq!(p.decide(&[1.0, 1.0], t * 2), Decision::More(None));
        // mean 100, SE 0.289: ±1.24 %.
        assert_eq!(p.decide(&[100.0, 100.5, 99.5], t * 3), Decision::Stop(Stop::Target, None));
    }

    #[test]
    fn plain_noise_adds_a_few_trials_and_converges() {
        // RSD about 3 %: at 3 trials ±7.5 %; the target needs about 6.
        let seq = [100.0, 103.0, 97.0, 101.5, 98.5, 102.0, 99.0, 100.5, 101.0, 99.5, 100.0, 100.2];
        let (n, why, warning, reasons) = replay(&plan(), &seq);
        assert!(n > 3 && n < 12, "{n}");
        assert_eq!((why, warning), (Stop::Target, None));
        assert_eq!(reasons.len(), n - 3);
        assert!(reasons[0].starts_with("95 % CI ±"), "{reasons:?}");
        assert!(ci_half_pct(&seq[..n]).unwrap() <= TARGET_CI);
    }

    #[test]
    fn fast_noisy_trials_run_to_the_target_past_the_old_cap() {
        // RSD 20 %, 30 ms a trial: ±5 % takes about 65 trials, 2 s — well
        // inside the budget. The old rule gave up after 3 ("more than the cap of 12").
        let seq = noise(400, 20.0);
        let (n, why, warning, _) = replay_at(&plan(), &seq, Duration::from_millis(30));
        assert_eq!((why, warning), (Stop::Target, None));
        assert!((30..200).contains(&n), "{n}");
        assert!(ci_half_pct(&seq[..n]).unwrap() <= TARGET_CI);
    }

    #[test]
    fn slow_noisy_trials_stop_on_the_projection_and_say_what_it_would_take() {
        // RSD about 20 % at 10 s a trial: ~65 trials would be about 11 min.
        let seq = [320.9, 621.8, 574.7, 480.0, 500.0];
        let (n, why, warning, _) = replay_at(&plan(), &seq, Duration::from_secs(10));
        assert_eq!((n, why), (3, Stop::Projection));
        let w = warning.unwrap();
        assert!(w.starts_with("noisy: 95 % CI ±"), "{w}");
        assert!(w.contains("after 3 trials in 30 s"), "{w}");
        assert!(w.contains("trials / ") && w.contains("more than the budget of 1 min 0 s"), "{w}");
    }

    #[test]
    fn the_budget_ends_a_test_that_looked_within_reach() {
        // 5 s trials under a 30 s budget: noise that looks reachable in a
        // few more trials at every step but never gets there.
        let p = AdaptivePlan::new(3, None, None, 5.0, Some(Duration::from_secs(30)), None);
        let seq = [100.0, 108.0, 93.0, 100.0, 109.0, 92.0, 101.0, 108.0];
        let (n, why, warning, _) = replay_at(&p, &seq, Duration::from_secs(5));
        assert!(n <= 6, "a 7th trial would end past 30 s: {n}");
        assert!(matches!(why, Stop::Budget | Stop::Projection), "{why:?}");
        assert!(warning.unwrap().contains("budget"));
    }

    #[test]
    fn hour_long_trials_still_get_their_scheduled_three() {
        let p = plan();
        let hour = Duration::from_secs(3600);
        let seq = [100.0, 130.0, 80.0];
        let (n, why, warning, _) = replay_at(&p, &seq, hour);
        assert_eq!((n, why), (3, Stop::Budget));
        assert!(warning.unwrap().starts_with("budget spent: "));
        // With `min: 1`, a spent budget may cut them short.
        let p = AdaptivePlan::new(3, Some(1), None, 5.0, None, None);
        assert_eq!(p.decide(&[100.0], hour), Decision::Stop(Stop::Single, None));
    }

    #[test]
    fn a_warm_up_outlier_is_not_chased() {
        // One slow first trial, then tight values: 10 s trials cannot reach ±5 % in the budget.
        let seq = [184.3, 320.9, 318.0, 322.5, 319.7, 321.2, 320.4, 318.8, 321.9, 319.3, 320.0, 320.6];
        let (n, why, warning, _) = replay_at(&plan(), &seq, Duration::from_secs(10));
        assert!(n < 12, "{n}");
        assert_eq!(why, Stop::Projection);
        assert!(warning.unwrap().starts_with("noisy: 95 % CI ±"));
        // The report names the warm-up once there are 5 values to judge it by.
        assert!(shape::notes(&seq[..n]).is_empty(), "no outlier notes below 5 values");
        assert!(shape::notes(&seq[..5])[0].starts_with("trial 1 (184.3) is far from the rest"));
    }

    #[test]
    fn drift_is_reported_instead_of_adding_trials() {
        // Each trial 1.5 % slower than the last, with a little noise.
        let seq: Vec<f64> = (0..12).map(|i| 100.0 * (1.0 - 0.015 * i as f64) + [0.3, -0.2, 0.1][i % 3]).collect();
        let plan = AdaptivePlan::new(3, None, None, 2.0, None, None);
        let (n, why, warning, _) = replay(&plan, &seq);
        assert_eq!(why, Stop::Drift);
        assert!(warning.unwrap().starts_with("drift: values fall 1.5"));
        assert_eq!(n, DRIFT_MIN_N, "stops as soon as the drift can be judged");
    }

    #[test]
    fn long_noise_is_rarely_called_drift() {
        // 300 seeds of steady noise, each run to the target: drift is
        // judged at a few looks only, so false alarms stay rare.
        let mut drift = 0;
        for seed in 0..300u64 {
            let seq = noise_from(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1, 200, 12.0);
            let (_, why, _, _) = replay_at(&plan(), &seq, Duration::from_millis(10));
            drift += (why == Stop::Drift) as usize;
        }
        assert!(drift <= 15, "{drift} of 300 steady runs were called drift");
    }

    #[test]
    fn a_bimodal_test_stops_with_both_groups_named() {
        // Two levels 30 % apart (a cache that sometimes hits), 10 s a trial.
        let seq = [100.0, 130.2, 100.4, 129.8, 99.8, 130.0, 100.1, 130.1, 100.3, 129.9, 99.9, 100.2];
        let ten = Duration::from_secs(10);
        // With 3 scheduled the spread is plainly beyond the budget: it stops at once.
        let (n, why, _, _) = replay_at(&plan(), &seq, ten);
        assert_eq!((n, why), (3, Stop::Projection));
        // With 8 scheduled (enough to see the shape) the warning names both groups.
        let (n, why, warning, _) = replay_at(&AdaptivePlan::new(8, None, None, 5.0, None, None), &seq, ten);
        assert_eq!((n, why), (8, Stop::Groups));
        let w = warning.unwrap();
        assert!(w.starts_with("the values form two groups (4 near 100.1, 4 near 130.0)"), "{w}");
        assert!(shape::notes(&seq[..8]).iter().any(|n| n.starts_with("the values form two groups")));
    }

    #[test]
    fn the_cap_still_holds() {
        // Sub-millisecond trials that never reach the target.
        let p = AdaptivePlan::new(3, None, Some(5), 5.0, None, None);
        let seq = [100.0, 104.0, 96.0, 100.0, 108.0, 100.0];
        let (n, why, warning, reasons) = replay_at(&p, &seq, Duration::from_micros(100));
        assert_eq!((n, why), (5, Stop::Cap), "{reasons:?}");
        assert!(warning.unwrap().starts_with("stopped at the cap of 5 trials"));
        assert_eq!(plan().most(), SAFETY_CAP);
    }

    #[test]
    fn forced_runs_are_exact() {
        let p = AdaptivePlan::new(3, None, None, 5.0, None, Some(2));
        assert_eq!(p.decide(&[1.0], Duration::from_secs(100)), Decision::More(None));
        let Decision::Stop(Stop::Forced, Some(w)) = p.decide(&[1.0, 50.0], Duration::from_secs(200)) else {
            panic!("forced runs stop, saying the interval is wide")
        };
        assert!(w.starts_with("--runs 2: 95 % CI ±"), "{w}");
        assert_eq!(p.decide(&[10.0, 10.01], Duration::from_secs(2)), Decision::Stop(Stop::Forced, None));
    }

    #[test]
    fn trials_needed_by_hand() {
        // RSD 10 %: t(m−1)·10/√m ≤ 5 first holds at m = 18 (t(17) = 2.110, 2.110·10/√18 = 4.97).
        let v = [90.0, 100.0, 110.0];
        assert_eq!(trials_needed(&v, 5.0), 18);
        assert_eq!(trials_needed(&[5.0, 5.0, 5.0], 5.0), 3);
        // RSD 100 %: about 1,540 (1.96²·400 = 1,537, t a little over 1.96).
        let n = trials_needed(&[0.0, 100.0, 200.0], 5.0);
        assert!((1537..1560).contains(&n), "{n}");
    }

    #[test]
    fn the_optimistic_sd_by_hand() {
        // n = 3: χ²₀.₉₅(2) = 5.9915, √(2 / 5.9915) = 0.5778.
        assert!((optimistic_sd(3) - 0.5778).abs() < 1e-4, "{}", optimistic_sd(3));
        // It tends to 1 as n grows.
        assert!(optimistic_sd(200) > 0.9 && optimistic_sd(200) < 1.0);
    }

    #[test]
    fn a_rough_sd_from_three_values_does_not_stop_a_test_the_budget_may_finish() {
        // Three values with an RSD of 22 %, then steady ones, 1 s a trial
        // under a 60 s budget. On the point estimate ±5 % takes about 75
        // trials (75 s: over budget, the old rule stopped at 3); on the
        // optimistic SD about 25 — so it goes on, and gets there.
        let mut seq = vec![100.0, 130.0, 85.0];
        for _ in 0..12 {
            seq.extend([100.0, 101.0, 99.0, 100.5, 99.5]);
        }
        assert!(trials_needed(&seq[..3], 5.0) > 60, "{}", trials_needed(&seq[..3], 5.0));
        let (n, why, _, _) = replay_at(&plan(), &seq, Duration::from_secs(1));
        assert_eq!(why, Stop::Target, "stopped after {n}");
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(seconds(Duration::from_millis(850)), "850 ms");
        assert_eq!(seconds(Duration::from_secs_f64(12.5)), "12.5 s");
        assert_eq!(seconds(Duration::from_secs(200)), "3 min 20 s");
    }
}
