//! When to stop: after the scheduled trials, add one at a time while the
//! relative SE is above target or an outlier is present, up to a cap.
//! The cap is 4× the scheduled trials (or the profile's `max`), lowered to 3×
//! when a trial takes over 2 minutes and 2× over 4 minutes, never below `min`.

use super::outlier;
use super::summary::Summary;
use std::time::Duration;

/// The trial plan of one test.
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptivePlan {
    /// Trials scheduled.
    pub times: u32,
    /// Fewest trials a lowered cap may leave.
    pub min: u32,
    /// Most trials (before lowering for long trials).
    pub max: u32,
    /// Target relative standard error, percent.
    pub target_rse: f64,
    /// `--runs N`: exactly this many, no additions.
    pub forced: Option<u32>,
}

/// What to do after a trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run another trial; the reason is recorded when it is an added one.
    More(Option<String>),
    /// Enough trials.
    Stop,
    /// The cap was reached while the data was still noisy: say why.
    StopAtCap(String),
}

impl AdaptivePlan {
    pub fn new(times: u32, min: Option<u32>, max: Option<u32>, target_rse: f64, forced: Option<u32>) -> Self {
        let times = times.max(1);
        AdaptivePlan {
            times,
            min: min.unwrap_or(times).clamp(1, times),
            max: max.unwrap_or(times * 4).max(times),
            target_rse,
            forced,
        }
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

    /// Decides after the trials so far (`values` of the result that drives
    /// the rule: the first result of the test).
    pub fn decide(&self, values: &[f64], longest: Duration) -> Decision {
        let n = values.len() as u32;
        if let Some(f) = self.forced {
            return if n < f { Decision::More(None) } else { Decision::Stop };
        }
        if n < self.times {
            return Decision::More(None);
        }
        let reason = self.noise_reason(values);
        match reason {
            None => Decision::Stop,
            Some(r) if n < self.cap(longest) => Decision::More(Some(r)),
            Some(r) => Decision::StopAtCap(format!("stopped at the cap of {n} trials: {r}")),
        }
    }

    /// Why the values are too noisy to stop, if they are.
    pub fn noise_reason(&self, values: &[f64]) -> Option<String> {
        let s = Summary::of(values)?;
        if let Some(rse) = s.rse_percent()
            && rse > self.target_rse
        {
            return Some(format!("relative SE {rse:.2} % > target {:.2} %", self.target_rse));
        }
        if let Some((i, z)) = outlier::outliers(values).into_iter().next() {
            return Some(format!("trial {} ({}) is an outlier (modified z-score {z:.1})", i + 1, values[i]));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Duration = Duration::from_secs(1);

    #[test]
    fn runs_the_scheduled_trials_first() {
        let p = AdaptivePlan::new(3, None, None, 1.5, None);
        assert_eq!(p.decide(&[1.0], SHORT), Decision::More(None));
        assert_eq!(p.decide(&[1.0, 1.0], SHORT), Decision::More(None));
        assert_eq!(p.decide(&[100.0, 100.5, 99.5], SHORT), Decision::Stop);
    }

    #[test]
    fn adds_trials_while_rse_is_over_target() {
        let p = AdaptivePlan::new(3, None, None, 1.5, None);
        // PTS fixture values: mean 505.8, SE 93.44 → RSE 18.47 %.
        match p.decide(&[320.9, 621.8, 574.7], SHORT) {
            Decision::More(Some(r)) => assert_eq!(r, "relative SE 18.47 % > target 1.50 %"),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn adds_trials_for_an_outlier_even_when_rse_is_fine() {
        // RSE: mean 1008.33, values tight but one outlier with many trials.
        let v = [1000.0, 1001.0, 999.0, 1000.0, 1000.5, 999.5, 1050.0];
        let p = AdaptivePlan::new(3, None, Some(12), 5.0, None);
        match p.decide(&v, SHORT) {
            Decision::More(Some(r)) => assert!(r.starts_with("trial 7 (1050) is an outlier"), "{r}"),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn stops_at_the_cap_and_says_why() {
        let p = AdaptivePlan::new(3, None, None, 1.5, None);
        assert_eq!(p.cap(SHORT), 12);
        let noisy: Vec<f64> = (0..12).map(|i| if i % 2 == 0 { 1.0 } else { 2.0 }).collect();
        assert!(matches!(p.decide(&noisy, SHORT), Decision::StopAtCap(_)));
        assert!(matches!(p.decide(&noisy[..11], SHORT), Decision::More(Some(_))));
    }

    #[test]
    fn long_trials_lower_the_cap() {
        let p = AdaptivePlan::new(3, None, None, 1.5, None);
        assert_eq!(p.cap(Duration::from_secs(150)), 9);
        assert_eq!(p.cap(Duration::from_secs(300)), 6);
        let p = AdaptivePlan::new(3, None, Some(5), 1.5, None);
        assert_eq!(p.cap(Duration::from_secs(300)), 5);
    }

    #[test]
    fn forced_runs_are_exact() {
        let p = AdaptivePlan::new(3, None, None, 1.5, Some(2));
        assert_eq!(p.decide(&[1.0], SHORT), Decision::More(None));
        assert_eq!(p.decide(&[1.0, 50.0], SHORT), Decision::Stop);
    }
}
