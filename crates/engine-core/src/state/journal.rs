//! The journal of system-state changes. Each change is written to disk (temp
//! file, fsync, rename) **before** it is made, so whatever happens next — an
//! error, a panic, Ctrl-C, `kill -9`, power loss — the change can be undone:
//! by the guard that made it, or by `engine recover`. The journal only
//! persists; each kind of change undoes itself (`super::change`).

pub use super::change::Change;
use super::change::UndoError;
use crate::sys::lock::TryLock;
use crate::sys::proc::{boot_id, start_ticks};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use thiserror::Error;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    id: u64,
    change: Change,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct File {
    /// Process that made the changes.
    pid: u32,
    /// When that process started (clock ticks after boot, /proc/PID/stat field 22)
    /// and the boot it ran in: a pid alone may belong to another process after a reboot.
    #[serde(default)]
    start_ticks: Option<u64>,
    #[serde(default)]
    boot_id: Option<String>,
    /// Changes not undone yet, in the order they were made.
    pending: Vec<Entry>,
    next_id: u64,
}

/// Why the journal of system changes could not be written or read.
#[derive(Debug, Error)]
pub enum JournalError {
    #[error("cannot write the journal {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read the journal {path}: {msg}")]
    Read { path: PathBuf, msg: String },
    #[error("another engine run (pid {0}) is changing system state; runs that change system state cannot overlap")]
    StateBusy(String),
}

/// The journal of one run: `ENGINE_HOME/journal/<pid>.json`.
pub struct Journal {
    path: PathBuf,
    file: File,
}

/// A journal shared by the guards of one run.
pub type Shared = Arc<Mutex<Journal>>;

impl Journal {
    /// Starts the journal of this process in `dir`.
    pub fn create(dir: &Path) -> Result<Shared, JournalError> {
        Self::create_named(dir, &std::process::id().to_string())
    }

    /// Starts a journal of this process named `stem` (`<pid>-servers`).
    pub(crate) fn create_named(dir: &Path, stem: &str) -> Result<Shared, JournalError> {
        let pid = std::process::id();
        let path = dir.join(format!("{stem}.json"));
        let file = File { pid, start_ticks: start_ticks(pid as i32), boot_id: boot_id(), ..Default::default() };
        let j = Journal { path, file };
        j.save()?;
        Ok(Arc::new(Mutex::new(j)))
    }

    fn save(&self) -> Result<(), JournalError> {
        let bytes = serde_json::to_vec_pretty(&self.file).expect("journals serialize");
        crate::sys::fs::write_atomic(&self.path, &bytes)
            .map_err(|source| JournalError::Write { path: self.path.clone(), source })
    }

    /// Records `change` durably; call before making it. Returns its id.
    pub(crate) fn record(&mut self, change: Change) -> Result<u64, JournalError> {
        let id = self.file.next_id;
        self.file.next_id += 1;
        self.file.pending.push(Entry { id, change });
        self.save()?;
        Ok(id)
    }

    /// Replaces pending change `id` (a server's pid, known once it runs).
    pub(crate) fn update(&mut self, id: u64, change: Change) -> Result<(), JournalError> {
        if let Some(e) = self.file.pending.iter_mut().find(|e| e.id == id) {
            e.change = change;
            self.save()?;
        }
        Ok(())
    }

    /// Forgets change `id` without undoing it (whoever made it undid it).
    pub(crate) fn forget(&mut self, id: u64) -> Result<(), JournalError> {
        let before = self.file.pending.len();
        self.file.pending.retain(|e| e.id != id);
        if self.file.pending.len() != before {
            self.save()?;
        }
        Ok(())
    }

    /// Undoes change `id` (if still pending) and forgets it — only once it
    /// is undone: a change that could not be undone stays for `engine recover`.
    pub(crate) fn undo(&mut self, id: u64) -> Result<(), UndoError> {
        let Some(pos) = self.file.pending.iter().position(|e| e.id == id) else { return Ok(()) };
        self.file.pending[pos].change.undo()?;
        self.file.pending.remove(pos);
        self.save().map_err(|e| UndoError(e.to_string()))
    }

    /// Undoes every pending change, newest first; returns what was done and
    /// what failed. What failed stays in the journal.
    pub fn undo_all(&mut self) -> (Vec<String>, Vec<String>) {
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        for i in (0..self.file.pending.len()).rev() {
            let change = self.file.pending[i].change.clone();
            match change.undo() {
                Ok(()) => {
                    done.push(change.describe());
                    self.file.pending.remove(i);
                    if let Err(e) = self.save() {
                        failed.push(e.to_string());
                    }
                }
                Err(msg) => failed.push(format!("{}: {msg}", change.describe())),
            }
        }
        (done, failed)
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.file.pending.is_empty()
    }

    /// Removes the journal file once nothing is pending.
    pub fn close(&self) {
        if self.file.pending.is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Journals left by earlier runs (or running ones) that still hold changes.
pub struct Leftover {
    pub path: PathBuf,
    pub pid: u32,
    pub alive: bool,
    pub changes: Vec<Change>,
}

/// Whether the process that wrote a journal still runs: its pid exists, in
/// the same boot, and started when the journal says (not a reused pid).
fn alive(f: &File) -> bool {
    let pid = f.pid;
    // SAFETY: signal 0 only checks that the process exists.
    if pid == 0 || pid == std::process::id() || unsafe { libc::kill(pid as i32, 0) } != 0 {
        return false;
    }
    if let (Some(b), Some(now)) = (&f.boot_id, boot_id())
        && *b != now
    {
        return false;
    }
    match (f.start_ticks, start_ticks(pid as i32)) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// Every journal in `dir` with pending changes.
pub fn leftovers(dir: &Path) -> Result<Vec<Leftover>, JournalError> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return Ok(out) };
    let mut paths: Vec<PathBuf> =
        rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| JournalError::Read { path: path.clone(), msg: e.to_string() })?;
        let f: File =
            serde_json::from_str(&text).map_err(|e| JournalError::Read { path: path.clone(), msg: e.to_string() })?;
        if f.pending.is_empty() {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        out.push(Leftover {
            alive: alive(&f),
            pid: f.pid,
            path,
            changes: f.pending.into_iter().map(|e| e.change).collect(),
        });
    }
    Ok(out)
}

/// Undoes the changes of a dead run's journal; removes the file when all
/// went well. Returns what was done and what failed.
pub fn recover(l: &Leftover) -> (Vec<String>, Vec<String>) {
    let mut j = Journal {
        path: l.path.clone(),
        file: File {
            pid: l.pid,
            start_ticks: None,
            boot_id: None,
            pending: l.changes.iter().cloned().enumerate().map(|(i, change)| Entry { id: i as u64, change }).collect(),
            next_id: l.changes.len() as u64,
        },
    };
    let r = j.undo_all();
    if j.file.pending.is_empty() {
        let _ = std::fs::remove_file(&l.path);
    }
    r
}

/// One run at a time changes system state: held for the whole sweep (and by
/// `engine recover`), so two sweeps cannot both pass the pending-changes check.
pub struct StateLock {
    _file: crate::sys::lock::LockFile,
}

impl StateLock {
    /// Takes the lock file `path` (`ENGINE_HOME/state.lock`).
    pub fn acquire(path: &Path) -> Result<StateLock, JournalError> {
        let io = |source| JournalError::Write { path: path.to_path_buf(), source };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        match crate::sys::lock::try_lock(path).map_err(io)? {
            TryLock::Held(mut f) => {
                let _ = f.set_holder(&std::process::id().to_string());
                Ok(StateLock { _file: f })
            }
            TryLock::Busy { holder } => Err(JournalError::StateBusy(holder.trim().to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::filesystem::MountPoint;
    use crate::state::sysfs::SysfsValue;

    #[test]
    fn records_before_and_undoes_in_reverse() {
        let dir = tempfile::tempdir().unwrap();
        let attr = dir.path().join("attr");
        std::fs::write(&attr, "old\n").unwrap();
        let mk = dir.path().join("made");
        let j = Journal::create(&dir.path().join("journal")).unwrap();
        let mut g = j.lock().unwrap();
        g.record(Change::Sysfs(SysfsValue { path: attr.display().to_string(), original: "old".into() })).unwrap();
        std::fs::write(&attr, "new\n").unwrap();
        g.record(Change::Dir(MountPoint { path: mk.display().to_string() })).unwrap();
        std::fs::create_dir(&mk).unwrap();
        // What a kill -9 would leave behind.
        let left = leftovers(&dir.path().join("journal")).unwrap();
        assert_eq!(left.len(), 1);
        assert!(!left[0].alive, "our own pid does not count as another live run");
        assert_eq!(left[0].changes.len(), 2);
        let (done, failed) = recover(&left[0]);
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(done.len(), 2);
        assert_eq!(std::fs::read_to_string(&attr).unwrap(), "old");
        assert!(!mk.exists());
        assert!(leftovers(&dir.path().join("journal")).unwrap().is_empty());
    }

    #[test]
    fn a_change_that_cannot_be_undone_stays_in_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let jdir = dir.path().join("journal");
        let blocker = dir.path().join("not-empty");
        std::fs::create_dir(&blocker).unwrap();
        std::fs::write(blocker.join("f"), "x").unwrap();
        let ok = dir.path().join("made");
        std::fs::create_dir(&ok).unwrap();
        {
            let j = Journal::create(&jdir).unwrap();
            let mut g = j.lock().unwrap();
            g.record(Change::Dir(MountPoint { path: ok.display().to_string() })).unwrap();
            // remove_dir fails on a folder with a file in it.
            g.record(Change::Dir(MountPoint { path: blocker.display().to_string() })).unwrap();
            let (done, failed) = g.undo_all();
            assert_eq!((done.len(), failed.len()), (1, 1), "{done:?} {failed:?}");
            assert!(!g.is_empty(), "the failed undo is still pending");
        }
        // recover fails once, and the change is still there for the next try.
        let left = leftovers(&jdir).unwrap();
        assert_eq!(left.len(), 1);
        let (_, failed) = recover(&left[0]);
        assert_eq!(failed.len(), 1);
        let left = leftovers(&jdir).unwrap();
        assert_eq!(left.len(), 1, "recover must not forget what it could not undo");
        std::fs::remove_file(blocker.join("f")).unwrap();
        let (done, failed) = recover(&left[0]);
        assert_eq!((done.len(), failed.len()), (1, 0));
        assert!(leftovers(&jdir).unwrap().is_empty());
        assert!(!blocker.exists());
    }

    #[test]
    fn a_reused_pid_is_not_a_live_run() {
        // Our parent is alive, but a journal that says it started at another time is stale.
        let ppid = std::os::unix::process::parent_id();
        let real = start_ticks(ppid as i32).unwrap();
        let live = File { pid: ppid, start_ticks: Some(real), boot_id: boot_id(), ..Default::default() };
        assert!(alive(&live));
        let reused = File { start_ticks: Some(real + 1), ..live.clone() };
        assert!(!alive(&reused));
        let other_boot = File { boot_id: Some("another-boot".into()), ..live };
        assert!(!alive(&other_boot));
    }

    #[test]
    fn one_state_lock_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.lock");
        let a = StateLock::acquire(&p).unwrap();
        // flock locks belong to the open file description: a second open in
        // this process conflicts as another process's would.
        let e = StateLock::acquire(&p).err().unwrap().to_string();
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(a);
        assert!(StateLock::acquire(&p).is_ok());
    }
}
