//! Between trials and tests: sync and drop the page cache, trim the file
//! system, let the device settle. All need root except settling.

use std::path::Path;
use std::time::Duration;

/// What to do, from the profile and the command line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hygiene {
    /// `sync` and drop the page cache, dentries and inodes before every trial.
    pub drop_caches: bool,
    /// `fstrim` the target's file system before every test.
    pub fstrim: bool,
    /// Pause before every test.
    pub settle: Option<Duration>,
}

/// `sync`, then `echo 3 > /proc/sys/vm/drop_caches`.
pub fn drop_caches() -> Result<(), String> {
    // SAFETY: sync cannot fail.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| format!("cannot drop caches (needs root): {e}"))
}

/// `fstrim DIR`; file systems without discard support are not an error.
pub fn fstrim(dir: &Path) -> Result<(), String> {
    let o = std::process::Command::new("fstrim").arg(dir).output().map_err(|e| format!("cannot run fstrim: {e}"))?;
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || err.contains("not supported") {
        Ok(())
    } else {
        Err(format!("fstrim {} failed: {}", dir.display(), err.trim()))
    }
}
