//! A sysfs attribute engine set, as the journal keeps it.

use super::{Undo, UndoError, write};
use serde::{Deserialize, Serialize};

/// A sysfs attribute engine set, and its value before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SysfsValue {
    pub path: String,
    pub original: String,
}

impl Undo for SysfsValue {
    fn describe(&self) -> String {
        format!("{} back to {}", self.path, self.original)
    }

    fn undo(&self) -> Result<(), UndoError> {
        if std::fs::read_to_string(&self.path).map(|v| v.trim() == self.original.trim()).unwrap_or(false) {
            return Ok(());
        }
        write(&self.path, &self.original)
    }
}
