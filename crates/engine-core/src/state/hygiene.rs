//! Between trials and tests: sync and drop the page cache, trim the file
//! system. Both need root.

use std::path::Path;
use std::time::Duration;
use thiserror::Error;

/// What a run asks between trials and before tests, for every test (a
/// profile's own `hygiene:` may ask for more): the run's flags, as the
/// request, the sweep's root check and the session read them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Hygiene {
    /// `--drop-caches`: sync and drop the page cache before every trial.
    pub drop_caches: bool,
    /// `--fstrim`: trim the target's file system before every test.
    pub fstrim: bool,
    /// `--settle`: pause before every test.
    pub settle: Option<Duration>,
}

#[derive(Debug, Error)]
pub enum HygieneError {
    #[error("cannot drop caches (needs root): {0}")]
    DropCaches(std::io::Error),
    #[error("cannot run fstrim: {0}")]
    NoFstrim(std::io::Error),
    #[error("fstrim {dir} failed: {said}")]
    Fstrim { dir: String, said: String },
}

/// `sync`, then `echo 3 > /proc/sys/vm/drop_caches`.
pub(crate) fn drop_caches() -> Result<(), HygieneError> {
    // SAFETY: sync cannot fail.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(HygieneError::DropCaches)
}

/// `fstrim DIR`; file systems without discard support are not an error.
pub fn fstrim(dir: &Path) -> Result<(), HygieneError> {
    let o = std::process::Command::new("fstrim").arg(dir).output().map_err(HygieneError::NoFstrim)?;
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() || err.contains("not supported") {
        Ok(())
    } else {
        Err(HygieneError::Fstrim { dir: dir.display().to_string(), said: err.trim().to_string() })
    }
}
