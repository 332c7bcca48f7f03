//! The sampler thread: a row of counters every interval, and one at each
//! trial's start and end as the trial thread marks them, so every trial's
//! slice begins and ends on a sample of its own.

use super::probe::{Layout, Probes};
pub(crate) use super::recording::{Mark, Recording};
use crate::events::Live;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Rows a recording keeps before it thins itself (every other unmarked row
/// goes: counters are cumulative, so the rates over the longer intervals
/// stay exact; only gauges such as Dirty are sampled more coarsely).
pub(crate) const MAX_ROWS: usize = 8192;

enum Msg {
    Mark(Mark),
    Stop,
}

/// A running sampler; stopped by [`Recorder::finish`] or when dropped.
pub(crate) struct Recorder {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<Recording>>,
}

impl Recorder {
    /// Starts sampling `probes` every `interval`; each interval's reading
    /// of the first device goes to `live`.
    pub(crate) fn start(probes: Probes, interval: Duration, live: Option<Arc<Live>>) -> std::io::Result<Recorder> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new().name("engine-monitor".into()).spawn(move || {
            let mut s = Sampling::new(probes, interval);
            s.live = live;
            s.take();
            let mut next = Instant::now() + interval;
            loop {
                match rx.recv_timeout(next.saturating_duration_since(Instant::now())) {
                    Ok(Msg::Mark(m)) => {
                        s.take();
                        let at = s.len() - 1;
                        s.rec.marks.push((m, at));
                    }
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
        Ok(Recorder { tx, thread: Some(thread) })
    }

    /// Marks a trial's start or end (a sample is taken for it at once).
    pub(crate) fn mark(&self, m: Mark) {
        // A stopped sampler records nothing more; the trial goes on.
        let _ = self.tx.send(Msg::Mark(m));
    }

    /// Stops the sampler: what it recorded (`None` if its thread died).
    pub(crate) fn finish(mut self) -> Option<Recording> {
        let _ = self.tx.send(Msg::Stop);
        self.thread.take()?.join().ok()
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
    start: Instant,
    rec: Recording,
    live: Option<Arc<Live>>,
}

impl Sampling {
    fn new(probes: Probes, interval: Duration) -> Sampling {
        let layout = probes.layout();
        let rec = Recording {
            layout,
            devices: probes.device_names(),
            interval,
            rows: Vec::with_capacity(layout.width() * MAX_ROWS),
            marks: Vec::new(),
            late: 0,
            thinned: 0,
            unavailable: probes.unavailable.clone(),
            cpus: probes.cpus,
        };
        Sampling { row: vec![0; layout.width()], probes, start: Instant::now(), rec, live: None }
    }

    fn len(&self) -> usize {
        self.rec.len()
    }

    /// One row now.
    fn take(&mut self) {
        if self.len() >= MAX_ROWS {
            self.thin();
        }
        self.probes.read(&mut self.row);
        self.row[Layout::TIME] = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.rec.rows.extend_from_slice(&self.row);
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
        let mut s = Sampling::new(probes, Duration::from_millis(1));
        for i in 0..MAX_ROWS {
            s.take();
            if i % 1000 == 7 {
                s.rec.marks.push((Mark { state: 0, trial: i as u32, begin: true }, i));
            }
        }
        let times: Vec<u64> = s.rec.marks.iter().map(|(_, r)| s.rec.row(*r)[Layout::TIME]).collect();
        s.take();
        assert_eq!(s.rec.thinned, 1);
        assert!(s.len() <= MAX_ROWS / 2 + s.rec.marks.len() + 2, "{}", s.len());
        let after: Vec<u64> = s.rec.marks.iter().map(|(_, r)| s.rec.row(*r)[Layout::TIME]).collect();
        assert_eq!(times, after, "each mark still points at its own sample");
        let t: Vec<u64> = (0..s.len()).map(|i| s.rec.row(i)[Layout::TIME]).collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "rows stay in time order");
    }

    #[test]
    fn a_recorder_samples_marks_and_stops() {
        let root = tempfile::tempdir().unwrap();
        let r = Recorder::start(Probes::open(root.path(), &[]), Duration::from_millis(5), None).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        r.mark(Mark { state: 1, trial: 1, begin: true });
        r.mark(Mark { state: 1, trial: 1, begin: false });
        let rec = r.finish().unwrap();
        assert!(rec.len() >= 4, "{}", rec.len());
        assert_eq!(rec.marks.len(), 2);
        assert!(rec.marks[0].1 < rec.marks[1].1, "{:?}", rec.marks);
    }
}
