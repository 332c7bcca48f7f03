//! Which tests run confined, and each confined test's sandbox: its plan
//! (what its commands see and may change), the network, IPC and user
//! namespaces its commands share, the cgroups and limits they run with, a
//! watchdog on the space its directories take, and what a denial looked
//! like when a confined command failed.
//!
//! A shared profile (from a repository, or imported from PTS) cannot give
//! itself more than the defaults: [`widenings`] lists what it asks beyond
//! them that the user has not granted (`--grant`), and the run refuses it.

use super::executor::ExecError;
use crate::model::grant::{Grants, Seg};
use crate::model::profile::{LoadedProfile, SandboxDef};
use crate::sys::cgroup::{self, Layout, Limits};
use crate::sys::confine::{Identity, Plan, Shared};
use crate::sys::process::Confined;
use crate::sys::safepath::Dir;
use crate::sys::space::Watchdog;
use std::path::{Path, PathBuf};

use std::time::Duration;

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

/// What a confined test gets when its profile asks for nothing more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    /// Memory per command: an eighth of the machine's, at least 1 GiB.
    pub memory: u64,
    pub processes: u64,
    /// Space the test's directories may take when the profile declares no
    /// `requirements.free_space` (with one, that plus a quarter).
    pub scratch: u64,
    /// Most a shared profile may declare as its free space without a grant.
    pub scratch_cap: u64,
    /// Longest a command may run when the profile gives no timeout, and the
    /// most a shared profile may give without a grant.
    pub time: Duration,
}

impl Defaults {
    /// The defaults on a machine with `ram` bytes of memory.
    pub fn for_machine(ram: Option<u64>) -> Defaults {
        let memory = (ram.unwrap_or(8 << 30) / 8).max(1 << 30);
        Defaults {
            memory,
            processes: PIDS_MAX,
            scratch: 1 << 30,
            scratch_cap: 16 << 30,
            time: Duration::from_secs(3600),
        }
    }
}

/// The run's sandbox settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    /// Where cgroups are made (none: no cgroup, only namespaces).
    pub cgroups: Option<Layout>,
    pub defaults: Defaults,
    /// What the user granted shared profiles (`--grant`).
    pub grants: Grants,
}

/// Whether `p` runs confined under `mode`.
pub fn applies(mode: Mode, p: &LoadedProfile) -> bool {
    match mode {
        Mode::On => true,
        Mode::Off => false,
        Mode::Auto => p.confined_by_default(),
    }
}

/// Why `sandbox: {io_uring: true}` and `sandbox.writable` are refused
/// together: io_uring's operations pass no system-call filter, so its open
/// could make a setuid file in a host directory (one written as the host's
/// root through an idmapped mount) where `open(2)` with that mode is denied.
pub const URING_AND_WRITABLE: &str = "`sandbox.io_uring` and `sandbox.writable` are not given together: io_uring's operations pass no system-call filter, so its open could leave a setuid file in a directory of the host's; use io_uring in the test's own directory, or leave out one of the two";

/// `sandbox: {io_uring: true}` beside a non-empty `sandbox.writable`: the
/// field to point at (see [`URING_AND_WRITABLE`]).
pub fn uring_and_writable(p: &LoadedProfile) -> Option<Vec<Seg>> {
    match &p.profile.sandbox {
        Some(SandboxDef::With(s)) if s.io_uring && !s.writable.is_empty() => {
            Some(vec![Seg::key("sandbox"), Seg::key("io_uring")])
        }
        _ => None,
    }
}

/// Something a shared profile asks for beyond the defaults that the user
/// has not granted: the field (a path into the profile), what it asks, and
/// the grant that would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Widening {
    pub field: Vec<Seg>,
    pub asks: String,
    pub grant: String,
}

/// What `p` asks beyond `d` that `g` does not grant; empty for a local
/// profile (its user wrote or kept it) and for one within the defaults.
pub fn widenings(p: &LoadedProfile, d: &Defaults, g: &Grants) -> Vec<Widening> {
    if !p.shared() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let sandbox = |k: &'static str| vec![Seg::key("sandbox"), Seg::key(k)];
    if let Some(SandboxDef::With(s)) = &p.profile.sandbox {
        for (i, r) in s.read.iter().enumerate() {
            if !read_allowed(p, Path::new(r), g) {
                let mut field = sandbox("read");
                field.push(Seg::Index(i));
                out.push(Widening { field, asks: format!("to read {r}"), grant: format!("read={r}") });
            }
        }
        if s.io_uring && !g.io_uring {
            out.push(Widening {
                field: sandbox("io_uring"),
                asks: "io_uring (its operations are not seen by the system-call filter)".into(),
                grant: "io_uring=yes".into(),
            });
        }
        for (i, w) in s.writable.iter().enumerate() {
            // `..` or a link on the way would take a granted prefix elsewhere.
            if !canonical(Path::new(w)) || !g.writable.iter().any(|x| Path::new(w).starts_with(x)) {
                let mut field = sandbox("writable");
                field.push(Seg::Index(i));
                out.push(Widening { field, asks: format!("to write {w}"), grant: format!("writable={w}") });
            }
        }
        if let Some(n) = s.processes.filter(|n| *n > g.processes.unwrap_or(d.processes)) {
            out.push(Widening {
                field: sandbox("processes"),
                asks: format!("{n} processes (the default is {})", d.processes),
                grant: format!("processes={n}"),
            });
        }
        let memory = s.memory.as_ref().map(crate::units::Size::bytes);
        if let Some(m) = memory.filter(|m| *m > g.memory.unwrap_or(d.memory)) {
            out.push(Widening {
                field: sandbox("memory"),
                asks: format!("{} of memory (the default is {})", fmt_size(m), fmt_size(d.memory)),
                grant: format!("memory={}", crate::units::exact_size(m)),
            });
        }
    }
    out.extend(time_widenings(p, d, g));
    out.extend(plugin_widenings(p, g));
    out.extend(program_widening(p, g));
    out
}

/// Built-in workloads that start a program the profile names (their
/// config key): engine's own code runs them, outside any sandbox.
const BUILTIN_PROGRAMS: [(&str, &str); 1] = [("startup-time", "command")];

/// A shared profile's built-in workload asked to start a program of the
/// profile's choosing: that program would run as engine does, unconfined,
/// so only the user may allow it, by name.
fn program_widening(p: &LoadedProfile, g: &Grants) -> Option<Widening> {
    let crate::model::profile::ExecutorDef::Builtin(b) = &p.profile.executor else { return None };
    let (_, key) = BUILTIN_PROGRAMS.iter().find(|(w, _)| *w == b.workload)?;
    let cmd = b.config.get(*key).map(|v| v.to_string()).filter(|v| !v.trim().is_empty())?;
    if g.builtin_command {
        return None;
    }
    Some(Widening {
        field: vec![Seg::key("executor"), Seg::key("builtin"), Seg::key("config"), Seg::key(key)],
        asks: format!("to run `{cmd}` outside the sandbox (a built-in workload starts it as engine runs)"),
        grant: "builtin-command=yes".into(),
    })
}

/// A shared profile's plugin limits (its workload's, its parsers') above
/// the defaults for a plugin call.
fn plugin_widenings(p: &LoadedProfile, g: &Grants) -> Vec<Widening> {
    use crate::plugin::limits::{DEFAULT_MEMORY, DEFAULT_TIME};
    let mut found: Vec<(Vec<Seg>, &crate::model::profile::PluginLimits)> = Vec::new();
    if let crate::model::profile::ExecutorDef::Wasm(w) = &p.profile.executor {
        found.push((vec![Seg::key("executor"), Seg::key("wasm"), Seg::key("limits")], &w.limits));
    }
    for (i, parser) in p.profile.parsers.iter().enumerate() {
        if let Some(pl) = &parser.plugin {
            found.push((vec![Seg::key("parsers"), Seg::Index(i), Seg::key("plugin"), Seg::key("limits")], &pl.limits));
        }
    }
    let mut out = Vec::new();
    for (field, limits) in found {
        let memory = limits.memory.as_ref().map(crate::units::Size::bytes);
        if let Some(m) = memory.filter(|m| *m > g.memory.unwrap_or(DEFAULT_MEMORY).max(DEFAULT_MEMORY)) {
            let mut f = field.clone();
            f.push(Seg::key("memory"));
            out.push(Widening {
                field: f,
                asks: format!("{} of memory for its plugin (the default is {})", fmt_size(m), fmt_size(DEFAULT_MEMORY)),
                grant: format!("memory={}", crate::units::exact_size(m)),
            });
        }
        let time = limits.time.as_ref().map(crate::units::Duration::get);
        if let Some(t) = time.filter(|t| *t > g.time.unwrap_or(DEFAULT_TIME).max(DEFAULT_TIME)) {
            let mut f = field;
            f.push(Seg::key("time"));
            let shown = humantime::format_duration(t).to_string();
            out.push(Widening {
                field: f,
                asks: format!(
                    "{shown} for one plugin call (the default is {})",
                    humantime::format_duration(DEFAULT_TIME)
                ),
                grant: format!("time={}", shown.replace(' ', "")),
            });
        }
    }
    out
}

/// A shared profile's declared free space (`space`, for one test) above
/// what it may declare without a grant.
pub fn scratch_widening(p: &LoadedProfile, space: Option<u64>, d: &Defaults, g: &Grants) -> Option<Widening> {
    let space = space.filter(|s| p.shared() && *s > g.scratch.unwrap_or(d.scratch_cap))?;
    Some(Widening {
        field: vec![Seg::key("requirements"), Seg::key("free_space")],
        asks: format!(
            "{} of scratch space (a shared profile may declare up to {})",
            fmt_size(space),
            fmt_size(d.scratch_cap)
        ),
        grant: format!("scratch={}", crate::units::exact_size(space)),
    })
}

fn fmt_size(b: u64) -> String {
    crate::units::format_bytes_binary(b)
}

/// Trials a shared profile schedules whatever its budget, without a grant.
pub(crate) const SHARED_TRIALS: u32 = 100;

/// A shared profile's trial budget above the time limit, and trials it
/// forces (scheduled, fewest, warm-ups) above [`SHARED_TRIALS`]: each
/// multiplies the commands' own timeouts into the run's length.
fn trial_widenings(p: &LoadedProfile, limit: std::time::Duration, g: &Grants) -> Vec<Widening> {
    let t = &p.profile.trials;
    let field = |k: &'static str| vec![Seg::key("trials"), Seg::key(k)];
    let mut out = Vec::new();
    if let Some(b) = t.budget.as_ref().map(crate::units::Duration::get).filter(|b| *b > limit) {
        let shown = humantime::format_duration(b).to_string();
        out.push(Widening {
            field: field("budget"),
            asks: format!("{shown} of trials for one test (the limit is {})", humantime::format_duration(limit)),
            grant: format!("time={}", shown.replace(' ', "")),
        });
    }
    let most = g.trials.unwrap_or(SHARED_TRIALS).max(SHARED_TRIALS);
    for (k, n) in [("times", Some(t.times)), ("min", t.min), ("warmup", Some(t.warmup))] {
        if let Some(n) = n.filter(|n| *n > most) {
            out.push(Widening {
                field: field(k),
                asks: format!("{n} trials whatever the budget (a shared profile may force up to {SHARED_TRIALS})"),
                grant: format!("trials={n}"),
            });
        }
    }
    out
}

/// Timeouts of a shared profile's commands above the default.
fn time_widenings(p: &LoadedProfile, d: &Defaults, g: &Grants) -> Vec<Widening> {
    let limit = g.time.unwrap_or(d.time);
    let mut out = trial_widenings(p, limit, g);
    let mut stops = Vec::new();
    let mut check = |field: Vec<Seg>, t: &Option<crate::units::Duration>| {
        let Some(v) = t.as_ref().map(crate::units::Duration::get) else { return };
        if v > limit {
            let t = humantime::format_duration(v).to_string();
            out.push(Widening {
                field,
                asks: format!("{t} for one command (the default is {})", humantime::format_duration(d.time)),
                grant: format!("time={}", t.replace(' ', "")),
            });
        }
    };
    if let crate::model::profile::ExecutorDef::External(e) = &p.profile.executor {
        let ext = || vec![Seg::key("executor"), Seg::key("external")];
        let mut f = ext();
        f.push(Seg::key("timeout"));
        check(f, &e.timeout);
        for (list, steps) in [("pre_test", &e.pre_test), ("pre_trial", &e.pre_trial), ("post_trial", &e.post_trial)] {
            for (i, s) in steps.iter().enumerate() {
                let mut f = ext();
                f.extend([Seg::key(list), Seg::Index(i), Seg::key("timeout")]);
                check(f, &s.timeout);
            }
        }
        // A server that ignores its stop signal holds the run this long.
        let stop_limit = g.time.unwrap_or(crate::model::profile::STOP_TIMEOUT);
        for (list, steps) in [("pre_test", &e.pre_test), ("pre_trial", &e.pre_trial)] {
            for (i, def) in steps.iter().enumerate().filter_map(|(i, s)| Some((i, s.server.as_ref()?))) {
                let Some(v) = def.stop_timeout.as_ref().map(crate::units::Duration::get).filter(|v| *v > stop_limit)
                else {
                    continue;
                };
                let mut field = ext();
                field.extend([Seg::key(list), Seg::Index(i), Seg::key("server"), Seg::key("stop_timeout")]);
                let t = humantime::format_duration(v).to_string();
                stops.push(Widening {
                    field,
                    asks: format!(
                        "{t} for a server to stop (the default is {})",
                        humantime::format_duration(crate::model::profile::STOP_TIMEOUT)
                    ),
                    grant: format!("time={}", t.replace(' ', "")),
                });
            }
        }
        for (i, s) in e.post_test.iter().enumerate() {
            let mut f = ext();
            f.extend([Seg::key("post_test"), Seg::Index(i), Seg::key("timeout")]);
            check(f, &s.timeout);
        }
    }
    // A confined build step runs as long as its timeout lets it, too.
    for (i, s) in p.profile.install.iter().flat_map(|i| i.build.iter()).enumerate() {
        check(vec![Seg::key("install"), Seg::key("build"), Seg::Index(i), Seg::key("timeout")], &s.timeout);
    }
    out.extend(stops);
    out
}

/// One confined test's sandbox.
pub struct Sandbox {
    plan: Plan,
    shared: Shared,
    /// Where its commands' cgroups are made: inside `budget`.
    cgroups: Option<Layout>,
    /// The test's cgroup: `limits` for all its commands together. Dropped
    /// after them (fields drop in order), so it removes what is left.
    budget: Option<cgroup::Cgroup>,
    limits: Limits,
    /// The space its directories may take (RLIMIT_FSIZE for one file too).
    scratch: u64,
    /// Who owns what engine makes for its commands (root or nobody inside).
    owner: Identity,
    private: PathBuf,
    watchdog: Option<Watchdog>,
    /// What its sockets hold in the kernel, counted against its memory.
    sockets: Option<crate::sys::sockmem::Watch>,
}

impl Sandbox {
    /// The sandbox of a test in `test_dir` of profile `p`: writable its
    /// folder (the trials' scratch directories are in it) and what the
    /// profile declares (and, when shared, the user granted), visible
    /// read-only its own folder and install; `space` is the free space the
    /// test declares, `unprivileged` whether its steps run as nobody.
    pub(crate) fn new(
        cfg: &Config,
        p: &LoadedProfile,
        test: &Dir,
        install_dir: &Path,
        space: Option<u64>,
        unprivileged: bool,
    ) -> Result<Sandbox, ExecError> {
        let setup = |e: &dyn std::fmt::Display| ExecError::Setup(format!("sandbox: {e}"));
        let test_dir = test.path();
        // Beside the test's folder, not in it: the command cannot replace
        // what it cannot write, so /tmp and /dev/shm stay what engine made.
        let private = sibling(test_dir, "sandbox");
        let mut plan =
            Plan::standard(&private).map_err(|e| setup(&format!("cannot make {}: {e}", private.display())))?;
        plan.writable.push(test_dir.to_path_buf());
        let declared = p.profile.sandbox.as_ref().map(SandboxDef::writable).unwrap_or_default();
        let allowed = |d: &PathBuf| !p.shared() || cfg.grants.writable.iter().any(|g| d.starts_with(g));
        for d in declared.iter().map(PathBuf::from).filter(|d| d.is_dir()) {
            // Bound as named: no `..`, no link on the way (a link a test
            // planted in a granted directory would bind what it names).
            if !canonical(&d) {
                return Err(setup(&format!(
                    "`sandbox.writable` {} goes through `..` or a symbolic link; name the directory itself",
                    d.display()
                )));
            }
            if allowed(&d) {
                plan.writable_host.push(d);
            }
        }
        plan.readonly
            .extend([p.dir(), Some(install_dir)].into_iter().flatten().filter(|d| d.is_dir()).map(Path::to_path_buf));
        plan.read = readable(p, &cfg.grants).map_err(|e| setup(&e))?;
        let declared_uring = p.profile.sandbox.as_ref().is_some_and(SandboxDef::io_uring);
        if declared_uring && !plan.writable_host.is_empty() {
            return Err(setup(&URING_AND_WRITABLE));
        }
        // A local profile's user wrote or kept it; a shared one declares
        // io_uring and the user grants it by name. Never with a host
        // directory writable (the sandbox turns it off then).
        plan.io_uring = (!p.shared() || (declared_uring && cfg.grants.io_uring)) && plan.writable_host.is_empty();
        plan.pty = p.profile.sandbox.as_ref().is_some_and(SandboxDef::pty);
        let owner = if unprivileged { Identity::Nobody } else { Identity::Root };
        let (uid, gid) = owner.host();
        test.chown(uid, gid).map_err(|e| setup(&format!("cannot hand {} to the sandbox: {e}", test_dir.display())))?;
        let limits = limits_of(p, &cfg.defaults, &cfg.grants);
        let shared = Shared::new(limits.memory.unwrap_or(cfg.defaults.memory)).map_err(|e| setup(&e))?;
        let budget = cfg
            .cgroups
            .as_ref()
            .map(|l| cgroup::Cgroup::create_budget(l, &limits))
            .transpose()
            .map_err(|e| setup(&format!("cannot make the test's cgroup: {e}")))?;
        let scratch = space.map(|s| (s + s / 4).max(SCRATCH_FLOOR)).unwrap_or(cfg.defaults.scratch);
        let test = Dir::open(test_dir).map_err(|e| setup(&e))?;
        let watchdog = (|| shared.watch(vec![Dir::open(test.path()).ok()?, Dir::open(&private).ok()?], scratch))();
        let cgroups = budget.as_ref().map(cgroup::Cgroup::layout);
        let memcg = cgroups.as_ref().and_then(|l| l.memory.clone());
        let sockets = shared.watch_sockets(limits.memory.unwrap_or(cfg.defaults.memory), memcg);
        Ok(Sandbox { plan, shared, cgroups, budget, limits, scratch, owner, private, watchdog, sockets })
    }

    pub(crate) fn confined(&self) -> Confined<'_> {
        Confined {
            plan: &self.plan,
            shared: &self.shared,
            cgroups: self.cgroups.as_ref(),
            // The memory limit is the test's (its cgroup's), for all its
            // commands together; processes are bounded per command too.
            limits: Limits { memory: None, ..self.limits },
            file_size: Some(self.scratch),
        }
    }

    /// Runs `f` inside the test's network (a probe of a server's port).
    pub(crate) fn inside<T: Send>(&self, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
        self.shared.inside(f)
    }

    /// Hands a directory engine made for the test (a trial's) to the
    /// sandbox's user, through its descriptor.
    pub(crate) fn hand_over(&self, d: &Dir) -> std::io::Result<()> {
        let (uid, gid) = self.owner.host();
        d.chown(uid, gid)
    }

    /// Its private /tmp: where a server's socket under /tmp really is.
    pub(crate) fn tmp(&self) -> &Path {
        &self.plan.tmp
    }

    /// What the sandbox most likely denied a command that failed: `fin`
    /// says how it ended (a file over the limit ends it, or its shell's
    /// child, with SIGXFSZ).
    pub(crate) fn denied(&self, stderr: &str, fin: &crate::sys::process::Finished) -> Option<String> {
        use crate::sys::process::Exit;
        let xfsz = matches!(fin.exit, Exit::Signal(libc::SIGXFSZ)) || fin.exit == Exit::Code(128 + libc::SIGXFSZ);
        let what = "the sandbox's scratch limit: the profile's `requirements.free_space` and a quarter more, or 1 GiB when it declares none";
        if let (Some(held), Some(m)) = (self.sockets.as_ref().and_then(|w| w.tripped()), self.limits.memory) {
            let held = match held {
                crate::sys::sockmem::TOO_MANY => "more netlink sockets than engine reads, about 2,800".to_string(),
                b => fmt_size(b),
            };
            return Some(format!(
                "more than {} of memory with what its sockets held queued in the kernel ({held}; the sandbox's limit; a profile may declare `sandbox: {{memory: SIZE}}`)",
                fmt_size(m)
            ));
        }
        if let Some(trip) = self.watchdog.as_ref().and_then(Watchdog::tripped) {
            return Some(super::watchdog::explain(trip, self.scratch, what));
        }
        if xfsz {
            return Some(super::watchdog::explain(crate::sys::space::Trip::Over, self.scratch, what));
        }
        denied(stderr, fin.cgroup.as_ref(), &self.limits)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.watchdog.take();
        self.sockets.take();
        self.budget.take();
        // What the test left in flight in Unix sockets outlives its
        // processes until the kernel collects it.
        crate::sys::sockmem::collect_unix_garbage();
        let deadline = std::time::Instant::now() + crate::sys::remove::DEADLINE;
        let _ = crate::sys::remove::remove_path(&self.private, Some(deadline));
    }
}

/// Where a shared profile may ask to read (`sandbox.read`) without a grant.
pub const READ_ALLOWED: [&str; 3] = ["/opt", "/usr/local", "/etc/alternatives"];

/// The host paths `p` asks to read (`sandbox.read`): each absolute, with
/// no symbolic link on its way (what is bound is what was named), and for
/// a shared profile beneath [`READ_ALLOWED`] or a `--grant read=PATH`
/// (checked before the run too, by [`widenings`]). Missing ones are left
/// out.
fn readable(p: &LoadedProfile, g: &Grants) -> Result<Vec<PathBuf>, ReadRefused> {
    let mut out = Vec::new();
    for r in p.profile.sandbox.as_ref().map(SandboxDef::read).unwrap_or_default() {
        let path = PathBuf::from(&r);
        if !read_allowed(p, &path, g) {
            return Err(ReadRefused::NeedsGrant(path));
        }
        match path.canonicalize() {
            Ok(_) if canonical(&path) => out.push(path),
            Ok(to) => return Err(ReadRefused::ThroughLink { path, to }),
            Err(_) => {}
        }
    }
    Ok(out)
}

/// Why a path of `sandbox.read` is not bound.
#[derive(Debug, thiserror::Error)]
enum ReadRefused {
    #[error("the profile asks to read {}, which needs `--grant read={}`", .0.display(), .0.display())]
    NeedsGrant(PathBuf),
    #[error("`sandbox.read` {} goes through a symbolic link (to {})", path.display(), to.display())]
    ThroughLink { path: PathBuf, to: PathBuf },
}

/// Whether `p` is absolute and names itself: no `.`, `..`, trailing slash
/// or symbolic link on its way.
fn canonical(p: &Path) -> bool {
    p.is_absolute() && !p.as_os_str().as_encoded_bytes().ends_with(b"/") && p.canonicalize().is_ok_and(|c| c == p)
}

fn read_allowed(p: &LoadedProfile, path: &Path, g: &Grants) -> bool {
    !p.shared()
        || READ_ALLOWED.iter().map(Path::new).chain(g.read.iter().map(PathBuf::as_path)).any(|a| path.starts_with(a))
}

/// The least scratch space a test gets however little it declares.
const SCRATCH_FLOOR: u64 = 64 << 20;

/// `<test_dir>.<what>`: beside the test's folder, named with its prefix
/// (so what a kill -9 leaves goes with the test folders).
fn sibling(test_dir: &Path, what: &str) -> PathBuf {
    let name = test_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    test_dir.with_file_name(format!("{name}.{what}"))
}

/// The cgroup limits of `p`'s commands: what it declares (a shared profile
/// only within the defaults or what was granted), else the defaults.
fn limits_of(p: &LoadedProfile, d: &Defaults, g: &Grants) -> Limits {
    let spec = match &p.profile.sandbox {
        Some(SandboxDef::With(s)) => Some(s),
        _ => None,
    };
    let cap = |asked: Option<u64>, default: u64, granted: Option<u64>| match asked {
        Some(a) if p.shared() => a.min(granted.unwrap_or(default).max(default)),
        Some(a) => a,
        None => default,
    };
    let memory = spec.and_then(|s| s.memory.as_ref()).map(crate::units::Size::bytes);
    Limits {
        pids: cap(spec.and_then(|s| s.processes), d.processes, g.processes),
        memory: Some(cap(memory, d.memory, g.memory)),
    }
}

/// What the sandbox most likely denied a confined command that failed,
/// from its standard error and its cgroup's figures.
pub(crate) fn denied(stderr: &str, usage: Option<&cgroup::Usage>, limits: &Limits) -> Option<String> {
    if usage.is_some_and(|u| u.pids_refused > 0) {
        return Some(format!(
            "more than {} processes (the sandbox's limit; a profile may declare `sandbox: {{processes: N}}`)",
            limits.pids
        ));
    }
    if let (Some(u), Some(m)) = (usage, limits.memory)
        && u.oom_kills > 0
    {
        return Some(format!(
            "more than {} of memory (the sandbox's limit; a profile may declare `sandbox: {{memory: SIZE}}`)",
            fmt_size(m)
        ));
    }
    let rules: [(&str, &str); 6] = [
        ("Read-only file system", "a write outside the test's directories (the rest of the file system is read-only)"),
        (
            "Connection refused",
            "a connection to a port no server of this test listens on (the test has a network of its own, only lo)",
        ),
        ("Network is unreachable", "a connection outside the test's own network (only lo)"),
        ("No such process", "a signal to a process outside the test's sandbox"),
        ("Permission denied", "a file of the host's that the sandbox's unprivileged user may not read or write"),
        ("Operation not permitted", "an operation the sandbox forbids (a privileged system call or capability)"),
    ];
    if stderr.contains("io_uring") && stderr.contains("Function not implemented") {
        return Some(
            "io_uring, which a shared profile's commands get only when it declares `sandbox: {io_uring: true}` and the user grants `--grant io_uring=yes`, and no command gets while it can write a directory of the host's (`sandbox.writable`)"
                .into(),
        );
    }
    let hidden = stderr.contains("No such file or directory")
        && crate::sys::confine::HIDDEN.iter().chain(&["/etc/"]).any(|h| stderr.contains(h));
    if hidden {
        return Some(
            "a path outside the sandbox's world (it holds /usr, a few /etc files, /sys and the test's own folders; /var, /run, /home, /root and the rest are not there — a profile may list more with `sandbox: {read: [...]}`)"
                .into(),
        );
    }
    rules.iter().find(|(needle, _)| stderr.contains(needle)).map(|(_, what)| what.to_string())
}
