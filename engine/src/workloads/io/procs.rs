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
use engine_sdk::{Error, ErrorKind};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A page shared with the job processes, holding the flag they stop on.
pub(crate) struct SharedStop(NonNull<AtomicBool>);

// SAFETY: the page holds one atomic; it lives until the value is dropped.
unsafe impl Send for SharedStop {}
// SAFETY: as above: only atomic accesses go through it.
unsafe impl Sync for SharedStop {}

impl SharedStop {
    pub(crate) fn new() -> Result<SharedStop, Error> {
        // SAFETY: a fresh anonymous mapping, zeroed by the kernel (false).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::io("map the I/O jobs' stop flag", &std::io::Error::last_os_error()));
        }
        NonNull::new(p.cast()).map(SharedStop).ok_or_else(|| Error::failed("mmap returned null"))
    }

    pub(crate) fn flag(&self) -> &AtomicBool {
        // SAFETY: mapped, aligned (a page) and initialised (zero is false).
        unsafe { self.0.as_ref() }
    }
}

impl Drop for SharedStop {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer borrowed.
        unsafe { libc::munmap(self.0.as_ptr().cast(), 4096) };
    }
}

/// Runs `work` for `job` in a child process of its own session and returns
/// what it counted; the child dies with the thread that forked it.
pub(crate) fn run(job: &Job<'_>, name: &str, work: fn(&Job<'_>, &str) -> Result<Tally, Error>) -> Result<Tally, Error> {
    let mut fds = [0; 2];
    // SAFETY: a valid array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::io("make a pipe for an I/O job", &std::io::Error::last_os_error()));
    }
    // SAFETY: both just opened, owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child runs only the job — system calls, and allocations
    // that glibc's malloc allows after fork — and leaves with _exit.
    match unsafe { libc::fork() } {
        -1 => Err(Error::io("fork an I/O job", &std::io::Error::last_os_error())),
        0 => {
            drop(r);
            child(job, name, work, w, parent)
        }
        pid => {
            drop(w);
            collect(pid, r, job.count_from)
        }
    }
}

fn child(job: &Job<'_>, name: &str, work: fn(&Job<'_>, &str) -> Result<Tally, Error>, w: OwnedFd, parent: i32) -> ! {
    // SAFETY: plain system calls on this process.
    unsafe {
        libc::setsid();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job, name)))
        .unwrap_or_else(|_| Err(Error::failed("the I/O job panicked")));
    let mut wire = Wire::default();
    encode(&mut wire, &out, job.count_from);
    let ok = File::from(w).write_all(&wire.0).is_ok();
    // SAFETY: leaves without running the parent's destructors or atexit.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

fn collect(pid: i32, r: OwnedFd, origin: Instant) -> Result<Tally, Error> {
    let mut bytes = Vec::new();
    let read = File::from(r).read_to_end(&mut bytes);
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let got = unsafe { libc::waitpid(pid, &mut status, 0) };
        if got == pid || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    read.map_err(|e| Error::io("read an I/O job's report", &e))?;
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let how = if libc::WIFSIGNALED(status) {
            format!("was killed by signal {}", libc::WTERMSIG(status))
        } else {
            format!("exited {}", libc::WEXITSTATUS(status))
        };
        return Err(Error::failed(format!("the I/O job's process {how}")));
    }
    decode(&mut Reader(&bytes), origin).ok_or_else(|| Error::failed("the I/O job's report is damaged"))?
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
            // SAFETY: getsid(0) asks about this process.
            t.fsyncs = unsafe { libc::getsid(0) } as u64;
            Ok(t.end(Duration::ZERO))
        }
        with_job(|job| {
            let local = work(job, "x").unwrap();
            let t = run(job, "x", work).unwrap();
            // SAFETY: as above.
            let (sid, pid) = unsafe { (libc::getsid(0) as u64, libc::getpid() as u64) };
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
