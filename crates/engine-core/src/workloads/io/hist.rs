//! Completion latencies without storing every one: a log-linear histogram
//! (64 sub-buckets per power of two, so a percentile is within 1.6 % of the
//! true value), merged across threads.

const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;

#[derive(Clone)]
pub(crate) struct Histogram {
    counts: Vec<u64>,
    pub n: u64,
    sum_ns: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; 64 * SUB], n: 0, sum_ns: 0 }
    }
}

fn bucket(ns: u64) -> usize {
    if ns < SUB as u64 {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = (ns >> shift) as usize & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) | sub
}

/// The middle of bucket `b`'s range, in ns.
fn value(b: usize) -> f64 {
    if b < SUB {
        return b as f64;
    }
    let shift = (b >> SUB_BITS) - 1;
    let sub = b & (SUB - 1);
    let lo = ((SUB | sub) as u64) << shift;
    lo as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
}

impl Histogram {
    pub(crate) fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.n += 1;
        self.sum_ns += ns as u128;
    }

    pub(crate) fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
        self.sum_ns += o.sum_ns;
    }

    /// Its count, sum and non-empty buckets.
    pub(crate) fn encode(&self, w: &mut super::wire::Wire) {
        w.u(self.n);
        w.u(self.sum_ns as u64);
        w.u((self.sum_ns >> 64) as u64);
        let used: Vec<(usize, u64)> = self.counts.iter().copied().enumerate().filter(|(_, c)| *c > 0).collect();
        w.u(used.len() as u64);
        for (b, c) in used {
            w.u(b as u64);
            w.u(c);
        }
    }

    pub(crate) fn decode(r: &mut super::wire::Reader<'_>) -> Option<Histogram> {
        let mut h =
            Histogram { n: r.u()?, sum_ns: u128::from(r.u()?) | (u128::from(r.u()?) << 64), ..Default::default() };
        for _ in 0..r.u()? {
            let b = usize::try_from(r.u()?).ok()?;
            *h.counts.get_mut(b)? = r.u()?;
        }
        Some(h)
    }

    /// Mean in ns (exact: from the sum, not the buckets).
    pub(crate) fn mean(&self) -> f64 {
        if self.n == 0 { 0.0 } else { self.sum_ns as f64 / self.n as f64 }
    }

    /// The `q` quantile (0–1) in ns: the smallest value with at least q·n at or below it.
    pub(crate) fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let want = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0;
        for (b, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= want {
                return value(b);
            }
        }
        value(self.counts.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_two_percent() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for (q, want) in [(0.5, 50_000_000.0), (0.99, 99_000_000.0), (0.999, 99_900_000.0)] {
            let got = h.quantile(q);
            assert!((got - want).abs() / want < 0.02, "q{q}: {got} vs {want}");
        }
        assert!((h.mean() - 50_000_500.0).abs() < 1.0);
        let mut small = Histogram::default();
        small.record(7);
        assert_eq!(small.quantile(0.5), 7.0);
        let mut m = Histogram::default();
        m.merge(&h);
        m.merge(&small);
        assert_eq!(m.n, 100_001);
    }
}
