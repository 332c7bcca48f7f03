//! Whether this machine can confine commands: the namespaces the sandbox
//! needs (where `Settings::namespaces_dir` says the kernel lists them) and a
//! cgroup hierarchy (under `Settings::cgroup_root`). Checked once, before
//! anything confined would run.

use crate::Context;
use engine::sys::confine::{self, Unconfinable};
use engine::sys::{cgroup::Layout, process};
use std::sync::Arc;

/// The cgroups confined commands run in, or what this machine lacks.
pub(crate) fn confinement(cx: &Context) -> Result<Layout, Unconfinable> {
    let ns_dir = cx.settings.namespaces_dir.clone().unwrap_or_else(|| "/proc/self/ns".into());
    confine::check(&ns_dir)?;
    let root = cx.settings.cgroup_root.clone().unwrap_or_else(|| "/sys/fs/cgroup".into());
    let Some(layout) = Layout::detect(&root) else { return Err(Unconfinable::NoCgroups(root)) };
    if !layout.has_memory() {
        return Err(Unconfinable::NoMemoryController(root));
    }
    probe(&layout)?;
    Ok(layout)
}

/// Runs `/bin/true` once the way a test's command runs (new root through
/// `pivot_root`, namespaces, the filter, a cgroup with a memory limit):
/// what a kernel lacks shows here, named, before the run — never as a
/// weaker sandbox, never in the middle of a result.
fn probe(layout: &Layout) -> Result<(), Unconfinable> {
    let folder = |e| Unconfinable::ProbeFolder(Arc::new(e));
    let start = |e| Unconfinable::Start(Arc::new(e));
    let dir = tempfile::Builder::new().prefix(".engine-probe-").tempdir().map_err(folder)?;
    let mut plan = confine::Plan::standard(&dir.path().join("sandbox")).map_err(folder)?;
    let work = dir.path().join("work");
    std::fs::create_dir(&work).map_err(folder)?;
    plan.writable.push(work.clone());
    let shared = confine::Shared::new(16 << 20)?;
    let limits = engine::sys::cgroup::Limits { memory: Some(256 << 20), ..Default::default() };
    let err = process::memfile("probe").map_err(start)?;
    let fin = process::run(process::Spec {
        program: std::ffi::OsStr::new("/bin/true"),
        args: &[],
        env: &[],
        cwd: &work,
        stdin: None,
        stdout: std::fs::File::open("/dev/null").map_err(start)?,
        stderr: err.try_clone().map_err(start)?,
        timeout: Some(std::time::Duration::from_secs(10)),
        confine: Some(process::Confined {
            plan: &plan,
            shared: &shared,
            cgroups: Some(layout),
            limits,
            file_size: None,
        }),
        stdin_inside: None,
    });
    let said = engine::sys::bounded::read(&err, 64 << 10).unwrap_or_default();
    let why = said.lines().rev().find(|l| l.starts_with("engine sandbox: ")).map(str::to_string);
    match (fin, why) {
        (Ok(f), _) if f.exit.success() => Ok(()),
        (_, Some(line)) => Err(Unconfinable::Refused(line)),
        (Ok(f), None) => Err(Unconfinable::Ended(format!("{:?}", f.exit))),
        (Err(e), None) => Err(start(e)),
    }
}
