//! Confinement of a command from a shared profile (README, "Sandbox"): new
//! mount, PID and UTS namespaces of its own, the network and IPC namespaces
//! of its test (only `lo`, so the test's servers and clients still talk),
//! the root file system, `/proc` and `/sys` read-only, `/root`, `/home`,
//! `/run` and engine's home hidden, a `/dev` of its own (null, zero, full,
//! random, urandom, tty; no disks), a private `/tmp` and `/dev/shm`, and
//! writable only the directories the plan names. Capabilities are cut to
//! what file work and servers need (no mount, module, raw I/O, ptrace,
//! network or system administration) and no new privileges can be gained.
//!
//! The plan is turned into C strings and file descriptors in engine
//! ([`Prepared::new`]); between fork and exec the child then makes only
//! system calls ([`Prepared::enter`]): it joins the cgroups and namespaces,
//! forks once more so the command is PID 1 of a PID namespace of its own
//! (the first child stays outside and waits for it, passing on its exit),
//! builds the mounts and drops capabilities. A pre-exec step that fails
//! writes what failed to the command's standard error.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What a confined command may see and change.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Writable (and visible even inside a hidden directory).
    pub writable: Vec<PathBuf>,
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
pub const HIDDEN: [&str; 7] = ["/root", "/home", "/run", "/var/run", "/mnt", "/media", "/srv/engine"];

impl Plan {
    /// The hidden places every plan starts with, and its private /tmp and
    /// /dev/shm made (sticky, world-writable) in `private`.
    pub fn standard(engine_home: &Path, private: &Path) -> std::io::Result<Plan> {
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
pub enum ConfineError {
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
/// normally /proc/self/ns), the mount API and root.
pub fn check(ns_dir: &Path) -> Result<(), ConfineError> {
    for ns in ["mnt", "pid", "net", "ipc", "uts"] {
        if !ns_dir.join(ns).exists() {
            return Err(ConfineError::Missing(format!("{ns} namespaces ({} is missing)", ns_dir.join(ns).display())));
        }
    }
    if !super::is_root() {
        return Err(ConfineError::Missing("root (namespaces and mounts are set up as root)".into()));
    }
    Ok(())
}

/// The network and IPC namespaces a test's commands share: made once per
/// test, only `lo` up; gone when the last command and these handles are.
pub struct Shared {
    pub net: OwnedFd,
    pub ipc: OwnedFd,
}

impl Shared {
    pub fn new() -> Result<Shared, ConfineError> {
        // A thread of its own enters them (namespaces are per thread here)
        // and ends; the handles keep them.
        std::thread::spawn(|| -> Result<Shared, ConfineError> {
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
            Ok(Shared { net: open("net")?, ipc: open("ipc")? })
        })
        .join()
        .unwrap_or_else(|_| Err(ConfineError::Missing("a thread to make namespaces".into())))
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

/// Capabilities a confined command keeps: file ownership and permissions,
/// signals (within its PID namespace), user switches, low ports, locked
/// memory (io_uring), priorities and resource limits.
const KEEP: [u32; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 10, 14, 23, 24];

/// Most bind mounts a plan may ask for.
const MAX_BINDS: usize = 24;

/// A bind: a clone of `source` taken before anything is hidden, mounted at `target`.
struct Bind {
    source: CString,
    target: CString,
    /// Every ancestor of `target`, shortest first, made when missing.
    parents: Vec<CString>,
    writable: bool,
}

/// A plan ready for the child: nothing left to allocate.
pub struct Prepared {
    cgroups: Vec<OwnedFd>,
    net: RawFd,
    ipc: RawFd,
    binds: Vec<Bind>,
    hide: Vec<CString>,
    hide_files: Vec<CString>,
    hostname: CString,
    cwd: CString,
    last_cap: u32,
    /// The capabilities kept: [`KEEP`] that engine has.
    keep: u64,
    /// uid and gid to run as (an unprivileged step), after confinement.
    user: Option<(libc::uid_t, libc::gid_t)>,
    parent: libc::pid_t,
}

fn cstr(p: &OsStr) -> Result<CString, ConfineError> {
    CString::new(p.as_bytes()).map_err(|_| ConfineError::Missing(format!("a path without NUL bytes: {p:?}")))
}

impl Prepared {
    /// `plan` for a command run in `cwd`, sharing `shared`, joining the
    /// cgroups whose `cgroup.procs` files are `cgroups`.
    pub fn new(
        plan: &Plan,
        shared: &Shared,
        cgroups: Vec<OwnedFd>,
        cwd: &Path,
        user: Option<(libc::uid_t, libc::gid_t)>,
    ) -> Result<Prepared, ConfineError> {
        let mut binds = Vec::new();
        let mut bind = |source: &Path, target: &Path, writable: bool| -> Result<(), ConfineError> {
            let parents = target.ancestors().skip(1).collect::<Vec<_>>();
            let parents = parents.iter().rev().skip(1).map(|p| cstr(p.as_os_str())).collect::<Result<_, _>>()?;
            binds.push(Bind {
                source: cstr(source.as_os_str())?,
                target: cstr(target.as_os_str())?,
                parents,
                writable,
            });
            Ok(())
        };
        for t in ["/tmp", "/var/tmp"] {
            bind(&plan.tmp, Path::new(t), true)?;
        }
        bind(&plan.shm, Path::new("/dev/shm"), true)?;
        for w in &plan.writable {
            bind(w, w, true)?;
        }
        for r in &plan.readonly {
            bind(r, r, false)?;
        }
        if binds.len() > MAX_BINDS {
            return Err(ConfineError::Missing(format!("at most {MAX_BINDS} directories to bind")));
        }
        let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(40);
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let permitted = status
            .lines()
            .find_map(|l| l.strip_prefix("CapPrm:"))
            .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
            .unwrap_or(u64::MAX);
        Ok(Prepared {
            keep: KEEP.iter().fold(0u64, |m, c| m | 1 << c) & permitted,
            cgroups,
            net: shared.net.as_raw_fd(),
            ipc: shared.ipc.as_raw_fd(),
            binds,
            hide: plan.hide.iter().map(|p| cstr(p.as_os_str())).collect::<Result<_, _>>()?,
            hide_files: plan.hide_files.iter().map(|p| cstr(p.as_os_str())).collect::<Result<_, _>>()?,
            hostname: CString::new(plan.hostname.as_bytes()).unwrap_or_default(),
            cwd: cstr(cwd.as_os_str())?,
            last_cap,
            user,
            // SAFETY: plain syscall.
            parent: unsafe { libc::getpid() },
        })
    }

    /// Installs [`Prepared::enter`] as `cmd`'s last step before exec.
    pub fn apply(self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        // SAFETY: `enter` makes only system calls and allocates nothing.
        unsafe {
            cmd.pre_exec(move || self.enter());
        }
    }

    /// Between fork and exec: confines this process. Returns in the
    /// command's process (PID 1 of its namespace); the process it forked
    /// from waits for it and exits as it does.
    ///
    /// # Safety
    /// Only between fork and exec.
    unsafe fn enter(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls on prepared, NUL-terminated data.
        unsafe {
            step("parent-death signal", libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            if libc::getppid() != self.parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            for fd in &self.cgroups {
                step("joining the cgroup", (libc::write(fd.as_raw_fd(), b"0".as_ptr().cast(), 1) == 1) as i32 - 1)?;
            }
            step("joining the test's network", libc::setns(self.net, libc::CLONE_NEWNET))?;
            step("joining the test's IPC namespace", libc::setns(self.ipc, libc::CLONE_NEWIPC))?;
            step("new namespaces", libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWUTS | libc::CLONE_NEWPID))?;
            match libc::fork() {
                -1 => return Err(report("fork", std::io::Error::last_os_error())),
                0 => {}
                child => wait_and_pass_on(child),
            }
            step("parent-death signal", libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            self.mounts()?;
            step("hostname", libc::sethostname(self.hostname.as_ptr(), self.hostname.as_bytes().len()))?;
            step("working directory", libc::chdir(self.cwd.as_ptr()))?;
            // The bounding set is cut while root may (CAP_SETPCAP), then the user switched.
            self.drop_capabilities()?;
            if let Some((uid, gid)) = self.user {
                step("dropping groups", libc::setgroups(0, std::ptr::null()))?;
                step("switching group", libc::setgid(gid))?;
                step("switching user", libc::setuid(uid))?;
            }
            Ok(())
        }
    }

    /// The mounts, in order: private propagation, clones of what stays
    /// visible, hidden places, /dev, the binds, /proc, then all read-only
    /// but the writable places.
    unsafe fn mounts(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls on prepared, NUL-terminated data.
        unsafe {
            let (null, none) = (std::ptr::null(), std::ptr::null());
            mount(null, c"/".as_ptr(), null, libc::MS_REC | libc::MS_PRIVATE, none, "private mounts")?;
            let clones = self.clones()?;
            let tmpfs = c"tmpfs".as_ptr();
            let opts = c"mode=755,size=16m".as_ptr().cast();
            for h in &self.hide {
                mount(tmpfs, h.as_ptr(), tmpfs, libc::MS_NOSUID | libc::MS_NODEV, opts, "hiding a directory")?;
            }
            self.dev()?;
            for f in &self.hide_files {
                mount(c"/dev/null".as_ptr(), f.as_ptr(), null, libc::MS_BIND, none, "hiding a file")?;
            }
            self.bind_all(&clones)?;
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, none, "mounting /proc")?;
            self.seal()
        }
    }

    /// A detached copy of every bind's source, taken before anything hides it.
    unsafe fn clones(&self) -> std::io::Result<[RawFd; MAX_BINDS]> {
        let mut clones = [-1 as RawFd; MAX_BINDS];
        let flags =
            (libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC) as libc::c_long | libc::AT_RECURSIVE as libc::c_long;
        for (k, b) in self.binds.iter().enumerate() {
            // SAFETY: a prepared path; a new descriptor on success.
            let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, b.source.as_ptr(), flags) };
            if fd < 0 {
                return Err(report("cloning a directory to bind", std::io::Error::last_os_error()));
            }
            clones[k] = fd as RawFd;
        }
        Ok(clones)
    }

    /// Each clone mounted at its target (made, parents first, when missing).
    unsafe fn bind_all(&self, clones: &[RawFd; MAX_BINDS]) -> std::io::Result<()> {
        for (k, b) in self.binds.iter().enumerate() {
            // SAFETY: prepared paths and our own descriptors.
            unsafe {
                for p in b.parents.iter().chain(std::iter::once(&b.target)) {
                    libc::mkdir(p.as_ptr(), 0o755);
                }
                let (empty, to) = (c"".as_ptr(), b.target.as_ptr());
                let r = libc::syscall(
                    libc::SYS_move_mount,
                    clones[k],
                    empty,
                    libc::AT_FDCWD,
                    to,
                    libc::MOVE_MOUNT_F_EMPTY_PATH,
                );
                step("binding a directory", r as i32)?;
                libc::close(clones[k]);
            }
        }
        Ok(())
    }

    /// Everything read-only and without setuid, then writable again: the
    /// writable binds and the hidden places (empty and this command's own:
    /// a tool that keeps files in ~ works, and nothing reaches the disk) —
    /// but not what was bound read-only inside them (an install).
    unsafe fn seal(&self) -> std::io::Result<()> {
        // SAFETY: prepared, NUL-terminated paths.
        unsafe {
            set_attr(c"/".as_ptr(), libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID, 0, "making / read-only")?;
            for t in self.binds.iter().filter(|b| b.writable).map(|b| &b.target).chain(&self.hide) {
                set_attr(t.as_ptr(), 0, libc::MOUNT_ATTR_RDONLY, "making a directory writable")?;
            }
            for b in self.binds.iter().filter(|b| !b.writable) {
                set_attr(b.target.as_ptr(), libc::MOUNT_ATTR_RDONLY, 0, "making a directory read-only")?;
            }
        }
        Ok(())
    }

    /// A /dev of its own: the harmless character devices, /dev/shm's and
    /// /dev/pts's mount points, the /proc links.
    unsafe fn dev(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls on static C strings.
        unsafe {
            let tmpfs = c"tmpfs".as_ptr();
            step(
                "a /dev of its own",
                libc::mount(tmpfs, c"/dev".as_ptr(), tmpfs, libc::MS_NOSUID, c"mode=755,size=64k".as_ptr().cast()),
            )?;
            let nodes: [(&std::ffi::CStr, u64, u64); 6] = [
                (c"/dev/null", 1, 3),
                (c"/dev/zero", 1, 5),
                (c"/dev/full", 1, 7),
                (c"/dev/random", 1, 8),
                (c"/dev/urandom", 1, 9),
                (c"/dev/tty", 5, 0),
            ];
            for (path, major, minor) in nodes {
                step("a device node", libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o666, (major << 8) | minor))?;
                libc::chmod(path.as_ptr(), 0o666);
            }
            libc::mkdir(c"/dev/shm".as_ptr(), 0o1777);
            libc::mkdir(c"/dev/pts".as_ptr(), 0o755);
            for (link, to) in [
                (c"/dev/fd", c"/proc/self/fd"),
                (c"/dev/stdin", c"/proc/self/fd/0"),
                (c"/dev/stdout", c"/proc/self/fd/1"),
                (c"/dev/stderr", c"/proc/self/fd/2"),
            ] {
                libc::symlink(to.as_ptr(), link.as_ptr());
            }
            Ok(())
        }
    }

    unsafe fn drop_capabilities(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls with valid arguments.
        unsafe {
            let keep = |c: u32| self.keep & (1 << c) != 0;
            for cap in (0..=self.last_cap).filter(|c| !keep(*c)) {
                step("dropping capabilities", libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0))?;
            }
            let mask = self.keep;
            let hdr = super::privilege::CapHeader { version: super::privilege::CAP_VERSION_3, pid: 0 };
            let (lo, hi) = (mask as u32, (mask >> 32) as u32);
            let data = [
                super::privilege::CapData { effective: lo, permitted: lo, inheritable: 0 },
                super::privilege::CapData { effective: hi, permitted: hi, inheritable: 0 },
            ];
            let r = libc::syscall(libc::SYS_capset, &hdr as *const _, data.as_ptr());
            step("dropping capabilities", r as i32)?;
            libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0, 0, 0);
            step("no new privileges", libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        }
    }
}

/// mount(2), its failure reported as `what`.
unsafe fn mount(
    source: *const libc::c_char,
    target: *const libc::c_char,
    fstype: *const libc::c_char,
    flags: libc::c_ulong,
    data: *const libc::c_void,
    what: &'static str,
) -> std::io::Result<()> {
    // SAFETY: the caller passes valid C strings or null.
    step(what, unsafe { libc::mount(source, target, fstype, flags, data) })
}

unsafe fn set_attr(path: *const libc::c_char, set: u64, clear: u64, what: &'static str) -> std::io::Result<()> {
    let attr = libc::mount_attr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
    // SAFETY: a valid path and attribute struct of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    step(what, r as i32)
}

/// A system call's result: errors are written to stderr with `what` (the
/// only way a message gets out of a child before exec without allocating).
fn step(what: &'static str, r: libc::c_int) -> std::io::Result<()> {
    if r >= 0 {
        return Ok(());
    }
    Err(report(what, std::io::Error::last_os_error()))
}

fn report(what: &'static str, e: std::io::Error) -> std::io::Error {
    let code = e.raw_os_error().unwrap_or(0);
    let mut buf = [0u8; 128];
    let mut n = 0;
    for part in [b"engine sandbox: cannot set up ".as_slice(), what.as_bytes(), b": errno "] {
        for &b in part {
            if n < buf.len() {
                buf[n] = b;
                n += 1;
            }
        }
    }
    let mut digits = [0u8; 10];
    let (mut v, mut k) = (code.unsigned_abs(), 0);
    loop {
        digits[k] = b'0' + (v % 10) as u8;
        k += 1;
        v /= 10;
        if v == 0 || k == digits.len() {
            break;
        }
    }
    for &d in digits[..k].iter().rev() {
        if n < buf.len() {
            buf[n] = d;
            n += 1;
        }
    }
    if n < buf.len() {
        buf[n] = b'\n';
        n += 1;
    }
    // SAFETY: writing our own buffer to stderr.
    unsafe { libc::write(2, buf.as_ptr().cast(), n) };
    e
}

/// The first child after forking the command: it holds no descriptor of
/// engine's (so engine's spawn returns at the command's exec), leaves
/// signals to the command (the whole group gets them), and exits as the
/// command did.
fn wait_and_pass_on(child: libc::pid_t) -> ! {
    // SAFETY: raw system calls; this process never returns to Rust code.
    unsafe {
        libc::close_range(3, libc::c_uint::MAX, 0);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let mut status = 0;
        loop {
            let r = libc::waitpid(child, &mut status, 0);
            if r == child {
                break;
            }
            if r == -1 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}
