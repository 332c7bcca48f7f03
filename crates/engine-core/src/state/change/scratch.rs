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
            if !e.file_name().to_string_lossy().starts_with(self.prefix.as_str()) {
                continue;
            }
            // What cannot be removed in time is moved aside (and cleared
            // later): a tree a test left never keeps the journal pending.
            if let Err(err) = crate::sys::remove::remove_or_quarantine(&e.path(), None) {
                errs.push(format!("cannot remove {}: {err}", e.path().display()));
            }
        }
        // A few seconds here (the end of a run, `engine recover`); the
        // next run clears the rest in the background.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        crate::sys::remove::clear_quarantine(std::path::Path::new(&self.dir), deadline);
        if errs.is_empty() { Ok(()) } else { Err(UndoError(errs.join("; "))) }
    }
}
