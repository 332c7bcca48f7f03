//! Whether this machine can confine commands: the namespaces the sandbox
//! needs (where `Settings::namespaces_dir` says the kernel lists them) and a
//! cgroup hierarchy (under `Settings::cgroup_root`). Checked once, before
//! anything confined would run.

use crate::ops::Context;
use crate::sys::{cgroup::Layout, confine};

/// The cgroups confined commands run in, or what this machine lacks.
pub(crate) fn confinement(cx: &Context) -> Result<Layout, String> {
    let ns_dir = cx.settings.namespaces_dir.clone().unwrap_or_else(|| "/proc/self/ns".into());
    confine::check(&ns_dir).map_err(|e| e.to_string())?;
    let root = cx.settings.cgroup_root.clone().unwrap_or_else(|| "/sys/fs/cgroup".into());
    let layout = Layout::detect(&root).ok_or_else(|| {
        format!(
            "the sandbox needs a cgroup hierarchy (v2, or v1 cpuacct, memory, blkio or pids) under {}, and there is none",
            root.display()
        )
    })?;
    if !layout.has_memory() {
        return Err(format!(
            "the sandbox limits each command's memory, and no cgroup hierarchy under {} offers the memory controller (v1 `memory`, or v2 with `memory` in engine's cgroup.subtree_control)",
            root.display()
        ));
    }
    Ok(layout)
}
