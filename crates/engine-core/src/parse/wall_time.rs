//! The trial's wall time in seconds (timed tests such as SQLite insertions).

use super::{ParseError, Parser, RawOutput, Reading};

pub(crate) struct WallTime;

impl Parser for WallTime {
    fn parse(&self, out: &RawOutput<'_>) -> Result<Reading, ParseError> {
        let value = out.wall.as_secs_f64();
        Ok(Reading { value, raw: format!("{value:.6} s of wall time") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds() {
        let out = RawOutput { stdout: "", stderr: "", wall: Duration::from_millis(1500) };
        assert_eq!(WallTime.parse(&out).unwrap().value, 1.5);
    }
}
