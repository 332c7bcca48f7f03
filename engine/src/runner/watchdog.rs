//! The space a test may take, enforced by what its file system lost: the
//! free blocks and inodes of the test directory's file system are read
//! every 250 ms (one `fstatfs`); when they fell by more than the limit
//! since the test began, what the test holds is measured — its
//! directories, their entries, and the files it keeps open or mapped
//! after removing them (which no walk of names sees) — and the test is
//! stopped either way: over its limit, or, when it holds less, because
//! something filled the file system that engine cannot attribute (the
//! baseline is never moved to let a test through).
//!
//! Why `statfs` and not a project quota: a quota needs the file system
//! mounted with `prjquota` (ext4 also needs the feature at mkfs time),
//! which engine cannot assume of a user's target and must not change; the
//! free-space reading works on every file system and sees what a quota
//! would (unlinked-open files, hard links, depth, sparse tricks all show as
//! blocks the file system no longer has).

use crate::sys::safepath::Dir;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Why a watchdog stopped its test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trip {
    /// The test holds more than its limit (bytes or entries).
    Over,
    /// The file system lost more than the limit, the test holds less:
    /// something else wrote there, or the test did where engine cannot see.
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
            "the file system of the test's directory lost {} while it ran, more than the test's limit of {} ({what}), but the test's directories hold {}: something else is filling that file system, or the test wrote where engine cannot see; stopped rather than guessed",
            size(lost),
            size(limit),
            size(held)
        ),
    }
}

/// The file system's free bytes and free inodes.
fn free_of(d: &Dir) -> Option<(u64, u64)> {
    use std::os::fd::AsRawFd;
    // SAFETY: zeroed statfs is a valid out-parameter; a valid descriptor.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstatfs(d.fd().as_raw_fd(), &mut st) } == 0)
        .then(|| (st.f_bfree as u64 * st.f_bsize as u64, st.f_ffree as u64))
}

fn watch(dirs: &[Dir], limit: u64, watched: &impl Watched, stop: &AtomicU8) -> Option<Trip> {
    let first = dirs.first()?;
    let (base, base_inodes) = free_of(first)?;
    let inodes = inode_limit(limit);
    while stop.load(Ordering::Relaxed) == 0 {
        std::thread::sleep(WATCH_EVERY);
        let (free, free_inodes) = free_of(first)?;
        let lost = base.saturating_sub(free);
        if lost <= limit && base_inodes.saturating_sub(free_inodes) <= inodes {
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
        return Some(Trip::CannotTell { lost, held: bytes });
    }
    None
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

    /// Space lost on the file system that the watched directory does not
    /// hold: the test is stopped and the watchdog says it cannot tell.
    #[test]
    fn a_loss_the_test_does_not_hold_stops_it_too() {
        let root = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        std::fs::create_dir(root.path().join("test")).unwrap();
        let stopped = Arc::new(AtomicBool::new(false));
        let dog = Watchdog::start(vec![Dir::open(&root.path().join("test")).unwrap()], 1 << 20, Flag(stopped.clone()))
            .unwrap();
        // 32 MiB beside the test, on the same file system.
        std::fs::write(root.path().join("other"), vec![1u8; 32 << 20]).unwrap();
        std::fs::File::open(root.path().join("other")).unwrap().sync_all().unwrap();
        let t0 = std::time::Instant::now();
        while dog.tripped().is_none() && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let Some(Trip::CannotTell { lost, held }) = dog.tripped() else { panic!("{:?}", dog.tripped()) };
        assert!(lost >= 16 << 20 && held < 1 << 20, "lost {lost}, held {held}");
        assert!(stopped.load(Ordering::Relaxed), "the test was stopped");
    }
}
