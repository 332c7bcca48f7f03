//! Phase 6: the target directory, usable and with room, named for what it is.

use super::flags::Flags;
use crate::{Failure, exit};
use engine::events::Events;
use engine::expand::Test;
use engine::runner::requirements;
use std::path::PathBuf;

pub(super) fn prepare(flags: &Flags, tests: &[Test], events: &dyn Events) -> Result<PathBuf, Failure> {
    let another = "pick another directory with `--target-dir DIR`";
    if flags.default_target {
        std::fs::create_dir_all(&flags.target).map_err(|e| {
            Failure::new(exit::ERROR, format!("cannot create {}: {e}", flags.target.display())).hint(another)
        })?;
    }
    let need =
        tests.iter().filter_map(|t| requirements::free_space_of(t).map(|b| (b, t.label()))).max_by_key(|(b, _)| *b);
    if !tests.is_empty() && flags.plan.filesystems.is_empty() {
        requirements::check_target(&flags.target, need)
            .map_err(|e| Failure::new(exit::ERROR, e.to_string()).hint(another))?;
        if let Some(w) = engine::sysinfo::target_warning(&flags.target) {
            events.message(&format!("warning: {w}"));
        }
    }
    Ok(std::fs::canonicalize(&flags.target).unwrap_or_else(|_| flags.target.clone()))
}
