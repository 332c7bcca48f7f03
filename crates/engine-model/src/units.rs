//! Exact units: MB = 10^6 bytes, MiB = 2^20 bytes; durations as `90s`, `10m`.

// One grammar for sizes and durations, shared with workloads and plugins.
pub use engine_sdk::units::{
    DURATION_PATTERN, Duration, MAX_DURATION, SIZE_PATTERN, Size, UnitError, parse_duration, parse_size,
};

/// A size written as a sum of products (`{{threads}} * 64MiB + 16MiB` once
/// filled: `4 * 64MiB + 16MiB`): free space from a test's options. Each
/// factor is a size or a plain number; a plain size parses as [`parse_size`].
pub fn parse_size_expr(s: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::Size(s.to_string());
    let mut total: u64 = 0;
    for term in s.split('+') {
        let mut product: u64 = 1;
        for factor in term.split(['*', '×']) {
            product = product.checked_mul(parse_size(factor.trim()).map_err(|_| bad())?).ok_or_else(bad)?;
        }
        total = total.checked_add(product).ok_or_else(bad)?;
    }
    Ok(total)
}

/// Seconds written as a sum of products of durations and plain numbers
/// (`2 * 1s`, `20 + 5 + 60`): a trial's run time from its options.
pub fn parse_seconds_expr(s: &str) -> Result<f64, UnitError> {
    let bad = || UnitError::Duration(s.to_string());
    let mut total = 0.0;
    for term in s.split('+') {
        let mut product = 1.0;
        for factor in term.split(['*', '×']) {
            let f = factor.trim();
            product *= match f.parse::<f64>() {
                Ok(n) if n.is_finite() && n >= 0.0 => n,
                _ => parse_duration(f).map_err(|_| bad())?.as_secs_f64(),
            };
        }
        total += product;
    }
    if total.is_finite() && total <= MAX_DURATION.as_secs_f64() {
        Ok(total)
    } else {
        Err(UnitError::DurationTooLong(s.to_string()))
    }
}

/// `b` as a size that reads back exactly (`4GiB`, `1536MiB`, `1000B`): for
/// command lines engine writes.
pub fn exact_size(b: u64) -> String {
    match b {
        b if b != 0 && b % (1 << 30) == 0 => format!("{}GiB", b >> 30),
        b if b != 0 && b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b => format!("{b}B"),
    }
}

/// `d` as a duration that reads back exactly, without spaces (`90s`,
/// `1500ms`, `10m`): for command lines engine writes.
pub fn exact_duration(d: std::time::Duration) -> String {
    let ns = d.as_nanos();
    const UNITS: [(u128, &str); 6] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    let (n, u) = UNITS.iter().find(|(n, _)| ns.is_multiple_of(*n) && ns > 0).copied().unwrap_or((1_000_000_000, "s"));
    format!("{}{u}", ns / n)
}

/// Formats bytes with binary units (what `df -h` users expect for free space).
pub fn format_bytes_binary(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 { format!("{b} B") } else { format!("{v:.1} {}", U[i]) }
}

/// Formats bytes with decimal units (disk and memory sizes as vendors state them).
pub fn format_bytes_decimal(b: u64) -> String {
    const U: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1000.0 && i < U.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 { format!("{b} B") } else { format!("{v:.0}{}", U[i]) }
}

/// Decimals that give `x` four significant digits (at least none, at most six).
pub fn decimals_for_sig(max_abs: f64) -> usize {
    if !max_abs.is_finite() || max_abs == 0.0 {
        return 2;
    }
    (3 - max_abs.abs().log10().floor() as i32).clamp(0, 6) as usize
}

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

/// A value with the decimals its own magnitude calls for ([`decimals_for`]):
/// what the charts print next to a bar, as the HTML report's script does.
pub fn number(v: f64) -> String {
    // No "-0.00": the script's toFixed drops the sign of zero.
    let v = if v == 0.0 { 0.0 } else { v };
    fixed(v, decimals_for(v.abs()))
}

/// From this magnitude on, values are written in scientific notation: fixed
/// notation would print digits an f64 does not hold (1e308 as 309 of them).
pub const SCIENTIFIC_FROM: f64 = 1e15;

/// `v` with `decimals` decimals, or with four significant digits in
/// scientific notation (`1.000e308`) from [`SCIENTIFIC_FROM`] on: every
/// value a report prints for people goes through here.
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.abs() >= SCIENTIFIC_FROM && v.is_finite() { format!("{v:.3e}") } else { format!("{v:.decimals$}") }
}

/// The shortest text that reads back as the same `v` (CSV, XML): scientific
/// from [`SCIENTIFIC_FROM`] on and below 1e-6, where fixed notation would
/// run to hundreds of digits.
pub fn exact(v: f64) -> String {
    let a = v.abs();
    if v.is_finite() && v != 0.0 && !(1e-6..SCIENTIFIC_FROM).contains(&a) { format!("{v:e}") } else { format!("{v}") }
}

/// Bytes per second in one of `unit`, when it is a byte rate (`MB/s` →
/// 10^6, `MiB/s` → 2^20): the size units of [`parse_size`] per second.
pub fn byte_rate(unit: &str) -> Option<f64> {
    let size = unit.strip_suffix("/s").filter(|s| s.ends_with('B'))?;
    engine_sdk::units::size_unit(size).map(|f| f as f64)
}

/// For a unit written loosely (`MBps`, `MB/sec`, `mib/s`, `secs`, `iops`),
/// the exact spelling to write instead; `None` for an exact unit or one of a
/// test's own (`Files/s`, `Signs Per Second`).
pub fn loose_unit(unit: &str) -> Option<String> {
    let u = unit.trim();
    let lower = u.to_ascii_lowercase();
    // Abbreviations only: a word written out (`Milliseconds`) is exact.
    let time = [
        (&["sec", "secs"][..], "Seconds"),
        (&["msec", "msecs"][..], "ms"),
        (&["us", "usec", "usecs"][..], "µs"),
        (&["nsec", "nsecs"][..], "ns"),
        (&["iops"][..], "IOPS"),
        (&["tps"][..], "TPS"),
    ];
    if let Some((_, exact)) = time.iter().find(|(loose, _)| loose.contains(&lower.as_str())) {
        return (u != *exact).then(|| (*exact).to_string());
    }
    // IOPS is a rate already: no "per second" after it.
    const PER_SECOND: [&str; 5] = ["/s", "/sec", "/secs", "/second", "/seconds"];
    if lower.strip_prefix("iops").is_some_and(|rest| PER_SECOND.contains(&rest.trim())) {
        return Some("IOPS".into());
    }
    loose_byte_rate(u, &lower).or_else(|| {
        // Any other rate: one spelling of "per second", `/s`.
        let stem = PER_SECOND[1..].iter().find_map(|per| lower.strip_suffix(per))?;
        Some(format!("{}/s", u[..stem.len()].trim_end()))
    })
}

/// [`loose_unit`] for a byte rate: a size unit and a "per second" in any
/// spelling.
fn loose_byte_rate(u: &str, lower: &str) -> Option<String> {
    let size = ["ps", "/s", "/sec", "/secs", "/second", "/seconds", " per second"]
        .iter()
        .find_map(|per| lower.strip_suffix(per).map(|s| &u[..s.len()]))?;
    let size = size.trim().trim_end_matches("ytes").trim_end_matches("yte");
    if !size.ends_with(['b', 'B']) || size.len() > 3 || !size.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let prefix = &size[..size.len() - 1].to_ascii_lowercase();
    let exact = match prefix.as_str() {
        "" => "B/s",
        "k" => "kB/s",
        "m" => "MB/s",
        "g" => "GB/s",
        "t" => "TB/s",
        "ki" => "KiB/s",
        "mi" => "MiB/s",
        "gi" => "GiB/s",
        "ti" => "TiB/s",
        _ => return None,
    };
    if byte_rate(u).is_some() {
        return None;
    }
    // A lower-case b is a bit: say both readings.
    Some(if size.ends_with('b') {
        format!("{exact} (bytes) or {}bit/s (bits)", &exact[..exact.len() - 3])
    } else {
        exact.into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_time_from_options_is_a_sum_of_products() {
        assert_eq!(parse_seconds_expr("2 * 1s"), Ok(2.0));
        assert_eq!(parse_seconds_expr("20 + 5 + 60"), Ok(85.0));
        assert_eq!(parse_seconds_expr("30 * 10s"), Ok(300.0));
        assert!(parse_seconds_expr("two * 1s").is_err());
    }

    #[test]
    fn a_size_from_options_is_a_sum_of_products() {
        assert_eq!(parse_size_expr("4 * 64MiB + 16MiB"), Ok(4 * (64 << 20) + (16 << 20)));
        assert_eq!(parse_size_expr("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size_expr("3 × 1GB"), Ok(3_000_000_000));
        assert!(parse_size_expr("4 * lots").is_err());
        assert!(parse_size_expr("1TiB * 1TiB * 1TiB").is_err(), "overflow is an error");
    }

    #[test]
    fn loose_units_get_their_exact_spelling() {
        for (loose, exact) in [
            ("MBps", "MB/s"),
            ("MB/sec", "MB/s"),
            ("MIB/s", "MiB/s"),
            ("mib/s", "MiB/s (bytes) or Mibit/s (bits)"),
            ("GBytes/s", "GB/s"),
            ("secs", "Seconds"),
            ("iops", "IOPS"),
            ("usec", "µs"),
            ("Mbps", "MB/s (bytes) or Mbit/s (bits)"),
            ("ops/sec", "ops/s"),
            ("Files/second", "Files/s"),
            ("IOPS/sec", "IOPS"),
            ("IOPS/s", "IOPS"),
        ] {
            assert_eq!(loose_unit(loose).as_deref(), Some(exact), "{loose}");
        }
        for exact in [
            "MB/s",
            "MiB/s",
            "KB/s",
            "B/s",
            "Seconds",
            "ms",
            "µs",
            "IOPS",
            "TPS",
            "Files/s",
            "Signs Per Second",
            "Real C/S",
            "Items",
        ] {
            assert_eq!(loose_unit(exact), None, "{exact}");
        }
        assert_eq!(byte_rate("MB/s"), Some(1e6));
        assert_eq!(byte_rate("MiB/s"), Some(1_048_576.0));
        assert_eq!(byte_rate("Files/s"), None);
    }

    /// The SDK's table of the grammar, read as a profile reads it (the
    /// model's typed fields) and as the schema documents it (its pattern).
    #[test]
    fn profiles_and_schemas_read_the_sdks_grammar() {
        use crate::model::profile::{SandboxSpec, Trials};
        let size = regex::Regex::new(SIZE_PATTERN).unwrap();
        for (text, want) in engine_sdk::units::SIZE_CASES {
            let spec = serde_saphyr::from_str::<SandboxSpec>(&format!("memory: {text:?}"));
            assert_eq!(spec.ok().and_then(|s| s.memory).map(|m| m.bytes()), *want, "{text:?}");
            if want.is_some() {
                assert!(size.is_match(text), "the schema's pattern refuses {text:?}");
            }
        }
        let duration = regex::Regex::new(DURATION_PATTERN).unwrap();
        for (text, want) in engine_sdk::units::DURATION_CASES {
            let t = serde_saphyr::from_str::<Trials>(&format!("budget: {text:?}"));
            let got = t.ok().and_then(|t| t.budget).map(|b| b.get().as_millis() as u64);
            assert_eq!(got, *want, "{text:?}");
            if want.is_some() {
                assert!(duration.is_match(text), "the schema's pattern refuses {text:?}");
            }
        }
        for refused in ["soon", "5 parsecs", "", "1.2.3MB", "lots", "mb"] {
            assert!(!duration.is_match(refused) || !size.is_match(refused), "{refused:?}");
        }
        assert!(!size.is_match("1mb") && !duration.is_match("soon"));
    }

    #[test]
    fn absurd_values_are_scientific_everywhere() {
        assert_eq!(number(1e308), "1.000e308");
        assert_eq!(number(-1.5e20), "-1.500e20");
        assert_eq!(number(123456.7), "123457");
        assert_eq!(fixed(1e308, 2), "1.000e308");
        assert_eq!(fixed(2.5, 2), "2.50");
        assert_eq!(exact(1e308), "1e308");
        assert_eq!(exact(-3.5), "-3.5");
        assert_eq!(exact(1e-300), "1e-300");
        assert_eq!(exact(0.0), "0");
        assert_eq!(exact(f64::MAX).parse::<f64>().unwrap(), f64::MAX);
    }

    #[test]
    fn exact_renderings_read_back() {
        for b in [0, 1000, 1 << 20, 1536 << 20, 4 << 30, 123_456_789] {
            assert_eq!(parse_size(&exact_size(b)), Ok(b), "{b}");
        }
        for ms in [0, 1, 1500, 90_000, 600_000, 5_400_000] {
            let d = std::time::Duration::from_millis(ms);
            assert_eq!(parse_duration(&exact_duration(d)), Ok(d), "{ms}");
        }
        assert_eq!(exact_duration(std::time::Duration::from_secs(90)), "90s");
    }

    #[test]
    fn formats() {
        assert_eq!(format_bytes_binary(1536), "1.5 KiB");
        assert_eq!(format_bytes_decimal(252_000_000_000), "252GB");
    }
}
