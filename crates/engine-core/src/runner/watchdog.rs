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

use super::executor::{ExecError, TestEnv};
use crate::sys::safepath::Dir;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Why a watchdog stopped its test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trip {
    /// The test holds more than its limit (bytes or entries).
    Over,
    /// The file system is nearly full, the test holds less than its limit:
    /// something else filled it, or the test wrote where engine cannot see.
    CannotTell { lost: u64, held: u64 },
}

/// What the watchdog asks of the test it watches.
pub(crate) trait Watched: Send + 'static {
    /// Bytes of files the test's processes keep open or mapped after
    /// removing them.
    fn held_deleted(&self) -> u64;
    /// Stops the test at once.
    fn stop(&self);
}

/// A running watchdog; stops watching when dropped.
pub(crate) struct Watchdog {
    stop: Arc<AtomicU8>,
    trip: Arc<std::sync::Mutex<Option<Trip>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Watches `dirs` (the first on the file system that is read) against
    /// `limit` bytes and [`inode_limit`] entries.
    pub(crate) fn start(dirs: Vec<Dir>, limit: u64, watched: impl Watched) -> Option<Watchdog> {
        let stop = Arc::new(AtomicU8::new(0));
        let trip = Arc::new(std::sync::Mutex::new(None));
        let (s, t) = (stop.clone(), trip.clone());
        let thread = std::thread::Builder::new()
            .name("space-watchdog".into())
            .spawn(move || {
                if let Some(why) = watch(&dirs, limit, &watched, &s) {
                    *t.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
                    watched.stop();
                }
            })
            .ok()?;
        Some(Watchdog { stop, trip, thread: Some(thread) })
    }

    /// Why it stopped the test, if it did.
    pub(crate) fn tripped(&self) -> Option<Trip> {
        *self.trip.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
pub(crate) fn inode_limit(limit: u64) -> u64 {
    (limit / 4096).max(100_000)
}

/// What [`Trip`] means, for a failed test's message.
pub(crate) fn explain(trip: Trip, limit: u64, what: &str) -> String {
    let size = crate::units::format_bytes_binary;
    match trip {
        Trip::Over => format!(
            "more than {} written in the test's directories, or more than {} files in them ({what}; files it keeps open or mapped after removing them count)",
            size(limit),
            inode_limit(limit)
        ),
        Trip::CannotTell { lost, held } => format!(
            "the file system of the test's directory is nearly full: it lost {} while the test ran, more than the test's limit of {} ({what}), but the test's directories hold {}: something else is filling that file system, or the test wrote where engine cannot see; stopped rather than guessed",
            size(lost),
            size(limit),
            size(held)
        ),
    }
}

/// The file system's free bytes, free inodes and size in bytes.
fn free_of(d: &Dir) -> Option<(u64, u64, u64)> {
    use std::os::fd::AsRawFd;
    // SAFETY: zeroed statfs is a valid out-parameter; a valid descriptor.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstatfs(d.fd().as_raw_fd(), &mut st) } == 0).then(|| {
        let block = st.f_bsize as u64;
        (st.f_bfree as u64 * block, st.f_ffree as u64, st.f_blocks as u64 * block)
    })
}

/// Free space under which a file system counts as full: 1 % of it, at
/// least 64 MiB, at most a tenth of it (a small loop device).
fn nearly_full(size: u64) -> u64 {
    (size / 100).max(64 << 20).min(size / 10)
}

/// Watches until stopped; why it stopped the test, if it did. The base
/// never moves: when the file system lost more than the test may hold,
/// the test is measured, and measured again only once the file system
/// lost as much more as the test could still grow — so what it holds is
/// always known to be within its limit, whatever else writes there.
fn watch(dirs: &[Dir], limit: u64, watched: &impl Watched, stop: &AtomicU8) -> Option<Trip> {
    let first = dirs.first()?;
    let (base, base_inodes, size) = free_of(first)?;
    let inodes = inode_limit(limit);
    let (mut next, mut next_inodes) = (limit, inodes);
    while stop.load(Ordering::Relaxed) == 0 {
        std::thread::sleep(WATCH_EVERY);
        let (free, free_inodes, _) = free_of(first)?;
        let (lost, lost_inodes) = (base.saturating_sub(free), base_inodes.saturating_sub(free_inodes));
        // Full, and not as it was when the test began.
        let full = free < nearly_full(size) && lost > limit;
        if lost <= next && lost_inodes <= next_inodes && !full {
            continue;
        }
        // Deeper than the walk goes counts as over.
        let (mut bytes, mut entries, mut deeper) = (watched.held_deleted(), 0, false);
        for d in dirs {
            let u = d.usage_bounded();
            (bytes, entries, deeper) = (bytes + u.bytes, entries + u.entries, deeper || u.deeper);
        }
        if bytes > limit || entries > inodes || deeper {
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

/// The space a test that runs in engine's own process (a WASM plugin, a
/// built-in workload) may take when it declares none, and the least it
/// gets when it does (its `requirements.free_space` and a quarter).
const DEFAULT_SPACE: u64 = 1 << 30;
const SPACE_FLOOR: u64 = 64 << 20;
const SPACE_WHAT: &str = "the test's space limit: the profile's `requirements.free_space` and a quarter more, or 1 GiB when it declares none";

/// The space limit of a test that runs in engine's own process: watched,
/// and a flag its work checks (a plugin's epoch check, a workload's
/// `cancelled`) set when it is outgrown.
pub(crate) struct InProcess {
    limit: u64,
    stop: Arc<AtomicBool>,
    watchdog: Watchdog,
}

/// Such a test as its watchdog sees it: its files are engine's own (on
/// the test's file system), and it stops when its flag is set.
struct Flagged {
    stop: Arc<AtomicBool>,
    dev: u64,
}

impl Watched for Flagged {
    fn held_deleted(&self) -> u64 {
        own_deleted(self.dev)
    }
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl InProcess {
    /// Starts watching the test directory's file system against the
    /// profile's `free_space` (a size expression of the test's values).
    pub(crate) fn start(env: &TestEnv<'_>, free_space: Option<&str>) -> Result<Option<InProcess>, ExecError> {
        use std::os::unix::fs::MetadataExt;
        let limit = match free_space {
            Some(s) => {
                let bad = |e: &dyn std::fmt::Display| ExecError::Setup(format!("requirements.free_space: {e}"));
                let s = crate::model::template::render(s, |n| env.bindings.get(n).map(String::as_str), false)
                    .map_err(|e| bad(&e))?;
                let s = crate::units::parse_size_expr(&s).map_err(|e| bad(&e))?;
                (s + s / 4).max(SPACE_FLOOR)
            }
            None => DEFAULT_SPACE,
        };
        let dir = Dir::open(env.test_dir)
            .map_err(|source| ExecError::Io { what: format!("cannot open {}", env.test_dir.display()), source })?;
        let dev = std::fs::metadata(env.test_dir).map(|m| m.dev()).unwrap_or(0);
        let stop = Arc::new(AtomicBool::new(false));
        let watched = Flagged { stop: stop.clone(), dev };
        Ok(Watchdog::start(vec![dir], limit, watched).map(|watchdog| InProcess { limit, stop, watchdog }))
    }

    /// The flag the test's work checks.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Why the watchdog stopped the test, if it did.
    pub(crate) fn tripped(&self) -> Option<String> {
        self.watchdog.tripped().map(|t| explain(t, self.limit, SPACE_WHAT))
    }
}

/// The files on device `dev` this process (engine: a plugin's files are
/// engine's) holds open after they were removed: each counted once, bytes
/// allocated.
pub(crate) fn own_deleted(dev: u64) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    for fd in std::fs::read_dir("/proc/self/fd").into_iter().flatten().flatten() {
        let deleted = std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().ends_with(" (deleted)"));
        if let (true, Ok(m)) = (deleted, std::fs::metadata(fd.path()))
            && m.is_file()
            && m.dev() == dev
            && seen.insert(m.ino())
        {
            total += m.blocks() * 512;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    struct Flag(Arc<AtomicBool>);
    impl Watched for Flag {
        fn held_deleted(&self) -> u64 {
            0
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
        let root = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
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
        write(root.path().join("test/mine"), 8);
        let t0 = std::time::Instant::now();
        while dog.tripped().is_none() && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(dog.tripped(), Some(Trip::Over));
        assert!(stopped.load(Ordering::Relaxed), "the test was stopped");
        assert_eq!(nearly_full(100 << 30), 1 << 30);
        assert_eq!(nearly_full(200 << 20), 20 << 20);
    }
}
