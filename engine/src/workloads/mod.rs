//! The workloads built into engine, each written against the contract in
//! `sdk/` (the same one WASM plugins implement), and the registry that names
//! them for `executor: {builtin: {workload: …}}`.

use engine_sdk::{Config, DynWorkload, Error, Workload};

/// One built-in workload.
pub struct Entry {
    pub name: &'static str,
    /// One line for `engine info` and `engine list`.
    pub summary: &'static str,
    /// Configuration keys it reads.
    pub keys: &'static [&'static str],
    /// Result ids it returns.
    pub results: &'static [&'static str],
    pub make: fn(&Config) -> Result<Box<dyn DynWorkload>, Error>,
}

const fn entry<W: Workload + 'static>(name: &'static str, summary: &'static str) -> Entry {
    Entry { name, summary, keys: W::KEYS, results: W::RESULTS, make: engine_sdk::make::<W> }
}

pub mod blog;
pub mod compile;
pub mod files;
pub mod io;
pub mod sqlite;
pub mod startup;

/// Every built-in workload.
pub static ALL: &[Entry] = &[
    entry::<blog::Blog>(
        "blog",
        "BlogBench-class: writers, rewriters, commenters and readers of blog files for a fixed time",
    ),
    entry::<compile::Compile>(
        "compile",
        "compilebench-class: create, compile, read, stat and delete kernel-like trees",
    ),
    entry::<files::Files>("files", "fs_mark-class: files of a size over directories and threads, fsync before close"),
    entry::<io::Io>("io", "fio-class block I/O: sequential or random, read, write or mixed, io_uring or psync"),
    entry::<sqlite::Sqlite>("sqlite", "timed SQLite inserts (linked in), each its own transaction"),
    entry::<startup::Startup>("startup-time", "cold start of an application-sized set of files under background I/O"),
];

/// Waits for a workload's threads, passing the context's cancellation on to
/// them through `stop` (threads cannot see the context); `what` names a
/// thread in the error when one panics.
pub(crate) fn join_watching<T>(
    cx: &dyn engine_sdk::Context,
    stop: &std::sync::atomic::AtomicBool,
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<T, Error>>>,
    what: &str,
) -> Vec<Result<T, Error>> {
    while !handles.iter().all(|h| h.is_finished()) {
        if cx.cancelled() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // Rarely: on a 2-core machine a watcher waking every 5 ms took the
        // CPU from the I/O thread or the device's worker often enough to
        // show at queue depth 1. Ctrl-C is still seen within 50 ms.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::failed(format!("{what} panicked"))))).collect()
}

/// The workload named `name`.
pub(crate) fn find(name: &str) -> Option<&'static Entry> {
    ALL.iter().find(|e| e.name == name)
}

/// Names of all built-in workloads.
pub(crate) fn names() -> Vec<&'static str> {
    ALL.iter().map(|e| e.name).collect()
}

/// A [`Context`](engine_sdk::Context) for unit tests of the workloads.
#[cfg(test)]
pub mod testing {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    pub(crate) struct Cx {
        pub dir: PathBuf,
        start: Instant,
    }

    impl Cx {
        pub(crate) fn new(dir: &Path) -> Self {
            Cx { dir: dir.to_path_buf(), start: Instant::now() }
        }
    }

    impl engine_sdk::Context for Cx {
        fn scratch_dir(&self) -> &Path {
            &self.dir
        }
        fn target_dir(&self) -> &Path {
            &self.dir
        }
        fn elapsed(&self) -> std::time::Duration {
            self.start.elapsed()
        }
        fn cancelled(&self) -> bool {
            false
        }
    }
}
