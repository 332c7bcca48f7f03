//! One job of the I/O workload (a thread; with several jobs, each a
//! process: `procs`): what it does and what it counted.

use super::hist::Histogram;
use super::slices::Slices;
use super::wire::{Reader, Wire};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What one job does.
pub struct Job<'a> {
    pub file: &'a File,
    /// Bytes of the file the job uses.
    pub size: u64,
    /// The largest block size (buffers are this big).
    pub bs: u64,
    /// Block sizes and their weights (percent); one entry `(bs, 100)` without a split.
    pub split: &'a [(u64, u32)],
    pub depth: u32,
    pub sequential: bool,
    /// Percentage of reads (100: reads only, 0: writes only).
    pub read_pct: u32,
    /// Sync the file after every N writes (0: never).
    pub fsync_every: u64,
    pub seed: u64,
    /// Completions before this are not counted (ramp time).
    pub count_from: Instant,
    /// Time-based: stop issuing at this instant. Size-based (`None`): stop
    /// once `size` bytes were issued.
    pub until: Option<Instant>,
    pub stop: &'a AtomicBool,
    /// Count completions per interval this long (the monitors'), if any.
    pub every: Option<Duration>,
}

/// What one job counted.
#[derive(Default, Clone)]
pub struct Tally {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub fsyncs: u64,
    pub lat: Histogram,
    /// Completion time of the last counted operation.
    pub last: Option<Instant>,
    /// CPU time of the job's thread (user + system) while it counted.
    pub cpu: Duration,
    /// The thread's CPU time at its first counted completion: the ramp's
    /// CPU is not the counted I/Os' (fio leaves it out too).
    pub cpu_from: Option<Duration>,
    /// Completions per interval, when asked for.
    pub slices: Option<Slices>,
}

impl Tally {
    pub(crate) fn new(job: &Job<'_>) -> Tally {
        Tally { slices: job.every.map(|e| Slices::new(job.count_from, e)), ..Tally::default() }
    }

    /// The job's end: its last interval closed, its CPU time taken.
    pub(crate) fn end(mut self, cpu0: Duration) -> Tally {
        let totals = [self.reads, self.writes, self.read_bytes, self.write_bytes];
        if let Some(s) = &mut self.slices {
            s.finish(self.last, totals);
        }
        self.cpu = thread_cpu().saturating_sub(self.cpu_from.unwrap_or(cpu0));
        self
    }

    pub(crate) fn merge(&mut self, o: &Tally) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.fsyncs += o.fsyncs;
        self.lat.merge(&o.lat);
        self.last = self.last.max(o.last);
        self.cpu += o.cpu;
    }

    /// For a job process's report: everything [`Tally::merge`] and the
    /// intervals use, instants as nanoseconds after `origin`.
    pub(crate) fn encode(&self, w: &mut Wire, origin: Instant) {
        for x in [self.reads, self.writes, self.read_bytes, self.write_bytes, self.fsyncs] {
            w.u(x);
        }
        w.u(self.cpu.as_nanos() as u64);
        w.u(u64::from(self.last.is_some()));
        w.at(self.last.unwrap_or(origin), origin);
        self.lat.encode(w);
        w.u(u64::from(self.slices.is_some()));
        if let Some(s) = &self.slices {
            s.encode(w, origin);
        }
    }

    pub(crate) fn decode(r: &mut Reader<'_>, origin: Instant) -> Option<Tally> {
        let mut n = [0u64; 5];
        for x in &mut n {
            *x = r.u()?;
        }
        let cpu = Duration::from_nanos(r.u()?);
        let has_last = r.u()? == 1;
        let last = r.at(origin)?;
        let lat = Histogram::decode(r)?;
        let slices = if r.u()? == 1 { Some(Slices::decode(r, origin)?) } else { None };
        Some(Tally {
            reads: n[0],
            writes: n[1],
            read_bytes: n[2],
            write_bytes: n[3],
            fsyncs: n[4],
            lat,
            last: has_last.then_some(last),
            cpu,
            cpu_from: None,
            slices,
        })
    }

    /// Counts one completed operation.
    pub(crate) fn done(&mut self, job: &Job<'_>, write: bool, bytes: u64, started: Instant, now: Instant) {
        if now < job.count_from {
            return;
        }
        if self.cpu_from.is_none() {
            self.cpu_from = Some(thread_cpu());
        }
        let ns = (now - started).as_nanos() as u64;
        if let Some(s) = &mut self.slices {
            s.roll(now, [self.reads, self.writes, self.read_bytes, self.write_bytes]);
            s.latency(ns);
        }
        if write {
            self.writes += 1;
            self.write_bytes += bytes;
        } else {
            self.reads += 1;
            self.read_bytes += bytes;
        }
        self.lat.record(ns);
        self.last = Some(now);
    }
}

/// Where the next operations go, and whether they read or write.
pub(crate) struct Pattern {
    x: u64,
    next_seq: u64,
    size: u64,
    /// Offsets are multiples of the smallest block size.
    align: u64,
    split: Vec<(u64, u32)>,
    sequential: bool,
    read_pct: u32,
    issued_bytes: u64,
}

impl Pattern {
    pub(crate) fn new(job: &Job<'_>) -> Pattern {
        Pattern {
            x: job.seed | 1,
            next_seq: 0,
            size: job.size,
            align: job.split.iter().map(|s| s.0).min().unwrap_or(job.bs),
            split: job.split.to_vec(),
            sequential: job.sequential,
            read_pct: job.read_pct,
            issued_bytes: 0,
        }
    }

    fn rand(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        self.x
    }

    /// Whether another operation may be issued now.
    pub(crate) fn more(&self, job: &Job<'_>, now: Instant) -> bool {
        if job.stop.load(Ordering::Relaxed) {
            return false;
        }
        match job.until {
            Some(t) => now < t,
            None => self.issued_bytes < job.size,
        }
    }

    /// The next operation: (offset, length, write).
    pub(crate) fn next(&mut self) -> (u64, u64, bool) {
        let len = if self.split.len() == 1 {
            self.split[0].0
        } else {
            let mut pick = self.rand() % 100;
            let mut len = self.split[self.split.len() - 1].0;
            for &(bs, pct) in &self.split {
                if pick < pct as u64 {
                    len = bs;
                    break;
                }
                pick -= pct as u64;
            }
            len
        };
        self.issued_bytes += len;
        // Blocks of the smallest size that leave room for this operation.
        let slots = ((self.size - len) / self.align + 1).max(1);
        let off = if self.sequential {
            if self.next_seq + len > self.size {
                self.next_seq = 0;
            }
            let o = self.next_seq;
            self.next_seq += len;
            o
        } else {
            self.rand() % slots * self.align
        };
        let write = match self.read_pct {
            100 => false,
            0 => true,
            p => self.rand() % 100 >= p as u64,
        };
        (off, len, write)
    }
}

/// CPU time of the calling thread.
pub(crate) fn thread_cpu() -> Duration {
    let u = crate::sys::process::usage_now(libc::RUSAGE_THREAD);
    u.user + u.system
}
