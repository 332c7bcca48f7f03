//! The monitors' flags: whether the system is sampled around every
//! trial, how often, and how much of the series is kept.

use super::super::args::{self, Monitor};
use super::super::line::{Line, value_name};
use clap::Args;
use engine_model::units::exact_duration;
use engine_ops::benchmark::{self, Monitoring};
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct MonitorArgs {
    /// Sample the devices under test and the system around every trial (`on`, the
    /// default, or config.toml's `monitor`) or not (`none`); `engine result monitor NAME` shows the series
    #[arg(long, value_enum, help_heading = "Monitors")]
    pub monitor: Option<args::Monitor>,
    /// How often the monitors sample, from 100ms to 10s (default: config.toml's
    /// `monitor-interval`, else 1s)
    #[arg(long, value_name = "DURATION", value_parser = args::monitor_interval, help_heading = "Monitors")]
    pub monitor_interval: Option<Duration>,
    /// Rows of the series a trial keeps on average, from 16 to 1000000 (default 8192):
    /// past that, every other row is dropped (counters' rates stay exact)
    #[arg(long, value_name = "N", value_parser = args::monitor_points, help_heading = "Monitors")]
    pub monitor_points: Option<usize>,
}

impl MonitorArgs {
    pub fn monitoring(&self) -> Monitoring {
        match self.monitor.unwrap_or(Monitor::On) {
            Monitor::On => Monitoring::On {
                every: self.monitor_interval,
                points: self.monitor_points.unwrap_or(benchmark::POINTS),
            },
            Monitor::None => Monitoring::Off,
        }
    }

    pub fn render(&self, out: &mut Line) {
        out.opt("--monitor", self.monitor.filter(|m| *m != Monitor::On).map(|m| value_name(&m)));
        out.opt("--monitor-interval", self.monitor_interval.map(exact_duration));
        out.opt("--monitor-points", self.monitor_points);
    }
}
