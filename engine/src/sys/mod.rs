//! The operating system, as engine uses it: processes and their groups,
//! signals and the interrupt flag, file locks, safe and atomic file writes,
//! hashing, timestamps. Nothing here knows about profiles, tests or results;
//! everything else in the crate may use it.

pub mod cgroup;
pub mod confine;
pub mod fs;
pub mod hash;
pub mod interrupt;
pub mod lock;
pub mod privilege;
pub mod proc;
pub mod process;
pub mod spawn;
pub mod time;

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}
