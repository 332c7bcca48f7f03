//! The test folders of one process, as the journal keeps them.

use super::{Undo, UndoError};
use serde::{Deserialize, Serialize};

/// The test folders of one process in `dir`: names starting with `prefix`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScratchFolders {
    pub dir: String,
    pub prefix: String,
}

impl Undo for ScratchFolders {
    fn describe(&self) -> String {
        format!("remove the test folders {}/{}*", self.dir, self.prefix)
    }

    fn undo(&self) -> Result<(), UndoError> {
        // Only engine's own names: `engine-<pid>-…`.
        if !self.prefix.starts_with("engine-") || self.prefix.contains('/') {
            return Err(UndoError(format!(
                "refusing to remove {}/{}*: not a name engine gives its test folders",
                self.dir, self.prefix
            )));
        }
        let Ok(rd) = std::fs::read_dir(&self.dir) else { return Ok(()) };
        let mut errs = Vec::new();
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(self.prefix.as_str())
                && let Err(err) = std::fs::remove_dir_all(e.path())
                && err.kind() != std::io::ErrorKind::NotFound
            {
                errs.push(format!("cannot remove {}: {err}", e.path().display()));
            }
        }
        if errs.is_empty() { Ok(()) } else { Err(UndoError(errs.join("; "))) }
    }
}
