//! Normalized values: each result's values divided by a reference — the
//! lowest value of the result (PTS's default), or a baseline identifier's —
//! and turned around for lower-is-better results so that above 1 is better.

use crate::model::facts::Identifier;
use crate::model::profile::Proportion;
use crate::model::result::{ResultEntry, TestResult};

/// What values are relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// The worst value of the result is 1.
    Lowest,
    /// This identifier's value is 1.
    Baseline(String),
}

/// `(identifier, relative performance)` for the entries `row` (aligned with
/// `ids`); `None` for identifiers without a value, and for all when the
/// reference has none.
pub(crate) fn normalize(
    r: &TestResult,
    row: &[Option<&ResultEntry>],
    ids: &[Identifier],
    reference: &Reference,
) -> Vec<(Identifier, Option<f64>)> {
    let vals: Vec<Option<f64>> = row.iter().map(|e| e.map(|e| e.value).filter(|v| *v > 0.0)).collect();
    let base = match reference {
        Reference::Lowest => match r.proportion {
            // The worst: lowest of higher-is-better, highest of lower-is-better.
            Proportion::Hib => vals.iter().flatten().copied().reduce(f64::min),
            Proportion::Lib => vals.iter().flatten().copied().reduce(f64::max),
        },
        Reference::Baseline(b) => ids.iter().position(|x| x == b).and_then(|i| vals[i]),
    };
    ids.iter()
        .zip(vals)
        .map(|(id, v)| {
            let rel = match (v, base) {
                (Some(v), Some(b)) => Some(match r.proportion {
                    Proportion::Hib => v / b,
                    Proportion::Lib => b / v,
                }),
                _ => None,
            };
            (id.clone(), rel)
        })
        .collect()
}
