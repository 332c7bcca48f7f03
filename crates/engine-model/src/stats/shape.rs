//! Shapes of a sample that more trials cannot fix: a first trial far from
//! the rest (a warm-up), outliers, and values in two separate groups.

use super::outlier;
use super::summary::Summary;

/// Two groups of values with a gap between them much wider than either's spread.
#[derive(Debug, Clone, PartialEq)]
pub struct Bimodal {
    pub low: (usize, f64),
    pub high: (usize, f64),
}

impl std::fmt::Display for Bimodal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the values form two groups ({} near {}, {} near {})",
            self.low.0,
            short(self.low.1),
            self.high.0,
            short(self.high.1)
        )
    }
}

/// Four significant digits.
pub fn short(x: f64) -> String {
    crate::units::fixed(x, crate::units::decimals_for_sig(x.abs()))
}

/// Whether `values` (8 or more) split into two groups, each at least a fifth
/// of the values and no fewer than 2, whose gap is over 5 times their pooled
/// standard deviation. (Splitting at the widest gap shrinks the groups'
/// spread, so the bar is high: normal samples of 8 pass it under 1 % of the
/// time, of 12 under 0.1 %.)
pub fn bimodal(values: &[f64]) -> Option<Bimodal> {
    let n = values.len();
    if n < 8 {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let least = 2.max(n.div_ceil(5));
    let k = (least..=n - least).max_by(|&a, &b| (v[a] - v[a - 1]).total_cmp(&(v[b] - v[b - 1])))?;
    let gap = v[k] - v[k - 1];
    let (lo, hi) = (Summary::of(&v[..k])?, Summary::of(&v[k..])?);
    let ss = lo.sd.unwrap_or(0.0).powi(2) * (k - 1) as f64 + hi.sd.unwrap_or(0.0).powi(2) * (n - k - 1) as f64;
    let pooled = (ss / (n - 2) as f64).sqrt();
    (gap > 0.0 && gap > 5.0 * pooled).then_some(Bimodal { low: (k, lo.mean), high: (n - k, hi.mean) })
}

/// Fewest values for outliers to be named.
pub const OUTLIER_MIN_N: usize = 5;

/// What a report should say about the shape of `values`: a warm-up first
/// trial, other outliers, two groups. Information, never a reason to add trials.
pub fn notes(values: &[f64]) -> Vec<String> {
    let mut out: Vec<String> = resolution_limited(values).into_iter().collect();
    // Below 5 values a "modified z-score" is noise about noise.
    if values.len() >= OUTLIER_MIN_N {
        for (i, z) in outlier::outliers(values) {
            out.push(if i == 0 {
                format!(
                    "trial 1 ({}) is far from the rest (modified z-score {z:.1}): likely a warm-up; \
                     `--warmup 1` or `trials.warmup: 1` runs and discards one",
                    short(values[0])
                )
            } else {
                format!("trial {} ({}) is an outlier (modified z-score {z:.1})", i + 1, short(values[i]))
            });
        }
    }
    if let Some(b) = bimodal(values) {
        out.push(b.to_string());
    }
    out
}

/// How notes that mark a result as measured at its tool's resolution begin.
pub const RESOLUTION_LIMITED: &str = "resolution-limited";

/// Trials that sit on the tool's resolution instead of varying: every one
/// the same (PostMark's transactions over a whole second), or at most two
/// values a step of 1 % or more apart in five or more trials. Their
/// interval of ±0 would claim a precision the tool does not have.
pub fn resolution_limited(values: &[f64]) -> Option<String> {
    if values.len() < 2 {
        return None;
    }
    let mut distinct: Vec<f64> = values.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let quantized = distinct.len() == 2 && values.len() >= 5 && (distinct[1] - distinct[0]).abs() >= 0.01 * mean.abs();
    match distinct.len() {
        1 => Some(format!(
            "{RESOLUTION_LIMITED}: every trial gave {} — the tool's resolution, not a precise value; give the test more work per trial",
            short(distinct[0])
        )),
        _ if quantized => Some(format!(
            "{RESOLUTION_LIMITED}: the trials take only the values {} and {} — steps of the tool's resolution; give the test more work per trial",
            short(distinct[0]),
            short(distinct[1])
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_on_its_tools_resolution_is_marked() {
        let n = resolution_limited(&[2500.0, 2500.0, 2500.0]).unwrap();
        assert!(n.starts_with("resolution-limited: every trial gave 2500"), "{n}");
        assert!(resolution_limited(&[2500.0, 1250.0, 2500.0, 2500.0, 1250.0]).is_some());
        assert!(resolution_limited(&[100.0, 101.5, 99.2]).is_none());
        assert!(resolution_limited(&[7.0]).is_none());
        // Two values close together in few trials: ordinary noise.
        assert!(resolution_limited(&[100.0, 100.001, 100.0]).is_none());
    }

    #[test]
    fn two_groups_are_found_and_one_is_not() {
        let b = bimodal(&[100.0, 150.0, 101.0, 149.0, 99.5, 151.0, 100.5, 101.5]).unwrap();
        assert_eq!((b.low.0, b.high.0), (5, 3));
        assert!((b.low.1 - 100.5).abs() < 1e-9 && (b.high.1 - 150.0).abs() < 1e-9);
        assert_eq!(b.to_string(), "the values form two groups (5 near 100.5, 3 near 150.0)");
        assert!(bimodal(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 98.7, 101.4]).is_none());
        // A single stray value is an outlier, not a group.
        assert!(bimodal(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.3, 99.8, 150.0]).is_none());
        assert!(bimodal(&[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0]).is_none(), "too few values");
        assert!(bimodal(&[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]).is_some(), "two constant levels");
    }

    #[test]
    fn normal_samples_are_rarely_called_bimodal() {
        // Seeded normal samples of 8 to 14 values: under 1 % read as two groups.
        let mut x: u64 = 0x1234_5678_9ABC_DEF1;
        let mut uniform = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut hits = 0;
        let reps = 2000;
        for i in 0..reps {
            let n = 8 + i % 7;
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    let (u, w) = (uniform(), uniform());
                    100.0 + 5.0 * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * w).cos()
                })
                .collect();
            hits += bimodal(&v).is_some() as usize;
        }
        assert!(hits * 100 < reps, "{hits} of {reps}");
    }

    #[test]
    fn a_first_trial_far_from_the_rest_is_a_warm_up() {
        let n = notes(&[184.3, 320.9, 318.0, 322.5, 319.7]);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].starts_with("trial 1 (184.3) is far from the rest"), "{}", n[0]);
        let n = notes(&[320.9, 318.0, 184.3, 322.5, 319.7]);
        assert!(n[0].starts_with("trial 3 (184.3) is an outlier"), "{}", n[0]);
        assert!(notes(&[1.0, 1.01, 0.99]).is_empty());
        // At 3 or 4 values a modified z-score says nothing: no note.
        assert!(notes(&[184.3, 320.9, 318.0, 322.5]).is_empty());
    }
}
