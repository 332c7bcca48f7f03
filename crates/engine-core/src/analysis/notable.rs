//! Notable results: where the identifiers differ most (spread = best / worst).

use super::{Matrix, goodness};
use crate::model::result::ResultFile;

/// The `n` results (by index) with the largest spread between identifiers, largest first.
pub(crate) fn notable(f: &ResultFile, m: &Matrix<'_>, n: usize) -> Vec<(usize, f64)> {
    let mut v: Vec<(usize, f64)> = f
        .results
        .iter()
        .zip(&m.rows)
        .enumerate()
        .filter_map(|(i, (r, row))| {
            let g: Vec<f64> = row.iter().flatten().filter_map(|e| goodness(e.value, r.proportion)).collect();
            if g.len() < 2 {
                return None;
            }
            let (lo, hi) = (g.iter().copied().fold(f64::MAX, f64::min), g.iter().copied().fold(f64::MIN, f64::max));
            Some((i, hi / lo))
        })
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.truncate(n);
    v
}
