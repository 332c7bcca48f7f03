//! What one plugin call may use: memory (a resource limiter that traps on
//! growth past the cap, so the failure names the cap) and wall-clock time
//! (epoch deadline, see `runtime::TICK`).

use std::time::Duration;
use wasmtime::ResourceLimiter;

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
pub(crate) struct MemoryCapExceeded {
    pub cap: u64,
    pub desired: u64,
}

/// The trap raised when the epoch callback finds the time is up.
#[derive(Debug, thiserror::Error)]
#[error("time limit reached")]
pub(crate) struct TimeUp;

/// The trap raised when the epoch callback finds engine stopped the call
/// (its space watchdog).
#[derive(Debug, thiserror::Error)]
#[error("stopped by engine")]
pub struct Stopped;

/// The trap raised when the epoch callback finds the user pressed Ctrl-C.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Most table elements of all a plugin's tables together (a table element
/// takes 8 bytes or more on the host; these count towards the memory cap too).
pub(crate) const MAX_TABLE_ELEMENTS: u64 = 1 << 20;
/// Most core instances, memories and tables one plugin's instantiation may
/// make: a component built with the SDK makes a handful of each.
pub(crate) const MAX_INSTANCES: usize = 64;
pub(crate) const MAX_MEMORIES: usize = 16;
pub(crate) const MAX_TABLES: usize = 64;
/// What a table element is counted as against the memory cap.
const TABLE_ELEMENT_BYTES: u64 = 16;

/// The trap raised when a plugin's tables grow past [`MAX_TABLE_ELEMENTS`].
#[derive(Debug, thiserror::Error)]
#[error("table limit exceeded: tried to hold {desired} table elements, limit {limit}")]
pub(crate) struct TableLimitExceeded {
    pub limit: u64,
    pub desired: u64,
}

/// One limiter over everything a plugin's store holds: the memory cap is
/// for all its linear memories together (a module with sixteen memories
/// gets no sixteen caps) plus its tables, which are bounded in elements
/// too; instances, memories and tables are counted.
pub(crate) struct Limiter {
    cap: u64,
    /// Bytes of linear memory and table elements held now.
    used: u64,
    elements: u64,
}

impl Limiter {
    pub(crate) fn new(cap: u64) -> Self {
        Limiter { cap, used: 0, elements: 0 }
    }

    fn grow(&mut self, by: u64) -> wasmtime::Result<()> {
        let desired = self.used.saturating_add(by);
        if desired > self.cap {
            // A trap rather than a failed `memory.grow`: the guest's
            // allocator would abort with a message that hides the cause.
            return Err(wasmtime::Error::new(MemoryCapExceeded { cap: self.cap, desired }));
        }
        self.used = desired;
        Ok(())
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.grow(desired.saturating_sub(current) as u64)?;
        Ok(true)
    }

    fn table_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let more = desired.saturating_sub(current) as u64;
        let elements = self.elements.saturating_add(more);
        if elements > MAX_TABLE_ELEMENTS {
            return Err(wasmtime::Error::new(TableLimitExceeded { limit: MAX_TABLE_ELEMENTS, desired: elements }));
        }
        self.grow(more.saturating_mul(TABLE_ELEMENT_BYTES))?;
        self.elements = elements;
        Ok(true)
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }
    fn tables(&self) -> usize {
        MAX_TABLES
    }
    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_and_tables_share_one_cap() {
        let mut l = Limiter::new(256 << 20);
        // Sixteen memories of 32 MiB: the ninth is refused.
        for _ in 0..8 {
            assert!(l.memory_growing(0, 32 << 20, None).unwrap());
        }
        let e = l.memory_growing(0, 32 << 20, None).unwrap_err();
        assert!(e.downcast_ref::<MemoryCapExceeded>().is_some_and(|m| m.desired == 288 << 20), "{e}");
        let mut l = Limiter::new(256 << 20);
        assert!(l.table_growing(0, 1000, None).unwrap());
        let e = l.table_growing(1000, 64 << 20, None).unwrap_err();
        assert!(e.downcast_ref::<TableLimitExceeded>().is_some(), "{e}");
        // Tables count towards memory too.
        let mut l = Limiter::new(4 << 20);
        assert!(l.table_growing(0, 300_000, None).is_err());
    }
}
