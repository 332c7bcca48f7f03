//! A run's logs on their way into a result folder. The runner never writes
//! into a result folder: it writes a test's logs into a staging folder the
//! store made for the run (`.staging/` inside the result folder, under the
//! folder's lock, so on the same file system), and the store takes them
//! into place — with the monitor's series, which it writes itself — once
//! the test has ended. The result folder has one writer, and what a killed
//! run was writing never shows in it: the next run that takes the lock (or
//! `engine recover`) removes the staging folder.

use super::{Store, StoreError};
use crate::model::series::Series;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The staging folder's name inside a result folder.
pub const STAGING: &str = ".staging";

/// How long removing a staging folder may take: it holds logs engine wrote
/// (flat files in a few folders), never a tree a test made.
const REMOVE_WITHIN: Duration = Duration::from_secs(10);

/// How deep a staged tree is merged into an existing one: a log folder is
/// `logs/IDENTIFIER/TEST`, and its files are flat.
const MAX_DEPTH: u32 = 8;

/// The staging folder of one run of one result. Removed when dropped.
pub struct Staging {
    /// The result folder.
    folder: PathBuf,
    /// `folder/.staging`.
    root: PathBuf,
}

/// What became of a test's logs and series when the store took them.
#[derive(Debug)]
pub struct Kept {
    /// Whether the staged logs were moved into place.
    pub logs: Result<(), StoreError>,
    /// Where the series is, relative to the result folder: written, or why not.
    pub series: Option<Result<String, StoreError>>,
}

impl Store {
    /// A fresh staging folder for a run of result `name`. The caller holds
    /// the folder's lock ([`Store::lock`]): whatever a staging folder holds
    /// then is what a killed run left, and it is removed first.
    pub fn staging(&self, name: &str) -> Result<Staging, StoreError> {
        super::check_name(name)?;
        let folder = self.dir(name);
        let root = folder.join(STAGING);
        remove_staging(&folder).map_err(|source| StoreError::Write { path: root.clone(), source })?;
        std::fs::create_dir(&root).map_err(|source| StoreError::Write { path: root.clone(), source })?;
        Ok(Staging { folder, root })
    }
}

impl Staging {
    /// Where the runner writes the logs that belong at `rel` in the result
    /// folder (a test's log folder, `logs/…`).
    pub fn dir(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Takes what the runner staged for `rel` into the result folder —
    /// files replace files of the same name (a later round's logs), folders
    /// merge — and writes `series` beside them.
    pub fn keep(&self, rel: &str, series: Option<&Series>) -> Kept {
        let staged = self.dir(rel);
        let to = self.folder.join(rel);
        let moved = match std::fs::symlink_metadata(&staged) {
            Ok(m) if m.is_dir() => to
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| merge(&staged, &to, 0))
                .map_err(|source| StoreError::Write { path: to.clone(), source }),
            _ => Ok(()),
        };
        let series = series.map(|s| {
            let path = to.join(super::series::FILE);
            std::fs::create_dir_all(&to)
                .and_then(|()| super::series::write(&path, s))
                .map_err(|source| StoreError::Write { path, source })?;
            Ok(format!("{rel}/{}", super::series::FILE))
        });
        Kept { logs: moved, series }
    }

    /// The place in the result folder of a path the runner gave out
    /// (a failed trial's log): relative to the folder, once kept.
    pub fn kept_as(&self, staged: &Path) -> Option<String> {
        staged.strip_prefix(&self.root).ok().map(|r| r.display().to_string())
    }
}

impl Staging {
    /// `text` (a failure's message) with the staged paths it names written
    /// as the places they were kept at.
    pub fn kept_text(&self, text: &str) -> String {
        let staged = format!("{}/", self.root.display());
        text.replace(&staged, &format!("{}/", self.folder.display()))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // What was not kept (a run stopped between a test's end and its
        // keeping) is not the result's.
        let _ = remove_staging(&self.folder);
    }
}

/// Removes `folder/.staging`, if there is one.
pub(super) fn remove_staging(folder: &Path) -> std::io::Result<()> {
    let root = folder.join(STAGING);
    match std::fs::symlink_metadata(&root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        // A link or file of that name is no staging folder: only the name goes.
        Ok(m) if !m.is_dir() => std::fs::remove_file(&root),
        Ok(_) => crate::sys::remove::remove_path(&root, Some(Instant::now() + REMOVE_WITHIN))
            .map_err(|e| std::io::Error::other(e.to_string())),
    }
}

/// Moves `from` to `to`: renamed whole when `to` is not there, else entry
/// by entry (a file replaces a file; a folder merges into a folder).
fn merge(from: &Path, to: &Path, depth: u32) -> std::io::Result<()> {
    match std::fs::rename(from, to) {
        Ok(()) => return Ok(()),
        Err(_) if depth < MAX_DEPTH && std::fs::symlink_metadata(to).is_ok_and(|m| m.is_dir()) => {}
        Err(e) => return Err(e),
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (f, t) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() && std::fs::symlink_metadata(&t).is_ok_and(|m| m.is_dir()) {
            merge(&f, &t, depth + 1)?;
        } else {
            std::fs::rename(&f, &t)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series() -> Series {
        Series {
            format: crate::model::series::FORMAT.into(),
            interval_ms: 1000,
            t_ms: Vec::new(),
            metrics: Vec::new(),
            trials: Vec::new(),
            unavailable: Vec::new(),
            late: 0,
            thinned: 0,
            workload: None,
        }
    }

    #[test]
    fn staged_logs_reach_the_folder_only_when_kept() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        let staging = store.staging("r").unwrap();
        let rel = "logs/id/test-1";
        std::fs::create_dir_all(staging.dir(rel)).unwrap();
        std::fs::write(staging.dir(rel).join("trial-1.log"), "one").unwrap();
        assert!(!store.dir("r").join(rel).exists(), "nothing shows before it is kept");
        let kept = staging.keep(rel, Some(&series()));
        assert_eq!(kept.series.unwrap().unwrap(), format!("{rel}/monitor.json.gz"));
        assert_eq!(std::fs::read_to_string(store.dir("r").join(rel).join("trial-1.log")).unwrap(), "one");
        assert!(super::super::series::read_in(&store.dir("r"), &format!("{rel}/monitor.json.gz")).is_ok());
        assert_eq!(
            staging.kept_as(&staging.dir(rel).join("trial-1.log")).as_deref(),
            Some("logs/id/test-1/trial-1.log")
        );

        // A later round of the same test: its files replace, others stay.
        std::fs::create_dir_all(staging.dir(rel)).unwrap();
        std::fs::write(staging.dir(rel).join("trial-1.log"), "two").unwrap();
        std::fs::write(staging.dir(rel).join("server-x.log"), "s").unwrap();
        assert!(staging.keep(rel, None).series.is_none());
        let dir = store.dir("r").join(rel);
        assert_eq!(std::fs::read_to_string(dir.join("trial-1.log")).unwrap(), "two");
        assert!(dir.join("server-x.log").is_file() && dir.join("monitor.json.gz").is_file());
        let said = format!("sh exited 1; see {}", staging.dir(rel).join("trial-1.log").display());
        assert_eq!(staging.kept_text(&said), format!("sh exited 1; see {}/trial-1.log", dir.display()));
        drop(staging);
        assert!(!store.dir("r").join(STAGING).exists(), "the staging folder goes with the run");
    }

    #[test]
    fn what_a_killed_run_staged_is_removed_by_the_next() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        let left = store.dir("r").join(STAGING).join("logs/id/t");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(left.join("trial-1.log"), "half").unwrap();
        let staging = store.staging("r").unwrap();
        assert!(!left.exists());
        assert!(staging.dir("logs").parent().unwrap().is_dir());
    }
}
