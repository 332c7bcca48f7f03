//! Phase 1: every flag checked before anything is resolved or created.

use super::Request;
use crate::{Context, Failure, exit};
use engine::state::sweep::Plan;
use std::path::PathBuf;

/// The flags, checked.
pub(super) struct Flags {
    pub target: PathBuf,
    /// The target is engine's default (created when missing).
    pub default_target: bool,
    pub plan: Plan,
}

pub(super) fn check(cx: &Context, req: &Request) -> Result<Flags, Failure> {
    let (target, default_target) = match &req.target_dir {
        Some(t) => (t.clone(), false),
        None => (cx.home.default_target_dir(), true),
    };
    if !default_target {
        match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Failure::new(exit::ERROR, format!("--target-dir {} is not a directory", target.display())));
            }
            Err(e) => {
                return Err(Failure::new(
                    exit::ERROR,
                    format!("--target-dir {} cannot be used: {e}", target.display()),
                )
                .hint(
                    "create it first (engine does not create it: an unmounted mount point would test the wrong disk)",
                ));
            }
        }
    }
    if let (Some(runs), Some(setups)) = (req.runs, req.setups)
        && !runs.is_multiple_of(setups)
    {
        return Err(Failure::usage(format!(
            "--runs {runs} cannot be split into {setups} set-ups of the same number of trials"
        ))
        .hint(format!(
            "give --runs a multiple of {setups} (--runs {} is {} a set-up)",
            setups * runs.div_ceil(setups).max(1),
            runs.div_ceil(setups).max(1)
        )));
    }
    let loop_dir = req.sweep.loop_dir.clone().unwrap_or_else(|| cx.home.root.join("loop"));
    let mut plan = Plan::new(&req.sweep, loop_dir, req.hygiene)?;
    if let Some(b) = &req.sweep.baseline {
        engine::state::sweep::baseline_first(&mut plan, b)?;
    }
    // Before any menu: what the run would refuse later, it refuses now.
    engine::state::sweep::precheck(&plan, &target)?;
    Ok(Flags { target, default_target, plan })
}
