//! System states a sweep puts the machine in — I/O schedulers and their
//! tunables, queue settings, file systems with mount options on a scratch
//! device — behind one seam: [`SystemState::apply`] journals every change
//! before making it and returns a [`Guard`] that undoes it on drop (normal
//! end, error, panic, Ctrl-C). After `kill -9`, `engine recover` replays the
//! journal.

pub mod change;
pub mod filesystem;
pub mod hygiene;
pub mod journal;
pub mod loopdev;
pub mod scheduler;
pub mod scratch;
pub mod server;
pub mod sweep;
pub mod switch;
pub mod sysfs;

use journal::Shared;
use thiserror::Error;

/// A state written wrong on the command line (`--scheduler bfq:x`,
/// `--set queue/x`, `--filesystem zfs`, `--device loop:lots`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// Why a state could not be made.
#[derive(Debug, Error)]
pub enum StateError {
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
    #[error("{0}")]
    Apply(String),
    #[error("{what} did not take: asked for {wanted}, {path} reads {got}")]
    NotInForce { what: String, wanted: String, got: String, path: String },
}

/// One state of a sweep dimension.
pub trait SystemState {
    /// Label for identifiers (`BFQ low_latency=0`, `ext4 nobarrier`).
    fn label(&self) -> String;
    /// Puts the machine in this state (journaled first); the guard restores it.
    fn apply(&self, journal: &Shared) -> Result<Guard, StateError>;
}

/// Undoes the changes it holds when dropped, newest first.
#[must_use = "dropping the guard restores the state at once"]
pub struct Guard {
    journal: Shared,
    ids: Vec<u64>,
    /// Problems met while restoring (reported by `finish`).
    errors: Vec<String>,
}

impl Guard {
    pub(crate) fn new(journal: &Shared) -> Self {
        Guard { journal: journal.clone(), ids: Vec::new(), errors: Vec::new() }
    }

    /// Records `change` in the journal (before it is made) and takes charge of undoing it.
    pub(crate) fn record(&mut self, change: impl Into<change::Change>) -> Result<(), StateError> {
        let id = self.journal.lock().unwrap_or_else(|p| p.into_inner()).record(change.into())?;
        self.ids.push(id);
        Ok(())
    }

    /// Restores now and says what could not be restored.
    pub fn finish(mut self) -> Result<(), change::UndoError> {
        self.restore();
        let errors = std::mem::take(&mut self.errors);
        if errors.is_empty() { Ok(()) } else { Err(change::UndoError(errors.join("; "))) }
    }

    fn restore(&mut self) {
        let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(id) = self.ids.pop() {
            if let Err(e) = j.undo(id) {
                self.errors.push(e.0);
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.restore();
        for e in &self.errors {
            let e = crate::sys::text::terminal(e);
            eprintln!("engine: could not restore: {e} (run `engine recover` after fixing it)");
        }
    }
}
