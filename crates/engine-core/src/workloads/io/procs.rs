//! Jobs as processes. With more than one job each runs in a child process
//! in a session of its own, as fio's jobs do (fio forks each job, and each
//! calls `setsid`). Where the kernel schedules by session (autogroup, on in
//! Debian's kernels), threads of one process share one group's CPU against
//! the kernel threads that serve their I/O — a loop device's worker,
//! ksoftirqd: 4 psync jobs at QD1 on a loop device over memory did 65–75 k
//! IOPS as threads and 82–94 k as sessions of their own (both 84–89 k with
//! autogroup off), which was all of io's gap to fio there.

use super::job::{Job, Tally};
use super::wire::{Reader, Wire};
use crate::sys::forked;
use engine_sdk::{Error, ErrorKind};
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A page shared with the job processes, holding the flag they stop on.
pub(crate) struct SharedStop(forked::SharedFlag);

impl SharedStop {
    pub(crate) fn new() -> Result<SharedStop, Error> {
        forked::SharedFlag::new().map(SharedStop).map_err(|e| Error::io("map the I/O jobs' stop flag", &e))
    }

    pub(crate) fn flag(&self) -> &AtomicBool {
        self.0.flag()
    }
}

/// Runs `work` for `job` in a child process of its own session and returns
/// what it counted; the child dies with the thread that forked it.
pub(crate) fn run(job: &Job<'_>, name: &str, work: fn(&Job<'_>, &str) -> Result<Tally, Error>) -> Result<Tally, Error> {
    let bytes = forked::run(|mut w| {
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job, name)))
            .unwrap_or_else(|_| Err(Error::failed("the I/O job panicked")));
        let mut wire = Wire::default();
        encode(&mut wire, &out, job.count_from);
        w.write_all(&wire.0).is_ok()
    })
    .map_err(|e| match e {
        forked::ForkError::Os(what, e) => Error::io(&format!("{what} for an I/O job"), &e),
        forked::ForkError::Ended(how) => Error::failed(format!("the I/O job's process {how}")),
    })?;
    decode(&mut Reader(&bytes), job.count_from).ok_or_else(|| Error::failed("the I/O job's report is damaged"))?
}

const KINDS: [ErrorKind; 5] =
    [ErrorKind::Config, ErrorKind::Io, ErrorKind::Unsupported, ErrorKind::Cancelled, ErrorKind::Failed];

fn encode(w: &mut Wire, out: &Result<Tally, Error>, origin: Instant) {
    match out {
        Ok(t) => {
            w.u(0);
            t.encode(w, origin);
        }
        Err(e) => {
            w.u(1);
            w.u(KINDS.iter().position(|k| *k == e.kind).unwrap_or(4) as u64);
            w.bytes(e.key.as_deref().unwrap_or("").as_bytes());
            w.bytes(e.message.as_bytes());
        }
    }
}

fn decode(r: &mut Reader<'_>, origin: Instant) -> Option<Result<Tally, Error>> {
    match r.u()? {
        0 => Some(Ok(Tally::decode(r, origin)?)),
        1 => {
            let kind = *KINDS.get(usize::try_from(r.u()?).ok()?)?;
            let key = String::from_utf8_lossy(r.bytes()?).into_owned();
            let message = String::from_utf8_lossy(r.bytes()?).into_owned();
            Some(Err(Error { kind, key: (!key.is_empty()).then_some(key), message }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::io::slices::Slices;
    use std::time::Duration;

    fn with_job<T>(f: impl FnOnce(&Job<'_>) -> T) -> T {
        let file = tempfile::tempfile().unwrap();
        let stop = SharedStop::new().unwrap();
        let job = Job {
            file: &file,
            size: 4096,
            bs: 4096,
            split: &[(4096, 100)],
            depth: 1,
            sequential: false,
            read_pct: 100,
            fsync_every: 0,
            seed: 1,
            count_from: Instant::now(),
            until: None,
            stop: stop.flag(),
            every: Some(Duration::from_millis(100)),
        };
        f(&job)
    }

    /// Each job process is a session of its own (its own autogroup), and
    /// what it counted comes back whole: counts, latencies, intervals.
    #[test]
    fn a_job_runs_in_its_own_session_and_its_tally_comes_back_whole() {
        fn work(job: &Job<'_>, _: &str) -> Result<Tally, Error> {
            let mut t = Tally::new(job);
            let o = job.count_from;
            for (ms, lat) in [(10, 1_000), (150, 5_000), (260, 2_000_000)] {
                let now = o + Duration::from_millis(ms);
                t.done(job, false, 4096, now - Duration::from_nanos(lat), now);
            }
            t.fsyncs = forked::session();
            Ok(t.end(Duration::ZERO))
        }
        with_job(|job| {
            let local = work(job, "x").unwrap();
            let t = run(job, "x", work).unwrap();
            let (sid, pid) = (forked::session(), u64::from(std::process::id()));
            assert!(t.fsyncs != sid && t.fsyncs != pid && t.fsyncs > 0, "a session of its own: {}", t.fsyncs);
            assert_eq!((t.reads, t.read_bytes, t.last), (local.reads, local.read_bytes, local.last));
            assert_eq!((t.lat.n, t.lat.mean(), t.lat.quantile(0.99)), (3, local.lat.mean(), local.lat.quantile(0.99)));
            let slices = |s: &Option<Slices>| s.as_ref().map(|s| s.done.len());
            assert_eq!((slices(&t.slices), slices(&local.slices)), (Some(3), Some(3)));
        });
    }

    /// A job's error comes back as it was; a job process that dies says how.
    #[test]
    fn a_failed_or_killed_job_process_says_so() {
        fn fails(_: &Job<'_>, _: &str) -> Result<Tally, Error> {
            Err(Error::config("bs", "no good"))
        }
        fn killed(_: &Job<'_>, _: &str) -> Result<Tally, Error> {
            // SAFETY: kills this (the child) process.
            unsafe { libc::raise(libc::SIGKILL) };
            unreachable!()
        }
        with_job(|job| {
            assert_eq!(run(job, "x", fails).err(), Some(Error::config("bs", "no good")));
            let e = run(job, "x", killed).err().expect("an error");
            assert_eq!(e.to_string(), "the I/O job's process was killed by signal 9", "{e}");
        });
        assert!(decode(&mut Reader(&[7, 0, 0]), Instant::now()).is_none(), "a damaged report is refused");
        let mut w = Wire::default();
        encode(&mut w, &Err(Error::failed("x")), Instant::now());
        w.0.truncate(w.0.len() - 1);
        assert!(decode(&mut Reader(&w.0), Instant::now()).is_none(), "so is a short one");
    }
}
