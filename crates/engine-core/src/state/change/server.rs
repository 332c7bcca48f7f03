//! A server a test started (a database, a web server), as the journal keeps
//! it: leader of its own process group, recorded before it starts (pid 0)
//! and updated with its pid once it runs. Undone by asking the group to stop
//! with its signal, killing it if it does not, then deleting its data. The
//! runner starts and stops servers (`runner::server`); this is what undoes
//! one whose run died.

use super::{Undo, UndoError};
use crate::sys::proc::{group_running, process_running};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerProcess {
    pub name: String,
    pub pid: i32,
    /// Start time of `pid` (clock ticks after boot), so a reused pid is
    /// never signalled.
    #[serde(default)]
    pub start_ticks: Option<u64>,
    pub signal: i32,
    /// Its data, deleted once it stopped: relative to `beneath`.
    #[serde(default)]
    pub remove: Vec<String>,
    /// The test's directory, which `remove` is inside: removal goes
    /// through it, never through a link a command planted. (Absent in
    /// journals of older engines, whose `remove` paths are absolute.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beneath: Option<String>,
}

impl Undo for ServerProcess {
    fn describe(&self) -> String {
        let data =
            if self.remove.is_empty() { String::new() } else { format!(" and remove {}", self.remove.join(", ")) };
        if self.pid > 0 {
            format!("stop server {} (pid {}){data}", self.name, self.pid)
        } else {
            format!("stop server {}{data}", self.name)
        }
    }

    fn undo(&self) -> Result<(), UndoError> {
        self.stop()?;
        remove_paths(self.beneath.as_deref(), &self.remove)
    }
}

impl ServerProcess {
    /// Stops a server engine started and no longer watches (its run died):
    /// its signal to its process group, SIGKILL after 30 s. A pid that now
    /// belongs to another process is left alone.
    fn stop(&self) -> Result<(), UndoError> {
        let pid = self.pid;
        if pid <= 0 {
            return Ok(());
        }
        let ours = process_running(pid, self.start_ticks);
        // The leader gone but members of its group left: the pgid cannot have
        // been reused while they live, so they are the server's.
        let orphans = !process_running(pid, None) && group_running(pid);
        if !ours && !orphans {
            return Ok(());
        }
        crate::sys::process::kill_group(pid, self.signal);
        if gone_within(pid, Duration::from_secs(30)) {
            return Ok(());
        }
        crate::sys::process::kill_group(pid, libc::SIGKILL);
        if gone_within(pid, Duration::from_secs(5)) {
            Ok(())
        } else {
            Err(UndoError(format!("server {} (process group {pid}) is still running after SIGKILL", self.name)))
        }
    }
}

/// Whether process group `pgid` is gone within `limit`.
fn gone_within(pgid: i32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if !group_running(pgid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !group_running(pgid)
}

/// Removes what a server left (its data) beneath the test's directory;
/// what is already gone (the directory too) is fine.
fn remove_paths(beneath: Option<&str>, paths: &[String]) -> Result<(), UndoError> {
    use crate::sys::safepath::Dir;
    for p in paths {
        let path = Path::new(p);
        let r = match beneath {
            Some(b) => Dir::open(Path::new(b)).and_then(|d| d.remove(path)),
            // An older journal: the last component is removed from its
            // parent's descriptor, never followed.
            None => match (path.parent(), path.file_name()) {
                (Some(parent), Some(name)) => Dir::open(parent).and_then(|d| d.remove(Path::new(name))),
                _ => Ok(()),
            },
        };
        match r {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A link the test planted on the way: what it names is not the
            // server's data, and engine refused it when the run stopped the
            // server (and said so). Nothing of engine's is left to undo, so
            // the refusal must not keep the journal pending.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
            Err(e) => return Err(UndoError(format!("cannot remove {p}: {e}"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::proc::start_ticks;

    #[test]
    fn recover_stops_a_server_group_and_removes_its_data() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("cluster");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("file"), "x").unwrap();
        // A "server" with a child in its group: both end on SIGTERM, as a
        // server's workers do.
        let child =
            std::process::Command::new("sh").args(["-c", "sleep 1000 & sleep 1000"]).process_group(0).spawn().unwrap();
        let pid = child.id() as i32;
        // The run that started it dies: nobody waits for it any more.
        std::mem::forget(child);
        std::thread::sleep(Duration::from_millis(100));
        assert!(group_running(pid));
        let change = ServerProcess {
            name: "demo".into(),
            pid,
            start_ticks: start_ticks(pid),
            signal: libc::SIGTERM,
            remove: vec!["cluster".into()],
            beneath: Some(dir.path().display().to_string()),
        };
        assert!(change.describe().contains("stop server demo"), "{}", change.describe());
        change.undo().unwrap();
        // Reap our own child so it does not linger as a zombie.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        assert!(!group_running(pid), "the server's group survived recover");
        assert!(!data.exists(), "its data was not removed");
        // A pid that now belongs to another process is never signalled.
        let me = std::process::id() as i32;
        let other = ServerProcess {
            name: "stale".into(),
            pid: me,
            start_ticks: start_ticks(me).map(|t| t + 1),
            signal: libc::SIGKILL,
            remove: vec![],
            beneath: None,
        };
        other.undo().unwrap();
    }
}
