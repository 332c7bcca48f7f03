//! Overall geometric and harmonic means per identifier, over the results that
//! every identifier has, lower-is-better values inverted (as the seeds' viewer
//! does), so one number summarizes a system state.

use super::{Matrix, complete, goodness};
use crate::model::result::ResultFile;

fn per_identifier(f: &ResultFile, m: &Matrix<'_>, fold: impl Fn(&[f64]) -> f64) -> Option<Vec<(String, f64)>> {
    let rs = complete(m);
    if rs.is_empty() {
        return None;
    }
    Some(
        m.ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let g: Vec<f64> = rs
                    .iter()
                    .map(|&r| goodness(m.rows[r][i].unwrap().value, f.results[r].proportion).unwrap())
                    .collect();
                (id.clone(), fold(&g))
            })
            .collect(),
    )
}

/// `(identifier, mean)` in identifier order; `None` when no result is shared.
pub fn geometric(f: &ResultFile, m: &Matrix<'_>) -> Option<Vec<(String, f64)>> {
    per_identifier(f, m, |g| (g.iter().map(|x| x.ln()).sum::<f64>() / g.len() as f64).exp())
}

/// Harmonic mean per identifier over the shared results: n / Σ(1/x).
pub fn harmonic(f: &ResultFile, m: &Matrix<'_>) -> Option<Vec<(String, f64)>> {
    per_identifier(f, m, |g| g.len() as f64 / g.iter().map(|x| 1.0 / x).sum::<f64>())
}

/// How many shared results the means were taken over.
pub fn shared_count(m: &Matrix<'_>) -> usize {
    complete(m).len()
}
