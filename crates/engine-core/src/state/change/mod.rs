//! Every kind of change engine makes to the machine, as the journal stores
//! it, and how each is undone: one module per kind. This is the bottom of
//! `state/`: the journal stores these, the states (`sysfs`, `scheduler`,
//! `filesystem`, `loopdev`, `scratch`, `server`) make them, and nothing
//! here imports either. A new kind is a module here, one line in `Change`,
//! and the state that makes it.

pub mod loopdev;
pub mod mount;
pub mod scheduler;
pub mod scratch;
pub mod server;
pub mod sysfs;

use loopdev::LoopDevice;
use mount::{MountPoint, Mounted};
use scheduler::SchedulerChange;
use scratch::ScratchFolders;
use serde::{Deserialize, Serialize};
use server::ServerProcess;
use sysfs::SysfsValue;
use thiserror::Error;

/// One change to the machine, recorded before it is made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// A sysfs attribute (`/sys/block/sda/queue/read_ahead_kb`) and its value before.
    Sysfs(SysfsValue),
    /// A queue's scheduler and the tunables (`queue/iosched/*`) it had before.
    Scheduler(SchedulerChange),
    /// A directory engine created (a mount point).
    Dir(MountPoint),
    /// A file system engine mounted.
    Mount(Mounted),
    /// Loop devices over a backing file engine attached (and maybe created).
    Loop(LoopDevice),
    /// A server a test started, leader of its own process group.
    Server(ServerProcess),
    /// The test folders this process makes in a target directory.
    Scratch(ScratchFolders),
}

/// What a change kind does besides being stored: say and do its undo.
pub trait Undo {
    /// What undoing it does, in words (`/sys/block/loop0/queue/scheduler back to none`).
    fn describe(&self) -> String;
    /// Undoes it. Safe for a change that was recorded but never made (the
    /// process died in between): each undo checks first.
    fn undo(&self) -> Result<(), UndoError>;
}

/// Why a change could not be undone (it stays in the journal for `engine recover`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct UndoError(pub String);

macro_rules! from_kind {
    ($($variant:ident($kind:ty)),*) => {
        $(impl From<$kind> for Change {
            fn from(c: $kind) -> Change {
                Change::$variant(c)
            }
        })*
    };
}
from_kind!(
    Sysfs(SysfsValue),
    Scheduler(SchedulerChange),
    Dir(MountPoint),
    Mount(Mounted),
    Loop(LoopDevice),
    Server(ServerProcess),
    Scratch(ScratchFolders)
);

impl Change {
    fn kind(&self) -> &dyn Undo {
        match self {
            Change::Sysfs(c) => c,
            Change::Scheduler(c) => c,
            Change::Dir(c) => c,
            Change::Mount(c) => c,
            Change::Loop(c) => c,
            Change::Server(c) => c,
            Change::Scratch(c) => c,
        }
    }

    pub fn describe(&self) -> String {
        self.kind().describe()
    }

    pub(crate) fn undo(&self) -> Result<(), UndoError> {
        self.kind().undo()
    }

    /// Whether this change is something the run itself started (a server, its
    /// test folders), which lives and dies with the run, rather than a change
    /// to the machine that other runs would see.
    pub fn is_process(&self) -> bool {
        matches!(self, Change::Server(_) | Change::Scratch(_))
    }
}

/// Runs `cmd` and returns its standard output, or what it said went wrong.
pub(crate) fn run(cmd: &str, args: &[&str]) -> Result<String, UndoError> {
    let o =
        std::process::Command::new(cmd).args(args).output().map_err(|e| UndoError(format!("cannot run {cmd}: {e}")))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(UndoError(format!("{cmd} {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr).trim())))
    }
}

/// Writes `value` to sysfs attribute `path`.
pub(crate) fn write(path: &str, value: &str) -> Result<(), UndoError> {
    std::fs::write(path, value).map_err(|e| UndoError(format!("cannot write {value:?} to {path}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_form_is_a_flat_object_tagged_by_kind() {
        let c = Change::Sysfs(SysfsValue { path: "/sys/x".into(), original: "1".into() });
        let s = serde_json::to_string(&c).unwrap();
        assert_eq!(s, r#"{"change":"sysfs","path":"/sys/x","original":"1"}"#);
        assert_eq!(serde_json::from_str::<Change>(&s).unwrap(), c);
        let old = r#"{"change":"server","name":"pg","pid":0,"signal":15}"#;
        let Change::Server(s) = serde_json::from_str::<Change>(old).unwrap() else { panic!("not a server") };
        assert!(s.remove.is_empty() && s.start_ticks.is_none());
    }

    #[test]
    fn undoing_a_change_that_was_never_made_is_harmless() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Change::Dir(MountPoint { path: dir.path().join("never").display().to_string() }).undo().is_ok());
        let m = Mounted { target: "/definitely/not/mounted".into(), source: "/dev/loop99".into() };
        assert!(Change::Mount(m).undo().is_ok());
        let s =
            SchedulerChange { queue: "/sys/block/nosuchdev/queue".into(), original: "none".into(), tunables: vec![] };
        assert!(Change::Scheduler(s).undo().is_ok());
    }
}
