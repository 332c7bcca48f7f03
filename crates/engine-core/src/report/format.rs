//! What the human-facing reports print next to a value (numbers themselves
//! are formatted by `crate::units`).

use crate::units::{fixed, number};

/// `SE +/- 0.41, N = 7`, or `N = 1` when there is no spread to report.
pub(crate) fn se_text(se: Option<f64>, n: impl std::fmt::Display, decimals: usize) -> String {
    match se {
        Some(se) => format!("SE +/- {}, N = {n}", fixed(se, decimals.max(2))),
        None => format!("N = {n}"),
    }
}

/// An entry's N: its trials, and its set-ups when there were several
/// (`12 (4 set-ups)`): the SE beside it is then the set-ups' one.
pub(crate) fn count(e: &crate::model::result::ResultEntry) -> String {
    match e.setup_count() {
        1 => e.n.to_string(),
        k => format!("{} ({k} set-ups)", e.n),
    }
}

/// What stands after a bar: `505.80   SE +/- 93.44, N = 3`.
pub(crate) fn bar_text(value: f64, se: Option<f64>, n: impl std::fmt::Display) -> String {
    match se {
        Some(se) => format!("{}   SE +/- {}, N = {n}", number(value), number(se)),
        None => format!("{}   N = {n}", number(value)),
    }
}
