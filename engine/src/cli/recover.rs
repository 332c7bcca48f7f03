//! `engine recover`: undo what a killed run left changed (schedulers,
//! tunables, mounts, loop devices, servers, test folders), from the journal
//! in ENGINE_HOME, and remove the temporary files killed runs left there.

use super::{Failure, exit};
use clap::Args;
use engine::home::Home;
use engine::result::Store;
use engine::state::journal;

#[derive(Args, Debug)]
pub struct RecoverArgs {}

/// Temporary files (`.tmp-<pid>-…`) of dead engine processes in ENGINE_HOME:
/// half-written results, journals, run records, installs, compiled plugins.
/// Unfinished downloads (`cache/downloads/*.part`) are kept: the next
/// install resumes from them.
fn remove_stale_temps(home: &Home) -> Vec<std::path::PathBuf> {
    let mut removed = Store::new(home.results()).remove_stale_temps();
    for dir in [home.journal(), home.runs(), home.installed(), home.root.join("cache").join("wasm"), home.root.clone()]
    {
        removed.extend(engine::fsutil::remove_stale_temps(&dir));
    }
    removed
}

pub fn run(_: RecoverArgs) -> Result<i32, Failure> {
    let home = Home::from_env();
    let left = journal::leftovers(&home.journal()).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
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
    let removed = remove_stale_temps(&home);
    for p in &removed {
        println!("removed: {} (left by a killed run)", p.display());
    }
    if bad > 0 {
        return Err(Failure::new(exit::ERROR, format!("{bad} change(s) could not be undone"))
            .hint("fix the cause shown above and run `engine recover` again"));
    }
    if left.is_empty() && removed.is_empty() {
        println!("nothing to recover: no system state was left changed");
    }
    Ok(exit::OK)
}
