//! One benchmark at a time per ENGINE_HOME, and none while a change an
//! earlier run made is still in place.
//!
//! Two runs on one machine measure each other, so `engine benchmark` (and
//! `engine run`) hold `$ENGINE_HOME/benchmark.lock` for their whole run: a
//! file lock the kernel releases when the process ends however it ends, so a
//! killed run never leaves a stale lock; the file says who holds it.

use crate::events::Events;
use crate::ops::{Context, Failure, exit};
use crate::state::journal;
use crate::sys::lock::{LockFile, TryLock};
use serde::{Deserialize, Serialize};

/// Who holds the lock: written into the lock file by the holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Holder {
    pub pid: u32,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// The command line, as typed.
    pub command: String,
    pub result: String,
    pub identifier: String,
}

impl Holder {
    fn busy(&self) -> String {
        if self.pid == 0 {
            return "another engine benchmark is running with this ENGINE_HOME".to_string();
        }
        format!(
            "another engine benchmark is running with this ENGINE_HOME: pid {}, since {}, saving to `{}` as `{}` ({})",
            self.pid, self.started, self.result, self.identifier, self.command
        )
    }
}

/// Takes the host lock for a run saving to `result` as `identifier`.
pub(super) fn host(cx: &Context, argv: &[String], result: &str, identifier: &str) -> Result<LockFile, Failure> {
    let path = cx.home.benchmark_lock();
    let io = |e: std::io::Error| Failure::error(format!("cannot take the benchmark lock {}: {e}", path.display()));
    std::fs::create_dir_all(&cx.home.root).map_err(io)?;
    let mut f = match crate::sys::lock::try_lock(&path).map_err(io)? {
        TryLock::Held(f) => f,
        TryLock::Busy { holder } => {
            let other: Holder = serde_json::from_str(&holder).unwrap_or_default();
            return Err(Failure::error(other.busy()).hint(
                "wait for it to finish: two benchmarks at once on one machine measure each other \
                 (the lock goes when that process ends, however it ends)",
            ));
        }
    };
    let me = Holder {
        pid: std::process::id(),
        started: crate::sys::time::now(),
        command: argv.iter().map(|a| crate::model::template::quote(a)).collect::<Vec<_>>().join(" "),
        result: result.to_string(),
        identifier: identifier.to_string(),
    };
    f.set_holder(&serde_json::to_string(&me).expect("holders serialize")).map_err(io)?;
    Ok(f)
}

/// A run that died (or one still running) may have left a scheduler, a mount
/// or a loop device changed: nothing runs until that is settled. Test folders
/// a killed run left change nothing but disk space: they are removed here.
pub(super) fn refuse_unfinished_changes(cx: &Context, events: &dyn Events) -> Result<(), Failure> {
    let mut left = journal::leftovers(&cx.home.journal()).map_err(Failure::error)?;
    left.retain(|l| {
        if l.alive || !l.changes.iter().all(|c| matches!(c, journal::Change::Scratch(_))) {
            return true;
        }
        let (done, failed) = journal::recover(l);
        for d in done {
            events.message(&format!("note: a killed run (pid {}) left test folders: {d}", l.pid));
        }
        !failed.is_empty()
    });
    // Servers another live run started are its own business (they listen on
    // their own sockets and ports); a dead run's need `engine recover`.
    let Some(l) = left.iter().find(|l| !(l.alive && l.changes.iter().all(|c| c.is_process()))) else {
        return Ok(());
    };
    let what: Vec<String> = l.changes.iter().map(|c| c.describe()).collect();
    Err(if l.alive {
        Failure::new(exit::ERROR, format!("engine (pid {}) is changing system state: {}", l.pid, what.join("; ")))
            .hint("wait for it to finish; runs that change system state cannot overlap")
    } else {
        Failure::new(
            exit::ERROR,
            format!("an earlier run (pid {}) left system state changed: {}", l.pid, what.join("; ")),
        )
        .hint("run `engine recover` to undo it")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_with_the_first_ones_name() {
        let d = tempfile::tempdir().unwrap();
        let cx = Context::new(crate::home::Home { root: d.path().to_path_buf() }, Default::default());
        let argv = vec!["engine".to_string(), "benchmark".into(), "x".into()];
        let held = host(&cx, &argv, "r", "h").unwrap();
        let e = host(&cx, &argv, "s", "i").unwrap_err().message;
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(e.contains("`r` as `h`") && e.contains("engine benchmark x"), "{e}");
        drop(held);
        host(&cx, &argv, "s", "i").unwrap();
    }
}
