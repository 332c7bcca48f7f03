//! System monitors around every trial: a sampler thread reads the devices
//! under test (`/sys/class/block/*/stat`) and the system (`/proc/stat`,
//! `/proc/meminfo`, `/proc/pressure/*`, cpufreq, hwmon) every interval and
//! at each trial's start and end; each state's trials become one
//! [`Series`](crate::model::series::Series) (the book, "Monitors").

pub(crate) mod bound;
pub(crate) mod derive;
pub(crate) mod own;
pub(crate) mod probe;
pub(crate) mod recording;
pub(crate) mod sampler;

use crate::events::Live;
pub(crate) use sampler::{Mark, Recorder};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The shortest and longest sampling interval.
pub const INTERVALS: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(10));

/// The default sampling interval.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// A sampling interval outside [`INTERVALS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "monitor_interval {} is not from {} to {}",
    humantime::format_duration(*.0),
    humantime::format_duration(INTERVALS.0),
    humantime::format_duration(INTERVALS.1)
)]
pub struct IntervalError(pub Duration);

/// `every` when it is within [`INTERVALS`], else why not.
pub fn check_interval(every: Duration) -> Result<Duration, IntervalError> {
    let (lo, hi) = INTERVALS;
    if every < lo || every > hi {
        return Err(IntervalError(every));
    }
    Ok(every)
}

/// The rows a trial keeps by default (`--monitor-points`), and the range
/// the flag takes.
pub const POINTS: usize = 8192;
pub const POINTS_RANGE: (usize, usize) = (16, 1_000_000);

/// Whether the monitors run, at what interval, and how many rows a trial
/// keeps before the recording thins itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Monitoring {
    /// `--monitor none`.
    Off,
    /// On, every `--monitor-interval` when given, else every the test's
    /// own (`trials.monitor_interval` of its profile, or its suite's), else
    /// every [`INTERVAL`]; at most `points` rows per trial on average.
    On { every: Option<Duration>, points: usize },
}

impl Default for Monitoring {
    fn default() -> Self {
        Monitoring::On { every: None, points: POINTS }
    }
}

impl Monitoring {
    /// The interval for a test whose profile or suite asks for `test`;
    /// `None` when off.
    pub fn interval(self, test: Option<Duration>) -> Option<Duration> {
        match self {
            Monitoring::Off => None,
            Monitoring::On { every, .. } => Some(every.or(test).unwrap_or(INTERVAL)),
        }
    }

    /// Rows kept per trial on average (a recording of T trials thins itself
    /// past `points × T`).
    pub fn points(self) -> usize {
        match self {
            Monitoring::Off => POINTS,
            Monitoring::On { points, .. } => points,
        }
    }
}

/// A sampler of `devices` and the system every `interval`, telling `live`
/// the first device's line; `None` when its thread cannot start (the test
/// runs unmonitored).
pub(crate) fn start(
    devices: &[String],
    interval: Duration,
    points: usize,
    live: Option<Arc<Live>>,
) -> Option<Recorder> {
    Recorder::start(probe::Probes::open(Path::new("/"), devices), interval, points, live).ok()
}
