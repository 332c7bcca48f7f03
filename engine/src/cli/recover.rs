//! `engine recover`: undo what a killed run left changed (schedulers,
//! tunables, mounts, loop devices), from the journal in ENGINE_HOME.

use super::{Failure, exit};
use clap::Args;
use engine::home::Home;
use engine::state::journal;

#[derive(Args, Debug)]
pub struct RecoverArgs {}

pub fn run(_: RecoverArgs) -> Result<i32, Failure> {
    let home = Home::from_env();
    let left = journal::leftovers(&home.journal()).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    if left.is_empty() {
        println!("nothing to recover: no system state was left changed");
        return Ok(exit::OK);
    }
    let mut bad = 0;
    for l in &left {
        if l.alive {
            eprintln!("skipped: engine (pid {}) is still running and will undo its own changes", l.pid);
            bad += 1;
            continue;
        }
        let (done, failed) = journal::recover(l);
        for d in done {
            println!("restored: {d}");
        }
        for f in &failed {
            eprintln!("failed: {f}");
        }
        bad += failed.len();
    }
    if bad > 0 {
        return Err(Failure::new(exit::ERROR, format!("{bad} change(s) could not be undone"))
            .hint("fix the cause shown above and run `engine recover` again"));
    }
    Ok(exit::OK)
}
