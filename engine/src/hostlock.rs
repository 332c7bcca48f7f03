//! One benchmark at a time per ENGINE_HOME: two runs on one machine measure
//! each other, so `engine benchmark` (and `engine run`) hold
//! `$ENGINE_HOME/benchmark.lock` for their whole run. The lock is an
//! `flock`, released by the kernel when the process ends however it ends, so
//! a killed run never leaves a stale lock; the file holds who has it, so a
//! refused run can say which run is in the way.

use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Who holds the lock: written into the lock file by the holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// The command line, as typed.
    pub command: String,
    pub result: String,
    pub identifier: String,
}

impl Holder {
    /// This process, about to save to `result` under `identifier`.
    pub fn this_process(result: &str, identifier: &str) -> Holder {
        let command = std::env::args().map(|a| crate::profile::template::quote(&a)).collect::<Vec<_>>().join(" ");
        Holder {
            pid: std::process::id(),
            started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            command,
            result: result.to_string(),
            identifier: identifier.to_string(),
        }
    }
}

#[derive(Debug, Error)]
pub enum HostLockError {
    #[error("{}", busy_message(.0))]
    Busy(Box<Holder>),
    #[error("cannot take the benchmark lock {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

fn busy_message(h: &Holder) -> String {
    if h.pid == 0 {
        return "another engine benchmark is running with this ENGINE_HOME".to_string();
    }
    format!(
        "another engine benchmark is running with this ENGINE_HOME: pid {}, since {}, saving to `{}` as `{}` ({})",
        h.pid, h.started, h.result, h.identifier, h.command
    )
}

/// The held lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct HostLock {
    _file: std::fs::File,
}

impl HostLock {
    /// Takes `path` for `holder`, or says who has it.
    pub fn acquire(path: &Path, holder: &Holder) -> Result<HostLock, HostLockError> {
        let io = |source| HostLockError::Io { path: path.to_path_buf(), source };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut f = crate::fsutil::open_lock(path).map_err(io)?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let mut text = String::new();
            let _ = f.read_to_string(&mut text);
            // The holder may be between taking the lock and writing its name.
            let other: Holder = serde_json::from_str(&text).unwrap_or_default();
            return Err(HostLockError::Busy(Box::new(other)));
        }
        let json = serde_json::to_string(holder).expect("holders serialize");
        f.set_len(0).and_then(|()| f.rewind()).and_then(|()| f.write_all(json.as_bytes())).map_err(io)?;
        Ok(HostLock { _file: f })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_with_the_first_ones_name() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("benchmark.lock");
        let a = Holder {
            pid: 42,
            started: "t".into(),
            command: "engine benchmark x".into(),
            result: "r".into(),
            identifier: "h".into(),
        };
        let held = HostLock::acquire(&p, &a).unwrap();
        // flock belongs to the open file description: a second open conflicts.
        let e = HostLock::acquire(&p, &Holder::default()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("pid 42") && msg.contains("`r` as `h`") && msg.contains("engine benchmark x"), "{msg}");
        drop(held);
        HostLock::acquire(&p, &Holder::default()).unwrap();
    }
}
