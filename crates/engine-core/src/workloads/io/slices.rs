//! The I/O workload's own intervals, as fio's `write_bw_log`/`write_iops_log`/
//! `write_lat_log` with `log_avg_msec`: each job counts its completions per
//! interval of the monitors' length from the start of counting (no thread
//! is shared while it runs), and the intervals of all jobs are summed after.

use super::hist::Histogram;
use engine_sdk::{Context, Figure};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One closed interval of one job.
#[derive(Clone)]
pub(crate) struct Slice {
    index: u32,
    /// When it ended: the interval's boundary, or the job's last completion.
    end: Instant,
    /// Reads, writes, bytes read, bytes written in it.
    counts: [u64; 4],
    lat: Histogram,
}

/// A job's intervals under way.
#[derive(Clone)]
pub(crate) struct Slices {
    origin: Instant,
    every: Duration,
    index: u32,
    next: Instant,
    /// The job's totals when the current interval began.
    at_start: [u64; 4],
    lat: Histogram,
    pub(crate) done: Vec<Slice>,
}

impl Slices {
    pub(crate) fn new(origin: Instant, every: Duration) -> Slices {
        let every = every.max(Duration::from_millis(1));
        Slices {
            origin,
            every,
            index: 0,
            next: origin + every,
            at_start: [0; 4],
            lat: Histogram::default(),
            done: Vec::new(),
        }
    }

    /// Before a completion at `now` is counted: closes the interval when
    /// `now` is past its end (`totals` are the job's so far).
    #[inline]
    pub(crate) fn roll(&mut self, now: Instant, totals: [u64; 4]) {
        if now >= self.next {
            self.close(self.next, totals);
            self.index = u32::try_from(now.duration_since(self.origin).as_nanos() / self.every.as_nanos().max(1))
                .unwrap_or(u32::MAX);
            self.next = self.origin + self.every * self.index.saturating_add(1);
        }
    }

    #[inline]
    pub(crate) fn latency(&mut self, ns: u64) {
        self.lat.record(ns);
    }

    /// Closes the last interval at the job's last completion.
    pub(crate) fn finish(&mut self, last: Option<Instant>, totals: [u64; 4]) {
        if let Some(end) = last.filter(|l| *l > self.origin + self.every * self.index) {
            self.close(end.min(self.next), totals);
        }
    }

    /// For a job process's report: its closed intervals (all that
    /// [`report`] reads, once [`Slices::finish`] has run).
    pub(crate) fn encode(&self, w: &mut super::wire::Wire, origin: Instant) {
        w.u(self.every.as_nanos() as u64);
        w.u(self.done.len() as u64);
        for s in &self.done {
            w.u(u64::from(s.index));
            w.at(s.end, origin);
            s.counts.iter().for_each(|c| w.u(*c));
            s.lat.encode(w);
        }
    }

    pub(crate) fn decode(r: &mut super::wire::Reader<'_>, origin: Instant) -> Option<Slices> {
        let mut s = Slices::new(origin, Duration::from_nanos(r.u()?));
        for _ in 0..r.u()? {
            let index = u32::try_from(r.u()?).ok()?;
            let end = r.at(origin)?;
            let counts = [r.u()?, r.u()?, r.u()?, r.u()?];
            s.done.push(Slice { index, end, counts, lat: Histogram::decode(r)? });
        }
        Some(s)
    }

    fn close(&mut self, end: Instant, totals: [u64; 4]) {
        let counts = std::array::from_fn(|k| totals[k] - self.at_start[k]);
        if counts[0] + counts[1] > 0 {
            self.done.push(Slice { index: self.index, end, counts, lat: std::mem::take(&mut self.lat) });
        }
        self.at_start = totals;
    }
}

/// Reports every job's intervals, summed per interval, to `cx`: IOPS,
/// MB/s each way the job moves data, and latency mean, p50 and p99 in µs.
pub(crate) fn report(cx: &dyn Context, origin: Instant, jobs: Vec<Slices>, reads: bool, writes: bool) {
    let mut by: BTreeMap<u32, Slice> = BTreeMap::new();
    let every = jobs.first().map(|j| j.every);
    for s in jobs.into_iter().flat_map(|j| j.done) {
        match by.get_mut(&s.index) {
            Some(sum) => {
                sum.end = sum.end.max(s.end);
                (0..4).for_each(|k| sum.counts[k] += s.counts[k]);
                sum.lat.merge(&s.lat);
            }
            None => {
                by.insert(s.index, s);
            }
        }
    }
    let Some(every) = every else { return };
    // The context's clock at an instant.
    let (now, elapsed) = (Instant::now(), cx.elapsed());
    let at = |i: Instant| elapsed.saturating_sub(now.saturating_duration_since(i));
    for (index, s) in by {
        let begin = origin + every * index;
        let secs = s.end.saturating_duration_since(begin).as_secs_f64();
        if secs <= 0.0 {
            continue;
        }
        let us = |ns: f64| ns / 1000.0;
        let mut f = vec![Figure::new("iops", "1/s", (s.counts[0] + s.counts[1]) as f64 / secs)];
        if reads {
            f.push(Figure::new(crate::model::series::metric::READ_MB_S, "MB/s", s.counts[2] as f64 / secs / 1e6));
        }
        if writes {
            f.push(Figure::new(crate::model::series::metric::WRITE_MB_S, "MB/s", s.counts[3] as f64 / secs / 1e6));
        }
        f.push(Figure::new("lat_mean", "µs", us(s.lat.mean())));
        f.push(Figure::new("lat_p50", "µs", us(s.lat.quantile(0.5))));
        f.push(Figure::new("lat_p99", "µs", us(s.lat.quantile(0.99))));
        cx.interval(at(s.end), &f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Completions land in the interval they finished in; a job idle over
    /// an interval leaves it out; the last is cut at the last completion.
    #[test]
    fn completions_fall_in_their_intervals() {
        let o = Instant::now();
        let ms = |m: u64| o + Duration::from_millis(m);
        let mut s = Slices::new(o, Duration::from_millis(100));
        let mut totals = [0u64; 4];
        for t in [10, 20, 150, 350, 360] {
            s.roll(ms(t), totals);
            s.latency(1000);
            totals[0] += 1;
            totals[2] += 4096;
        }
        s.finish(Some(ms(360)), totals);
        let got: Vec<(u32, u64, Duration)> = s.done.iter().map(|x| (x.index, x.counts[0], x.end - o)).collect();
        assert_eq!(
            got,
            [
                (0, 2, Duration::from_millis(100)),
                (1, 1, Duration::from_millis(200)),
                (3, 2, Duration::from_millis(360))
            ]
        );
    }
}
