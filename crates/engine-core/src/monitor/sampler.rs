//! The sampler thread: a row of counters every interval, and one at a
//! trial's start and end when the trial is long enough to resolve — so such
//! a trial begins and ends on a sample of its own, while trials far shorter
//! than the interval (a micro-benchmark's thousand a second) never wake the
//! sampler, take no lock and allocate nothing: each mark is a clock read,
//! an atomic load and a push into a buffer the trial's thread owns, and
//! gets its row by serial number when the recording ends.

use super::probe::{Layout, Probes};
pub(crate) use super::recording::{Mark, Recording};
use crate::events::Live;
use crate::model::series::Reported;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Rows made room for when a recording starts (it grows past them).
const ROOM: usize = 8192;

/// Marks made room for on the trial's side (it grows past them).
const MARKS: usize = 4096;

enum Msg {
    /// A mark that wants a row of its own.
    Wake,
    Stop,
}

/// What the trial thread and the sampler share.
struct Shared {
    start: Instant,
    /// Marks that want a row of their own and do not have it yet, each with
    /// its place in the order of all marks.
    pending: Mutex<Vec<(Mark, u64)>>,
    /// When the last row was taken, ns since `start`.
    last_ns: AtomicU64,
    /// A trial is long enough for rows of its own from this long on.
    gap_ns: u64,
    /// The serial number the next row gets, counted before its reading
    /// starts: a trial ending now ends on it (read after the trial ended).
    next: AtomicU64,
    /// Rows whose reading is done, counted after it: a trial beginning now
    /// begins on row `done - 1` (read before the trial began).
    done: AtomicU64,
    /// Trials begun: the recording keeps `points` rows for each.
    begun: AtomicU64,
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

/// A mark, its place in the order of all marks, and the serial number of
/// its row.
type Placed = (Mark, u64, u64);

/// A running sampler; stopped by [`Recorder::finish`] or when dropped.
/// Used from the trials' thread only (its marks are that thread's own).
pub(crate) struct Recorder {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<Sampled>>,
    shared: Arc<Shared>,
    every: Duration,
    /// When the last trial began, ns since the recording started.
    begun_ns: Cell<u64>,
    /// Whether the last trial was long enough for rows of its own (a
    /// recording's first trial is taken to be), and when it ended: the next
    /// one's start asks for a row only after a long trial or a pause of a
    /// quarter interval (its steps, a cache drop), so back-to-back short
    /// trials never wake the sampler, while what ran between trials is never
    /// counted as the next one's.
    last_long: Cell<bool>,
    ended_ns: Cell<u64>,
    /// Marks made so far (each mark's place in the order).
    made: Cell<u64>,
    /// Marks of trials shorter than the sampling resolves.
    marks: RefCell<Vec<Placed>>,
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
            next: AtomicU64::new(0),
            done: AtomicU64::new(0),
            begun: AtomicU64::new(0),
            asked: AtomicU64::new(0),
            rowed: Mutex::new(0),
            row_taken: Condvar::new(),
        });
        // The first row is read before any trial can begin: a start always
        // has a row read before it.
        let mut s = Sampling::new(probes, interval, points, shared.clone());
        s.live = live;
        s.take();
        let thread = std::thread::Builder::new().name("engine-monitor".into()).spawn(move || {
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
            Sampled { rec: s.rec, serials: s.serials, own: s.own }
        })?;
        Ok(Recorder {
            tx,
            thread: Some(thread),
            shared,
            every: interval,
            begun_ns: Cell::new(0),
            last_long: Cell::new(true),
            ended_ns: Cell::new(0),
            made: Cell::new(0),
            marks: RefCell::new(Vec::with_capacity(MARKS)),
            workload: Vec::new(),
            points,
        })
    }

    /// Marks a trial's start or end. A trial long enough to resolve (a
    /// quarter of the interval) gets a row of its own at its end, and any
    /// trial at its start when the trial before it was long or ended that
    /// long ago, and the last row is older than that; the trial waits for
    /// such a row. Any other start
    /// belongs to the last row read before it and any other end to the
    /// first row read after it (the trial is shorter than the sampling
    /// resolves): a trial's slice holds all it did, never less.
    pub(crate) fn mark(&self, m: Mark) {
        let sh = &self.shared;
        let now = u64::try_from(sh.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let long = |since: u64| now.saturating_sub(since) >= sh.gap_ns;
        let order = self.made.get();
        self.made.set(order + 1);
        let wake = if m.begin {
            self.begun_ns.set(now);
            sh.begun.fetch_add(1, Ordering::Relaxed);
            (self.last_long.get() || long(self.ended_ns.get())) && long(sh.last_ns.load(Ordering::Relaxed))
        } else {
            let l = long(self.begun_ns.get());
            self.last_long.set(l);
            self.ended_ns.set(now);
            l
        };
        if !wake {
            let serial = if m.begin {
                sh.done.load(Ordering::Acquire).saturating_sub(1)
            } else {
                sh.next.load(Ordering::SeqCst)
            };
            self.marks.borrow_mut().push((m, order, serial));
            return;
        }
        let mut ticket = None;
        if let Ok(mut p) = sh.pending.lock() {
            p.push((m, order));
            ticket = Some(sh.asked.fetch_add(1, Ordering::Relaxed) + 1);
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

    /// Stops the sampler: what it recorded (`None` if its thread died),
    /// each mark on its row.
    pub(crate) fn finish(mut self) -> Option<Recording> {
        let _ = self.tx.send(Msg::Stop);
        let Sampled { mut rec, serials, own } = self.thread.take()?.join().ok()?;
        let mut all = self.marks.take();
        all.extend(own);
        all.sort_unstable_by_key(|&(_, order, _)| order);
        rec.marks = all.into_iter().map(|(m, _, serial)| (m, row_of(&serials, m.begin, serial))).collect();
        rec.workload = std::mem::take(&mut self.workload);
        Some(rec)
    }
}

/// The row a mark with row serial number `serial` lands on among the rows
/// kept (`serials`, ascending): its own when kept, else a start the last
/// row before it and an end the first after it.
fn row_of(serials: &[u64], begin: bool, serial: u64) -> usize {
    let last = serials.len().saturating_sub(1);
    if begin {
        serials.partition_point(|&s| s <= serial).saturating_sub(1)
    } else {
        serials.partition_point(|&s| s < serial).min(last)
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

/// What the sampler's thread hands back.
struct Sampled {
    rec: Recording,
    /// Each kept row's serial number.
    serials: Vec<u64>,
    /// The marks that had rows of their own.
    own: Vec<Placed>,
}

/// A recording under way.
struct Sampling {
    probes: Probes,
    row: Vec<u64>,
    shared: Arc<Shared>,
    rec: Recording,
    live: Option<Arc<Live>>,
    /// Marks taken from `pending`, reused (no allocation per sample).
    taken: Vec<(Mark, u64)>,
    /// Each kept row's serial number (thinned with the rows).
    serials: Vec<u64>,
    /// Marks given rows of their own, in the order of their rows: thinning
    /// keeps those rows.
    own: Vec<Placed>,
}

impl Sampling {
    fn new(probes: Probes, interval: Duration, points: usize, shared: Arc<Shared>) -> Sampling {
        let layout = probes.layout();
        let room = points.min(ROOM);
        let rec = Recording {
            layout,
            devices: probes.device_names(),
            interval,
            rows: Vec::with_capacity(layout.width() * room),
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
            taken: Vec::with_capacity(64),
            serials: Vec::with_capacity(room),
            own: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.rec.len()
    }

    /// One row now, with the marks that asked for a row of their own since
    /// the last placed on it (they were made before its reading starts).
    ///
    /// Past `points` rows per trial begun (at least one), every other row no
    /// such mark holds goes: counters are cumulative, so the rates over the
    /// longer intervals stay exact; only gauges such as Dirty are sampled
    /// more coarsely.
    fn take(&mut self) {
        let begun = usize::try_from(self.shared.begun.load(Ordering::Relaxed)).unwrap_or(usize::MAX);
        if self.len() >= self.rec.points.saturating_mul(begun.max(1)) {
            self.thin();
        }
        if let Ok(mut p) = self.shared.pending.lock() {
            std::mem::swap(&mut *p, &mut self.taken);
        }
        let serial = self.shared.next.fetch_add(1, Ordering::SeqCst);
        let own_rows = self.taken.len() as u64;
        self.own.extend(self.taken.drain(..).map(|(m, order)| (m, order, serial)));
        self.probes.read(&mut self.row);
        let now = u64::try_from(self.shared.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.row[Layout::TIME] = now;
        self.rec.rows.extend_from_slice(&self.row);
        self.serials.push(serial);
        self.shared.done.store(serial + 1, Ordering::Release);
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

    /// Drops every other row that no mark of its own holds, in place.
    fn thin(&mut self) {
        let w = self.rec.layout.width();
        let n = self.len();
        let mut keep = 0;
        let mut own = self.own.iter().map(|&(_, _, s)| s).peekable();
        for i in 0..n {
            let s = self.serials[i];
            while own.next_if(|&o| o < s).is_some() {}
            let marked = own.peek() == Some(&s);
            if i % 2 == 0 || marked || i == n - 1 {
                self.rec.rows.copy_within(i * w..(i + 1) * w, keep * w);
                self.serials[keep] = s;
                keep += 1;
            }
        }
        if keep < n {
            self.rec.rows.truncate(keep * w);
            self.serials.truncate(keep);
            self.rec.thinned += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Arc<Shared> {
        Arc::new(Shared {
            start: Instant::now(),
            pending: Mutex::new(Vec::new()),
            last_ns: AtomicU64::new(0),
            gap_ns: 0,
            next: AtomicU64::new(0),
            done: AtomicU64::new(0),
            begun: AtomicU64::new(0),
            asked: AtomicU64::new(0),
            rowed: Mutex::new(0),
            row_taken: Condvar::new(),
        })
    }

    /// Rows marks asked for survive thinning, and marks without rows of
    /// their own still land before (a start) or after (an end) them.
    #[test]
    fn marked_rows_survive_thinning() {
        let root = tempfile::tempdir().unwrap();
        let probes = Probes::open(root.path(), &[]);
        let points = 8192;
        let mut s = Sampling::new(probes, Duration::from_millis(1), points, shared());
        let mut times = Vec::new();
        for i in 0..points {
            if i % 1000 == 7 {
                s.shared.pending.lock().unwrap().push((Mark { state: 0, trial: i as u32, begin: true }, i as u64));
            }
            s.take();
            if i % 1000 == 7 {
                times.push(s.rec.row(s.len() - 1)[Layout::TIME]);
            }
        }
        s.take();
        assert_eq!(s.rec.thinned, 1);
        assert!(s.len() <= points / 2 + s.own.len() + 2, "{}", s.len());
        assert_eq!(s.serials.len(), s.len());
        let kept: Vec<u64> =
            s.own.iter().map(|&(_, _, serial)| s.rec.row(row_of(&s.serials, true, serial))[Layout::TIME]).collect();
        assert_eq!(times, kept, "each mark still points at its own sample");
        // A start on a row thinned away begins earlier, an end ends later.
        let odd = s.serials.iter().position(|&x| x % 2 == 1 && x > 100).unwrap();
        let gone = s.serials[odd - 1] + 1;
        assert!(!s.serials.contains(&gone) || gone == s.serials[odd], "row {gone} was thinned away");
        if !s.serials.contains(&gone) {
            assert!(s.serials[row_of(&s.serials, true, gone)] < gone);
            assert!(s.serials[row_of(&s.serials, false, gone)] > gone);
        }
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

    /// A short trial after a pause (its steps, a cache drop) starts on a row
    /// read after the pause, so what ran between trials is not its own.
    #[test]
    fn a_trial_after_a_pause_starts_on_a_row_read_after_it() {
        let root = tempfile::tempdir().unwrap();
        let r = Recorder::start(Probes::open(root.path(), &[]), Duration::from_millis(400), 8192, None).unwrap();
        let ns = |r: &Recorder| r.shared.start.elapsed().as_nanos() as u64;
        // A short trial: the next one's start would belong to an old row.
        r.mark(Mark { state: 0, trial: 1, begin: true });
        r.mark(Mark { state: 0, trial: 1, begin: false });
        std::thread::sleep(Duration::from_millis(150));
        let pause_end = ns(&r);
        r.mark(Mark { state: 0, trial: 2, begin: true });
        r.mark(Mark { state: 0, trial: 2, begin: false });
        let rec = r.finish().unwrap();
        let start = rec.marks[2];
        assert!(start.0.begin && start.0.trial == 2);
        assert!(rec.row(start.1)[Layout::TIME] >= pause_end, "trial 2 starts on a row read after the pause");
    }

    /// Short trials for many intervals: none asks the sampler for a row
    /// (the old rule woke it whenever the last row was a quarter interval
    /// old), yet each begins on a row read before it and ends on one read
    /// after it.
    #[test]
    fn short_trials_over_many_intervals_never_ask_and_are_framed_by_rows() {
        let root = tempfile::tempdir().unwrap();
        let r = Recorder::start(Probes::open(root.path(), &[]), Duration::from_millis(20), 8192, None).unwrap();
        let ns = |r: &Recorder| r.shared.start.elapsed().as_nanos() as u64;
        let mut spans = Vec::new();
        let until = Instant::now() + Duration::from_millis(300);
        let mut t = 0;
        // The first trial is taken to be long; a short one tells otherwise.
        r.mark(Mark { state: 0, trial: 0, begin: true });
        r.mark(Mark { state: 0, trial: 0, begin: false });
        let asked = r.shared.asked.load(Ordering::Relaxed);
        while Instant::now() < until {
            t += 1;
            let b = ns(&r);
            r.mark(Mark { state: 0, trial: t, begin: true });
            std::thread::sleep(Duration::from_micros(200));
            r.mark(Mark { state: 0, trial: t, begin: false });
            spans.push((b, ns(&r)));
            std::thread::sleep(Duration::from_micros(300));
        }
        assert_eq!(r.shared.asked.load(Ordering::Relaxed), asked, "no short trial asked for a row");
        let rec = r.finish().unwrap();
        assert!(rec.len() >= 10, "the sampler kept its interval: {} rows", rec.len());
        let marks = &rec.marks[2..];
        assert_eq!(marks.len(), spans.len() * 2);
        let mut inside = 0;
        for (pair, (b, e)) in marks.chunks(2).zip(&spans) {
            let (rb, re) = (rec.row(pair[0].1)[Layout::TIME], rec.row(pair[1].1)[Layout::TIME]);
            assert!(rb <= *b && re >= *e, "trial {:?}: rows at {rb} and {re} ns, trial {b}..{e}", pair[0].0);
            inside += usize::from(pair[1].1 > pair[0].1);
        }
        assert_eq!(inside, spans.len(), "every short trial spans at least one interval");
    }
}
