//! The space limit of a test that runs in engine's own process (a WASM
//! plugin, a built-in workload); the watchdog itself is `sys::space`.

use super::executor::{ExecError, TestEnv};
use crate::sys::safepath::Dir;
use crate::sys::space::{Watchdog, Watched};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a watchdog's trip means, for a failed test's message.
pub(crate) fn explain(trip: crate::sys::space::Trip, limit: u64, what: &str) -> String {
    crate::sys::space::explain(trip, limit, "test", what, crate::units::format_bytes_binary)
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
    fn held_deleted(&self, _: std::time::Instant) -> Option<u64> {
        // engine's own descriptors: as many as it opened for the plugin.
        Some(own_deleted(self.dev))
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
