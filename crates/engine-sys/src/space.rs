//! The space a test may take, enforced by what its file system lost: the
//! free blocks and inodes of the test directory's file system are read
//! every 250 ms (one `fstatfs`); when they fell by more than the limit
//! since the test began, what the test holds is measured — its
//! directories, their entries, and the files it keeps open or mapped
//! after removing them (which no walk of names sees). Over its limit, the
//! test is stopped. Within it, the test is measured again only once the
//! file system lost as much more as the test could still grow (so what it
//! holds is always known to be within its limit, whatever else writes
//! there; the base is never moved to let a test through); and when the
//! file system is nearly full and the test is not what filled it, the test
//! is stopped saying engine cannot tell.
//!
//! Why `statfs` and not a project quota: a quota needs the file system
//! mounted with `prjquota` (ext4 also needs the feature at mkfs time),
//! which engine cannot assume of a user's target and must not change; the
//! free-space reading works on every file system and sees what a quota
//! would (unlinked-open files, hard links, depth, sparse tricks all show as
//! blocks the file system no longer has).

use crate::safepath::Dir;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

pub const WATCH_EVERY: Duration = Duration::from_millis(250);
pub const WATCH_CLOSE: Duration = Duration::from_millis(10);
/// How long [`Watchdog::tripped`] waits for a measure under way.
const SETTLE: Duration = Duration::from_secs(10);

/// Why a watchdog stopped its test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trip {
    /// The test holds more than its limit (bytes or entries).
    Over,
    /// The file system is nearly full, the test holds less than its limit:
    /// something else filled it, or the test wrote where engine cannot see.
    CannotTell { lost: u64, held: u64 },
    /// The test's processes hold more open files than engine can look at
    /// within [`COUNT_WITHIN`] (a descriptor table filled to slow the count).
    Uncountable,
}

/// How long the count of what a test's processes hold open may take.
pub const COUNT_WITHIN: Duration = Duration::from_secs(1);

/// What the watchdog asks of the test it watches.
pub trait Watched: Send + 'static {
    /// Bytes of files the test's processes keep open or mapped after
    /// removing them; `None` when they could not be counted by `deadline`.
    fn held_deleted(&self, deadline: Instant) -> Option<u64>;
    /// Stops the test at once.
    fn stop(&self);
}

/// A running watchdog; stops watching when dropped.
pub struct Watchdog {
    stop: Arc<AtomicU8>,
    /// Set when it stopped the test before measuring (the file system
    /// nearly full): a trip is on its way.
    pending: Arc<std::sync::atomic::AtomicBool>,
    trip: Arc<std::sync::Mutex<Option<Trip>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Watches `dirs` (the first on the file system that is read) against
    /// `limit` bytes and [`inode_limit`] entries.
    pub fn start(dirs: Vec<Dir>, limit: u64, watched: impl Watched) -> Option<Watchdog> {
        Watchdog::start_every(dirs, limit, watched, WATCH_EVERY)
    }

    /// As [`Watchdog::start`], reading the file system every `every` even
    /// far from the limit (a build: many writers in parallel can fill a
    /// small disk's reserve within one 250 ms period).
    pub fn start_every(dirs: Vec<Dir>, limit: u64, watched: impl Watched, every: Duration) -> Option<Watchdog> {
        let stop = Arc::new(AtomicU8::new(0));
        let trip = Arc::new(std::sync::Mutex::new(None));
        let pending = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, t, p) = (stop.clone(), trip.clone(), pending.clone());
        let thread = std::thread::Builder::new()
            .name("space-watchdog".into())
            .spawn(move || {
                if let Some(why) = watch(&dirs, limit, &watched, &s, &p, every) {
                    *t.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
                    watched.stop();
                }
            })
            .ok()?;
        Some(Watchdog { stop, pending, trip, thread: Some(thread) })
    }

    /// Stops watching (waiting for a measure under way, which is bounded)
    /// and says why it stopped the test, if it did.
    pub fn finish(mut self) -> Option<Trip> {
        self.stop.store(1, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.tripped()
    }

    /// Why it stopped the test, if it did — waiting, when it stopped the
    /// test before measuring, for the measure that says why (bounded).
    pub fn tripped(&self) -> Option<Trip> {
        let asked = Instant::now();
        loop {
            let t = *self.trip.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if t.is_some() || !self.pending.load(Ordering::Relaxed) || asked.elapsed() > SETTLE {
                return t;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(1, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The entries a test's directories may hold for `limit` bytes of scratch:
/// one per 4 KiB, at least 100,000 (a kernel's source tree is 80,000).
pub fn inode_limit(limit: u64) -> u64 {
    (limit / 4096).max(100_000)
}

/// What [`Trip`] means, for a failed message: `who` is what was
/// stopped ("test", "build"), `what` the limit it had, `size` how a size
/// is written.
pub fn explain(trip: Trip, limit: u64, who: &str, what: &str, size: fn(u64) -> String) -> String {
    match trip {
        Trip::Over => format!(
            "more than {} written in the {who}'s directories, or more than {} files in them ({what}; files it keeps open or mapped after removing them count)",
            size(limit),
            inode_limit(limit)
        ),
        Trip::CannotTell { lost, held } => format!(
            "the file system of the {who}'s directory is nearly full: it lost {} while the {who} ran, more than the {who}'s limit of {} ({what}), but the {who}'s directories hold {}: something else is filling that file system, or the {who} wrote where engine cannot see; stopped rather than guessed",
            size(lost),
            size(limit),
            size(held)
        ),
        Trip::Uncountable => format!(
            "the {who}'s processes hold more open files than engine can count within {} s, so what it writes cannot be measured ({what})",
            COUNT_WITHIN.as_secs()
        ),
    }
}

/// The file system's free bytes (what users other than root may still
/// use: root's reserve counts as full), free inodes, size in bytes and
/// inodes.
pub fn free_of(d: &Dir) -> Option<(u64, u64, u64, u64)> {
    use std::os::fd::AsRawFd;
    // SAFETY: zeroed statfs is a valid out-parameter; a valid descriptor.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstatfs(d.fd().as_raw_fd(), &mut st) } == 0).then(|| {
        let block = st.f_bsize as u64;
        (st.f_bavail as u64 * block, st.f_ffree as u64, st.f_blocks as u64 * block, st.f_files as u64)
    })
}

/// Free inodes under which a file system counts as full: 1 % of them, at
/// least 1,000, at most a tenth (file systems that make inodes as needed
/// report none and never count as full).
pub fn inodes_nearly_full(total: u64) -> u64 {
    (total / 100).max(1000).min(total / 10)
}

/// Free space under which a file system counts as full: 1 % of it, at
/// least 64 MiB, at most a tenth of it (a small loop device).
pub fn nearly_full(size: u64) -> u64 {
    (size / 100).max(64 << 20).min(size / 10)
}

/// Watches until stopped; why it stopped the test, if it did. The base
/// never moves: when the file system lost more than the test may still
/// add to what its directories held at the start, the test is measured,
/// and measured again only once the file system lost as much more as the
/// test could still grow — so what it holds is always known to be within
/// its limit, whatever else writes there. Close to that point (at the
/// rate the file system is losing space) it is read every 10 ms, so a
/// fast writer is stopped near the limit, not a quarter-second past it.
fn watch(
    dirs: &[Dir],
    limit: u64,
    watched: &impl Watched,
    stop: &AtomicU8,
    pending: &std::sync::atomic::AtomicBool,
    period: Duration,
) -> Option<Trip> {
    let first = dirs.first()?;
    let (base, base_inodes, size, total_inodes) = free_of(first)?;
    let Measured::Held(held, held_entries) = measure(dirs, watched) else { return Some(Trip::Uncountable) };
    // Never more entries than the file system can give short of its reserve.
    let inode_room = base_inodes.saturating_sub(inodes_nearly_full(total_inodes));
    let inodes = inode_limit(limit).min(held_entries + inode_room);
    let (allowance, inode_allowance) = (limit.saturating_sub(held), inodes.saturating_sub(held_entries));
    let (mut next, mut next_inodes) = (allowance, inode_allowance);
    let (mut was, mut was_inodes, mut every) = (0u64, 0u64, period);
    while stop.load(Ordering::Relaxed) == 0 {
        std::thread::sleep(every);
        let (free, free_inodes, _, _) = free_of(first)?;
        let (lost, lost_inodes) = (base.saturating_sub(free), base_inodes.saturating_sub(free_inodes));
        // Full, and not as it was when the test began: stopped at once,
        // whatever the count below finds (it only says why).
        let full = (free < nearly_full(size) && lost > allowance)
            || (total_inodes > 0 && free_inodes < inodes_nearly_full(total_inodes) && lost_inodes > inode_allowance);
        if full {
            pending.store(true, Ordering::Relaxed);
            watched.stop();
        }
        // Within two normal periods of the next check at this rate: read
        // often until past it.
        let per = |now: u64, before: u64| {
            now.saturating_sub(before) * (2 * WATCH_EVERY.as_millis() as u64) / every.as_millis().max(1) as u64
        };
        let soon = next.saturating_sub(lost) <= per(lost, was)
            || next_inodes.saturating_sub(lost_inodes) <= per(lost_inodes, was_inodes)
            || free.saturating_sub(nearly_full(size)) <= per(lost, was);
        every = if soon { WATCH_CLOSE.min(period) } else { period };
        (was, was_inodes) = (lost, lost_inodes);
        if lost <= next && lost_inodes <= next_inodes && !full {
            continue;
        }
        let Measured::Held(bytes, entries) = measure(dirs, watched) else { return Some(Trip::Uncountable) };
        if bytes > limit || entries > inodes {
            return Some(Trip::Over);
        }
        // Something else is filling the file system: the run cannot go on
        // telling the test's growth from it.
        if full {
            return Some(Trip::CannotTell { lost, held: bytes });
        }
        (next, next_inodes) = (lost + (limit - bytes), lost_inodes + (inodes - entries));
    }
    None
}

enum Measured {
    /// Bytes and entries.
    Held(u64, u64),
    /// Its open files could not be counted in time.
    Uncountable,
}

/// What the test holds: bytes (its directories' and the removed files it
/// keeps open) and entries; deeper than the walk goes counts as over.
fn measure(dirs: &[Dir], watched: &impl Watched) -> Measured {
    let Some(mut bytes) = watched.held_deleted(Instant::now() + COUNT_WITHIN) else { return Measured::Uncountable };
    let mut entries = 0;
    for d in dirs {
        let u = d.usage_bounded();
        if u.deeper {
            return Measured::Held(u64::MAX, u64::MAX);
        }
        (bytes, entries) = (bytes.saturating_add(u.bytes), entries + u.entries);
    }
    Measured::Held(bytes, entries)
}

/// The inode of a namespace descriptor (what /proc/PID/ns/net links name).
pub(crate) fn ns_inode(fd: &std::os::fd::OwnedFd) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::File::from(fd.try_clone().ok()?).metadata().ok().map(|m| m.ino())
}

/// Pids of the processes in the network namespace `inode`: a process
/// whose first thread exited (its namespaces gone with it) is found by its
/// other threads'.
pub(crate) fn in_netns(inode: u64) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
    let want = format!("net:[{inode}]");
    let is = |link: std::path::PathBuf| std::fs::read_link(link).map(|l| l.to_string_lossy() == want);
    let threads = |pid: i32| {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|t| is(t.path().join("ns/net")).unwrap_or(false))
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|&pid| is(format!("/proc/{pid}/ns/net").into()).unwrap_or_else(|_| threads(pid)))
        .collect()
}

/// Bytes of files that processes in the network namespace `inode` hold
/// open after removing them (each file counted once).
fn held_deleted(inode: u64, dev: u64, deadline: Instant) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    for pid in in_netns(inode) {
        // Open descriptors, and mappings that keep a removed file alive
        // after its descriptor was closed.
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten();
        let maps = std::fs::read_dir(format!("/proc/{pid}/map_files")).into_iter().flatten();
        for fd in fds.chain(maps).flatten() {
            if Instant::now() > deadline {
                return None;
            }
            let deleted = std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().ends_with(" (deleted)"));
            // The /proc link reaches the open file itself, not a path.
            // Only what the watched file system holds: a memory file or a
            // removed /dev/shm file takes none of its space.
            if let (true, Ok(m)) = (deleted, std::fs::metadata(fd.path()))
                && m.is_file()
                && m.dev() == dev
                && seen.insert((m.dev(), m.ino()))
            {
                total += m.blocks() * 512;
            }
        }
    }
    Some(total)
}

/// A confined test or build, as its watchdog sees it: the processes in
/// its network namespace (each confined command joins its test's).
pub(crate) struct Netns {
    pub(crate) inode: u64,
    /// The watched file system's device.
    pub(crate) dev: u64,
}

impl Watched for Netns {
    fn held_deleted(&self, deadline: Instant) -> Option<u64> {
        held_deleted(self.inode, self.dev, deadline)
    }
    fn stop(&self) {
        kill_netns(self.inode);
    }
}

/// SIGKILL to every process in the network namespace `inode`.
pub(crate) fn kill_netns(inode: u64) {
    for pid in in_netns(inode) {
        // SAFETY: plain syscall.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    struct Flag(Arc<AtomicBool>);
    impl Watched for Flag {
        fn held_deleted(&self, _: Instant) -> Option<u64> {
            Some(0)
        }
        fn stop(&self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    /// Space the file system loses elsewhere does not stop the test (its
    /// directory is measured, and holds little); past its limit in its own
    /// directory, it is stopped as over.
    #[test]
    fn a_loss_elsewhere_is_measured_and_the_tests_own_stops_it() {
        // A file system of its own (a tmpfs): other tests removing trees in
        // /tmp give back space that would hide this test's 8 MiB.
        let shm = std::path::Path::new("/dev/shm");
        let root = tempfile::tempdir_in(if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() }).unwrap();
        std::fs::create_dir(root.path().join("test")).unwrap();
        let stopped = Arc::new(AtomicBool::new(false));
        let dog = Watchdog::start(vec![Dir::open(&root.path().join("test")).unwrap()], 4 << 20, Flag(stopped.clone()))
            .unwrap();
        let write = |p: std::path::PathBuf, mib: usize| {
            std::fs::write(&p, vec![1u8; mib << 20]).unwrap();
            std::fs::File::open(&p).unwrap().sync_all().unwrap();
        };
        write(root.path().join("other"), 32);
        std::thread::sleep(Duration::from_millis(800));
        assert_eq!(dog.tripped(), None, "32 MiB written beside the test stopped it");
        // 8 MiB at a time until stopped (at most 5 s): a watchdog thread the
        // machine started late took its base after the first of them.
        let t0 = std::time::Instant::now();
        let mut k = 0;
        while dog.tripped().is_none() && t0.elapsed() < Duration::from_secs(5) {
            if k < 4 {
                write(root.path().join(format!("test/mine{k}")), 8);
                k += 1;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        assert_eq!(dog.tripped(), Some(Trip::Over));
        assert!(stopped.load(Ordering::Relaxed), "the test was stopped");
        assert_eq!(nearly_full(100 << 30), 1 << 30);
        assert_eq!(nearly_full(200 << 20), 20 << 20);
    }
}
