//! Drift: do the values trend across trials? The Mann–Kendall test (exact
//! distribution of Kendall's S for the sample sizes trials have) and Sen's
//! slope for its size. A trend is reported instead of adding trials: more
//! trials of a drifting test do not settle its mean.

/// A monotonic trend across trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// Kendall's S: concordant minus discordant pairs (index, value).
    pub s: i64,
    /// Two-sided p-value of S under "no trend".
    pub p: f64,
    /// Sen's slope: the median of the pairwise slopes, per trial.
    pub slope: f64,
}

/// The Mann–Kendall test of `values` in run order (`None` below 4 values).
pub fn mann_kendall(values: &[f64]) -> Option<Trend> {
    let n = values.len();
    if n < 4 {
        return None;
    }
    let mut s = 0i64;
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            s += match values[j].partial_cmp(&values[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
            slopes.push((values[j] - values[i]) / (j - i) as f64);
        }
    }
    slopes.sort_by(f64::total_cmp);
    let slope = super::summary::median(&slopes);
    let p = if n <= EXACT_UP_TO { p_two_sided(n, s) } else { p_normal(n, s) };
    Some(Trend { s, p, slope })
}

/// Largest n for the exact distribution (its cost grows as n³).
const EXACT_UP_TO: usize = 40;

/// P(|S| ≥ |s|) from the normal approximation, Var S = n(n−1)(2n+5)/18,
/// with a continuity correction; within 0.003 of the exact value at n = 40.
fn p_normal(n: usize, s: i64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let n = n as f64;
    let var = n * (n - 1.0) * (2.0 * n + 5.0) / 18.0;
    let z = ((s.unsigned_abs() as f64) - 1.0).max(0.0) / var.sqrt();
    let std = Normal::new(0.0, 1.0).expect("the standard normal");
    (2.0 * (1.0 - std.cdf(z))).min(1.0)
}

/// P(|S| ≥ |s|) for n values without ties: S = N − 2Q, where Q, the number
/// of inversions of a random permutation, has the Mahonian distribution
/// (counted here by dynamic programming, as probabilities). Ties only
/// shrink |S|, so the test stays conservative with them.
fn p_two_sided(n: usize, s: i64) -> f64 {
    let pairs = n * (n - 1) / 2;
    let mut dist = vec![1.0f64];
    for m in 1..=n {
        // Inserting the m-th element adds 0..m−1 inversions, each equally likely.
        let mut next = vec![0.0; dist.len() + m - 1];
        for (k, &p) in dist.iter().enumerate() {
            for j in 0..m {
                next[k + j] += p / m as f64;
            }
        }
        dist = next;
    }
    let target = s.unsigned_abs() as usize;
    dist.iter()
        .enumerate()
        .filter(|(q, _)| (pairs as i64 - 2 * *q as i64).unsigned_abs() as usize >= target)
        .map(|(_, p)| p)
        .sum::<f64>()
        .min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_values_by_hand() {
        // n = 4: 24 permutations; S = 6 only for the sorted one, −6 for the reversed.
        let t = mann_kendall(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(t.s, 6);
        assert!((t.p - 2.0 / 24.0).abs() < 1e-12);
        assert_eq!(t.slope, 1.0);
        // n = 5, sorted: 2/120.
        let t = mann_kendall(&[5.0, 4.0, 3.0, 2.0, 1.0]).unwrap();
        assert_eq!(t.s, -10);
        assert!((t.p - 2.0 / 120.0).abs() < 1e-12);
        // No trend at all: p = 1 for S = 0.
        assert!((p_two_sided(4, 0) - 1.0).abs() < 1e-12);
        assert!(mann_kendall(&[1.0, 2.0, 3.0]).is_none());
    }

    #[test]
    fn the_distribution_sums_to_one_and_falls_with_s() {
        // P(|S| ≥ 0) = 1 at every n; P(S ≥ k) = P(S ≤ −k).
        for n in 4..=12 {
            assert!((p_two_sided(n, 0) - 1.0).abs() < 1e-9);
            for s in 1..=(n * (n - 1) / 2) as i64 {
                assert!(p_two_sided(n, s) <= p_two_sided(n, s - 1) + 1e-12, "p falls as |S| grows");
            }
        }
        // n = 6: P(|S| ≥ 15) = 2/720.
        assert!((p_two_sided(6, 15) - 2.0 / 720.0).abs() < 1e-12);
    }

    #[test]
    fn the_approximation_meets_the_exact_distribution_where_it_takes_over() {
        let n = EXACT_UP_TO;
        for s in [0i64, 40, 100, 160, 240] {
            let (e, a) = (p_two_sided(n, s), p_normal(n, s));
            assert!((e - a).abs() < 3e-3, "S = {s}: exact {e}, normal {a}");
        }
        // And long runs stay cheap: 500 values.
        let v: Vec<f64> = (0..500).map(|i| ((i * 7919) % 101) as f64).collect();
        assert!(mann_kendall(&v).unwrap().p > 0.01);
    }
}
