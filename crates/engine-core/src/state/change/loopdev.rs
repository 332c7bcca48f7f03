//! Loop devices engine attached, as the journal keeps them.

use super::{Undo, UndoError, run};
use serde::{Deserialize, Serialize};

/// Loop devices over `backing_file` that engine attached; the file is
/// removed too when engine created it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopDevice {
    pub backing_file: String,
    pub remove_file: bool,
}

impl Undo for LoopDevice {
    fn describe(&self) -> String {
        let delete = if self.remove_file { " and delete it" } else { "" };
        format!("detach loop devices over {}{delete}", self.backing_file)
    }

    fn undo(&self) -> Result<(), UndoError> {
        let list = run("losetup", &["-j", &self.backing_file]).unwrap_or_default();
        for line in list.lines() {
            if let Some(dev) = line.split(':').next().filter(|d| d.starts_with("/dev/")) {
                run("losetup", &["-d", dev])?;
            }
        }
        if self.remove_file {
            match std::fs::remove_file(&self.backing_file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(UndoError(format!("cannot delete {}: {e}", self.backing_file))),
            }
        }
        Ok(())
    }
}
