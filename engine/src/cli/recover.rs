//! `engine recover`: undo what a killed run left changed (schedulers,
//! tunables, mounts, loop devices, servers, test folders), from the journal
//! in ENGINE_HOME, and remove the temporary files killed runs left there.

use super::{Failure, exit};
use clap::Args;
use engine_ops::Context;

#[derive(Args, Debug)]
pub struct RecoverArgs {}

pub fn run(cx: &Context, _: RecoverArgs) -> Result<i32, Failure> {
    let r = engine_ops::recover::recover(cx)?;
    for pid in &r.alive {
        errln!("skipped: engine (pid {pid}) is still running and will undo its own changes");
    }
    for d in &r.restored {
        outln!("restored: {d}");
    }
    for f in &r.failed {
        errln!("failed: {f}");
    }
    for p in &r.removed {
        outln!("removed: {} (left by a killed run)", p.display());
    }
    if r.cgroups > 0 {
        outln!("removed: {} cgroup(s) of confined commands of killed runs (their processes killed)", r.cgroups);
    }
    if r.cleared > 0 {
        outln!("removed: {} tree(s) installs had set aside (outgrown or failed builds)", r.cleared);
    }
    if let Some((n, q)) = &r.quarantined {
        errln!(
            "left: {n} entr(ies) in {} not removed within the deadline; run `engine recover` again to go on",
            q.display()
        );
    }
    if r.results_cleared > 0 {
        outln!("removed: {} folder(s) runs had set aside (staged logs, unsaved results)", r.results_cleared);
    }
    for what in &r.results_left {
        errln!("left: {what}");
    }
    let bad = r.failed.len() + r.alive.len();
    if bad > 0 {
        return Err(Failure::error(format!("{bad} change(s) could not be undone"))
            .hint("fix the cause shown above and run `engine recover` again"));
    }
    if r.journals == 0
        && r.removed.is_empty()
        && r.cgroups == 0
        && r.quarantined.is_none()
        && r.cleared == 0
        && r.results_cleared == 0
        && r.results_left.is_empty()
    {
        outln!("nothing to recover: no system state was left changed");
    }
    Ok(exit::OK)
}
