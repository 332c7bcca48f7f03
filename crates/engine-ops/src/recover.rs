//! `engine recover`: undo what killed runs left changed (schedulers,
//! tunables, mounts, loop devices, servers, test folders), from the journal
//! in ENGINE_HOME, and remove the temporary files killed runs left there.

use crate::{Context, Failure};
use engine::state::journal;
use std::path::PathBuf;

/// What `engine recover` did.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Changes undone, and those that could not be.
    pub restored: Vec<String>,
    pub failed: Vec<String>,
    /// Journals of runs still alive (they undo their own changes): their pids.
    pub alive: Vec<u32>,
    /// Temporary files of dead runs removed.
    pub removed: Vec<PathBuf>,
    /// Journals found with pending changes.
    pub journals: usize,
    /// Cgroups of killed runs' confined commands, emptied and removed.
    pub cgroups: usize,
    /// Entries of what installs moved aside that are still there after
    /// the removal's deadline (or Ctrl-C), and where.
    pub quarantined: Option<(usize, PathBuf)>,
    /// Entries of that quarantine cleared now.
    pub cleared: usize,
    /// What runs set aside beside the result folders (staged logs, unsaved
    /// results they could not remove in time): entries cleared now, and
    /// what is left, where and why.
    pub results_cleared: usize,
    /// What could not be removed there (a staging folder, a quarantine):
    /// where, how much and why.
    pub results_left: Vec<String>,
}

/// Temporary files (`.tmp-<pid>-…`) of dead engine processes in ENGINE_HOME:
/// half-written results, journals, run records, installs, compiled plugins.
/// Unfinished downloads (`cache/downloads/*.part`) are kept: the next
/// install resumes from them.
fn remove_stale_temps(cx: &Context, r: &mut Recovered) {
    let home = &cx.home;
    let (mut removed, left) = cx.store.remove_stale_temps();
    r.results_left = left;
    for dir in [home.journal(), home.runs(), home.installed(), home.plugin_cache(), home.root.clone()] {
        removed.extend(engine::sys::fs::remove_stale_temps(&dir));
    }
    // What installs moved aside and could not remove in time.
    let deadline = std::time::Instant::now() + engine::sys::remove::DEADLINE;
    let q = home.installed().join(engine::sys::remove::QUARANTINE);
    let before = std::fs::read_dir(&q).map(|rd| rd.count()).unwrap_or(0);
    let left = engine::sys::remove::clear_quarantine(&home.installed(), deadline);
    (r.removed, r.quarantined, r.cleared) = (removed, (left > 0).then_some((left, q)), before.saturating_sub(left));
}

pub fn recover(cx: &Context) -> Result<Recovered, Failure> {
    let left = journal::leftovers(&cx.home.journal()).map_err(Failure::error)?;
    let mut r = Recovered { journals: left.len(), ..Recovered::default() };
    for l in &left {
        if l.alive {
            r.alive.push(l.pid);
            continue;
        }
        let (done, failed) = journal::recover(l);
        r.restored.extend(done);
        r.failed.extend(failed);
    }
    remove_stale_temps(cx, &mut r);
    let (q, c) = cx.store.clear_quarantine(std::time::Instant::now() + engine::sys::remove::DEADLINE);
    r.results_cleared = c.removed;
    if let Some(why) = c.why.filter(|_| c.left > 0) {
        r.results_left.push(format!("{}: {} entr(ies) that could not be removed ({why})", q.display(), c.left));
    }
    // What a killed run's confined commands left: kill it, remove the cgroups.
    let root = cx.settings.cgroup_root.clone().unwrap_or_else(|| "/sys/fs/cgroup".into());
    r.cgroups = engine::sys::cgroup::Layout::detect(&root).map_or(0, |l| l.sweep());
    Ok(r)
}
