//! The time series recorded around one test's trials for one identifier:
//! `monitor.json.gz` beside its trial logs, named by the result entry's
//! `monitor` field. Columnar: one time column, one column per metric.

use crate::model::facts::{Identifier, MetricId, Unit};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

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
    /// The workload's own figures per interval (io's IOPS and latency
    /// percentiles, fio's interval logs), when it reported any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Intervals>,
}

/// The source name of a workload's own figures.
pub const WORKLOAD: &str = "workload";

/// The monitor's metric names, as the series and the views spell them
/// (`result monitor --metric NAME`): one spelling, here.
pub mod metric {
    /// A device's iostat columns.
    pub const READS_S: &str = "reads_s";
    pub const WRITES_S: &str = "writes_s";
    pub const READ_MB_S: &str = "read_mb_s";
    pub const WRITE_MB_S: &str = "write_mb_s";
    pub const UTIL: &str = "util";
    pub const QUEUE_DEPTH: &str = "queue_depth";
    pub const AWAIT: &str = "await";
    /// The system's.
    pub const CPU_USER: &str = "cpu_user";
    pub const CPU_SYSTEM: &str = "cpu_system";
    pub const CPU_IOWAIT: &str = "cpu_iowait";
    pub const CPU_STEAL: &str = "cpu_steal";
    pub const CPU_IDLE: &str = "cpu_idle";
    pub const DIRTY: &str = "dirty";
    pub const WRITEBACK: &str = "writeback";
    pub const CACHED: &str = "cached";
    pub const PSI_IO_SOME: &str = "psi_io_some";
    pub const PSI_IO_FULL: &str = "psi_io_full";
    pub const PSI_CPU_SOME: &str = "psi_cpu_some";
    pub const PSI_CPU_FULL: &str = "psi_cpu_full";
    pub const PSI_MEMORY_SOME: &str = "psi_memory_some";
    pub const PSI_MEMORY_FULL: &str = "psi_memory_full";
}

/// A workload's own figures, one row per interval it reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Intervals {
    /// When each interval ended: milliseconds since the recording started
    /// (the clock of `t_ms` above). It began where the row before it ended,
    /// or at its trial's start.
    pub t_ms: Vec<f64>,
    /// The measured trial each interval belongs to.
    pub trial: Vec<u32>,
    /// One column per figure (source `workload`); null where an interval
    /// did not report it.
    pub metrics: Vec<Metric>,
    /// Rows merged pairwise to stay bounded, how many times.
    #[serde(default)]
    pub thinned: u32,
    /// Figures left out: their names were past the 32 columns a test's
    /// intervals hold.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One metric's column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    /// `util`, `read_mb_s`, `cpu_iowait` … (the book, "Monitors").
    pub name: MetricId,
    /// The device (`vda`, `loop3`), or `system`.
    pub source: String,
    /// `%`, `MB/s`, `1/s`, `ms`, `MiB`, `MHz`, `°C`, `requests`.
    pub unit: Unit,
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

/// A trial span, and the times and values of one metric inside it.
pub type TrialSlice<'a> = (&'a TrialSpan, &'a [f64], &'a [Option<f64>]);

/// A test's series for one identifier, as reports take it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The test's identity (`results[].test`).
    pub test: String,
    pub identifier: Identifier,
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
    /// source's; the workload's last).
    pub fn metric(&self, key: &str) -> Option<&Metric> {
        let all = || self.columns();
        all().find(|m| m.key() == key).or_else(|| all().find(|m| m.name == key))
    }

    /// Every metric: the system's and devices', then the workload's.
    pub fn columns(&self) -> impl Iterator<Item = &Metric> {
        self.metrics.iter().chain(self.workload.iter().flat_map(|w| &w.metrics))
    }

    /// Each trial span with the times and values of `m` inside it (a
    /// system metric's samples after the span's start; a workload figure's
    /// intervals of the span's trials).
    pub fn per_trial<'a>(&'a self, m: &'a Metric) -> Vec<TrialSlice<'a>> {
        match (&self.workload, m.source == WORKLOAD) {
            (Some(w), true) => self
                .trials
                .iter()
                .map(|span| {
                    let holds = |t: &u32| *t >= span.trial && *t < span.trial + span.trials.max(1);
                    let from = w.trial.iter().position(holds).unwrap_or(w.trial.len());
                    let to = from + w.trial[from..].iter().take_while(|t| holds(t)).count();
                    (span, &w.t_ms[from..to], &m.values[from.min(m.values.len())..to.min(m.values.len())])
                })
                .collect(),
            _ => self
                .trial_samples()
                .map(|(span, r)| {
                    (span, &self.t_ms[r.clone()], &m.values[r.start.min(m.values.len())..r.end.min(m.values.len())])
                })
                .collect(),
        }
    }
}

/// One of a workload's own figures: (name, unit, value).
pub type Figure = (String, String, f64);

/// Most distinct figure names a trial's reports (and a state's columns)
/// hold, and most reports a trial keeps before thinning: what is built from
/// a workload's reports stays linear in what it kept, whatever it sent
/// (distinct names per row would otherwise make a rows × names table).
pub const MAX_NAMES: usize = 32;
const MAX_REPORTS: usize = 100_000;

/// What a workload reported of its own intervals during one trial, checked
/// as it came (the names and units are the workload's: a plugin's are text
/// from outside).
#[derive(Debug, Clone)]
pub struct Reported {
    /// When the trial started, on the clock the reports' times count from.
    pub origin: Instant,
    /// The figures' (name, unit), at most [`MAX_NAMES`]; rows point into it.
    pub names: Vec<(String, String)>,
    /// (time since `origin`, (index in `names`, value) of each figure).
    pub rows: Vec<(Duration, Vec<(u8, f64)>)>,
    /// Figures refused (bad name, unit or value; past the limits).
    pub refused: u64,
}

impl Reported {
    pub fn new(origin: Instant) -> Reported {
        Reported { origin, names: Vec::new(), rows: Vec::new(), refused: 0 }
    }

    /// Takes one report of figures over the interval that ended `at` (no
    /// later than now: a time ahead of the clock is now).
    pub fn push<'a>(&mut self, at: Duration, figures: impl Iterator<Item = (&'a str, &'a str, f64)>) {
        let at = at.min(self.origin.elapsed());
        let mut kept: Vec<(u8, f64)> = Vec::new();
        for (name, unit, value) in figures {
            let ok = self.rows.len() < MAX_REPORTS
                && engine_sdk::valid_figure_name(name)
                && unit.chars().count() <= 16
                && value.is_finite();
            let column = if ok { self.column(name, unit) } else { None };
            match column.filter(|c| !kept.iter().any(|k| k.0 == *c)) {
                Some(c) => kept.push((c, value)),
                None => self.refused += 1,
            }
        }
        if !kept.is_empty() {
            self.rows.push((at, kept));
        }
    }

    /// The index of `name` in `names`, added when there is room.
    fn column(&mut self, name: &str, unit: &str) -> Option<u8> {
        if let Some(c) = self.names.iter().position(|n| n.0 == name) {
            return u8::try_from(c).ok();
        }
        if self.names.len() >= MAX_NAMES {
            return None;
        }
        self.names.push((name.to_string(), engine_sys::text::one_line(unit).into_owned()));
        u8::try_from(self.names.len() - 1).ok()
    }

    /// Each row's time and figures by name.
    pub fn figures(&self) -> impl Iterator<Item = (Duration, impl Iterator<Item = (&str, &str, f64)>)> {
        self.rows.iter().map(|(at, row)| {
            (*at, row.iter().map(|&(c, v)| (self.names[c as usize].0.as_str(), self.names[c as usize].1.as_str(), v)))
        })
    }

    /// Merges neighbouring rows pairwise (the later time, the mean of the
    /// figures both have, the one either has) until at most `most` are left.
    pub fn thin(&mut self, most: usize) -> u32 {
        let mut times = 0;
        while self.rows.len() > most.max(1) {
            let rows = std::mem::take(&mut self.rows);
            let mut it = rows.into_iter();
            while let Some((first, mut a)) = it.next() {
                let Some((at, b)) = it.next() else {
                    self.rows.push((first, a));
                    break;
                };
                for (c, v) in b {
                    match a.iter_mut().find(|x| x.0 == c) {
                        Some(x) => x.1 = x.1 / 2.0 + v / 2.0,
                        None => a.push((c, v)),
                    }
                }
                self.rows.push((at, a));
            }
            times += 1;
        }
        times
    }
}
