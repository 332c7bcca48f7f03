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
    /// A server a test started (a database, a web server), leader of its
    /// own process group: asked to stop with `signal`, killed if it does not,
    /// then the paths in `remove` (its data) are deleted. Recorded before it
    /// starts (`pid` 0) and updated with its pid once it runs.
    Server {
        name: String,
        pid: i32,
        /// Start time of `pid` (clock ticks after boot), so a reused pid is
        /// never signalled.
        #[serde(default)]
        start_ticks: Option<u64>,
        signal: i32,
        #[serde(default)]
        remove: Vec<String>,
    },
    /// The test folders this process makes in a target directory
    /// (`<dir>/<prefix>…`, the prefix naming the pid): removed, with what
    /// they hold, when a killed run left them.
    Scratch { dir: String, prefix: String },
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
            Change::Server { name, pid, remove, .. } => {
                let data = if remove.is_empty() { String::new() } else { format!(" and remove {}", remove.join(", ")) };
                if *pid > 0 {
                    format!("stop server {name} (pid {pid}){data}")
                } else {
                    format!("stop server {name}{data}")
                }
            }
            Change::Scratch { dir, prefix } => format!("remove the test folders {dir}/{prefix}*"),
        }
    }

    /// Whether this change is a process engine started (a server), which
    /// lives and dies with the run, rather than a change to the machine
    /// that other runs would see.
    pub fn is_process(&self) -> bool {
        matches!(self, Change::Server { .. } | Change::Scratch { .. })
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

/// Start time of process `pid` in clock ticks after boot.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields
    // after the last `)` are plain; start time is field 22, the 20th after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_string())
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
        Self::create_named(dir, &std::process::id().to_string())
    }

    /// Starts a journal of this process named `stem` (`<pid>-servers`).
    pub fn create_named(dir: &Path, stem: &str) -> Result<Shared, JournalError> {
        let pid = std::process::id();
        let path = dir.join(format!("{stem}.json"));
        let file = File { pid, start_ticks: start_ticks(pid), boot_id: boot_id(), ..Default::default() };
        let j = Journal { path, file };
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

    /// Replaces pending change `id` (a server's pid, known once it runs).
    pub fn update(&mut self, id: u64, change: Change) -> Result<(), JournalError> {
        if let Some(e) = self.file.pending.iter_mut().find(|e| e.id == id) {
            e.change = change;
            self.save()?;
        }
        Ok(())
    }

    /// Forgets change `id` without undoing it (whoever made it undid it).
    pub fn forget(&mut self, id: u64) -> Result<(), JournalError> {
        let before = self.file.pending.len();
        self.file.pending.retain(|e| e.id != id);
        if self.file.pending.len() != before {
            self.save()?;
        }
        Ok(())
    }

    /// Undoes change `id` (if still pending) and forgets it — only once it
    /// is undone: a change that could not be undone stays for `engine recover`.
    pub fn undo(&mut self, id: u64) -> Result<(), String> {
        let Some(pos) = self.file.pending.iter().position(|e| e.id == id) else { return Ok(()) };
        undo(&self.file.pending[pos].change)?;
        self.file.pending.remove(pos);
        self.save().map_err(|e| e.to_string())
    }

    /// Undoes every pending change, newest first; returns what was done and
    /// what failed. What failed stays in the journal.
    pub fn undo_all(&mut self) -> (Vec<String>, Vec<String>) {
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        for i in (0..self.file.pending.len()).rev() {
            let change = self.file.pending[i].change.clone();
            match undo(&change) {
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

/// The journal of the servers this process starts (`<pid>-servers.json`
/// in `dir`), created on first use; its file is removed whenever nothing is
/// pending.
pub fn servers(dir: &Path) -> Result<Shared, JournalError> {
    use std::sync::OnceLock;
    static SERVERS: OnceLock<Mutex<Vec<(PathBuf, Shared)>>> = OnceLock::new();
    let all = SERVERS.get_or_init(|| Mutex::new(Vec::new()));
    let mut all = all.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, j)) = all.iter().find(|(d, _)| d == dir) {
        return Ok(j.clone());
    }
    let j = Journal::create_named(dir, &format!("{}-servers", std::process::id()))?;
    j.lock().unwrap_or_else(|p| p.into_inner()).close();
    all.push((dir.to_path_buf(), j.clone()));
    Ok(j)
}

/// The journal of the test folders this process makes (`<pid>-scratch.json`),
/// and the target directories it has recorded.
static SCRATCH: std::sync::OnceLock<Mutex<(Option<Shared>, Vec<PathBuf>)>> = std::sync::OnceLock::new();

/// The prefix of this process's test folders in `target` (`engine-<pid>-`),
/// recorded in the journal in `dir` before the first one is made, so that
/// `engine recover` (or the next run) removes what a kill -9 leaves. A
/// journal that cannot be written only loses that: the folders are still
/// removed on every other way out.
pub fn scratch_prefix(dir: &Path, target: &Path) -> String {
    let prefix = format!("engine-{}-", std::process::id());
    let state = SCRATCH.get_or_init(|| Mutex::new((None, Vec::new())));
    let mut g = state.lock().unwrap_or_else(|p| p.into_inner());
    if g.1.iter().any(|t| t == target) {
        return prefix;
    }
    if g.0.is_none() {
        g.0 = Journal::create_named(dir, &format!("{}-scratch", std::process::id())).ok();
    }
    if let Some(j) = &g.0 {
        let change = Change::Scratch { dir: target.display().to_string(), prefix: prefix.clone() };
        if j.lock().unwrap_or_else(|p| p.into_inner()).record(change).is_ok() {
            g.1.push(target.to_path_buf());
        }
    }
    prefix
}

/// At the end of a run: removes any test folder still there and the
/// scratch journal with it.
pub fn close_scratch() {
    let Some(state) = SCRATCH.get() else { return };
    let mut g = state.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(j) = g.0.take() {
        let mut j = j.lock().unwrap_or_else(|p| p.into_inner());
        j.undo_all();
        j.close();
    }
    g.1.clear();
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
    match (f.start_ticks, start_ticks(pid)) {
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
    _file: std::fs::File,
}

impl StateLock {
    /// Takes the lock file `path` (`ENGINE_HOME/state.lock`).
    pub fn acquire(path: &Path) -> Result<StateLock, String> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let mut f = crate::fsutil::open_lock(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            return Err(format!(
                "another engine run (pid {}) is changing system state; runs that change system state cannot overlap",
                holder.trim()
            ));
        }
        let _ = f.set_len(0);
        let _ = f.rewind();
        let _ = write!(f, "{}", std::process::id());
        Ok(StateLock { _file: f })
    }
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

/// Whether `target` is a mount point of `source` right now (compared as
/// mountinfo shows it: canonical).
fn mounted(target: &str, source: &str) -> bool {
    let canon = std::fs::canonicalize(target).map(|p| p.display().to_string()).unwrap_or_else(|_| target.to_string());
    let target = canon.as_str();
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
        Change::Server { name, pid, start_ticks, signal, remove } => {
            stop_server(name, *pid, *start_ticks, *signal)?;
            remove_paths(remove)
        }
        Change::Scratch { dir, prefix } => {
            // Only engine's own names: `engine-<pid>-…`.
            if !prefix.starts_with("engine-") || prefix.contains('/') {
                return Err(format!("refusing to remove {dir}/{prefix}*: not a name engine gives its test folders"));
            }
            let Ok(rd) = std::fs::read_dir(dir) else { return Ok(()) };
            let mut errs = Vec::new();
            for e in rd.flatten() {
                if e.file_name().to_string_lossy().starts_with(prefix.as_str())
                    && let Err(err) = std::fs::remove_dir_all(e.path())
                    && err.kind() != std::io::ErrorKind::NotFound
                {
                    errs.push(format!("cannot remove {}: {err}", e.path().display()));
                }
            }
            if errs.is_empty() { Ok(()) } else { Err(errs.join("; ")) }
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

/// Whether process `pid` runs (a zombie does not) and is the one that
/// started at `ticks` (when known).
pub fn process_running(pid: i32, ticks: Option<u64>) -> bool {
    if pid <= 0 {
        return false;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { return false };
    let mut fields = rest.split_whitespace();
    if fields.next() == Some("Z") {
        return false;
    }
    match ticks {
        Some(t) => start_ticks(pid as u32) == Some(t),
        None => true,
    }
}

/// Start time of a process (clock ticks after boot), to recognise it later.
pub fn process_start_ticks(pid: i32) -> Option<u64> {
    start_ticks(pid as u32)
}

/// Whether any live (not zombie) process is in process group `pgid`.
pub fn group_running(pgid: i32) -> bool {
    let Ok(rd) = std::fs::read_dir("/proc") else { return false };
    rd.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok())).any(|pid| {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { return false };
        let f: Vec<&str> = rest.split_whitespace().take(3).collect();
        // Fields after the name: state, ppid, pgrp.
        f.len() == 3 && f[0] != "Z" && f[2].parse::<i32>().ok() == Some(pgid)
    })
}

/// Stops a server engine started and no longer watches (its run died):
/// `signal` to its process group, SIGKILL after 30 s. A pid that now
/// belongs to another process is left alone.
fn stop_server(name: &str, pid: i32, ticks: Option<u64>, signal: i32) -> Result<(), String> {
    if pid <= 0 {
        return Ok(());
    }
    let ours = process_running(pid, ticks);
    // The leader gone but members of its group left: the pgid cannot have
    // been reused while they live, so they are the server's.
    let orphans = !process_running(pid, None) && group_running(pid);
    if !ours && !orphans {
        return Ok(());
    }
    let wait = |limit: std::time::Duration| {
        let end = std::time::Instant::now() + limit;
        while std::time::Instant::now() < end {
            if !group_running(pid) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        !group_running(pid)
    };
    // SAFETY: plain syscalls; a negative pid names the process group.
    unsafe { libc::kill(-pid, signal) };
    if wait(std::time::Duration::from_secs(30)) {
        return Ok(());
    }
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    if wait(std::time::Duration::from_secs(5)) {
        Ok(())
    } else {
        Err(format!("server {name} (process group {pid}) is still running after SIGKILL"))
    }
}

/// Removes what a server left (its data); what is already gone is fine.
fn remove_paths(paths: &[String]) -> Result<(), String> {
    for p in paths {
        let path = Path::new(p);
        let r = match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
            Ok(_) => std::fs::remove_file(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        match r {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {p}: {e}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recover_stops_a_server_group_and_removes_its_data() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("cluster");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("file"), "x").unwrap();
        // A "server" with a child in its group that ignores SIGTERM: the
        // group is killed after the signal does not end it... here both
        // end on SIGTERM, as a server's workers do.
        let child =
            std::process::Command::new("sh").args(["-c", "sleep 1000 & sleep 1000"]).process_group(0).spawn().unwrap();
        let pid = child.id() as i32;
        // The run that started it dies: nobody waits for it any more.
        std::mem::forget(child);
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(group_running(pid));
        let change = Change::Server {
            name: "demo".into(),
            pid,
            start_ticks: process_start_ticks(pid),
            signal: libc::SIGTERM,
            remove: vec![data.display().to_string()],
        };
        assert!(change.describe().contains("stop server demo"), "{}", change.describe());
        undo(&change).unwrap();
        // Reap our own child so it does not linger as a zombie.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        assert!(!group_running(pid), "the server's group survived recover");
        assert!(!data.exists(), "its data was not removed");
        // A pid that now belongs to another process is never signalled.
        let me = std::process::id() as i32;
        let other = Change::Server {
            name: "stale".into(),
            pid: me,
            start_ticks: process_start_ticks(me).map(|t| t + 1),
            signal: libc::SIGKILL,
            remove: vec![],
        };
        undo(&other).unwrap();
    }

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
            g.record(Change::Dir { path: ok.display().to_string() }).unwrap();
            // remove_dir fails on a folder with a file in it.
            g.record(Change::Dir { path: blocker.display().to_string() }).unwrap();
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
        let real = start_ticks(ppid).unwrap();
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
        let e = StateLock::acquire(&p).err().unwrap();
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(a);
        assert!(StateLock::acquire(&p).is_ok());
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
