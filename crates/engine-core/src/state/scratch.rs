//! The test folders a run makes in a target directory (`<dir>/engine-<pid>-…`):
//! journaled before the first one is made in a directory, so that `engine
//! recover` (or the next run) removes what a kill -9 leaves; removed at the
//! end of the run whatever happened.

pub use super::change::scratch::ScratchFolders;
use super::journal::{Journal, Shared};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The test folders of this run: the journal (`<pid>-scratch.json` in the
/// journal folder, created on first use) and the target directories it
/// has recorded. Dropping it removes every test folder still there.
pub struct Scratch {
    journal_dir: PathBuf,
    state: Mutex<(Option<Shared>, Vec<PathBuf>)>,
}

impl Scratch {
    pub fn new(journal_dir: &Path) -> Scratch {
        Scratch { journal_dir: journal_dir.to_path_buf(), state: Mutex::new((None, Vec::new())) }
    }

    /// The prefix of this process's test folders in `target` (`engine-<pid>-`),
    /// journaled before the first one is made there. A journal that cannot be
    /// written only loses the clean-up after a kill -9: the folders are still
    /// removed on every other way out.
    pub(crate) fn prefix(&self, target: &Path) -> String {
        let prefix = format!("engine-{}-", std::process::id());
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if g.1.iter().any(|t| t == target) {
            return prefix;
        }
        // What earlier runs could not remove in time goes meanwhile.
        let dir = target.to_path_buf();
        let _ = std::thread::Builder::new().name("quarantine".into()).spawn(move || {
            crate::sys::remove::clear_quarantine(&dir, std::time::Instant::now() + crate::sys::remove::DEADLINE)
        });
        if g.0.is_none() {
            g.0 = Journal::create_named(&self.journal_dir, &format!("{}-scratch", std::process::id())).ok();
        }
        if let Some(j) = &g.0 {
            let change = ScratchFolders { dir: target.display().to_string(), prefix: prefix.clone() };
            if j.lock().unwrap_or_else(|p| p.into_inner()).record(change.into()).is_ok() {
                g.1.push(target.to_path_buf());
            }
        }
        prefix
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(j) = g.0.take() {
            let mut j = j.lock().unwrap_or_else(|p| p.into_inner());
            j.undo_all();
            j.close();
        }
    }
}
