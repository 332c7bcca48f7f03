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

/// A value with the decimals its own magnitude calls for ([`decimals_for`]):
/// what the charts print next to a bar, as the HTML report's script does.
pub fn number(v: f64) -> String {
    // No "-0.00": the script's toFixed drops the sign of zero.
    let v = if v == 0.0 { 0.0 } else { v };
    format!("{v:.*}", decimals_for(v.abs()))
}

/// What stands after a bar: `505.80   SE +/- 93.44, N = 3`.
pub fn bar_text(value: f64, se: Option<f64>, n: usize) -> String {
    match se {
        Some(se) => format!("{}   SE +/- {}, N = {n}", number(value), number(se)),
        None => format!("{}   N = {n}", number(value)),
    }
}
