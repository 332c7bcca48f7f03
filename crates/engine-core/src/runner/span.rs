//! The runner's side of [`Span`]: a measured trial's monitor marks, device
//! counters and CPU time, taken when the executor says its workload begins
//! and ends — not around the cache drop, the scratch folder or the
//! profile's `pre_trial` and `post_trial` steps.

use super::executor::Span;
use crate::model::result::DeviceIo;
use crate::monitor::{Mark, Recorder};
use crate::sysinfo::diskstats::{Counters, Snapshot};
use std::cell::RefCell;
use std::time::Duration;

/// Counters and CPU time (user, system) at one edge of the span.
type Edge = (Option<Snapshot>, (Duration, Duration));

/// One trial's span; a warm-up's (no monitor, no counters) takes no figures.
pub(super) struct Measured<'a> {
    monitor: Option<&'a Recorder>,
    counters: Option<&'a Counters>,
    mark: (usize, u32),
    /// Taken once each: an executor that tells twice changes nothing.
    edges: RefCell<(Option<Edge>, Option<Edge>)>,
}

/// What a span measured.
#[derive(Debug, Default)]
pub(super) struct Figures {
    pub devices: Vec<DeviceIo>,
    pub user: Duration,
    pub system: Duration,
}

impl<'a> Measured<'a> {
    /// The span of measured trial `trial` of state `state` (`None`: a warm-up).
    pub(super) fn new(
        monitor: Option<&'a Recorder>,
        counters: Option<&'a Counters>,
        state: usize,
        trial: Option<u32>,
    ) -> Self {
        let measured = trial.is_some();
        Measured {
            monitor: monitor.filter(|_| measured),
            counters: counters.filter(|_| measured),
            mark: (state, trial.unwrap_or(0)),
            edges: RefCell::new((None, None)),
        }
    }

    fn edge(&self) -> Edge {
        (self.counters.and_then(|c| c.snapshot().ok()), crate::sys::process::cpu_with_children())
    }

    fn tell(&self, begin: bool) {
        if let Some(m) = self.monitor {
            m.mark(Mark { state: self.mark.0, trial: self.mark.1, begin });
        }
    }

    /// The figures between the edges (an executor that failed before its
    /// workload began has none; one that never said it ended ends now).
    pub(super) fn finish(self) -> Figures {
        self.end();
        let (Some((b, (u0, s0))), Some((a, (u1, s1)))) = self.edges.into_inner() else {
            return Figures::default();
        };
        let devices = match (self.counters, b, a) {
            (Some(c), Some(b), Some(a)) => c.between(&b, &a),
            _ => Vec::new(),
        };
        Figures { devices, user: u1.saturating_sub(u0), system: s1.saturating_sub(s0) }
    }
}

impl Span for Measured<'_> {
    fn begin(&self) {
        if self.edges.borrow().0.is_some() {
            return;
        }
        let edge = self.edge();
        self.edges.borrow_mut().0 = Some(edge);
        self.tell(true);
    }

    fn end(&self) {
        if self.edges.borrow().0.is_none() || self.edges.borrow().1.is_some() {
            return;
        }
        self.tell(false);
        let edge = self.edge();
        self.edges.borrow_mut().1 = Some(edge);
    }
}
