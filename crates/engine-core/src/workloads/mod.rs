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

/// A workload's operations so far, counted by its threads (which cannot
/// see the context) and reported per interval by the thread that waits for
/// them ([`join_watching`]).
pub(crate) struct Ops {
    names: &'static [(&'static str, &'static str, f64)],
    counts: Vec<std::sync::atomic::AtomicU64>,
}

impl Ops {
    /// Counters for the figures `names` ((name, unit, divisor) of each
    /// rate, as [`engine_sdk::Rates`] takes them).
    pub(crate) fn new(names: &'static [(&'static str, &'static str, f64)]) -> Ops {
        Ops { names, counts: names.iter().map(|_| Default::default()).collect() }
    }

    /// `n` more operations of figure `k`.
    #[inline]
    pub(crate) fn add(&self, k: usize, n: u64) {
        self.counts[k].fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }

    fn totals(&self) -> Vec<u64> {
        self.counts.iter().map(|c| c.load(std::sync::atomic::Ordering::Relaxed)).collect()
    }
}

/// Waits for a workload's threads, passing the context's cancellation on to
/// them through `stop` (threads cannot see the context) and reporting the
/// rates of `ops` per interval; `what` names a thread in the error when one
/// panics.
pub(crate) fn join_watching<T>(
    cx: &dyn engine_sdk::Context,
    stop: &std::sync::atomic::AtomicBool,
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<T, Error>>>,
    what: &str,
    ops: Option<&Ops>,
) -> Vec<Result<T, Error>> {
    let mut rates = ops.map(|o| engine_sdk::Rates::new(cx, o.names));
    while !handles.iter().all(|h| h.is_finished()) {
        if cx.cancelled() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if let (Some(r), Some(o)) = (&mut rates, ops) {
            r.tick(cx, &o.totals());
        }
        // Rarely: on a 2-core machine a watcher waking every 5 ms took the
        // CPU from the I/O thread or the device's worker often enough to
        // show at queue depth 1. Ctrl-C is still seen within 50 ms.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if let (Some(r), Some(o)) = (&mut rates, ops) {
        r.finish(cx, &o.totals());
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
