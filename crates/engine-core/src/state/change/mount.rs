//! A mount point engine made and a file system it mounted, as the journal keeps them.

use super::{Undo, UndoError, run as run_undo};
use serde::{Deserialize, Serialize};

/// A directory engine created (a mount point).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MountPoint {
    pub path: String,
}

impl Undo for MountPoint {
    fn describe(&self) -> String {
        format!("remove directory {}", self.path)
    }

    fn undo(&self) -> Result<(), UndoError> {
        match std::fs::remove_dir(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(UndoError(format!("cannot remove {}: {e}", self.path))),
        }
    }
}

/// A file system engine mounted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mounted {
    pub target: String,
    pub source: String,
}

impl Undo for Mounted {
    fn describe(&self) -> String {
        format!("unmount {} from {}", self.source, self.target)
    }

    fn undo(&self) -> Result<(), UndoError> {
        if !mounted(&self.target, &self.source) {
            return Ok(());
        }
        // A process still using it would block a plain unmount; the lazy
        // one detaches it now and frees it when the last user leaves.
        run_undo("umount", &[&self.target]).or_else(|_| run_undo("umount", &["-l", &self.target])).map(|_| ())
    }
}

/// Whether `target` is a mount point of `source` right now (compared as
/// mountinfo shows it: canonical).
fn mounted(target: &str, source: &str) -> bool {
    let canon = std::fs::canonicalize(target).map(|p| p.display().to_string()).unwrap_or_else(|_| target.to_string());
    let target = canon.as_str();
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    crate::sysinfo::mounts::parse_mountinfo(&text)
        .iter()
        .any(|m| m.mount_point == target && (m.source == source || source.is_empty()))
}
