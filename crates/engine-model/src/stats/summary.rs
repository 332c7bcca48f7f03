//! Mean, sample SD, SE = SD/√N, N, min, max, median (the mean of the middle
//! two for even N).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` with fewer than two values.
    pub sd: Option<f64>,
    /// Standard error of the mean, SD/√N; `None` with fewer than two values.
    pub se: Option<f64>,
    pub min: f64,
    pub max: f64,
    pub median: f64,
}

impl Summary {
    /// Summarizes `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let spread = values.iter().any(|v| *v != values[0]);
        let (mean, sd) = match moments(values, 1.0) {
            (m, sd) if m.is_finite() && sd.is_none_or(|s| s.is_finite() && (s > 0.0 || !spread)) => (m, sd),
            // Sums or squares overflowed (values near f64::MAX, which a
            // plugin may report) or squares underflowed (near 1e-300):
            // again in units of the largest magnitude, so the mean and SD of
            // finite values are right wherever they fit. Ordinary values
            // keep the plain sums' exact digits.
            _ => {
                let scale = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                moments(values, if scale.is_finite() && scale > 0.0 { scale } else { 1.0 })
            }
        };
        let se = sd.map(|s| s / (n as f64).sqrt());
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Summary { n, mean, sd, se, min, max, median: median(values) })
    }

    /// Relative standard error in percent of the mean (`None` if undefined).
    #[cfg(test)]
    pub fn rse_percent(&self) -> Option<f64> {
        let se = self.se?;
        if self.mean == 0.0 {
            return if se == 0.0 { Some(0.0) } else { None };
        }
        Some(se / self.mean.abs() * 100.0)
    }

    /// Relative standard deviation in percent of the mean.
    pub fn rsd_percent(&self) -> Option<f64> {
        let sd = self.sd?;
        (self.mean != 0.0).then(|| sd / self.mean.abs() * 100.0)
    }
}

/// Mean and sample SD of `values`, summed in units of `scale`.
fn moments(values: &[f64], scale: f64) -> (f64, Option<f64>) {
    let n = values.len() as f64;
    let m = values.iter().map(|v| v / scale).sum::<f64>() / n;
    let sd = (values.len() >= 2).then(|| {
        let ss: f64 = values.iter().map(|v| (v / scale - m).powi(2)).sum();
        (ss / (n - 1.0)).sqrt() * scale
    });
    (m * scale, sd)
}

/// Median; for an even count, the mean of the two middle values.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 { v[n / 2] } else { v[n / 2 - 1] / 2.0 + v[n / 2] / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn hand_computed_odd_n() {
        // PTS fixture, loop0: NONE, 100 files: 320.9, 621.8, 574.7.
        let s = Summary::of(&[320.9, 621.8, 574.7]).unwrap();
        // mean = 1517.4 / 3 = 505.8
        assert!(close(s.mean, 505.8));
        // deviations: -184.9, 116.0, 68.9; squares 34188.01 + 13456 + 4747.21 = 52391.22
        // var = 52391.22 / 2 = 26195.61; sd = 161.8505...
        assert!(close(s.sd.unwrap(), 26195.61f64.sqrt()));
        assert!(close(s.se.unwrap(), 26195.61f64.sqrt() / 3f64.sqrt()));
        assert_eq!((s.n, s.min, s.max, s.median), (3, 320.9, 621.8, 574.7));
    }

    #[test]
    fn even_n_median_is_the_mean_of_the_middle_two() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!(s.mean, 2.5);
        // var = (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3
        assert!(close(s.sd.unwrap(), (5.0f64 / 3.0).sqrt()));
        assert!(close(s.se.unwrap(), (5.0f64 / 3.0).sqrt() / 2.0));
        assert!(close(s.rse_percent().unwrap(), (5.0f64 / 3.0).sqrt() / 2.0 / 2.5 * 100.0));
    }

    #[test]
    fn magnitudes_near_the_largest_double_stay_finite() {
        let s = Summary::of(&[f64::MAX, f64::MAX, f64::MAX]).unwrap();
        assert_eq!((s.mean, s.sd, s.se, s.median), (f64::MAX, Some(0.0), Some(0.0), f64::MAX));
        let s = Summary::of(&[f64::MAX, f64::MAX / 2.0]).unwrap();
        assert!(close(s.mean, 0.75 * f64::MAX) && s.sd.unwrap().is_finite(), "{s:?}");
        assert!(close(s.median, 0.75 * f64::MAX));
        // Tiny magnitudes keep their precision too.
        let s = Summary::of(&[1e-300, 3e-300]).unwrap();
        assert!(close(s.mean / 2e-300, 1.0) && close(s.sd.unwrap() / (2f64.sqrt() * 1e-300), 1.0), "{s:?}");
    }

    #[test]
    fn one_value_has_no_spread() {
        let s = Summary::of(&[7.0]).unwrap();
        assert_eq!((s.n, s.mean, s.sd, s.se, s.median), (1, 7.0, None, None, 7.0));
        assert!(Summary::of(&[]).is_none());
    }
}
