//! Sizes and durations: one grammar for profiles, suites, results, the
//! engine's flags and workload configuration, so a plugin's `64MiB` means
//! what a profile's does.
//!
//! - A size is a number and an optional unit: `4096` (bytes), `2 GiB`,
//!   `1.5kB`. `KiB`, `MiB`, `GiB`, `TiB` and fio's `k`, `m`, `g`, `t` (either
//!   case) are powers of 2; `kB`/`KB`, `MB`, `GB`, `TB` are powers of 10;
//!   `B` (or a lone `b`, as fio writes it) is bytes; `mb` and `kb` are
//!   refused: after a prefix a lower-case `b` reads as bits.
//! - A duration is a plain number of seconds (`20`, `0.5`) or terms of a
//!   number and a unit (`250ms`, `90s`, `10m`, `1h 30m`, `2 days`): `ns`,
//!   `us`/`µs`, `ms`, `s`/`sec`/`second(s)`, `m`/`min`/`minute(s)`,
//!   `h`/`hr`/`hour(s)`, `d`/`day(s)`, `w`/`wk`/`week(s)`, `M`/`month(s)`
//!   (30.44 days), `y`/`yr`/`year(s)` (365.25 days), as humantime reads
//!   them. Each term is exact to the nanosecond; at most [`MAX_DURATION`].

use std::fmt;
use std::str::FromStr;

/// The longest duration engine accepts anywhere: deadlines are computed as
/// `Instant + duration`, which must never overflow.
pub const MAX_DURATION: std::time::Duration = std::time::Duration::from_secs(366 * 24 * 3600);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitError {
    Size(String),
    Duration(String),
    DurationTooLong(String),
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitError::Size(s) => {
                write!(f, "`{s}` is not a size; write a number and a unit such as `512MiB`, `2GB` or `4096B`")
            }
            UnitError::Duration(s) => write!(f, "`{s}` is not a duration; write it like `90s`, `10m` or `1h 30m`"),
            UnitError::DurationTooLong(s) => {
                write!(f, "`{s}` is longer than engine allows for any time limit (366 days)")
            }
        }
    }
}

impl std::error::Error for UnitError {}

impl UnitError {
    /// What to write instead.
    pub fn hint(&self) -> &'static str {
        match self {
            UnitError::Size(_) => "kB, MB, GB, TB are powers of 10; KiB, MiB, GiB, TiB (and k, m, g, t) powers of 2",
            UnitError::Duration(_) => "units: ms, s, m, h (`1h 30m`); a plain number is seconds",
            UnitError::DurationTooLong(_) => "time limits go up to 366 days; split a longer job into tests",
        }
    }
}

const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("B", 1),
    ("b", 1),
    ("kB", 1_000),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("k", 1 << 10),
    ("K", 1 << 10),
    ("m", 1 << 20),
    ("M", 1 << 20),
    ("g", 1 << 30),
    ("G", 1 << 30),
    ("t", 1 << 40),
    ("T", 1 << 40),
];

/// Bytes in one `unit` of a size (`MiB` → 2^20), if it is one.
pub fn size_unit(unit: &str) -> Option<u64> {
    SIZE_UNITS.iter().find(|(u, _)| *u == unit).map(|(_, f)| *f)
}

/// Parses a size (see the module's grammar) into bytes, exactly.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::Size(s.to_string());
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = (t[..split].trim(), t[split..].trim());
    let factor = size_unit(unit).ok_or_else(bad)?;
    scaled(num, factor as u128).and_then(|n| u64::try_from(n).ok()).ok_or_else(bad)
}

const NANOS: u128 = 1_000_000_000;
const DAY: u128 = 86_400 * NANOS;
const DURATION_UNITS: &[(&[&str], u128)] = &[
    (&["ns", "nsec", "nsecs", "nanos"], 1),
    (&["us", "µs", "usec", "usecs", "micros"], 1_000),
    (&["ms", "msec", "msecs", "millis"], 1_000_000),
    (&["s", "sec", "secs", "second", "seconds"], NANOS),
    (&["m", "min", "mins", "minute", "minutes"], 60 * NANOS),
    (&["h", "hr", "hrs", "hour", "hours"], 3_600 * NANOS),
    (&["d", "day", "days"], DAY),
    (&["w", "wk", "wks", "week", "weeks"], 7 * DAY),
    (&["M", "month", "months"], 2_630_016 * NANOS),
    (&["y", "yr", "yrs", "year", "years"], 31_557_600 * NANOS),
];

/// The grammar of a size as a JSON-schema pattern (documentation, and the
/// schema check that reports every problem of a file at once); a match can
/// still overflow.
pub const SIZE_PATTERN: &str = r"^\s*(\d+(\.\d*)?|\.\d+)\s*(B|b|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB|[kKmMgGtT])?\s*$";

/// The grammar of a duration as a JSON-schema pattern; a match can still be
/// longer than [`MAX_DURATION`].
pub const DURATION_PATTERN: &str = concat!(
    r"^\s*((\d+(\.\d*)?|\.\d+)\s*|",
    r"((\d+(\.\d*)?|\.\d+)\s*(nsecs?|nanos|ns|usecs?|micros|us|µs|msecs?|millis|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|hr|h|days?|d|weeks?|wks?|w|months?|M|years?|yrs?|y)\s*)+)$"
);

/// Parses a duration (see the module's grammar).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, UnitError> {
    let bad = || UnitError::Duration(s.to_string());
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    let nanos = if t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        scaled(t, NANOS).ok_or_else(bad)?
    } else {
        let mut rest = t;
        let mut total: u128 = 0;
        while !rest.is_empty() {
            let n = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            let (num, after) = rest.split_at(n);
            let after = after.trim_start();
            let u = after.find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace()).unwrap_or(after.len());
            let (unit, next) = after.split_at(u);
            let factor = DURATION_UNITS.iter().find(|(names, _)| names.contains(&unit)).ok_or_else(bad)?.1;
            let term = scaled(num, factor).ok_or_else(bad)?;
            total = total.checked_add(term).ok_or_else(|| UnitError::DurationTooLong(s.to_string()))?;
            rest = next.trim_start();
        }
        total
    };
    if nanos > MAX_DURATION.as_nanos() {
        return Err(UnitError::DurationTooLong(s.to_string()));
    }
    Ok(std::time::Duration::from_nanos(nanos as u64))
}

/// `num` (digits with at most one `.`) times `factor`, exactly, rounded to
/// the nearest unit; `None` for anything else or on overflow.
fn scaled(num: &str, factor: u128) -> Option<u128> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // Past the 18th digit a fraction is below a nanosecond of a year and a
    // byte of a TiB; kept, 10^18 × the largest factor still fits in u128.
    let frac = &frac[..frac.len().min(18)];
    let whole = if int.is_empty() { 0 } else { int.parse::<u128>().ok()?.checked_mul(factor)? };
    if frac.is_empty() {
        return Some(whole);
    }
    let den = 10u128.checked_pow(frac.len() as u32)?;
    let part = frac.parse::<u128>().ok()?.checked_mul(factor)?;
    whole.checked_add((part + den / 2) / den)
}

/// A size as written (`64MiB`), with its value in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Size {
    bytes: u64,
    text: String,
}

impl Size {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// The text it was written as.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for Size {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        Ok(Size { bytes: parse_size(s)?, text: s.to_string() })
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A duration as written (`10m`), with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duration {
    value: std::time::Duration,
    text: String,
}

impl Duration {
    pub fn get(&self) -> std::time::Duration {
        self.value
    }
    /// The text it was written as.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl FromStr for Duration {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        Ok(Duration { value: parse_duration(s)?, text: s.to_string() })
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(feature = "serde")]
mod serde_impls {
    use super::{Duration, Size};
    use std::borrow::Cow;

    macro_rules! as_text {
        ($t:ident, $what:literal, $desc:literal, $pattern:expr) => {
            impl serde::Serialize for $t {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_str(&self.text)
                }
            }
            impl<'de> serde::Deserialize<'de> for $t {
                fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    struct V;
                    impl serde::de::Visitor<'_> for V {
                        type Value = $t;
                        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                            f.write_str($what)
                        }
                        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$t, E> {
                            v.parse().map_err(E::custom)
                        }
                        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$t, E> {
                            v.to_string().parse().map_err(E::custom)
                        }
                    }
                    d.deserialize_str(V)
                }
            }
            impl schemars::JsonSchema for $t {
                fn schema_name() -> Cow<'static, str> {
                    stringify!($t).into()
                }
                fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                    schemars::json_schema!({ "type": "string", "description": $desc, "pattern": $pattern })
                }
            }
        };
    }

    as_text!(
        Size,
        "a size such as `512MiB`",
        "A size: a number and a unit (`4096`, `512MiB`, `2GB`; KiB/MiB/GiB/TiB and k/m/g/t are powers of 2, kB/MB/GB/TB powers of 10).",
        super::SIZE_PATTERN
    );
    as_text!(
        Duration,
        "a duration such as `90s`",
        "A duration: seconds (`20`) or numbers with units (`250ms`, `90s`, `10m`, `1h 30m`), at most 366 days.",
        super::DURATION_PATTERN
    );
}

/// Cases of the grammar, each with what it means (`None`: refused), run
/// against every place that reads a size or a duration.
#[doc(hidden)]
pub const SIZE_CASES: &[(&str, Option<u64>)] = &[
    ("4096", Some(4096)),
    ("512MiB", Some(512 << 20)),
    ("2 GiB", Some(2 << 30)),
    ("2MB", Some(2_000_000)),
    ("1.5kB", Some(1500)),
    ("1.5k", Some(1536)),
    ("4k", Some(4096)),
    ("1g", Some(1 << 30)),
    ("64M", Some(64 << 20)),
    ("1TB", Some(1_000_000_000_000)),
    ("4096b", Some(4096)),
    ("0.100000000000000000000000000000GiB", Some(107_374_182)),
    ("lots", None),
    ("12 parsecs", None),
    ("mb", None),
    ("1mb", None),
    ("", None),
    ("1.2.3MB", None),
    ("99999999999TiB", None),
];

#[doc(hidden)]
pub const DURATION_CASES: &[(&str, Option<u64>)] = &[
    // (text, milliseconds)
    ("20", Some(20_000)),
    ("0.5", Some(500)),
    ("250ms", Some(250)),
    ("90s", Some(90_000)),
    ("1.5s", Some(1_500)),
    ("2m", Some(120_000)),
    ("10 min", Some(600_000)),
    ("1h 30m", Some(5_400_000)),
    ("1h30m", Some(5_400_000)),
    ("2 days", Some(172_800_000)),
    ("366 days", Some(31_622_400_000)),
    ("0.500000000000000000000000000000", Some(500)),
    ("0.100000000000000000000000000h", Some(360_000)),
    ("2 wks", Some(1_209_600_000)),
    ("1500 millis", Some(1_500)),
    ("soon", None),
    ("", None),
    ("5 parsecs", None),
    ("367 days", None),
    ("300000000000 years", None),
    ("99999999999999999999999999h", None),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_table_holds() {
        for (text, want) in SIZE_CASES {
            assert_eq!(parse_size(text).ok(), *want, "{text:?}");
        }
        for (text, want) in DURATION_CASES {
            assert_eq!(parse_duration(text).ok().map(|d| d.as_millis() as u64), *want, "{text:?}");
        }
    }

    #[test]
    fn values_keep_their_text_and_errors_say_which() {
        let s: Size = "64MiB".parse().unwrap();
        assert_eq!((s.bytes(), s.to_string()), (64 << 20, "64MiB".to_string()));
        let d: Duration = "1h 30m".parse().unwrap();
        assert_eq!((d.get().as_secs(), d.as_str()), (5400, "1h 30m"));
        assert_eq!(parse_duration("400 days"), Err(UnitError::DurationTooLong("400 days".into())));
        assert_eq!(parse_duration("1 fortnight"), Err(UnitError::Duration("1 fortnight".into())));
        assert_eq!(parse_duration("0.1s").unwrap().as_nanos(), 100_000_000, "exact, not through f64");
    }
}
