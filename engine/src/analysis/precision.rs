//! How exact a run's numbers are: how many results have a 95 % confidence
//! interval of the mean within ±5, ±10 and ±25 % of it. Printed at the end
//! of every run, so a reader knows which numbers are worth reading.

use crate::model::result::ResultEntry;
use crate::stats::adaptive::ci_half_pct;

/// The bands counted, percent of the mean.
pub const BANDS: [f64; 3] = [5.0, 10.0, 25.0];

/// The 95 % CI half-widths of a set of entries (`None`: a single trial).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Precision {
    pub halves: Vec<Option<f64>>,
}

impl Precision {
    pub fn add(&mut self, e: &ResultEntry) {
        self.halves.push(ci_half_pct(&e.trials));
    }

    /// How many are within ±`band` %.
    pub fn within(&self, band: f64) -> usize {
        self.halves.iter().filter(|h| h.is_some_and(|h| h <= band)).count()
    }

    /// The median half-width of those with one (`None` when none has).
    pub fn median(&self) -> Option<f64> {
        let mut h: Vec<f64> = self.halves.iter().flatten().copied().collect();
        h.sort_by(f64::total_cmp);
        (!h.is_empty()).then(|| crate::stats::summary::median(&h))
    }
}

impl std::fmt::Display for Precision {
    /// `precision (95 % CI of the mean): 62 of 68 results within ±5 %, 66 within ±10 %, 68 within ±25 %; median ±1.8 %`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.halves.len();
        write!(
            f,
            "precision (95 % CI of the mean): {} of {n} result(s) within ±{} %",
            self.within(BANDS[0]),
            BANDS[0]
        )?;
        for b in &BANDS[1..] {
            write!(f, ", {} within ±{b} %", self.within(*b))?;
        }
        if let Some(m) = self.median() {
            write!(f, "; median ±{} %", crate::stats::shape::short(m))?;
        }
        let single = self.halves.iter().filter(|h| h.is_none()).count();
        if single > 0 {
            write!(f, "; {single} with a single trial")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_band_and_the_median() {
        let mut p = Precision::default();
        for t in [&[100.0, 100.5, 99.5][..], &[100.0, 110.0, 90.0], &[100.0, 150.0, 50.0], &[7.0]] {
            p.add(&ResultEntry::from_trials("a", t.to_vec(), None, vec![], String::new()).unwrap());
        }
        // ±1.24 %, ±24.8 %, ±124 %, one trial.
        assert_eq!((p.within(5.0), p.within(10.0), p.within(25.0)), (1, 1, 2));
        let s = p.to_string();
        assert!(s.starts_with("precision (95 % CI of the mean): 1 of 4 result(s) within ±5 %, 1 within ±10 %, 2 within ±25 %; median ±24.8"), "{s}");
        assert!(s.ends_with("; 1 with a single trial"), "{s}");
    }
}
