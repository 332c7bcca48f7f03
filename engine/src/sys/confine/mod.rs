//! Confinement of a command from a shared profile (README, "Sandbox"): new
//! mount, PID and UTS namespaces of its own, the network, IPC and user
//! namespaces of its test (only `lo`, so the test's servers and clients
//! still talk; root inside is an unprivileged id outside, see
//! [`super::userns`]), the root file system, `/proc` and `/sys` read-only,
//! `/root`, `/home`, `/run` and engine's home hidden, a `/dev` of its own
//! (null, zero, full, random, urandom, tty; no disks), a private `/tmp` and
//! `/dev/shm`, and writable only the directories the plan names. Inside its
//! user namespace it keeps only the capabilities that act on its own files
//! and processes, none in the host's; no new privileges can be gained; a
//! system-call filter ([`super::seccomp`]) denies what would reach outside.
//!
//! The plan is turned into C strings and file descriptors in engine
//! ([`Prepared::new`]) — every directory it binds is opened here, without
//! following a symlink, so what a command later plants under its path is
//! never mounted — and between fork and exec the child makes only system
//! calls (`child.rs`).

mod child;

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What a confined command may see and change.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Writable (and visible even inside a hidden directory).
    pub writable: Vec<PathBuf>,
    /// Writable, the host's own directories (declared or granted): mounted
    /// with the host's ids shown as the sandbox's (an idmapped mount), so
    /// root inside may write them as the host's root owns them — and what
    /// it creates there is the host's root's, not an id of the range.
    pub writable_host: Vec<PathBuf>,
    /// Visible read-only inside a hidden directory (an install directory).
    pub readonly: Vec<PathBuf>,
    /// Mounted at /tmp and /var/tmp.
    pub tmp: PathBuf,
    /// Mounted at /dev/shm.
    pub shm: PathBuf,
    /// Replaced by an empty directory of the command's own (a small tmpfs).
    pub hide: Vec<PathBuf>,
    /// Files replaced by an empty one (/etc/shadow).
    pub hide_files: Vec<PathBuf>,
    pub hostname: String,
}

/// Directories every plan hides (those that exist).
pub(crate) const HIDDEN: [&str; 7] = ["/root", "/home", "/run", "/var/run", "/mnt", "/media", "/srv/engine"];

impl Plan {
    /// The hidden places every plan starts with, and its private /tmp and
    /// /dev/shm made (sticky, world-writable) in `private` — a directory
    /// the command cannot write itself, so it cannot swap them for links.
    pub(crate) fn standard(engine_home: &Path, private: &Path) -> std::io::Result<Plan> {
        let (tmp, shm) = (private.join("tmp"), private.join("shm"));
        for d in [&tmp, &shm] {
            use std::os::unix::fs::PermissionsExt;
            std::fs::create_dir_all(d)?;
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777))?;
        }
        let mut hide: Vec<PathBuf> =
            HIDDEN.iter().map(PathBuf::from).filter(|p| p.is_dir() && !p.is_symlink()).collect();
        // Under /tmp it is gone already: the command gets a /tmp of its own.
        let in_tmp = ["/tmp", "/var/tmp"].iter().any(|t| engine_home.starts_with(t));
        if !in_tmp && !hide.iter().any(|h| engine_home.starts_with(h)) {
            hide.push(engine_home.to_path_buf());
        }
        let hide_files = ["/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"]
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .collect();
        Ok(Plan { hide, hide_files, tmp, shm, hostname: "engine-sandbox".into(), ..Plan::default() })
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfineError {
    #[error("the sandbox needs {0}, which this system lacks")]
    Missing(String),
    #[error("cannot set up the sandbox: {what}: {source}")]
    Setup { what: String, source: std::io::Error },
}

fn setup(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ConfineError {
    let what = what.into();
    move |source| ConfineError::Setup { what, source }
}

/// What the kernel must offer: the namespaces (checked in `ns_dir`,
/// normally /proc/self/ns), user namespaces it lets root make, seccomp
/// filters, and root.
pub(crate) fn check(ns_dir: &Path) -> Result<(), ConfineError> {
    for ns in ["mnt", "pid", "net", "ipc", "uts", "user"] {
        if !ns_dir.join(ns).exists() {
            return Err(ConfineError::Missing(format!("{ns} namespaces ({} is missing)", ns_dir.join(ns).display())));
        }
    }
    if !super::is_root() {
        return Err(ConfineError::Missing("root (namespaces and mounts are set up as root)".into()));
    }
    let max = std::fs::read_to_string("/proc/sys/user/max_user_namespaces").ok();
    if max.as_deref().map(str::trim) == Some("0") {
        return Err(ConfineError::Missing("user namespaces (/proc/sys/user/max_user_namespaces is 0)".into()));
    }
    let seccomp =
        std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")));
    if !seccomp {
        return Err(ConfineError::Missing("seccomp filters (CONFIG_SECCOMP_FILTER)".into()));
    }
    super::seccomp::filters().map_err(ConfineError::Missing)?;
    Ok(())
}

/// The network, IPC and user namespaces a test's commands share: made
/// once per test, only `lo` up; gone when the last command and these
/// handles are.
pub struct Shared {
    pub net: OwnedFd,
    pub ipc: OwnedFd,
    pub user: OwnedFd,
}

impl Shared {
    pub(crate) fn new() -> Result<Shared, ConfineError> {
        // A thread of its own enters them (namespaces are per thread here)
        // and ends; the handles keep them.
        let (net, ipc) = std::thread::spawn(|| -> Result<(OwnedFd, OwnedFd), ConfineError> {
            // SAFETY: plain syscall on this thread.
            if unsafe { libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC) } != 0 {
                return Err(setup("new network and IPC namespaces")(std::io::Error::last_os_error()));
            }
            loopback_up().map_err(setup("bringing up lo"))?;
            let open = |ns: &str| {
                std::fs::File::open(format!("/proc/thread-self/ns/{ns}"))
                    .map(OwnedFd::from)
                    .map_err(setup(ns.to_string()))
            };
            Ok((open("net")?, open("ipc")?))
        })
        .join()
        .unwrap_or_else(|_| Err(ConfineError::Missing("a thread to make namespaces".into())))?;
        let user = super::userns::create().map_err(setup("a user namespace"))?;
        Ok(Shared { net, ipc, user })
    }

    /// Runs `f` on a thread inside the network namespace (engine's own
    /// probes of a server's port).
    pub(crate) fn inside<T: Send>(&self, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
        let fd = self.net.as_raw_fd();
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: plain syscall on this thread with our descriptor.
                if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(f())
            })
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("probe thread panicked")))
        })
    }
}

fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a socket we close; ifreq zeroed then named `lo`.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let s = OwnedFd::from_raw_fd(s);
        let mut req: libc::ifreq = std::mem::zeroed();
        for (d, c) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *d = *c as libc::c_char;
        }
        if libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &req) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Capabilities root inside keeps — each one acts, in a user namespace,
/// only on the files and processes of the namespace's own ids: file
/// ownership and permissions, signals, user switches.
const KEEP: [u32; 7] = [0, 1, 3, 4, 5, 6, 7];

/// Most bind mounts a plan may ask for.
const MAX_BINDS: usize = 24;

/// Who a confined command is, inside its user namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// Root inside (an unprivileged id outside), with [`KEEP`].
    Root,
    /// `nobody` inside, no capabilities: for programs that refuse root.
    Nobody,
}

impl Identity {
    /// The id inside the namespace.
    pub(crate) fn inside(self) -> u32 {
        match self {
            Identity::Root => 0,
            Identity::Nobody => super::userns::NOBODY,
        }
    }

    /// The host uid and gid files it owns have (what engine hands a
    /// directory to for it to write in).
    pub(crate) fn host(self) -> (u32, u32) {
        let id = super::userns::host_id(self.inside());
        (id, id)
    }
}

/// What differs between the commands of one sandbox.
#[derive(Debug, Clone, Copy)]
pub struct Command<'a> {
    /// Its working directory, entered with its own rights.
    pub cwd: &'a Path,
    pub identity: Identity,
    /// A file opened with its own rights as its standard input.
    pub stdin: Option<&'a Path>,
    /// Largest file it may write (RLIMIT_FSIZE), when bounded.
    pub file_size: Option<u64>,
}

/// A bind: a detached copy of the source (opened without following a
/// link), attached at `target`.
struct Bind {
    source: OwnedFd,
    target: CString,
    /// Every ancestor of `target`, shortest first, made when missing.
    parents: Vec<CString>,
    writable: bool,
}

/// A plan ready for the child: nothing left to allocate.
pub(crate) struct Prepared {
    cgroups: Vec<OwnedFd>,
    net: RawFd,
    ipc: RawFd,
    user: RawFd,
    binds: Vec<Bind>,
    hide: Vec<CString>,
    hide_files: Vec<CString>,
    hostname: CString,
    cwd: CString,
    stdin: Option<CString>,
    file_size: Option<u64>,
    last_cap: u32,
    identity: Identity,
    filters: &'static super::seccomp::Filters,
    parent: libc::pid_t,
    /// The command's wait status goes from the namespace's init to the
    /// process outside that passes it on (an init cannot die of a signal).
    status: [RawFd; 2],
}

fn cstr(p: &OsStr) -> Result<CString, ConfineError> {
    CString::new(p.as_bytes()).map_err(|_| ConfineError::Missing(format!("a path without NUL bytes: {p:?}")))
}

/// A detached copy (a mount of its own, not yet attached anywhere) of
/// `path`, a directory engine made or the user named, opened without
/// following a symlink in its last component. Made here, in engine's
/// mount namespace, where the kernel lets a tree be copied; the child
/// attaches it in its own.
fn open_source(path: &Path, idmap: Option<RawFd>) -> Result<OwnedFd, ConfineError> {
    let c = cstr(path.as_os_str())?;
    let fail = |e| setup(format!("copying {} to bind it", path.display()))(e);
    // SAFETY: a valid C string; a new descriptor on success.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(fail(std::io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor we own.
    let dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let flags = (libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC) as libc::c_long
        | libc::AT_RECURSIVE as libc::c_long
        | libc::AT_EMPTY_PATH as libc::c_long;
    // SAFETY: our own descriptor and an empty path; a new descriptor on success.
    let tree = unsafe { libc::syscall(libc::SYS_open_tree, dir.as_raw_fd(), c"".as_ptr(), flags) };
    if tree < 0 {
        return Err(fail(std::io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor we own.
    let tree = unsafe { OwnedFd::from_raw_fd(tree as RawFd) };
    if let Some(userns) = idmap {
        let attr = libc::mount_attr {
            attr_set: libc::MOUNT_ATTR_IDMAP,
            attr_clr: 0,
            propagation: 0,
            userns_fd: userns as u64,
        };
        // SAFETY: our descriptor, an empty path and an attribute struct of the size passed.
        let r = unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                tree.as_raw_fd(),
                c"".as_ptr(),
                (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
                &attr as *const libc::mount_attr,
                std::mem::size_of::<libc::mount_attr>(),
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            return Err(setup(format!(
                "mapping the sandbox's ids onto {} (its file system must support idmapped mounts: ext4, xfs, btrfs, tmpfs on Linux 6.3+)",
                path.display()
            ))(e));
        }
    }
    Ok(tree)
}

impl Prepared {
    /// `plan` for `cmd`, sharing `shared`, joining the cgroups whose
    /// `cgroup.procs` files are `cgroups`.
    pub(crate) fn new(
        plan: &Plan,
        shared: &Shared,
        cgroups: Vec<OwnedFd>,
        cmd: Command<'_>,
    ) -> Result<Prepared, ConfineError> {
        let binds = binds_of(plan, shared.user.as_raw_fd())?;
        let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(40);
        let mut status = [-1; 2];
        // SAFETY: a valid array for two descriptors.
        if unsafe { libc::pipe2(status.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(setup("a pipe")(std::io::Error::last_os_error()));
        }
        Ok(Prepared {
            cgroups,
            net: shared.net.as_raw_fd(),
            ipc: shared.ipc.as_raw_fd(),
            user: shared.user.as_raw_fd(),
            binds,
            hide: plan.hide.iter().map(|p| cstr(p.as_os_str())).collect::<Result<_, _>>()?,
            hide_files: plan.hide_files.iter().map(|p| cstr(p.as_os_str())).collect::<Result<_, _>>()?,
            hostname: CString::new(plan.hostname.as_bytes()).unwrap_or_default(),
            cwd: cstr(cmd.cwd.as_os_str())?,
            stdin: cmd.stdin.map(|p| cstr(p.as_os_str())).transpose()?,
            file_size: cmd.file_size,
            last_cap,
            identity: cmd.identity,
            filters: super::seccomp::filters().map_err(ConfineError::Missing)?,
            // SAFETY: plain syscall.
            parent: unsafe { libc::getpid() },
            status,
        })
    }

    /// Installs the confinement as `cmd`'s last step before exec.
    pub(crate) fn apply(self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        // SAFETY: `enter` makes only system calls and allocates nothing.
        unsafe {
            cmd.pre_exec(move || self.enter());
        }
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        for fd in self.status {
            // SAFETY: our own pipe's descriptors.
            unsafe { libc::close(fd) };
        }
    }
}

/// The plan's binds: private /tmp, /var/tmp and /dev/shm, the writable
/// directories, the read-only ones; each source opened now.
fn binds_of(plan: &Plan, userns: RawFd) -> Result<Vec<Bind>, ConfineError> {
    let mut binds = Vec::new();
    let mut bind = |source: &Path, target: &Path, writable: bool, idmap: Option<RawFd>| -> Result<(), ConfineError> {
        let parents = target.ancestors().skip(1).collect::<Vec<_>>();
        let parents = parents.iter().rev().skip(1).map(|p| cstr(p.as_os_str())).collect::<Result<_, _>>()?;
        let source = open_source(source, idmap)?;
        binds.push(Bind { source, target: cstr(target.as_os_str())?, parents, writable });
        Ok(())
    };
    for t in ["/tmp", "/var/tmp"] {
        bind(&plan.tmp, Path::new(t), true, None)?;
    }
    bind(&plan.shm, Path::new("/dev/shm"), true, None)?;
    for w in &plan.writable {
        bind(w, w, true, None)?;
    }
    for w in &plan.writable_host {
        bind(w, w, true, Some(userns))?;
    }
    for r in &plan.readonly {
        bind(r, r, false, None)?;
    }
    if binds.len() > MAX_BINDS {
        return Err(ConfineError::Missing(format!("at most {MAX_BINDS} directories to bind")));
    }
    Ok(binds)
}

/// Whether a user of the sandbox's namespace can reach `dir`: every
/// directory above it searchable by others, except where the sandbox puts
/// directories of its own (the hidden places and /tmp are rebuilt inside,
/// searchable). `None` when it can; else the directory in the way.
pub(crate) fn unreachable_above(dir: &Path, plan: &Plan) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let rebuilt =
        |p: &Path| plan.hide.iter().any(|h| p.starts_with(h)) || ["/tmp", "/var/tmp"].iter().any(|t| p.starts_with(t));
    for a in dir.ancestors().skip(1) {
        if rebuilt(a) {
            return None;
        }
        match std::fs::metadata(a) {
            Ok(m) if m.permissions().mode() & 0o001 == 0 => return Some(a.to_path_buf()),
            _ => {}
        }
    }
    None
}
