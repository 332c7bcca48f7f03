//! What a running trial can ask of the engine.

use crate::Error;
use std::path::Path;
use std::time::Duration;

/// The trial's surroundings. The engine implements it natively for built-in
/// workloads and across the sandbox for WASM plugins.
pub trait Context {
    /// The trial's scratch directory: the only place a workload writes.
    fn scratch_dir(&self) -> &Path;
    /// The directory the user pointed the run at (the device under test).
    fn target_dir(&self) -> &Path;
    /// Time since the trial started, from a monotonic clock.
    fn elapsed(&self) -> Duration;
    /// Whether the user asked to stop (Ctrl-C): return soon, with an error.
    fn cancelled(&self) -> bool;
    /// How far the trial is (0 to 1), with a short note; shown on a terminal.
    fn progress(&self, _fraction: f64, _note: &str) {}
    /// A line for the trial's log.
    fn log(&self, _line: &str) {}
    /// Flushes dirty pages and drops the page cache (needs root); an error
    /// says why it cannot (not root, or not offered to plugins).
    fn drop_caches(&self) -> Result<(), Error> {
        Err(Error::unsupported("dropping the page cache is not offered here"))
    }
}
