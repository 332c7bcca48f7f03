//! The trial's wall time in seconds (timed tests such as SQLite insertions).

use super::{ParseError, Parser, RawOutput};

pub struct WallTime;

impl Parser for WallTime {
    fn parse(&self, out: &RawOutput<'_>) -> Result<f64, ParseError> {
        Ok(out.wall.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds() {
        let out = RawOutput { stdout: "", stderr: "", wall: Duration::from_millis(1500) };
        assert_eq!(WallTime.parse(&out).unwrap(), 1.5);
    }
}
