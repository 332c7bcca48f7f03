//! An amount over the trial's wall time (`rate: {amount: "{{size}}", per:
//! wall_time}`): MB/s of a `dd` or `sha256sum` without a shell wrapper.

use super::{ParseError, Parser, RawOutput, Reading};
use crate::units;

pub(crate) struct Rate {
    /// What one trial moved: bytes for a size, else the number as written.
    amount: f64,
    /// What the amount is shown as (`1GiB`), for messages.
    written: String,
    /// Amount units per result unit (10^6 for bytes shown as MB/s).
    per_unit: f64,
}

impl Rate {
    /// `amount` as filled in; `unit` the result's. A size needs a byte-rate
    /// unit, or the value would be bytes per second under another name.
    pub(crate) fn new(amount: &str, unit: &str) -> Result<Rate, ParseError> {
        let written = amount.trim().to_string();
        if let Ok(n) = written.parse::<f64>()
            && n.is_finite()
            && n > 0.0
        {
            return Ok(Rate { amount: n, written, per_unit: 1.0 });
        }
        let bytes = units::parse_size(&written).map_err(|e| ParseError::Build(format!("rate amount: {e}")))?;
        if bytes == 0 {
            return Err(ParseError::Build(format!("rate amount `{written}` is zero")));
        }
        let per_unit = units::byte_rate(unit).ok_or_else(|| {
            ParseError::Build(format!(
                "rate amount `{written}` is a size, so the result's unit must be a byte rate \
                 (B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s), not `{unit}`"
            ))
        })?;
        Ok(Rate { amount: bytes as f64, written, per_unit })
    }
}

impl Parser for Rate {
    fn parse(&self, out: &RawOutput<'_>) -> Result<Reading, ParseError> {
        let secs = out.wall.as_secs_f64();
        if secs <= 0.0 {
            return Err(ParseError::Build("the trial took no measurable time".into()));
        }
        Ok(Reading { value: self.amount / secs / self.per_unit, raw: format!("{} in {secs:.6} s", self.written) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(ms: u64) -> RawOutput<'static> {
        RawOutput { stdout: "", stderr: "", wall: Duration::from_millis(ms) }
    }

    #[test]
    fn a_size_over_wall_time_in_the_results_unit() {
        // 1 GiB in 2 s: 536870912 B/s = 536.870912 MB/s = 512 MiB/s.
        assert_eq!(Rate::new("1GiB", "MB/s").unwrap().parse(&at(2000)).unwrap().value, 536.870912);
        assert_eq!(Rate::new("1GiB", "MiB/s").unwrap().parse(&at(2000)).unwrap().value, 512.0);
        assert_eq!(Rate::new("2500", "Inserts/s").unwrap().parse(&at(500)).unwrap().value, 5000.0);
        let e = Rate::new("1GiB", "Seconds").err().unwrap().to_string();
        assert!(e.contains("must be a byte rate") && e.contains("`Seconds`"), "{e}");
        assert!(Rate::new("lots", "MB/s").is_err());
        assert!(Rate::new("0MB", "MB/s").is_err());
    }
}
