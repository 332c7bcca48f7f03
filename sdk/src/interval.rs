//! A workload's own figures per interval (io's IOPS and latency
//! percentiles, files' files/s …), recorded by the engine beside its system
//! monitors, as fio's `write_bw_log`/`write_lat_log` with `log_avg_msec`.

use crate::Context;
use std::time::Duration;

/// One of a workload's own figures over an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure<'a> {
    /// A short key: letters, digits and `_` (`iops`, `mb_s`, `lat_p99`).
    pub name: &'a str,
    /// `1/s`, `MB/s`, `µs` …
    pub unit: &'a str,
    pub value: f64,
}

impl<'a> Figure<'a> {
    pub fn new(name: &'a str, unit: &'a str, value: f64) -> Self {
        Figure { name, unit, value }
    }
}

/// Whether `name` is a figure name the engine keeps: 1 to 40 ASCII letters,
/// digits and `_`. Anything else is dropped (and said so in the trial's log).
pub fn valid_name(name: &str) -> bool {
    (1..=40).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Per-interval rates of running totals, for a workload that counts its
/// operations or bytes: [`Rates::tick`] it often (each loop, or while it
/// waits for its threads); when an interval has passed it reports each
/// total's rate over it, divided by the total's divisor (`1e6` for MB/s of
/// a total in bytes). Does nothing when the engine records no intervals.
pub struct Rates {
    every: Option<Duration>,
    /// (name, unit, divisor) of each total, in the order `tick` takes them.
    names: &'static [(&'static str, &'static str, f64)],
    /// When the current interval started, and the totals then.
    since: Duration,
    last: Vec<u64>,
}

impl Rates {
    /// Starts the first interval now, at totals of zero.
    pub fn new(cx: &dyn Context, names: &'static [(&'static str, &'static str, f64)]) -> Rates {
        Rates { every: cx.interval_every(), names, since: cx.elapsed(), last: vec![0; names.len()] }
    }

    /// Reports the rates since the last report if an interval has passed.
    pub fn tick(&mut self, cx: &dyn Context, totals: &[u64]) {
        let Some(every) = self.every else { return };
        let now = cx.elapsed();
        if now >= self.since + every {
            self.report(cx, now, totals);
        }
    }

    /// Reports the last, partial interval, unless it is a sliver (under a
    /// tenth of an interval) in which no total moved: a loop that reported
    /// just before its last, empty step would otherwise end on a rate of 0
    /// that describes microseconds, not the workload.
    pub fn finish(&mut self, cx: &dyn Context, totals: &[u64]) {
        let Some(every) = self.every else { return };
        let now = cx.elapsed();
        let moved = totals.iter().zip(&self.last).any(|(t, l)| t != l);
        if now > self.since && (moved || now - self.since >= every / 10) {
            self.report(cx, now, totals);
        }
    }

    fn report(&mut self, cx: &dyn Context, now: Duration, totals: &[u64]) {
        let secs = (now - self.since).as_secs_f64();
        let figures: Vec<Figure> = self
            .names
            .iter()
            .zip(totals.iter().zip(&self.last))
            .map(|(&(name, unit, per), (t, l))| Figure { name, unit, value: t.saturating_sub(*l) as f64 / per / secs })
            .collect();
        cx.interval(now, &figures);
        self.last.clear();
        self.last.extend_from_slice(totals);
        self.since = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};
    use std::path::Path;

    struct Cx {
        now: Cell<Duration>,
        got: RefCell<Vec<(Duration, String, f64)>>,
    }
    impl Context for Cx {
        fn scratch_dir(&self) -> &Path {
            Path::new("/")
        }
        fn target_dir(&self) -> &Path {
            Path::new("/")
        }
        fn elapsed(&self) -> Duration {
            self.now.get()
        }
        fn cancelled(&self) -> bool {
            false
        }
        fn interval_every(&self) -> Option<Duration> {
            Some(Duration::from_secs(1))
        }
        fn interval(&self, at: Duration, figures: &[Figure]) {
            for f in figures {
                self.got.borrow_mut().push((at, f.name.to_string(), f.value));
            }
        }
    }

    #[test]
    fn rates_report_once_an_interval_has_passed_and_the_partial_last() {
        let cx = Cx { now: Cell::new(Duration::ZERO), got: RefCell::new(Vec::new()) };
        let mut r = Rates::new(&cx, &[("files_s", "1/s", 1.0)]);
        cx.now.set(Duration::from_millis(500));
        r.tick(&cx, &[10]);
        assert!(cx.got.borrow().is_empty(), "half an interval: nothing yet");
        cx.now.set(Duration::from_millis(1250));
        r.tick(&cx, &[25]);
        cx.now.set(Duration::from_millis(1500));
        r.finish(&cx, &[35]);
        let got = cx.got.borrow();
        assert_eq!(got[0], (Duration::from_millis(1250), "files_s".into(), 20.0));
        assert_eq!(got[1], (Duration::from_millis(1500), "files_s".into(), 40.0));
        drop(got);
        // An empty sliver after the last report says nothing; an empty
        // stretch of a tenth of an interval or more is a stall, reported.
        cx.now.set(Duration::from_millis(2500));
        r.tick(&cx, &[45]);
        cx.now.set(Duration::from_micros(2_500_040));
        r.finish(&cx, &[45]);
        assert_eq!(cx.got.borrow().len(), 3, "{:?}", cx.got.borrow());
        cx.now.set(Duration::from_millis(2700));
        r.finish(&cx, &[45]);
        assert_eq!(cx.got.borrow()[3], (Duration::from_millis(2700), "files_s".into(), 0.0));
        assert!(valid_name("lat_p99") && !valid_name("") && !valid_name("a b") && !valid_name(&"x".repeat(41)));
    }
}
