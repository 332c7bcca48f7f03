//! Overall geometric and harmonic means per identifier, over the results that
//! every identifier has, lower-is-better values inverted (as the seeds' viewer
//! does), so one number summarizes a system state. Each test weighs once: the
//! results of one test (io's bandwidth, IOPS and five latencies) are first
//! averaged among themselves, so a test with seven results does not outvote
//! one with a single result.

use super::{Matrix, complete, goodness};
use crate::model::facts::{Identifier, Unit};
use crate::model::profile::Proportion;
use crate::model::result::ResultFile;

fn per_identifier(f: &ResultFile, m: &Matrix<'_>, fold: impl Fn(&[f64]) -> f64) -> Option<Vec<(Identifier, f64)>> {
    let tests = by_test(f, m);
    if tests.is_empty() {
        return None;
    }
    Some(
        m.ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let g: Vec<f64> = tests
                    .iter()
                    .map(|rs| {
                        let v: Vec<f64> = rs
                            .iter()
                            .map(|&r| goodness(m.rows[r][i].unwrap().value, f.results[r].proportion).unwrap())
                            .collect();
                        fold(&v)
                    })
                    .collect();
                (id.clone(), fold(&g))
            })
            .collect(),
    )
}

/// The shared results grouped by test, in order of first appearance.
fn by_test(f: &ResultFile, m: &Matrix<'_>) -> Vec<Vec<usize>> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for r in complete(m) {
        let t = f.results[r].test.as_str();
        match groups.iter_mut().find(|(k, _)| *k == t) {
            Some((_, v)) => v.push(r),
            None => groups.push((t, vec![r])),
        }
    }
    groups.into_iter().map(|(_, v)| v).collect()
}

/// How many tests the means were taken over.
pub(crate) fn shared_tests(f: &ResultFile, m: &Matrix<'_>) -> usize {
    by_test(f, m).len()
}

/// `(identifier, mean)` in identifier order; `None` when no result is shared.
pub(crate) fn geometric(f: &ResultFile, m: &Matrix<'_>) -> Option<Vec<(Identifier, f64)>> {
    per_identifier(f, m, |g| (g.iter().map(|x| x.ln()).sum::<f64>() / g.len() as f64).exp())
}

/// Harmonic mean per identifier over the shared results, n / Σ(1/x), and
/// its unit: only where every shared result is a higher-is-better value in
/// one unit (rates of one kind, as MB/s), where it means something.
pub(crate) fn harmonic(f: &ResultFile, m: &Matrix<'_>) -> Option<(Unit, Vec<(Identifier, f64)>)> {
    let shared = complete(m);
    let first = &f.results[*shared.first()?];
    let one_kind =
        shared.iter().all(|&r| f.results[r].unit == first.unit && f.results[r].proportion == Proportion::Hib);
    if !one_kind {
        return None;
    }
    Some((first.unit.clone(), per_identifier(f, m, |g| g.len() as f64 / g.iter().map(|x| 1.0 / x).sum::<f64>())?))
}

/// How many shared results the means were taken over.
pub(crate) fn shared_count(m: &Matrix<'_>) -> usize {
    complete(m).len()
}
