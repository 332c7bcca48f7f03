//! Number formatting shared by the human-facing reports.

/// Decimals for the values of one result, from the largest magnitude:
/// four below 1, two below 1000, one below 10000, none above.
pub fn decimals_for(max_abs: f64) -> usize {
    if max_abs < 1.0 {
        4
    } else if max_abs < 1000.0 {
        2
    } else if max_abs < 10000.0 {
        1
    } else {
        0
    }
}

/// `SE +/- 0.41, N = 7`, or `N = 1` when there is no spread to report.
pub fn se_text(se: Option<f64>, n: usize, decimals: usize) -> String {
    match se {
        Some(se) => format!("SE +/- {:.*}, N = {n}", decimals.max(2), se),
        None => format!("N = {n}"),
    }
}
