//! Noise filters: hide results whose relative standard deviation is over a
//! threshold, and recompute entries without outlier trials.

use crate::model::result::{ResultEntry, ResultFile};
use crate::stats::{Summary, outlier};

/// Default threshold of "noisy": relative SD above 6 % with more than two trials.
pub const NOISY_RSD: f64 = 6.0;

/// Whether any identifier's trials of this entry are noisier than `rsd_pct`.
pub(crate) fn is_noisy(e: &ResultEntry, rsd_pct: f64) -> bool {
    e.trials.len() > 2 && Summary::of(&e.trials).and_then(|s| s.rsd_percent()).is_some_and(|r| r > rsd_pct)
}

/// Removes results where any identifier is noisy; returns how many were hidden.
pub fn hide_noisy(f: &mut ResultFile, rsd_pct: f64) -> usize {
    let before = f.results.len();
    f.results.retain(|r| !r.entries.iter().any(|e| is_noisy(e, rsd_pct)));
    before - f.results.len()
}

/// Drops the outlier trials (modified z-score over 3.5) of every entry and
/// recomputes its statistics; returns how many trials were dropped.
pub fn remove_outliers(f: &mut ResultFile) -> usize {
    let mut dropped = 0;
    for r in &mut f.results {
        for e in &mut r.entries {
            let out: Vec<usize> = outlier::outliers(&e.trials).into_iter().map(|(i, _)| i).collect();
            if out.is_empty() || e.trials.len() - out.len() < 2 {
                continue;
            }
            let kept: Vec<f64> =
                e.trials.iter().enumerate().filter(|(i, _)| !out.contains(i)).map(|(_, v)| *v).collect();
            dropped += out.len();
            let s = Summary::of(&kept).expect("two or more trials kept");
            e.trials = kept;
            (e.value, e.sd, e.se, e.n, e.min, e.max, e.median) = (s.mean, s.sd, s.se, s.n, s.min, s.max, s.median);
            if e.setups.len() == e.trials.len() + out.len() {
                let setups = e.setups.iter().enumerate().filter(|(i, _)| !out.contains(i)).map(|(_, s)| *s).collect();
                *e = e.clone().with_setups(setups);
            }
        }
    }
    dropped
}
