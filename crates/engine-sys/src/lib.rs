//! The operating system, as engine uses it: processes and their groups,
//! signals and the interrupt flag, file locks, safe and atomic file writes,
//! hashing, timestamps, and outside text made inert for where it lands
//! (terminals, CSV, Markdown, XML); every environment variable engine reads
//! (`env`) and what lives where in ENGINE_HOME (`home`).
//!
//! The bottom layer: it knows nothing of profiles, tests or results and uses
//! no other crate of engine (the compiler holds that); everything above may
//! use it.

pub mod bounded;
pub mod cgroup;
pub mod confine;
pub mod env;
pub mod forked;
pub mod fs;
pub mod hash;
pub mod home;
pub mod interrupt;
pub mod lock;
pub mod privilege;
pub mod proc;
pub mod process;
pub mod psi;
pub mod remove;
pub mod safepath;
pub mod seccomp;
pub mod sockdiag;
pub mod sockfds;
pub mod sockmem;
pub mod space;
pub mod spawn;
pub mod text;
pub mod time;
pub mod userns;

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}
