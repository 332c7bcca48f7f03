//! The sampler thread: a row of counters every interval, and one at a
//! trial's start and end when the last row is older than a quarter of the
//! interval — so a trial long enough to resolve begins and ends on a sample
//! of its own, while trials far shorter than the interval (a micro-benchmark's
//! thousand a second) cost a lock and a push each, never a wake-up.

use super::probe::{Layout, Probes};
pub(crate) use super::recording::{Mark, Recording};
use crate::events::Live;
use crate::model::series::Reported;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Rows made room for when a recording starts (it grows past them).
const ROOM: usize = 8192;

enum Msg {
    /// A mark that wants a row of its own.
    Wake,
    Stop,
}

/// What the trial thread and the sampler share.
struct Shared {
    start: Instant,
    /// Marks not yet given a row, and whether each asked for one of its own.
    pending: Mutex<Vec<(Mark, bool)>>,
    /// When the last row was taken, ns since `start`.
    last_ns: AtomicU64,
    /// A mark wants its own row when the last is older than this.
    gap_ns: u64,
    /// Marks that asked for a row of their own (counted under the
    /// `pending` lock, so in the order they were pushed), and how many of
    /// them have their row, with a signal at each row: such a mark waits
    /// for its row, so a trial starts (and the next waits) only once its
    /// boundary is read, however late the sampler's thread is scheduled.
    asked: AtomicU64,
    rowed: Mutex<u64>,
    row_taken: Condvar,
}

/// Longest a trial waits for its boundary row (a sampler that died or
/// stalls must not hold the run).
const MARK_WAIT: Duration = Duration::from_millis(100);

/// A running sampler; stopped by [`Recorder::finish`] or when dropped.
pub(crate) struct Recorder {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<Recording>>,
    shared: Arc<Shared>,
    every: Duration,
    /// When the last trial began, ns since the recording started: a trial
    /// long enough to resolve ends on a row of its own, whenever the last
    /// periodic row was taken.
    begun_ns: AtomicU64,
    /// The workloads' own intervals, handed over after each trial.
    workload: Vec<super::recording::Reports>,
    /// Rows a trial keeps (`--monitor-points`).
    points: usize,
}

impl Recorder {
    /// Starts sampling `probes` every `interval`; each interval's reading
    /// of the first device goes to `live`.
    pub(crate) fn start(
        probes: Probes,
        interval: Duration,
        points: usize,
        live: Option<Arc<Live>>,
    ) -> std::io::Result<Recorder> {
        let (tx, rx) = mpsc::channel();
        let gap_ns = u64::try_from(interval.as_nanos() / 4).unwrap_or(u64::MAX);
        let shared = Arc::new(Shared {
            start: Instant::now(),
            pending: Mutex::new(Vec::new()),
            last_ns: AtomicU64::new(0),
            gap_ns,
            asked: AtomicU64::new(0),
            rowed: Mutex::new(0),
            row_taken: Condvar::new(),
        });
        let mine = shared.clone();
        let thread = std::thread::Builder::new().name("engine-monitor".into()).spawn(move || {
            let mut s = Sampling::new(probes, interval, points, mine);
            s.live = live;
            s.take();
            let mut next = Instant::now() + interval;
            loop {
                match rx.recv_timeout(next.saturating_duration_since(Instant::now())) {
                    Ok(Msg::Wake) => s.take(),
                    Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                    Err(RecvTimeoutError::Timeout) => {
                        s.take();
                        s.tell();
                        next += interval;
                        let now = Instant::now();
                        if now > next {
                            s.rec.late += 1;
                            next = now + interval;
                        }
                    }
                }
            }
            s.take();
            s.rec
        })?;
        Ok(Recorder {
            tx,
            thread: Some(thread),
            shared,
            every: interval,
            begun_ns: AtomicU64::new(0),
            workload: Vec::new(),
            points,
        })
    }

    /// Marks a trial's start or end: a row is taken for it at once (and
    /// waited for) when the last is older than a quarter of the interval,
    /// and for the end of a trial at least that long; else a start belongs
    /// to the last row and an end to the next (the trial is shorter than
    /// the sampling resolves).
    pub(crate) fn mark(&self, m: Mark) {
        let sh = &self.shared;
        let now = u64::try_from(sh.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let long = |since: u64| now.saturating_sub(since) >= sh.gap_ns;
        let wake = if m.begin {
            self.begun_ns.store(now, Ordering::Relaxed);
            long(sh.last_ns.load(Ordering::Relaxed))
        } else {
            long(sh.last_ns.load(Ordering::Relaxed)) || long(self.begun_ns.load(Ordering::Relaxed))
        };
        let mut ticket = None;
        if let Ok(mut p) = sh.pending.lock() {
            p.push((m, wake));
            if wake {
                ticket = Some(sh.asked.fetch_add(1, Ordering::Relaxed) + 1);
            }
        }
        // A stopped sampler records nothing more; the trial goes on.
        if let Some(t) = ticket
            && self.tx.send(Msg::Wake).is_ok()
            && let Ok(g) = sh.rowed.lock()
        {
            let _ = sh.row_taken.wait_timeout_while(g, MARK_WAIT, |done| *done < t);
        }
    }

    /// How often it samples.
    pub(crate) fn interval(&self) -> Duration {
        self.every
    }

    /// The interval figures a workload reported during trial `trial` of
    /// state `state` (after the trial: nothing is shared while it runs).
    /// They are thinned to the recording's points a trial at once, so what
    /// is kept grows with the trials, not with what a workload sent.
    pub(crate) fn intervals(&mut self, state: usize, trial: u32, mut reported: Reported) {
        if reported.rows.is_empty() {
            return;
        }
        let origin_ms = reported.origin.saturating_duration_since(self.shared.start).as_secs_f64() * 1000.0;
        reported.thin(self.points);
        reported.rows.shrink_to_fit();
        self.workload.push(super::recording::Reports { state, trial, origin_ms, reported });
    }

    /// Stops the sampler: what it recorded (`None` if its thread died).
    pub(crate) fn finish(mut self) -> Option<Recording> {
        let _ = self.tx.send(Msg::Stop);
        let mut rec = self.thread.take()?.join().ok()?;
        rec.workload = std::mem::take(&mut self.workload);
        Some(rec)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = self.tx.send(Msg::Stop);
            let _ = t.join();
        }
    }
}

/// A recording under way.
struct Sampling {
    probes: Probes,
    row: Vec<u64>,
    shared: Arc<Shared>,
    rec: Recording,
    live: Option<Arc<Live>>,
    /// Marks taken from `pending`, reused (no allocation per sample).
    marks: Vec<(Mark, bool)>,
    /// Trials begun so far: the recording keeps `points` rows for each.
    begun: usize,
}

impl Sampling {
    fn new(probes: Probes, interval: Duration, points: usize, shared: Arc<Shared>) -> Sampling {
        let layout = probes.layout();
        let rec = Recording {
            layout,
            devices: probes.device_names(),
            interval,
            rows: Vec::with_capacity(layout.width() * points.min(ROOM)),
            marks: Vec::new(),
            late: 0,
            thinned: 0,
            points,
            unavailable: probes.unavailable.clone(),
            cpus: probes.cpus,
            workload: Vec::new(),
        };
        Sampling {
            row: vec![0; layout.width()],
            probes,
            shared,
            rec,
            live: None,
            marks: Vec::with_capacity(64),
            begun: 0,
        }
    }

    fn len(&self) -> usize {
        self.rec.len()
    }

    /// One row now, and the marks made since the last row placed on it or
    /// on the last (see below).
    ///
    /// Past `points` rows per trial begun (at least one), every other row no
    /// mark holds goes: counters are cumulative, so the rates over the
    /// longer intervals stay exact; only gauges such as Dirty are sampled
    /// more coarsely.
    fn take(&mut self) {
        if self.len() >= self.rec.points.saturating_mul(self.begun.max(1)) {
            self.thin();
        }
        if let Ok(mut p) = self.shared.pending.lock() {
            std::mem::swap(&mut *p, &mut self.marks);
        }
        // The row taken now, and the one before. A mark with a row of its
        // own gets this one; one without, a start the row before it (taken
        // before the trial began) and an end this one (taken after it
        // ended): a trial's slice holds all it did, never less.
        let (this, last) = (self.len(), self.len().saturating_sub(1));
        let own_rows = self.marks.iter().filter(|m| m.1).count() as u64;
        self.begun += self.marks.iter().filter(|m| m.0.begin).count();
        for (m, own) in self.marks.drain(..) {
            self.rec.marks.push((m, if own || !m.begin { this } else { last }));
        }
        self.probes.read(&mut self.row);
        let now = u64::try_from(self.shared.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.row[Layout::TIME] = now;
        self.rec.rows.extend_from_slice(&self.row);
        self.shared.last_ns.store(now, Ordering::Relaxed);
        if own_rows > 0 {
            if let Ok(mut g) = self.shared.rowed.lock() {
                *g += own_rows;
            }
            self.shared.row_taken.notify_all();
        }
    }

    /// The first device over the last interval, to the live line.
    fn tell(&self) {
        let (Some(live), n) = (&self.live, self.len()) else { return };
        if n < 2 || self.rec.devices.is_empty() {
            return;
        }
        if let Some(r) = super::derive::live(self.rec.row(n - 2), self.rec.row(n - 1), self.rec.layout.device(0)) {
            live.set(r);
        }
    }

    /// Drops every other row that no mark holds, in place.
    fn thin(&mut self) {
        let w = self.rec.layout.width();
        let n = self.len();
        let mut keep = 0;
        let mut marks = self.rec.marks.iter_mut().peekable();
        for i in 0..n {
            let marked = marks.peek().is_some_and(|(_, r)| *r == i);
            if i % 2 == 0 || marked || i == n - 1 {
                self.rec.rows.copy_within(i * w..(i + 1) * w, keep * w);
                while let Some((_, r)) = marks.next_if(|(_, r)| *r == i) {
                    *r = keep;
                }
                keep += 1;
            }
        }
        if keep < n {
            self.rec.rows.truncate(keep * w);
            self.rec.thinned += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks get rows of their own, in order, and thinning keeps them.
    #[test]
    fn marked_rows_survive_thinning() {
        let root = tempfile::tempdir().unwrap();
        let probes = Probes::open(root.path(), &[]);
        let shared = Arc::new(Shared {
            start: Instant::now(),
            pending: Mutex::new(Vec::new()),
            last_ns: AtomicU64::new(0),
            gap_ns: 0,
            asked: AtomicU64::new(0),
            rowed: Mutex::new(0),
            row_taken: Condvar::new(),
        });
        let points = 8192;
        let mut s = Sampling::new(probes, Duration::from_millis(1), points, shared);
        for i in 0..points {
            s.take();
            if i % 1000 == 7 {
                s.rec.marks.push((Mark { state: 0, trial: i as u32, begin: true }, i));
            }
        }
        let times: Vec<u64> = s.rec.marks.iter().map(|(_, r)| s.rec.row(*r)[Layout::TIME]).collect();
        s.take();
        assert_eq!(s.rec.thinned, 1);
        assert!(s.len() <= points / 2 + s.rec.marks.len() + 2, "{}", s.len());
        let after: Vec<u64> = s.rec.marks.iter().map(|(_, r)| s.rec.row(*r)[Layout::TIME]).collect();
        assert_eq!(times, after, "each mark still points at its own sample");
        let t: Vec<u64> = (0..s.len()).map(|i| s.rec.row(i)[Layout::TIME]).collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "rows stay in time order");
    }

    /// A trial longer than a quarter of the interval gets rows of its own;
    /// a thousand trials far shorter wake the sampler for none of theirs.
    #[test]
    fn long_trials_get_their_own_rows_and_short_ones_wake_nothing() {
        let root = tempfile::tempdir().unwrap();
        let r = Recorder::start(Probes::open(root.path(), &[]), Duration::from_millis(400), 8192, None).unwrap();
        std::thread::sleep(Duration::from_millis(150));
        r.mark(Mark { state: 1, trial: 1, begin: true });
        std::thread::sleep(Duration::from_millis(150));
        r.mark(Mark { state: 1, trial: 1, begin: false });
        std::thread::sleep(Duration::from_millis(20));
        for t in 2..1002 {
            r.mark(Mark { state: 1, trial: t, begin: true });
            r.mark(Mark { state: 1, trial: t, begin: false });
        }
        let rec = r.finish().unwrap();
        assert_eq!(rec.marks.len(), 2002);
        let (b, e) = (rec.marks[0].1, rec.marks[1].1);
        assert!(b >= 1 && e > b, "the long trial's own rows: {:?}", &rec.marks[..2]);
        assert!(rec.len() <= e + 4, "the short trials took no rows of their own: {} rows", rec.len());
        // Each short trial starts on the row before it and ends on the next.
        for pair in rec.marks[2..].chunks(2) {
            assert!(pair[0].0.begin && !pair[1].0.begin && pair[0].1 < pair[1].1, "{pair:?}");
        }
    }
}
