//! The time series recorded around one test's trials for one identifier:
//! `monitor.json.gz` beside its trial logs, named by the result entry's
//! `monitor` field. Columnar: one time column, one column per metric.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a series file says it is.
pub const FORMAT: &str = "engine-monitor/1";

/// One test's series for one identifier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// `engine-monitor/1`.
    pub format: String,
    /// The sampling interval asked for, milliseconds.
    pub interval_ms: u64,
    /// When each sample was taken: milliseconds since the test's recording
    /// started. A value is the rate or level over the time since the
    /// sample before it.
    pub t_ms: Vec<f64>,
    pub metrics: Vec<Metric>,
    /// The measured trials, in run order.
    pub trials: Vec<TrialSpan>,
    /// What this machine does not expose (no PSI, no cpufreq …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<String>,
    /// Samples taken more than an interval late: the sampler could not keep up.
    #[serde(default)]
    pub late: u64,
    /// How many times the samples were thinned by half to stay bounded.
    #[serde(default)]
    pub thinned: u32,
}

/// One metric's column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    /// `util`, `read_mb_s`, `cpu_iowait` … (README, "Monitors").
    pub name: String,
    /// The device (`vda`, `loop3`), or `system`.
    pub source: String,
    /// `%`, `MB/s`, `1/s`, `ms`, `MiB`, `MHz`, `°C`, `requests`.
    pub unit: String,
    /// One value per sample; null where it cannot be known (the first
    /// sample of a trial, a counter that went backwards, no I/O to time).
    pub values: Vec<Option<f64>>,
}

impl Metric {
    /// `source:name` (`vda:util`), as `--metric` takes it.
    pub fn key(&self) -> String {
        format!("{}:{}", self.source, self.name)
    }
}

/// A measured trial's place in the series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrialSpan {
    pub trial: u32,
    pub start_ms: f64,
    pub end_ms: f64,
    /// The index of its first sample (its start) in `t_ms`; its samples run
    /// to the next trial's first.
    pub first: usize,
    /// How many trials the span holds: trials shorter than a quarter of
    /// the sampling interval share the samples around them.
    #[serde(default = "one")]
    pub trials: u32,
}

fn one() -> u32 {
    1
}

/// A test's series for one identifier, as reports take it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The test's identity (`results[].test`).
    pub test: String,
    pub identifier: String,
    pub series: Series,
}

impl Series {
    /// Each trial with the index range of its samples after its start.
    pub fn trial_samples(&self) -> impl Iterator<Item = (&TrialSpan, std::ops::Range<usize>)> {
        let n = self.t_ms.len();
        self.trials.iter().enumerate().map(move |(k, t)| {
            let end = self.trials.get(k + 1).map_or(n, |next| next.first).min(n);
            (t, (t.first + 1).min(end)..end)
        })
    }

    /// The metric `key` names: `source:name`, or a bare name (the first
    /// source's).
    pub fn metric(&self, key: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.key() == key).or_else(|| self.metrics.iter().find(|m| m.name == key))
    }
}
