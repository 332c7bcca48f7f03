//! What one plugin call may use: memory (a resource limiter that traps on
//! growth past the cap, so the failure names the cap) and wall-clock time
//! (epoch deadline, see `runtime::TICK`).

use std::time::Duration;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};

/// Default memory cap of a plugin instance.
pub const DEFAULT_MEMORY: u64 = 256 << 20;
/// Default wall-clock limit of one plugin call (a trial or a parse).
pub const DEFAULT_TIME: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of linear memory per instance.
    pub memory: u64,
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { memory: DEFAULT_MEMORY, time: DEFAULT_TIME }
    }
}

/// The trap raised when a plugin grows its memory past the cap.
#[derive(Debug, thiserror::Error)]
#[error("memory cap exceeded: tried to grow to {desired} bytes, cap {cap} bytes")]
pub struct MemoryCapExceeded {
    pub cap: u64,
    pub desired: u64,
}

/// The trap raised when the epoch callback finds the time is up.
#[derive(Debug, thiserror::Error)]
#[error("time limit reached")]
pub struct TimeUp;

/// The trap raised when the epoch callback finds the user pressed Ctrl-C.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Memory cap per linear memory; tables and instance counts as wasmtime's
/// defaults ([`StoreLimits`]).
pub struct Limiter {
    cap: u64,
    inner: StoreLimits,
}

impl Limiter {
    pub fn new(cap: u64) -> Self {
        Limiter { cap, inner: StoreLimitsBuilder::new().instances(64).build() }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired as u64 > self.cap {
            // A trap rather than a failed `memory.grow`: the guest's
            // allocator would abort with a message that hides the cause.
            return Err(wasmtime::Error::new(MemoryCapExceeded { cap: self.cap, desired: desired as u64 }));
        }
        self.inner.memory_growing(current, desired, maximum)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }
    fn tables(&self) -> usize {
        self.inner.tables()
    }
    fn memories(&self) -> usize {
        self.inner.memories()
    }
}
