//! Change points in a history of values: E-Divisive with means (Matteson &
//! James 2014, the energy statistic with α = 1; the form MongoDB's and Apache
//! Otava's regression finders use, the segment end fixed at its last point)
//! with a permutation test of each candidate.
//!
//! Each step finds, in every segment between the change points found so far,
//! the split that maximises
//! q̂ = mn/(m+n) · (2/(mn)·Σ|xᵢ−yⱼ| − 2/(m(m−1))·Σ|xᵢ−xₖ| − 2/(n(n−1))·Σ|yⱼ−yₗ|)
//! and keeps the best over all segments. It is significant when shuffling
//! the values within each segment (which destroys any change inside them)
//! gives a maximum at least as large in at most a fraction `alpha` of the
//! permutations; then it is kept and the search goes on, else it stops.
//! The permutations stop early both ways: as Besag & Clifford (1991) show is
//! exact, once `alpha` cannot be reached, and once a 99.9 % (Wilson) interval
//! of the p-value lies wholly below or above `alpha` — so a plain change
//! costs a few hundred permutations and one near the line gets up to
//! [`PERMUTATIONS`], where the p-value of a short history is estimated
//! closely enough to decide it. Each scan is O(n log n): the sums of
//! distances to the points left and right of a split come from a Fenwick
//! tree over the values' ranks, so a history of 1,000 runs costs little.
//!
//! The test finds changes of the distribution, a change of spread included;
//! whether a change is large enough to report is the caller's (the ratio of
//! the means on either side against a minimum magnitude).

/// How change points are looked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Significance level of each change point's permutation test.
    pub alpha: f64,
    /// Permutations per test, at most (fewer when the answer is settled).
    pub permutations: u32,
    /// Fewest points on each side of a change.
    pub min_size: usize,
    /// Seed of the permutations: the same history gives the same answer.
    pub seed: u64,
}

/// Default significance level. 0.05 so that eight runs can show a step at
/// all: no permutation test of 8 points gets below 2/C(8,4) ≈ 0.029
/// ([`least_p`]); a false change in a steady history stays at most 5 %
/// (the test is exact), and a change must also pass the minimum magnitude.
pub const ALPHA: f64 = 0.05;
/// Default permutations, at most: the p-value of a change near `alpha` is
/// estimated to about ±0.01 (most tests stop far sooner).
pub const PERMUTATIONS: u32 = 1999;
/// Fewest points on each side of a change: a history of fewer than twice
/// this many points is not analysed.
pub const MIN_SIZE: usize = 3;

impl Default for Settings {
    fn default() -> Self {
        Settings { alpha: ALPHA, permutations: PERMUTATIONS, min_size: MIN_SIZE, seed: 0x5eed_c4a9_e901_7a11 }
    }
}

/// A change point: the history changes from point `index` on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// First point after the change.
    pub index: usize,
    /// Permutation p-value when it was found.
    pub p: f64,
    /// Its q̂ statistic.
    pub q: f64,
}

/// The smallest p-value a change in `n` points can have, sides at least
/// `min` long: a permutation test of the most extreme split (every value of
/// one side above every value of the other) is reached again only by the
/// orders that keep those sides, or mirror them — 2 / C(n, m) at best.
pub fn least_p(n: usize, min: usize) -> f64 {
    let min = min.max(2);
    if n < 2 * min {
        return 1.0;
    }
    let choose = |n: usize, k: usize| (0..k).fold(1.0_f64, |c, i| c * (n - i) as f64 / (i + 1) as f64);
    (min..=n - min).map(|m| (2.0 / choose(n, m)).min(1.0)).fold(1.0, f64::min)
}

/// The fewest points in which a change can reach `alpha` (sides at least
/// `min` long).
pub fn points_needed(alpha: f64, min: usize) -> usize {
    let min = min.max(2);
    (2 * min..).find(|&n| least_p(n, min) <= alpha).unwrap_or(usize::MAX)
}

/// The change points of `values`, sorted by index.
pub fn e_divisive(values: &[f64], s: &Settings) -> Vec<ChangePoint> {
    let min = s.min_size.max(2);
    if values.len() < 2 * min || values.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut rng = fastrand::Rng::with_seed(s.seed);
    let mut found: Vec<ChangePoint> = Vec::new();
    let mut spans = vec![Span::new(values, 0, values.len(), min)];
    while let Some((k, (at, q))) =
        spans.iter().enumerate().filter_map(|(k, sp)| sp.best.map(|b| (k, b))).max_by(|a, b| a.1.1.total_cmp(&b.1.1))
    {
        let p = permutation_p(&spans, q, min, s, &mut rng);
        if p > s.alpha {
            break;
        }
        let (start, end) = (spans[k].start, spans[k].end);
        let index = start + at;
        found.push(ChangePoint { index, p, q });
        spans.splice(k..=k, [Span::new(values, start, index, min), Span::new(values, index, end, min)]);
    }
    found.sort_by_key(|c| c.index);
    found
}

/// Points more than this many noise deviations from their neighbours'
/// median are outliers ([`guard`]).
pub const OUTLIER_SIGMAS: f64 = 5.0;

/// The history with single outliers set aside (a Hampel filter): a point
/// farther than [`OUTLIER_SIGMAS`] from the median of itself and its two
/// neighbours on each side (σ: the larger of the history's noise and the
/// window's median absolute deviation) takes that median — unless a step explains it:
/// a point as near the two runs before it, or the two after it, is the
/// last of one level or the first of the next, and stays. The noise is
/// measured from successive differences (σ ≈ 1.4826 · median |xᵢ − xᵢ₋₁| / √2),
/// which a step moves only once, so a step is kept while one stray run is
/// not left to hide it (the energy statistic weighs every distance, so one
/// far point can outweigh a clean step). Returns the values and the indexes
/// replaced.
pub fn guard(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    if values.len() < 5 || values.iter().any(|v| !v.is_finite()) {
        return (values.to_vec(), Vec::new());
    }
    let mut diffs: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let sigma = 1.4826 * median(&mut diffs) / std::f64::consts::SQRT_2;
    let mut out = values.to_vec();
    let mut replaced = Vec::new();
    for (i, &v) in values.iter().enumerate() {
        let window = &values[i.saturating_sub(2)..(i + 3).min(values.len())];
        let m = median(&mut window.to_vec());
        // The window's own spread too: a few differences can
        // underestimate the noise, and a point is judged against both.
        let local = 1.4826 * median(&mut window.iter().map(|w| (w - m).abs()).collect::<Vec<_>>());
        // With no noise at all, any departure from the neighbours is one.
        let limit = (OUTLIER_SIGMAS * sigma.max(local)).max(m.abs() * 1e-12);
        let near = |side: &[f64]| !side.is_empty() && (v - median(&mut side.to_vec())).abs() <= limit;
        let (before, after) = (&values[i.saturating_sub(2)..i], &values[i + 1..(i + 3).min(values.len())]);
        if (v - m).abs() > limit && !near(before) && !near(after) {
            out[i] = m;
            replaced.push(i);
        }
    }
    (out, replaced)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// A segment [start, end) between change points, with its best split
/// (index within it, q̂), found once.
struct Span {
    start: usize,
    end: usize,
    /// Its values sorted once: each permutation test shuffles a copy.
    seg: Segment,
    best: Option<(usize, f64)>,
}

impl Span {
    fn new(values: &[f64], start: usize, end: usize, min: usize) -> Self {
        let seg = Segment::new(&values[start..end]);
        Span { start, end, best: best_split(&seg, min), seg }
    }
}

/// The p-value of a best split `q` over `spans`: the share of
/// permutations (values shuffled within each segment) whose best split over
/// all segments is at least as large.
fn permutation_p(spans: &[Span], q: f64, min: usize, s: &Settings, rng: &mut fastrand::Rng) -> f64 {
    // Sequential stopping: once this many permutations beat q the p-value
    // is above alpha whatever the rest would say.
    let enough = (s.alpha * f64::from(s.permutations + 1)).floor() as u32 + 1;
    let mut prepared: Vec<Segment> = spans.iter().map(|sp| sp.seg.clone()).collect();
    // The same split reached by another order sums in another order: a
    // rounding below q is still a tie.
    let tie = q - q.abs() * 1e-9;
    let mut beat = 0u32;
    for r in 1..=s.permutations {
        let mut best = f64::NEG_INFINITY;
        for seg in &mut prepared {
            rng.shuffle(&mut seg.order);
            if let Some((_, q)) = best_split(seg, min) {
                best = best.max(q);
            }
        }
        if best >= tie {
            beat += 1;
            if beat >= enough {
                return f64::from(beat) / f64::from(r);
            }
        }
        if r % CHECK_EVERY == 0 && settled(beat, r, s.alpha) {
            return f64::from(beat + 1) / f64::from(r + 1);
        }
    }
    f64::from(beat + 1) / f64::from(s.permutations + 1)
}

/// How often the sequential test looks at its interval.
const CHECK_EVERY: u32 = 50;

/// Whether a 99.9 % Wilson interval of the p-value, `beat` of `r`
/// permutations at least as large, lies wholly on one side of `alpha`.
fn settled(beat: u32, r: u32, alpha: f64) -> bool {
    const Z: f64 = 3.29;
    let (n, p) = (f64::from(r), f64::from(beat) / f64::from(r));
    let centre = p + Z * Z / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + Z * Z / (4.0 * n * n)).sqrt();
    let scale = 1.0 + Z * Z / n;
    (centre + spread) / scale < alpha || (centre - spread) / scale > alpha
}

/// A segment's values in the order a scan sees them (`order`: positions into
/// `sorted`, so a permutation shuffles positions, not values), sorted once.
#[derive(Clone)]
struct Segment {
    /// The values, sorted.
    sorted: Vec<f64>,
    /// prefix[k] = sum of sorted[..k].
    prefix: Vec<f64>,
    /// The segment in its order, as ranks into `sorted` (ties broken by position).
    order: Vec<usize>,
}

impl Segment {
    fn new(values: &[f64]) -> Self {
        let mut idx: Vec<usize> = (0..values.len()).collect();
        idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
        let mut order = vec![0; values.len()];
        for (rank, &i) in idx.iter().enumerate() {
            order[i] = rank;
        }
        let sorted: Vec<f64> = idx.iter().map(|&i| values[i]).collect();
        let mut prefix = Vec::with_capacity(sorted.len() + 1);
        prefix.push(0.0);
        for v in &sorted {
            prefix.push(prefix.last().copied().unwrap_or(0.0) + v);
        }
        Segment { sorted, prefix, order }
    }
}

/// The split of `seg` (first index of its right part) with the largest q̂,
/// each side at least `min` long; `None` when the segment is too short.
fn best_split(seg: &Segment, min: usize) -> Option<(usize, f64)> {
    let n = seg.order.len();
    if n < 2 * min {
        return None;
    }
    let total = seg.prefix[n];
    // All pairs' distances: Σ_k sorted[k]·(2k − (n − 1)).
    let mut right_pairs: f64 =
        seg.sorted.iter().enumerate().map(|(k, v)| v * (2.0 * k as f64 - (n as f64 - 1.0))).sum();
    let (mut left_pairs, mut cross) = (0.0, 0.0);
    let mut left = Fenwick::new(n);
    let mut best: Option<(usize, f64)> = None;
    for (t, &rank) in seg.order.iter().enumerate().take(n - min) {
        let z = seg.sorted[rank];
        // Distances from z to the points left of it: from the tree.
        let (below_n, below_sum) = left.prefix(rank);
        let (left_n, left_sum) = (t as f64, left.total_sum);
        let to_left = z * below_n - below_sum + (left_sum - below_sum) - z * (left_n - below_n);
        // …and to all others, from the sorted values; the right side is the difference.
        let to_all = z * rank as f64 - seg.prefix[rank] + (total - seg.prefix[rank + 1]) - z * (n - rank - 1) as f64;
        let to_right = to_all - to_left;
        cross += to_right - to_left;
        left_pairs += to_left;
        right_pairs -= to_right;
        left.add(rank, z);
        let (m, r) = ((t + 1) as f64, (n - t - 1) as f64);
        if t + 1 >= min {
            let e = 2.0 * cross / (m * r) - 2.0 * left_pairs / (m * (m - 1.0)) - 2.0 * right_pairs / (r * (r - 1.0));
            let q = m * r / (m + r) * e;
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((t + 1, q));
            }
        }
    }
    best
}

/// Counts and sums of the ranks added so far, by prefix.
struct Fenwick {
    count: Vec<f64>,
    sum: Vec<f64>,
    total_sum: f64,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick { count: vec![0.0; n + 1], sum: vec![0.0; n + 1], total_sum: 0.0 }
    }

    fn add(&mut self, rank: usize, v: f64) {
        self.total_sum += v;
        let mut i = rank + 1;
        while i < self.count.len() {
            self.count[i] += 1.0;
            self.sum[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// How many ranks below `rank` were added, and their values' sum.
    fn prefix(&self, rank: usize) -> (f64, f64) {
        let (mut c, mut s, mut i) = (0.0, 0.0, rank);
        while i > 0 {
            c += self.count[i];
            s += self.sum[i];
            i &= i - 1;
        }
        (c, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// q̂ of every split straight from the definition, O(n²) per split.
    fn q_naive(v: &[f64], t: usize) -> f64 {
        let (x, y) = v.split_at(t);
        let (m, n) = (x.len() as f64, y.len() as f64);
        let cross: f64 = x.iter().flat_map(|a| y.iter().map(move |b| (a - b).abs())).sum();
        let pairs = |s: &[f64]| -> f64 {
            let mut d = 0.0;
            for i in 0..s.len() {
                for k in i + 1..s.len() {
                    d += (s[i] - s[k]).abs();
                }
            }
            d
        };
        let e = 2.0 * cross / (m * n) - 2.0 * pairs(x) / (m * (m - 1.0)) - 2.0 * pairs(y) / (n * (n - 1.0));
        m * n / (m + n) * e
    }

    fn noisy(n: usize, seed: u64, f: impl Fn(usize) -> f64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n)
            .map(|i| {
                // Box–Muller: a normal deviate from two uniforms.
                let (u1, u2) = (rng.f64().max(1e-12), rng.f64());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                f(i) * (1.0 + 0.03 * z)
            })
            .collect()
    }

    #[test]
    fn the_fast_scan_equals_the_definition() {
        let v = vec![3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0];
        let (at, q) = best_split(&Segment::new(&v), 2).unwrap();
        let (want_at, want_q) =
            (2..=v.len() - 2).map(|t| (t, q_naive(&v, t))).max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert_eq!(at, want_at);
        assert!((q - want_q).abs() < 1e-9, "{q} vs {want_q}");
    }

    #[test]
    fn a_step_is_found_where_it_is() {
        let v = noisy(60, 7, |i| if i < 40 { 100.0 } else { 108.0 });
        let cps = e_divisive(&v, &Settings::default());
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert!((39..=41).contains(&cps[0].index), "{cps:?}");
        assert!(cps[0].p <= ALPHA);
    }

    #[test]
    fn two_steps_are_both_found() {
        let v = noisy(60, 11, |i| match i {
            0..20 => 100.0,
            20..40 => 110.0,
            _ => 95.0,
        });
        let at: Vec<usize> = e_divisive(&v, &Settings::default()).iter().map(|c| c.index).collect();
        assert_eq!(at.len(), 2, "{at:?}");
        assert!((19..=21).contains(&at[0]) && (39..=41).contains(&at[1]), "{at:?}");
    }

    #[test]
    fn too_short_or_flat_histories_have_none() {
        assert!(e_divisive(&[1.0, 2.0, 1.0, 2.0, 1.0], &Settings::default()).is_empty());
        assert!(e_divisive(&[5.0; 30], &Settings::default()).is_empty());
        assert!(e_divisive(&[1.0, f64::NAN, 1.0, 1.0, 1.0, 1.0, 1.0], &Settings::default()).is_empty());
    }

    #[test]
    fn one_early_outlier_does_not_hide_a_clean_step() {
        // 6 runs at 0.20 s, 6 at 0.25 s (+25 %), the second run a stray 2 s. At
        // p ≤ 0.01 the outlier hides the step; set aside, the step is found.
        let mut v: Vec<f64> = (0..12).map(|i| if i < 6 { 0.20 } else { 0.25 } + (i % 3) as f64 * 0.002).collect();
        v[1] = 2.0;
        let strict = Settings { alpha: 0.01, ..Settings::default() };
        let unguarded: Vec<usize> = e_divisive(&v, &strict).iter().map(|c| c.index).collect();
        assert!(!unguarded.contains(&6), "unguarded, the outlier hides it: {unguarded:?}");
        let (g, replaced) = guard(&v);
        assert_eq!(replaced, [1]);
        assert!((g[1] - 0.202).abs() < 1e-12, "the median of it and its neighbours: {}", g[1]);
        let cps = e_divisive(&g, &strict);
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [6], "{cps:?}");
        // A step alone is left as it is.
        let step = noisy(60, 7, |i| if i < 40 { 100.0 } else { 108.0 });
        assert!(guard(&step).1.is_empty());
    }

    /// The test holds its level: at 0.05, about 5 % of steady histories
    /// (the sequential stop included) — 7.5 % is 2.5 standard errors above.
    #[test]
    fn pure_noise_rarely_has_one() {
        let alarms =
            (0..400).filter(|&seed| !e_divisive(&noisy(30, seed, |_| 100.0), &Settings::default()).is_empty()).count();
        assert!(alarms <= 30, "{alarms} of 400 noise histories had a change point");
    }

    #[test]
    fn the_least_p_value_of_a_short_history() {
        // 2 / C(8, 4): the split in the middle is the most extreme.
        assert!((least_p(8, 3) - 2.0 / 70.0).abs() < 1e-12);
        assert!(least_p(7, 3) > 0.05 && least_p(6, 3) > 0.05);
        assert_eq!(points_needed(0.05, 3), 8);
        assert_eq!(points_needed(0.01, 3), 10);
        // A perfect step in 8 points reaches it (the sides kept or mirrored).
        let v = [9.0, 9.1, 9.2, 9.3, 1.0, 1.1, 1.2, 1.3];
        let p = e_divisive(&v, &Settings::default())[0].p;
        assert!((p - 2.0 / 70.0).abs() < 0.012, "{p}");
    }
}
