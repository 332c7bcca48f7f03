//! System monitors around every trial: a sampler thread reads the devices
//! under test (`/sys/class/block/*/stat`) and the system (`/proc/stat`,
//! `/proc/meminfo`, `/proc/pressure/*`, cpufreq, hwmon) every interval and
//! at each trial's start and end; each state's trials become one
//! [`Series`](crate::model::series::Series) (README, "Monitors").

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

/// A sampler of `devices` and the system every `interval`, telling `live`
/// the first device's line; `None` when its thread cannot start (the test
/// runs unmonitored).
pub(crate) fn start(devices: &[String], interval: Duration, live: Option<Arc<Live>>) -> Option<Recorder> {
    Recorder::start(probe::Probes::open(Path::new("/"), devices), interval, live).ok()
}
