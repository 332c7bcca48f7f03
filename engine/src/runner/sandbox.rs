//! Which tests run confined, and each confined test's sandbox: its plan
//! (what its commands see and may change), the network and IPC namespaces
//! its commands share, the cgroups they run in, and what a denial looked
//! like when a confined command failed.

use super::executor::ExecError;
use crate::model::profile::{LoadedProfile, SandboxDef};
use crate::sys::cgroup::{self, Layout};
use crate::sys::confine::{Plan, Shared};
use crate::sys::process::Confined;
use std::path::{Path, PathBuf};

pub use crate::sys::cgroup::PIDS_MAX;

/// `--sandbox` / `--no-sandbox`, or neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Repository and imported profiles, and those that ask (`sandbox: true`).
    #[default]
    Auto,
    /// Every profile with an external executor.
    On,
    /// None, repository profiles included.
    Off,
}

/// The run's sandbox settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    /// Hidden from confined commands.
    pub engine_home: PathBuf,
    /// Where cgroups are made (none: no cgroup, only namespaces).
    pub cgroups: Option<Layout>,
}

/// Whether `p` runs confined under `mode`.
pub fn applies(mode: Mode, p: &LoadedProfile) -> bool {
    match mode {
        Mode::On => true,
        Mode::Off => false,
        Mode::Auto => p.confined_by_default(),
    }
}

/// One confined test's sandbox.
pub struct Sandbox {
    plan: Plan,
    shared: Shared,
    cgroups: Option<Layout>,
    pids_max: u64,
}

impl Sandbox {
    /// The sandbox of a test in `test_dir` of profile `p`: writable its
    /// folder (the trials' scratch directories are in it) and what the
    /// profile declares, visible read-only its own folder and install.
    pub fn new(cfg: &Config, p: &LoadedProfile, test_dir: &Path, install_dir: &Path) -> Result<Sandbox, ExecError> {
        let setup = |e: &dyn std::fmt::Display| ExecError::Setup(format!("sandbox: {e}"));
        let private = test_dir.join(".sandbox");
        let mut plan = Plan::standard(&cfg.engine_home, &private)
            .map_err(|e| setup(&format!("cannot make {}: {e}", private.display())))?;
        plan.writable.push(test_dir.to_path_buf());
        let declared = p.profile.sandbox.as_ref().map(SandboxDef::writable).unwrap_or_default();
        plan.writable.extend(declared.iter().map(PathBuf::from).filter(|d| d.is_dir()));
        plan.readonly
            .extend([p.dir(), Some(install_dir)].into_iter().flatten().filter(|d| d.is_dir()).map(Path::to_path_buf));
        let shared = Shared::new().map_err(|e| setup(&e))?;
        let pids_max = p.profile.sandbox.as_ref().and_then(SandboxDef::processes).unwrap_or(PIDS_MAX);
        Ok(Sandbox { plan, shared, cgroups: cfg.cgroups.clone(), pids_max })
    }

    pub fn confined(&self) -> Confined<'_> {
        Confined { plan: &self.plan, shared: &self.shared, cgroups: self.cgroups.as_ref(), pids_max: self.pids_max }
    }

    /// Runs `f` inside the test's network (a probe of a server's port).
    pub fn inside<T: Send>(&self, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
        self.shared.inside(f)
    }

    pub fn pids_max(&self) -> u64 {
        self.pids_max
    }
}

/// What the sandbox most likely denied a confined command that failed,
/// from its standard error and its cgroup's figures.
pub fn denied(stderr: &str, usage: Option<&cgroup::Usage>, pids_max: u64) -> Option<String> {
    if usage.is_some_and(|u| u.pids_refused > 0) {
        return Some(format!(
            "more than {pids_max} processes (the sandbox's limit; a profile may declare `sandbox: {{processes: N}}`)"
        ));
    }
    let rules: [(&str, &str); 5] = [
        ("Read-only file system", "a write outside the test's directories (the rest of the file system is read-only)"),
        (
            "Connection refused",
            "a connection to a port no server of this test listens on (the test has a network of its own, only lo)",
        ),
        ("Network is unreachable", "a connection outside the test's own network (only lo)"),
        ("No such process", "a signal to a process outside the test's sandbox"),
        ("Operation not permitted", "an operation that needs a capability the sandbox drops"),
    ];
    let hidden = stderr.contains("No such file or directory")
        && crate::sys::confine::HIDDEN.iter().chain(&["/etc/shadow"]).any(|h| stderr.contains(h));
    if hidden {
        return Some("a path the sandbox hides (/root, /home, /run, engine's home)".into());
    }
    rules.iter().find(|(needle, _)| stderr.contains(needle)).map(|(_, what)| what.to_string())
}
