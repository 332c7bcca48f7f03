//! What a sampler recorded: rows of raw counters and the trial marks.

use super::probe::Layout;
use std::time::Duration;

/// A trial's start or end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The system state (identifier) the trial ran in.
    pub state: usize,
    pub trial: u32,
    pub begin: bool,
}

/// What a recording holds when it stops.
#[derive(Debug)]
pub(crate) struct Recording {
    pub layout: Layout,
    pub devices: Vec<String>,
    pub interval: Duration,
    /// Rows of [`Layout::width`] counters, one after another.
    pub rows: Vec<u64>,
    /// Each mark and the row taken for it.
    pub marks: Vec<(Mark, usize)>,
    /// Samples taken later than a whole interval after they were due.
    pub late: u64,
    /// How many times the rows were thinned by half.
    pub thinned: u32,
    /// Rows a trial keeps on average (`--monitor-points`): the recording,
    /// and each state's workload intervals, thin past this × their trials.
    pub points: usize,
    pub unavailable: Vec<String>,
    /// CPUs the system's CPU shares are of.
    pub cpus: usize,
    /// The workloads' own intervals, one entry a trial that reported any.
    pub workload: Vec<Reports>,
}

/// What a workload reported during one trial.
#[derive(Debug)]
pub(crate) struct Reports {
    /// The system state (identifier) the trial ran in.
    pub state: usize,
    pub trial: u32,
    /// When the trial's reports count from: ms since the recording started.
    pub origin_ms: f64,
    /// Thinned to the recording's `points` rows.
    pub reported: crate::model::series::Reported,
}

impl Recording {
    pub(crate) fn row(&self, i: usize) -> &[u64] {
        let w = self.layout.width();
        &self.rows[i * w..(i + 1) * w]
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len() / self.layout.width()
    }
}
