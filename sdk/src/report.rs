//! What a trial returns: a value per result id, and text for its log.

/// One measured value for one result id of the profile (its unit and
/// proportion are the profile's).
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub result: String,
    pub value: f64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub measurements: Vec<Measurement>,
    /// Text for the trial's log (what was done, counts, details).
    pub log: String,
}

impl Report {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the value of result `result`.
    pub fn value(mut self, result: &str, value: f64) -> Self {
        self.measurements.push(Measurement { result: result.to_string(), value });
        self
    }

    /// Adds a line to the log.
    pub fn line(mut self, line: impl AsRef<str>) -> Self {
        self.log.push_str(line.as_ref());
        self.log.push('\n');
        self
    }

    pub fn get(&self, result: &str) -> Option<f64> {
        self.measurements.iter().find(|m| m.result == result).map(|m| m.value)
    }
}
