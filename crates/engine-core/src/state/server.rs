//! The servers this process starts, journaled (`<pid>-servers.json`); what
//! undoes one whose run died is [`ServerProcess`] (`change::server`).

pub use super::change::server::ServerProcess;
use super::journal::{Journal, JournalError, Shared};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The journal of the servers this process starts (`<pid>-servers.json` in
/// the journal folder), created on first use; its file is removed whenever
/// nothing is pending.
pub struct Servers {
    dir: PathBuf,
    journal: Mutex<Option<Shared>>,
}

impl Servers {
    pub fn new(journal_dir: &Path) -> Servers {
        Servers { dir: journal_dir.to_path_buf(), journal: Mutex::new(None) }
    }

    pub(crate) fn journal(&self) -> Result<Shared, JournalError> {
        let mut g = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(j) = &*g {
            return Ok(j.clone());
        }
        let j = Journal::create_named(&self.dir, &format!("{}-servers", std::process::id()))?;
        j.lock().unwrap_or_else(|p| p.into_inner()).close();
        *g = Some(j.clone());
        Ok(j)
    }
}
