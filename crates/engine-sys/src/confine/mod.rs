//! Confinement of a command from a shared profile (the book, "Sandbox"): an
//! empty world plus what it was given, as bubblewrap builds one. Its root
//! is a fresh tmpfs (`pivot_root`, the host's root detached) holding
//! read-only binds of what programs need — `/usr` and the `/bin`, `/sbin`,
//! `/lib*` links, the few `/etc` entries programs read ([`ETC`]); a sysfs of
//! its own network namespace —
//! the profile's folder and install read-only, the test's directories
//! writable, a private `/tmp` and `/dev/shm`, empty `/root`, `/home` and
//! `/run` of its own, `/proc` of its own PID namespace and a `/dev` with
//! null, zero, full, random and urandom (no terminal, no disks). Nothing
//! else of the host — `/var`, other users' sockets, other mounts — is there
//! to be named, read or connected to. It gets new mount, PID and UTS
//! namespaces of its own and the network, IPC and user namespaces of its
//! test (only `lo`; root inside is an unprivileged id outside, see
//! [`super::userns`]); inside its user namespace it keeps only the
//! capabilities that act on its own files and processes; no new privileges
//! can be gained; a system-call filter ([`super::seccomp`]) denies what
//! would reach outside.
//!
//! The plan is turned into C strings and file descriptors in engine
//! ([`Prepared::new`]) — every directory of the plan is opened here,
//! without following a symlink, so what a command later plants under its
//! path is never mounted — and between fork and exec the child makes only
//! system calls (`child.rs`).

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
    /// Empty directories of the command's own, writable (a small tmpfs
    /// each): where tools keep files in ~ or /run.
    pub hide: Vec<PathBuf>,
    /// More of the host's files or directories shown read-only
    /// (`sandbox.read`), beside the standard ones.
    pub read: Vec<PathBuf>,
    /// Whether its commands may use io_uring (see [`super::seccomp`]);
    /// never with `writable_host`, whatever this says.
    pub io_uring: bool,
    /// Whether its commands get a devpts instance of their own.
    pub pty: bool,
    /// Whether `fallocate` is refused (EOPNOTSUPP) whatever its mode: an
    /// install's build, whose many preallocations would fill a disk
    /// between two of the space watchdog's reads (writes it can follow).
    pub no_preallocation: bool,
    pub hostname: String,
}

/// Places of the host a confined command never sees (for messages: its
/// world holds none of them).
pub const HIDDEN: [&str; 9] = ["/root", "/home", "/run", "/var", "/mnt", "/media", "/srv", "/opt", "/boot"];

/// The empty, writable directories of its own every command gets.
const SCRATCH_DIRS: [&str; 3] = ["/root", "/home", "/run"];

/// The top-level entries of the host shown read-only (those that exist;
/// a link, as `/bin` is on a merged-/usr system, is made again as a link).
/// `/sys` is a sysfs of its own, mounted in the test's network namespace
/// (so `/sys/class/net` shows only `lo`), without the host's submounts.
const TOP: [&str; 7] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// The entries of `/etc` programs read: the loader, users and groups (no
/// shadow files), name service, time zone, certificates, the Debian
/// alternatives `/usr/bin` links through, and the interpreters' own.
pub const ETC: [&str; 27] = [
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "passwd",
    "group",
    "nsswitch.conf",
    "host.conf",
    "hosts",
    "resolv.conf",
    "gai.conf",
    "protocols",
    "services",
    "localtime",
    "timezone",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "mime.types",
    "locale.alias",
    "locale.conf",
    "os-release",
    "debian_version",
    "perl",
    "python3",
    "postgresql-common",
    "mke2fs.conf",
];

impl Plan {
    /// The scratch places every plan starts with, and its private /tmp and
    /// /dev/shm made (sticky, world-writable) in `private` — a directory
    /// the command cannot write itself, so it cannot swap them for links.
    pub fn standard(private: &Path) -> std::io::Result<Plan> {
        let tmp = private.join("tmp");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::create_dir_all(&tmp)?;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777))?;
        }
        let hide = SCRATCH_DIRS.iter().map(PathBuf::from).collect();
        Ok(Plan { hide, tmp, hostname: "engine-sandbox".into(), ..Plan::default() })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error("the sandbox needs {0}, which this system lacks")]
    Missing(String),
    #[error("cannot set up the sandbox: {what}: {source}")]
    Setup { what: String, source: std::io::Error },
    #[error(transparent)]
    Filter(#[from] super::seccomp::FilterError),
}

/// Why this machine cannot confine commands, found before anything
/// confined runs (shared by a run's tests and an install's builds, so it
/// clones).
#[derive(Debug, Clone, thiserror::Error)]
pub enum Unconfinable {
    #[error(transparent)]
    Kernel(std::sync::Arc<ConfineError>),
    #[error(
        "the sandbox needs a cgroup hierarchy (v2, or v1 cpuacct, memory, blkio or pids) under {}, and there is none",
        .0.display()
    )]
    NoCgroups(PathBuf),
    #[error(
        "the sandbox limits each command's memory, and no cgroup hierarchy under {} offers the memory controller (v1 `memory`, or v2 with `memory` in engine's cgroup.subtree_control)",
        .0.display()
    )]
    NoMemoryController(PathBuf),
    #[error("a temporary folder for the sandbox's probe: {0}")]
    ProbeFolder(std::sync::Arc<std::io::Error>),
    /// The sandbox's own line saying which step failed.
    #[error("a confined command could not start on this system ({0})")]
    Refused(String),
    #[error("a confined command could not start on this system: {0}")]
    Start(std::sync::Arc<std::io::Error>),
    /// How the probe's `/bin/true` ended, when not with success.
    #[error("a confined `/bin/true` ended {0} on this system")]
    Ended(String),
    #[error("no confinement was set up")]
    NotSetUp,
}

impl From<ConfineError> for Unconfinable {
    fn from(e: ConfineError) -> Self {
        Unconfinable::Kernel(std::sync::Arc::new(e))
    }
}

fn setup(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ConfineError {
    let what = what.into();
    move |source| ConfineError::Setup { what, source }
}

/// What the kernel must offer: the namespaces (checked in `ns_dir`,
/// normally /proc/self/ns), user namespaces it lets root make, seccomp
/// filters, and root.
pub fn check(ns_dir: &Path) -> Result<(), ConfineError> {
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
    super::seccomp::filters()?;
    Ok(())
}

/// The network, IPC and user namespaces a test's commands share, and its
/// `/dev/shm`: made once per test, only `lo` up; gone when the last
/// command and these handles are.
pub struct Shared {
    pub net: OwnedFd,
    pub ipc: OwnedFd,
    pub user: OwnedFd,
    /// A tmpfs of the test's own (a detached mount, cloned into each
    /// command at /dev/shm): its pages are charged to the cgroup of the
    /// command that wrote them, so to the test's budget, and it is gone
    /// with the test.
    pub shm: OwnedFd,
}

/// A detached tmpfs of at most `size` bytes, world-writable (sticky).
fn shm_tmpfs(size: u64) -> std::io::Result<OwnedFd> {
    use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags};
    let fs = rustix::mount::fsopen("tmpfs", FsOpenFlags::FSOPEN_CLOEXEC)?;
    rustix::mount::fsconfig_set_string(&fs, "size", size.to_string())?;
    rustix::mount::fsconfig_set_string(&fs, "mode", "1777")?;
    rustix::mount::fsconfig_create(&fs)?;
    let attrs = MountAttrFlags::MOUNT_ATTR_NOSUID | MountAttrFlags::MOUNT_ATTR_NODEV;
    Ok(rustix::mount::fsmount(&fs, FsMountFlags::FSMOUNT_CLOEXEC, attrs)?)
}

impl Shared {
    /// Watches the space `dirs` take (the first's file system is read)
    /// against `limit` bytes, stopping every command of this sandbox when
    /// it is outgrown (see [`crate::space`]).
    pub fn watch(&self, dirs: Vec<crate::safepath::Dir>, limit: u64) -> Option<crate::space::Watchdog> {
        self.watch_every(dirs, limit, crate::space::WATCH_EVERY)
    }

    /// As [`Shared::watch`], reading the file system every `every`.
    pub fn watch_every(
        &self,
        dirs: Vec<crate::safepath::Dir>,
        limit: u64,
        every: std::time::Duration,
    ) -> Option<crate::space::Watchdog> {
        let inode = crate::space::ns_inode(&self.net)?;
        let dev = rustix::fs::fstat(dirs.first()?.fd()).ok()?.st_dev;
        crate::space::Watchdog::start_every(dirs, limit, crate::space::Netns { inode, dev }, every)
    }

    /// Stops the test when what its sockets hold in the kernel outside its
    /// memory limit and its memory cgroup's working set (`memcg`, when it has one) pass `limit`
    /// (see [`crate::sockmem`]).
    pub fn watch_sockets(&self, limit: u64, memcg: Option<std::path::PathBuf>) -> Option<crate::sockmem::Watch> {
        let inode = crate::space::ns_inode(&self.net)?;
        let mut tables = self.inside(crate::sockmem::Tables::open_here).ok()?;
        if let Some(d) = &memcg {
            tables = tables.with_charged(d);
        }
        let (used_in, stop_in) = (memcg.clone(), memcg);
        let used = move || used_in.as_deref().map_or(0, crate::sockmem::working_set);
        // Through the memory cgroup first, which holds every process of the
        // test (one read, where the namespace's are found by walking /proc).
        let stop = move || {
            if let Some(d) = &stop_in {
                crate::cgroup::kill_now(d);
            }
            crate::space::kill_netns(inode);
        };
        crate::sockmem::Watch::start(tables, limit, used, stop)
    }

    /// The test's namespaces, and a /dev/shm of at most `shm` bytes.
    pub fn new(shm: u64) -> Result<Shared, ConfineError> {
        // A thread of its own enters them (namespaces are per thread here)
        // and ends; the handles keep them.
        let (net, ipc) = std::thread::spawn(|| -> Result<(OwnedFd, OwnedFd), ConfineError> {
            // SAFETY: plain syscall on this thread.
            if unsafe { libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWIPC) } != 0 {
                return Err(setup("new network and IPC namespaces")(std::io::Error::last_os_error()));
            }
            loopback_up().map_err(setup("bringing up lo"))?;
            mptcp_off().map_err(setup("turning MPTCP off in the test's network namespace"))?;
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
        let shm = shm_tmpfs(shm).map_err(setup("a /dev/shm of the test's own"))?;
        Ok(Shared { net, ipc, user, shm })
    }

    /// Runs `f` on a thread inside the network namespace (engine's own
    /// probes of a server's port).
    pub fn inside<T: Send>(&self, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
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

/// MPTCP off in the calling thread's network namespace, as where the
/// machine has it off (its sockets fail with ENOPROTOOPT and programs fall
/// back to TCP): the kernel makes an MPTCP listener's connections itself,
/// charged to no cgroup until accepted, and neither the memory cgroup's
/// socket counter nor the TCP dump sees what they hold (500 of them held
/// 38 MiB unseen). Nothing to do where the kernel has no MPTCP.
fn mptcp_off() -> std::io::Result<()> {
    match std::fs::write("/proc/sys/net/mptcp/enabled", "0") {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
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
    pub fn inside(self) -> u32 {
        match self {
            Identity::Root => 0,
            Identity::Nobody => super::userns::NOBODY,
        }
    }

    /// The host uid and gid files it owns have (what engine hands a
    /// directory to for it to write in).
    pub fn host(self) -> (u32, u32) {
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

/// One entry of the host shown in the new root, at its own path.
struct SysEntry {
    /// The host's path (absolute), bound from before the root changes.
    source: CString,
    kind: SysKind,
    /// Every ancestor of it, shortest first, made when missing.
    parents: Vec<CString>,
}

enum SysKind {
    /// A directory: bound (with what is mounted beneath it), read-only.
    Dir,
    /// A file: an empty file made, the host's bound onto it, read-only.
    File,
    /// A symbolic link, made again with the same target.
    Link(CString),
}

/// The host entries of [`TOP`] and [`ETC`] that exist, and `read`.
fn system_entries(read: &[PathBuf]) -> Result<Vec<SysEntry>, ConfineError> {
    let etc = ETC.iter().map(|e| Path::new("/etc").join(e));
    let mut out = Vec::new();
    for p in TOP.iter().map(PathBuf::from).chain(etc).chain(read.iter().cloned()) {
        let Ok(m) = std::fs::symlink_metadata(&p) else { continue };
        let kind = if m.file_type().is_symlink() {
            let Ok(to) = std::fs::read_link(&p) else { continue };
            SysKind::Link(cstr(to.as_os_str())?)
        } else if m.is_dir() {
            SysKind::Dir
        } else if m.is_file() {
            SysKind::File
        } else {
            continue;
        };
        out.push(SysEntry { source: cstr(p.as_os_str())?, kind, parents: parents_of(&p)? });
    }
    Ok(out)
}

/// Every ancestor of `p` but `/`, shortest first.
fn parents_of(p: &Path) -> Result<Vec<CString>, ConfineError> {
    let mut v = p.ancestors().skip(1).collect::<Vec<_>>();
    v.reverse();
    v.iter().skip(1).map(|a| cstr(a.as_os_str())).collect()
}

/// A plan ready for the child: nothing left to allocate.
pub struct Prepared {
    cgroups: Vec<OwnedFd>,
    /// The test's namespaces: copies of its descriptors, owned, so a
    /// `Prepared` outliving its `Shared` still names them.
    net: OwnedFd,
    ipc: OwnedFd,
    user: OwnedFd,
    binds: Vec<Bind>,
    /// The host's entries shown read-only in the new root.
    system: Vec<SysEntry>,
    hide: Vec<CString>,
    hostname: CString,
    cwd: CString,
    stdin: Option<CString>,
    file_size: Option<u64>,
    last_cap: u32,
    identity: Identity,
    filters: &'static super::seccomp::Filters,
    io_uring: bool,
    no_preallocation: bool,
    pty: bool,
    /// Whether it can write a directory of the host's (idmapped).
    host_writable: bool,
    parent: libc::pid_t,
    /// The command's wait status goes from the namespace's init to the
    /// process outside that passes it on (an init cannot die of a signal).
    status: [OwnedFd; 2],
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
    // A directory of the host's (declared or granted): no symbolic link
    // anywhere on the way (RESOLVE_NO_SYMLINKS), so a link a test planted
    // in a granted directory is refused, not bound. Engine's own (the
    // test's folder, under a target the user may reach through a link):
    // its last component not followed.
    use rustix::fs::{OFlags, ResolveFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let resolve = if idmap.is_some() { ResolveFlags::NO_SYMLINKS } else { ResolveFlags::empty() };
    let dir = rustix::fs::openat2(rustix::fs::CWD, c.as_c_str(), flags, rustix::fs::Mode::empty(), resolve)
        .map_err(|e| fail(e.into()))?;
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
    pub fn new(
        plan: &Plan,
        shared: &Shared,
        cgroups: Vec<OwnedFd>,
        cmd: Command<'_>,
    ) -> Result<Prepared, ConfineError> {
        let binds = binds_of(plan, shared)?;
        let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(40);
        let mut status = [-1; 2];
        // SAFETY: a valid array for two descriptors.
        if unsafe { libc::pipe2(status.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(setup("a pipe")(std::io::Error::last_os_error()));
        }
        // SAFETY: two new descriptors, ours alone.
        let status = unsafe { status.map(|fd| OwnedFd::from_raw_fd(fd)) };
        Ok(Prepared {
            cgroups,
            net: shared.net.try_clone().map_err(setup("a copy of the test's network namespace"))?,
            ipc: shared.ipc.try_clone().map_err(setup("a copy of the test's IPC namespace"))?,
            user: shared.user.try_clone().map_err(setup("a copy of the test's user namespace"))?,
            binds,
            system: system_entries(&plan.read)?,
            hide: plan.hide.iter().map(|p| cstr(p.as_os_str())).collect::<Result<_, _>>()?,
            hostname: CString::new(plan.hostname.as_bytes()).unwrap_or_default(),
            cwd: cstr(cmd.cwd.as_os_str())?,
            stdin: cmd.stdin.map(|p| cstr(p.as_os_str())).transpose()?,
            file_size: cmd.file_size,
            last_cap,
            identity: cmd.identity,
            filters: super::seccomp::filters()?,
            // Never io_uring with a host directory writable: its open
            // passes no filter, so the setuid rule would not see its mode.
            io_uring: plan.io_uring && plan.writable_host.is_empty(),
            no_preallocation: plan.no_preallocation,
            pty: plan.pty,
            host_writable: !plan.writable_host.is_empty(),
            // SAFETY: plain syscall.
            parent: unsafe { libc::getpid() },
            status,
        })
    }

    /// Installs the confinement as `cmd`'s last step before exec. Returns
    /// a descriptor that becomes readable (or hung up) when the command has
    /// ended: the namespace's init writes its status there as soon as it
    /// reaps it, before the namespaces are torn down and the processes
    /// outside exit — the moment a trial's clock stops. Only poll it: the
    /// status is the process outside's to read.
    pub fn apply(self, cmd: &mut std::process::Command) -> std::io::Result<OwnedFd> {
        use std::os::unix::process::CommandExt;
        let ended = self.status[0].try_clone()?;
        // SAFETY: `enter` makes only system calls and allocates nothing.
        unsafe {
            cmd.pre_exec(move || self.enter());
        }
        Ok(ended)
    }
}

/// A new detached copy of the detached mount `fd` (the same file system).
fn clone_tree(fd: &OwnedFd) -> Result<OwnedFd, ConfineError> {
    let flags = (libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC) as libc::c_long | libc::AT_EMPTY_PATH as libc::c_long;
    // SAFETY: our own descriptor and an empty path; a new descriptor on success.
    let tree = unsafe { libc::syscall(libc::SYS_open_tree, fd.as_raw_fd(), c"".as_ptr(), flags) };
    if tree < 0 {
        return Err(setup("a copy of the test's /dev/shm")(std::io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(tree as RawFd) })
}

/// The plan's binds: private /tmp, /var/tmp and /dev/shm, the writable
/// directories, the read-only ones; each source opened now.
fn binds_of(plan: &Plan, shared: &Shared) -> Result<Vec<Bind>, ConfineError> {
    let userns = shared.user.as_raw_fd();
    let shm =
        Bind { source: clone_tree(&shared.shm)?, target: c"/dev/shm".into(), parents: Vec::new(), writable: true };
    let mut binds = vec![shm];
    let mut bind = |source: &Path, target: &Path, writable: bool, idmap: Option<RawFd>| -> Result<(), ConfineError> {
        let parents = parents_of(target)?;
        let source = open_source(source, idmap)?;
        binds.push(Bind { source, target: cstr(target.as_os_str())?, parents, writable });
        Ok(())
    };
    for t in ["/tmp", "/var/tmp"] {
        bind(&plan.tmp, Path::new(t), true, None)?;
    }
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
