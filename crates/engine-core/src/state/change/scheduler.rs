//! A queue's scheduler engine changed, as the journal keeps it.

use super::{Undo, UndoError, write};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A queue's scheduler engine changed, with the scheduler and tunables
/// (`queue/iosched/*`) it had before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedulerChange {
    pub queue: String,
    pub original: String,
    pub tunables: Vec<(String, String)>,
}

impl Undo for SchedulerChange {
    fn describe(&self) -> String {
        let tunables = if self.tunables.is_empty() {
            String::new()
        } else {
            format!(" with its {} tunables", self.tunables.len())
        };
        format!("{}/scheduler back to {}{tunables}", self.queue, self.original)
    }

    fn undo(&self) -> Result<(), UndoError> {
        let sched = format!("{}/scheduler", self.queue);
        if !Path::new(&sched).exists() {
            return Ok(()); // the device is gone (a loop device already detached)
        }
        write(&sched, &self.original)?;
        let mut errs = Vec::new();
        for (k, v) in &self.tunables {
            let p = format!("{}/iosched/{k}", self.queue);
            if std::fs::read_to_string(&p).map(|x| x.trim() != v.trim()).unwrap_or(false)
                && let Err(e) = write(&p, v)
            {
                errs.push(e.0);
            }
        }
        if errs.is_empty() { Ok(()) } else { Err(UndoError(errs.join("; "))) }
    }
}
