//! The journal of system-state changes. Each change is written to disk (temp
//! file, fsync, rename) **before** it is made, so whatever happens next — an
//! error, a panic, Ctrl-C, `kill -9`, power loss — the change can be undone:
//! by the guard that made it, or by `engine recover`.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use thiserror::Error;

/// One change to the machine and what undoes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// A sysfs attribute (`/sys/block/sda/queue/read_ahead_kb`) and its value before.
    Sysfs { path: String, original: String },
    /// A queue's scheduler and the tunables (`queue/iosched/*`) it had before.
    Scheduler { queue: String, original: String, tunables: Vec<(String, String)> },
    /// A directory engine created (a mount point).
    Dir { path: String },
    /// A file system engine mounted.
    Mount { target: String, source: String },
    /// Loop devices over `backing_file` that engine attached; the file is
    /// removed too when engine created it.
    Loop { backing_file: String, remove_file: bool },
}

impl Change {
    pub fn describe(&self) -> String {
        match self {
            Change::Sysfs { path, original } => format!("{path} back to {original}"),
            Change::Scheduler { queue, original, tunables } => {
                format!(
                    "{queue}/scheduler back to {original}{}",
                    if tunables.is_empty() { String::new() } else { format!(" with its {} tunables", tunables.len()) }
                )
            }
            Change::Dir { path } => format!("remove directory {path}"),
            Change::Mount { target, source } => format!("unmount {source} from {target}"),
            Change::Loop { backing_file, remove_file } => {
                format!("detach loop devices over {backing_file}{}", if *remove_file { " and delete it" } else { "" })
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    id: u64,
    change: Change,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct File {
    /// Process that made the changes.
    pid: u32,
    /// Changes not undone yet, in the order they were made.
    pending: Vec<Entry>,
    next_id: u64,
}

#[derive(Debug, Error)]
pub enum JournalError {
    #[error("cannot write the journal {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read the journal {path}: {msg}")]
    Read { path: PathBuf, msg: String },
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
        let path = dir.join(format!("{}.json", std::process::id()));
        let j = Journal { path, file: File { pid: std::process::id(), ..Default::default() } };
        j.save()?;
        Ok(Arc::new(Mutex::new(j)))
    }

    fn save(&self) -> Result<(), JournalError> {
        let bytes = serde_json::to_vec_pretty(&self.file).expect("journals serialize");
        crate::result::store::write_atomic(&self.path, &bytes)
            .map_err(|e| JournalError::Write { path: self.path.clone(), source: std::io::Error::other(e.to_string()) })
    }

    /// Records `change` durably; call before making it. Returns its id.
    pub fn record(&mut self, change: Change) -> Result<u64, JournalError> {
        let id = self.file.next_id;
        self.file.next_id += 1;
        self.file.pending.push(Entry { id, change });
        self.save()?;
        Ok(id)
    }

    /// Undoes change `id` (if still pending) and forgets it.
    pub fn undo(&mut self, id: u64) -> Result<(), String> {
        let Some(pos) = self.file.pending.iter().position(|e| e.id == id) else { return Ok(()) };
        let r = undo(&self.file.pending[pos].change);
        self.file.pending.remove(pos);
        self.save().map_err(|e| e.to_string())?;
        r
    }

    /// Undoes every pending change, newest first; returns what was done and what failed.
    pub fn undo_all(&mut self) -> (Vec<String>, Vec<String>) {
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        while let Some(e) = self.file.pending.pop() {
            match undo(&e.change) {
                Ok(()) => done.push(e.change.describe()),
                Err(msg) => failed.push(format!("{}: {msg}", e.change.describe())),
            }
            if let Err(e) = self.save() {
                failed.push(e.to_string());
            }
        }
        (done, failed)
    }

    pub fn is_empty(&self) -> bool {
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

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid != 0 && unsafe { libc::kill(pid as i32, 0) } == 0 && pid != std::process::id()
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
            alive: alive(f.pid),
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
            pending: l.changes.iter().cloned().enumerate().map(|(i, change)| Entry { id: i as u64, change }).collect(),
            next_id: l.changes.len() as u64,
        },
    };
    let r = j.undo_all();
    if r.1.is_empty() {
        let _ = std::fs::remove_file(&l.path);
    }
    r
}

fn write(path: &str, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("cannot write {value:?} to {path}: {e}"))
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let o = std::process::Command::new(cmd).args(args).output().map_err(|e| format!("cannot run {cmd}: {e}"))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!("{cmd} {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim()))
    }
}

/// Whether `target` is a mount point of `source` right now.
fn mounted(target: &str, source: &str) -> bool {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    crate::sysinfo::mounts::parse_mountinfo(&text)
        .iter()
        .any(|m| m.mount_point == target && (m.source == source || source.is_empty()))
}

/// Undoes one change. Safe to call for a change that was recorded but never
/// made (the process died in between): each undo checks first.
pub fn undo(c: &Change) -> Result<(), String> {
    match c {
        Change::Sysfs { path, original } => {
            if std::fs::read_to_string(path).map(|v| v.trim() == original.trim()).unwrap_or(false) {
                return Ok(());
            }
            write(path, original)
        }
        Change::Scheduler { queue, original, tunables } => {
            let sched = format!("{queue}/scheduler");
            if !Path::new(&sched).exists() {
                return Ok(()); // the device is gone (a loop device already detached)
            }
            write(&sched, original)?;
            let mut errs = Vec::new();
            for (k, v) in tunables {
                let p = format!("{queue}/iosched/{k}");
                if std::fs::read_to_string(&p).map(|x| x.trim() != v.trim()).unwrap_or(false)
                    && let Err(e) = write(&p, v)
                {
                    errs.push(e);
                }
            }
            if errs.is_empty() { Ok(()) } else { Err(errs.join("; ")) }
        }
        Change::Dir { path } => match std::fs::remove_dir(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot remove {path}: {e}")),
        },
        Change::Mount { target, source } => {
            if !mounted(target, source) {
                return Ok(());
            }
            // A process still using it would block a plain unmount; the lazy
            // one detaches it now and frees it when the last user leaves.
            run("umount", &[target]).or_else(|_| run("umount", &["-l", target])).map(|_| ())
        }
        Change::Loop { backing_file, remove_file } => {
            let list = run("losetup", &["-j", backing_file]).unwrap_or_default();
            for line in list.lines() {
                if let Some(dev) = line.split(':').next().filter(|d| d.starts_with("/dev/")) {
                    run("losetup", &["-d", dev])?;
                }
            }
            if *remove_file {
                match std::fs::remove_file(backing_file) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(format!("cannot delete {backing_file}: {e}")),
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_before_and_undoes_in_reverse() {
        let dir = tempfile::tempdir().unwrap();
        let attr = dir.path().join("attr");
        std::fs::write(&attr, "old\n").unwrap();
        let mk = dir.path().join("made");
        let j = Journal::create(&dir.path().join("journal")).unwrap();
        let mut g = j.lock().unwrap();
        g.record(Change::Sysfs { path: attr.display().to_string(), original: "old".into() }).unwrap();
        std::fs::write(&attr, "new\n").unwrap();
        g.record(Change::Dir { path: mk.display().to_string() }).unwrap();
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
    fn undoing_a_change_that_was_never_made_is_harmless() {
        let dir = tempfile::tempdir().unwrap();
        assert!(undo(&Change::Dir { path: dir.path().join("never").display().to_string() }).is_ok());
        assert!(
            undo(&Change::Mount { target: "/definitely/not/mounted".into(), source: "/dev/loop99".into() }).is_ok()
        );
        assert!(
            undo(&Change::Scheduler {
                queue: "/sys/block/nosuchdev/queue".into(),
                original: "none".into(),
                tunables: vec![]
            })
            .is_ok()
        );
    }
}
