//! One benchmark at a time per machine and per ENGINE_HOME, and none while a
//! change an earlier run made is still in place.
//!
//! Two runs on one machine measure each other, so `engine benchmark` (and
//! `engine run`) hold `$ENGINE_HOME/benchmark.lock` for their whole run: a
//! file lock the kernel releases when the process ends however it ends, so a
//! killed run never leaves a stale lock; the file says who holds it. A
//! second lock under `/run/lock` does the same for the whole machine, so a
//! run with another ENGINE_HOME is refused too (or, with
//! `--allow-concurrent`, warned about).

use crate::{Context, Failure, exit};
use engine::events::Events;
use engine::model::facts::{Identifier, Timestamp};
use engine::state::journal;
use engine::sys::lock::{LockFile, TryLock};
use serde::{Deserialize, Serialize};

/// Who holds the lock: written into the lock file by the holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Holder {
    pub pid: u32,
    /// When the run started (RFC 3339, UTC).
    pub started: Timestamp,
    /// The command line, as typed.
    pub command: String,
    pub result: String,
    pub identifier: Identifier,
    /// Its ENGINE_HOME (for the machine-wide lock).
    #[serde(default)]
    pub home: String,
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

impl Holder {
    fn me(cx: &Context, command: &str, result: &str, identifier: &str) -> Holder {
        Holder {
            pid: std::process::id(),
            started: engine::sys::time::now().into(),
            command: command.to_string(),
            result: result.to_string(),
            identifier: identifier.into(),
            home: cx.home.root.display().to_string(),
        }
    }

    fn elsewhere(&self) -> String {
        if self.pid == 0 {
            return "another engine benchmark is running on this machine".to_string();
        }
        format!(
            "another engine benchmark is running on this machine: pid {}, since {}, ENGINE_HOME {} ({})",
            self.pid, self.started, self.home, self.command
        )
    }
}

/// Takes the machine-wide lock (whatever the ENGINE_HOME): two benchmarks at
/// once measure each other. `allow` (`--allow-concurrent`) turns a refusal
/// into a warning; a lock that cannot be taken at all (no `/run/lock`) is a
/// warning too, not a reason to refuse a run.
pub(super) fn machine(
    cx: &Context,
    command: &str,
    result: &str,
    identifier: &str,
    (allow, wait): (bool, bool),
    events: &dyn Events,
) -> Result<Option<LockFile>, Failure> {
    let Some(path) = &cx.settings.machine_lock else { return Ok(None) };
    let taken = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| engine::sys::lock::try_lock(path));
    let taken = match taken {
        Ok(TryLock::Busy { holder }) if wait => wait_for(path, &holder, Holder::elsewhere, events),
        t => t,
    };
    match taken {
        Ok(TryLock::Held(mut f)) => {
            // Read-only when another user made the file: then it cannot say who holds it.
            let me = Holder::me(cx, command, result, identifier);
            let _ = f.set_holder(&serde_json::to_string(&me).expect("holders serialize"));
            Ok(Some(f))
        }
        Ok(TryLock::Busy { holder }) => {
            let other: Holder = serde_json::from_str(&holder).unwrap_or_default();
            if allow {
                events.message(&format!(
                    "warning: {}; --allow-concurrent: running anyway, and the two runs measure each other",
                    other.elsewhere()
                ));
                return Ok(None);
            }
            Err(Failure::error(other.elsewhere()).hint(
                "wait for it to finish: two benchmarks at once on one machine measure each other; \
                 --allow-concurrent runs anyway",
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            Err(Failure::new(exit::INTERRUPTED, "interrupted while waiting for the machine-wide benchmark lock"))
        }
        Err(e) => {
            events.message(&format!(
                "warning: cannot take the machine-wide benchmark lock {}: {e}; another run on this machine would go unnoticed",
                path.display()
            ));
            Ok(None)
        }
    }
}

/// `--wait`: says once whom it waits for, then takes the lock at `path`
/// when its holder ends (Ctrl-C stops waiting: exit 130).
fn wait_for(
    path: &std::path::Path,
    holder: &str,
    say: fn(&Holder) -> String,
    events: &dyn Events,
) -> std::io::Result<TryLock> {
    let other: Holder = serde_json::from_str(holder).unwrap_or_default();
    events.message(&format!("waiting: {}", say(&other)));
    loop {
        if engine::sys::interrupt::requested() {
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted while waiting"));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        if let TryLock::Held(f) = engine::sys::lock::try_lock(path)? {
            return Ok(TryLock::Held(f));
        }
    }
}

/// Takes the host lock for a run saving to `result` as `identifier`
/// (`wait`: after the run that holds it).
pub(super) fn host(
    cx: &Context,
    command: &str,
    result: &str,
    identifier: &str,
    wait: bool,
    events: &dyn Events,
) -> Result<LockFile, Failure> {
    let path = cx.home.benchmark_lock();
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::Interrupted => {
            Failure::new(exit::INTERRUPTED, "interrupted while waiting for the benchmark lock")
        }
        _ => Failure::error(format!("cannot take the benchmark lock {}: {e}", path.display())),
    };
    std::fs::create_dir_all(&cx.home.root).map_err(io)?;
    let taken = match engine::sys::lock::try_lock(&path).map_err(io)? {
        TryLock::Busy { holder } if wait => wait_for(&path, &holder, Holder::busy, events).map_err(io)?,
        t => t,
    };
    let mut f = match taken {
        TryLock::Held(f) => f,
        TryLock::Busy { holder } => {
            let other: Holder = serde_json::from_str(&holder).unwrap_or_default();
            return Err(Failure::error(other.busy()).hint(
                "wait for it to finish: two benchmarks at once on one machine measure each other \
                 (the lock goes when that process ends, however it ends)",
            ));
        }
    };
    let me = Holder::me(cx, command, result, identifier);
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
        let cx = Context::new(engine::home::Home { root: d.path().to_path_buf() }, Default::default());
        let argv = "engine benchmark x";
        let ev = Said::default();
        let held = host(&cx, argv, "r", "h", false, &ev).unwrap();
        let e = host(&cx, argv, "s", "i", false, &ev).unwrap_err().message;
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(e.contains("`r` as `h`") && e.contains("engine benchmark x"), "{e}");
        drop(held);
        host(&cx, argv, "s", "i", false, &ev).unwrap();
    }

    #[derive(Default)]
    struct Said(std::cell::RefCell<Vec<String>>);
    impl Events for Said {
        fn message(&self, text: &str) {
            self.0.borrow_mut().push(text.to_string());
        }
    }

    #[test]
    fn the_machine_lock_spans_homes_and_can_be_overridden() {
        let d = tempfile::tempdir().unwrap();
        let settings = crate::Settings { machine_lock: Some(d.path().join("m.lock")), ..Default::default() };
        let home = |n: &str| engine::home::Home { root: d.path().join(n) };
        let a = Context::new(home("a"), settings.clone());
        let b = Context::new(home("b"), settings);
        let argv = "engine benchmark x";
        let ev = Said::default();
        let held = machine(&a, argv, "r", "h", (false, false), &ev).unwrap();
        assert!(held.is_some());
        let e = machine(&b, argv, "s", "i", (false, false), &ev).unwrap_err();
        assert!(
            e.message.contains("on this machine") && e.message.contains(&d.path().join("a").display().to_string()),
            "{}",
            e.message
        );
        assert!(machine(&b, argv, "s", "i", (true, false), &ev).unwrap().is_none());
        assert!(ev.0.borrow().iter().any(|m| m.contains("--allow-concurrent: running anyway")), "{:?}", ev.0.borrow());
        drop(held);
        assert!(machine(&b, argv, "s", "i", (false, false), &ev).unwrap().is_some());
    }
}
