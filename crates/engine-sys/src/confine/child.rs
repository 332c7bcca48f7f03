//! Between fork and exec: the confined command's side of [`Prepared`].
//! Only system calls on prepared data, no allocation (engine is
//! multithreaded). Three processes result: the first child stays outside
//! (it holds no descriptor of engine's and passes the command's exit on),
//! the new PID namespace's init (PID 1) reaps and passes the status out, and
//! the command (PID 2), which joins the test's user namespace, drops to its
//! identity and capabilities, loads the system-call filter and execs. The
//! command is not PID 1, so a signal it does not handle (a server that never
//! installed a SIGTERM handler) still ends it, as it would outside.

use super::{KEEP, Prepared};
use std::os::fd::{AsRawFd, RawFd};

impl Prepared {
    /// Confines this process. Returns in the command's process; the others
    /// wait and exit as it does.
    ///
    /// # Safety
    /// Only between fork and exec.
    pub(super) unsafe fn enter(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls on prepared, NUL-terminated data.
        unsafe {
            step("parent-death signal", libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            if libc::getppid() != self.parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            for fd in &self.cgroups {
                step("joining the cgroup", (libc::write(fd.as_raw_fd(), b"0".as_ptr().cast(), 1) == 1) as i32 - 1)?;
            }
            step("joining the test's network", libc::setns(self.net.as_raw_fd(), libc::CLONE_NEWNET))?;
            step("joining the test's IPC namespace", libc::setns(self.ipc.as_raw_fd(), libc::CLONE_NEWIPC))?;
            // A cgroup namespace rooted at the cgroups just joined: the test
            // sees "/" in /proc/self/cgroup, not the host's paths and
            // engine's pid.
            step(
                "new namespaces",
                libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWUTS | libc::CLONE_NEWPID | libc::CLONE_NEWCGROUP),
            )?;
            match libc::fork() {
                -1 => return Err(report("fork", std::io::Error::last_os_error())),
                0 => {}
                child => self.pass_on(child),
            }
            // PID 1 of the new namespace.
            let me = libc::getpid();
            step("parent-death signal", libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            self.mounts()?;
            step("hostname", libc::sethostname(self.hostname.as_ptr(), self.hostname.as_bytes().len()))?;
            step("dropping groups", libc::setgroups(0, std::ptr::null()))?;
            step("joining the test's user namespace", libc::setns(self.user.as_raw_fd(), libc::CLONE_NEWUSER))?;
            match libc::fork() {
                -1 => return Err(report("fork", std::io::Error::last_os_error())),
                0 => {}
                child => self.init(child),
            }
            // The command: PID 2.
            step("parent-death signal", libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0))?;
            if libc::getppid() != me {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            self.become_command()
        }
    }

    /// Drops to the command's identity, enters its directory with its own
    /// rights, opens its standard input the same way, bounds its files,
    /// keeps only its capabilities, loads the filter.
    ///
    /// # Safety
    /// Only in the forked child, inside the new root, before exec: it
    /// changes this process's identity and loads a filter for good.
    unsafe fn become_command(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls on prepared data.
        unsafe {
            let keep = match self.identity {
                super::Identity::Root => KEEP.iter().fold(0u64, |m, c| m | 1 << c),
                super::Identity::Nobody => 0,
            };
            // The bounding set is cut while root inside may (CAP_SETPCAP).
            for cap in (0..=self.last_cap).filter(|c| keep & (1 << c) == 0) {
                step("dropping capabilities", libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0))?;
            }
            let id = self.identity.inside();
            step("switching group", libc::setresgid(id, id, id))?;
            step("switching user", libc::setresuid(id, id, id))?;
            step("working directory", libc::chdir(self.cwd.as_ptr()))?;
            if let Some(path) = &self.stdin {
                // Never blocking (a FIFO would hold engine's spawn, before
                // any deadline or Ctrl-C can reach it), and only a regular
                // file, as outside the sandbox.
                let flags = libc::O_RDONLY | libc::O_NOCTTY | libc::O_CLOEXEC | libc::O_NONBLOCK;
                let fd = libc::open(path.as_ptr(), flags);
                step("opening its standard input", fd)?;
                let mut st: libc::stat = std::mem::zeroed();
                step("opening its standard input", libc::fstat(fd, &mut st))?;
                if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                    libc::close(fd);
                    let e = std::io::Error::from_raw_os_error(libc::EINVAL);
                    return Err(report("its standard input (not a regular file)", e));
                }
                step("opening its standard input", libc::fcntl(fd, libc::F_SETFL, 0))?;
                step("opening its standard input", libc::dup2(fd, 0))?;
                libc::close(fd);
            }
            if let Some(max) = self.file_size {
                let lim = libc::rlimit { rlim_cur: max, rlim_max: max };
                step("bounding file sizes", libc::setrlimit(libc::RLIMIT_FSIZE, &lim))?;
            }
            set_caps(keep)?;
            // Nothing engine inherited reaches the command (see
            // sys::spawn::no_inherited_descriptors).
            crate::spawn::no_inherited_descriptors();
            step("no new privileges", libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            self.filters
                .load(self.io_uring, self.host_writable, self.no_preallocation)
                .map_err(|e| report("loading the system-call filter", e))
        }
    }

    /// The first child, outside the namespaces: holds no descriptor of
    /// engine's (so engine's spawn returns at the command's exec), leaves
    /// signals to the command (the whole group gets them), and exits as
    /// the command did, with the status init passed out.
    fn pass_on(&self, init: libc::pid_t) -> ! {
        let from_init = self.status[0].as_raw_fd();
        // SAFETY: raw system calls; this process never returns to Rust code.
        unsafe {
            close_all_but(from_init);
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2] {
                libc::signal(sig, libc::SIG_IGN);
            }
            let mut status = wait_for(init);
            // Engine holds the pipe's other end too: never wait on it. Init
            // wrote before it exited, or not at all.
            libc::fcntl(from_init, libc::F_SETFL, libc::O_NONBLOCK);
            let mut buf = [0u8; 4];
            if libc::read(from_init, buf.as_mut_ptr().cast(), 4) == 4 {
                status = i32::from_ne_bytes(buf);
            }
            exit_as(status)
        }
    }

    /// PID 1: reaps every orphan until the command ends, then hands its
    /// status out and exits (the kernel then kills what is left inside).
    fn init(&self, command: libc::pid_t) -> ! {
        let to_outside = self.status[1].as_raw_fd();
        // SAFETY: raw system calls; this process never returns to Rust code.
        unsafe {
            close_all_but(to_outside);
            for cap in 0..=self.last_cap {
                libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0);
            }
            let _ = set_caps(0);
            let status = wait_for(command);
            let bytes = status.to_ne_bytes();
            libc::write(to_outside, bytes.as_ptr().cast(), 4);
            // Should the status not get out (a failed write), the exit code
            // still carries it: a command that failed never passes as one
            // that succeeded.
            let code = match libc::WIFSIGNALED(status) {
                true => 128 + libc::WTERMSIG(status),
                false => libc::WEXITSTATUS(status),
            };
            libc::_exit(code)
        }
    }

    /// The new root, in order: private propagation, a tmpfs over /tmp made
    /// the new root's base and entered, the host's standard entries bound
    /// into it, /dev, the scratch places, the plan's binds; then
    /// `pivot_root` into it with the old root detached, /proc of the new
    /// PID namespace, and everything read-only but the writable places.
    ///
    /// # Safety
    /// Only in the forked child, in its own mount namespace: it replaces the
    /// root of whatever namespace it runs in.
    unsafe fn mounts(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls on prepared, NUL-terminated data.
        unsafe {
            let (null, none) = (std::ptr::null(), std::ptr::null());
            mount(null, c"/".as_ptr(), null, libc::MS_REC | libc::MS_PRIVATE, none, "private mounts")?;
            let tmpfs = c"tmpfs".as_ptr();
            let flags = libc::MS_NOSUID | libc::MS_NODEV;
            // The base of the new root: /tmp is only where it is built (the
            // plan's directories are already open, the host's are bound by
            // path, none under /tmp), so covering it hides nothing needed.
            mount(tmpfs, c"/tmp".as_ptr(), tmpfs, flags, c"mode=755,size=1m".as_ptr().cast(), "a new root")?;
            step("entering the new root", libc::chdir(c"/tmp".as_ptr()))?;
            self.system()?;
            libc::mkdir(c"sys".as_ptr(), 0o555);
            let ro = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            mount(c"sysfs".as_ptr(), c"sys".as_ptr(), c"sysfs".as_ptr(), ro, std::ptr::null(), "a /sys of its own")?;
            self.dev()?;
            let opts = c"mode=755,size=16m".as_ptr().cast();
            for h in &self.hide {
                make_dirs(std::slice::from_ref(h));
                mount(tmpfs, rel(h), tmpfs, flags, opts, "an empty directory of its own")?;
            }
            libc::mkdir(c"var".as_ptr(), 0o755);
            libc::symlink(c"/run".as_ptr(), c"var/run".as_ptr());
            libc::mkdir(c"proc".as_ptr(), 0o555);
            self.bind_all()?;
            step("pivot_root", libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as i32)?;
            // The old root now sits on top of the new one: detach it.
            step("detaching the old root", libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
            step("entering the new root", libc::chdir(c"/".as_ptr()))?;
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, none, "mounting /proc")?;
            self.seal()
        }
    }

    /// The host's standard entries, at their own paths relative to the new
    /// root (the current directory): directories and files bound, links
    /// made again.
    ///
    /// # Safety
    /// Only inside `mounts`, with the new root as the current directory.
    unsafe fn system(&self) -> std::io::Result<()> {
        // SAFETY: prepared, NUL-terminated paths.
        unsafe {
            for e in &self.system {
                make_dirs(&e.parents);
                let to = rel(&e.source);
                match &e.kind {
                    super::SysKind::Link(target) => {
                        libc::symlink(target.as_ptr(), to);
                        continue;
                    }
                    super::SysKind::Dir => {
                        libc::mkdir(to, 0o755);
                    }
                    super::SysKind::File => {
                        let fd = libc::open(to, libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o644);
                        if fd >= 0 {
                            libc::close(fd);
                        }
                    }
                }
                let flags = libc::MS_BIND | libc::MS_REC;
                mount(e.source.as_ptr(), to, std::ptr::null(), flags, std::ptr::null(), "binding a system path")?;
            }
        }
        Ok(())
    }

    /// Each copy attached at its target (made, parents first, when missing).
    ///
    /// # Safety
    /// Only inside `mounts`, with the new root as the current directory.
    unsafe fn bind_all(&self) -> std::io::Result<()> {
        for b in &self.binds {
            // SAFETY: prepared paths and our own descriptors.
            unsafe {
                make_dirs(&b.parents);
                make_dirs(std::slice::from_ref(&b.target));
                let (empty, to) = (c"".as_ptr(), rel(&b.target));
                let r = libc::syscall(
                    libc::SYS_move_mount,
                    b.source.as_raw_fd(),
                    empty,
                    libc::AT_FDCWD,
                    to,
                    libc::MOVE_MOUNT_F_EMPTY_PATH,
                );
                step("binding a directory", r as i32)?;
            }
        }
        Ok(())
    }

    /// Everything read-only and without setuid, then writable again: the
    /// writable binds and the hidden places (empty and this command's own:
    /// a tool that keeps files in ~ works, and nothing reaches the disk) —
    /// but not what was bound read-only inside them (an install).
    ///
    /// # Safety
    /// Only inside `mounts`, after the binds, in the child's own mount
    /// namespace.
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

    /// A /dev of its own (relative to the new root): the harmless
    /// character devices, /dev/shm's mount point, the /proc links. No
    /// terminal: neither `tty` nor the host's `pts` (a profile that asks
    /// gets a devpts instance of its own).
    ///
    /// # Safety
    /// Only inside `mounts`, with the new root as the current directory.
    unsafe fn dev(&self) -> std::io::Result<()> {
        // SAFETY: raw system calls on static C strings.
        unsafe {
            let tmpfs = c"tmpfs".as_ptr();
            libc::mkdir(c"dev".as_ptr(), 0o755);
            step(
                "a /dev of its own",
                libc::mount(tmpfs, c"dev".as_ptr(), tmpfs, libc::MS_NOSUID, c"mode=755,size=64k".as_ptr().cast()),
            )?;
            let nodes: [(&std::ffi::CStr, u64, u64); 5] = [
                (c"dev/null", 1, 3),
                (c"dev/zero", 1, 5),
                (c"dev/full", 1, 7),
                (c"dev/random", 1, 8),
                (c"dev/urandom", 1, 9),
            ];
            for (path, major, minor) in nodes {
                step("a device node", libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o666, (major << 8) | minor))?;
                libc::chmod(path.as_ptr(), 0o666);
            }
            libc::mkdir(c"dev/shm".as_ptr(), 0o1777);
            if self.pty {
                // A devpts instance of its own: only the terminals it opens.
                libc::mkdir(c"dev/pts".as_ptr(), 0o755);
                let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
                let opts = c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast();
                step(
                    "a devpts of its own",
                    libc::mount(c"devpts".as_ptr(), c"dev/pts".as_ptr(), c"devpts".as_ptr(), flags, opts),
                )?;
                libc::symlink(c"pts/ptmx".as_ptr(), c"dev/ptmx".as_ptr());
            }
            for (link, to) in [
                (c"dev/fd", c"/proc/self/fd"),
                (c"dev/stdin", c"/proc/self/fd/0"),
                (c"dev/stdout", c"/proc/self/fd/1"),
                (c"dev/stderr", c"/proc/self/fd/2"),
            ] {
                libc::symlink(to.as_ptr(), link.as_ptr());
            }
            Ok(())
        }
    }
}

/// `p` (absolute) relative to the current directory: without its leading `/`.
fn rel(p: &std::ffi::CStr) -> *const libc::c_char {
    let b = p.to_bytes();
    let skip = b.iter().take_while(|c| **c == b'/').count();
    // SAFETY: within the string (its NUL is past the skipped slashes).
    unsafe { p.as_ptr().add(skip) }
}

/// Makes each of `dirs` (absolute, made relative), mode 0755, when missing.
fn make_dirs(dirs: &[std::ffi::CString]) {
    for d in dirs {
        // SAFETY: a prepared, NUL-terminated path.
        unsafe { libc::mkdir(rel(d), 0o755) };
    }
}

/// Sets permitted and effective to `mask`, inheritable and ambient to nothing.
///
/// # Safety
/// Only in the forked child: the capabilities it drops are gone for the
/// process for good.
unsafe fn set_caps(mask: u64) -> std::io::Result<()> {
    let hdr = crate::privilege::CapHeader { version: crate::privilege::CAP_VERSION_3, pid: 0 };
    let (lo, hi) = (mask as u32, (mask >> 32) as u32);
    let data = [
        crate::privilege::CapData { effective: lo, permitted: lo, inheritable: 0 },
        crate::privilege::CapData { effective: hi, permitted: hi, inheritable: 0 },
    ];
    // SAFETY: valid header and data of the sizes the call expects.
    unsafe {
        let r = libc::syscall(libc::SYS_capset, &hdr as *const _, data.as_ptr());
        step("dropping capabilities", r as i32)?;
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0, 0, 0);
    }
    Ok(())
}

/// Closes every descriptor from 3 up but `keep`.
///
/// # Safety
/// Only in the forked child, where no other thread and no Rust value owns
/// a descriptor it closes.
unsafe fn close_all_but(keep: RawFd) {
    // SAFETY: closing ranges of our own descriptors.
    unsafe {
        if keep > 3 {
            libc::close_range(3, keep as libc::c_uint - 1, 0);
        }
        libc::close_range(keep as libc::c_uint + 1, libc::c_uint::MAX, 0);
        if keep < 3 {
            libc::close_range(3, libc::c_uint::MAX, 0);
        }
    }
}

/// Waits for `child` (reaping whatever else ends meanwhile); its status.
///
/// # Safety
/// Only in the confinement's own processes (the one passing the status on,
/// PID 1): it reaps every child this process has, not only `child`.
unsafe fn wait_for(child: libc::pid_t) -> i32 {
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own children.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == child {
            return status;
        }
        // SAFETY: reading errno of this thread.
        if r == -1 && unsafe { *libc::__errno_location() } != libc::EINTR {
            return 127 << 8;
        }
    }
}

/// Ends this process as `status` says the command ended.
fn exit_as(status: i32) -> ! {
    // SAFETY: raw system calls; never returns.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// mount(2), its failure reported as `what`.
///
/// # Safety
/// Each pointer is a NUL-terminated C string or null, as mount(2) takes.
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

/// mount_setattr(2) on `path` and what is mounted below it.
///
/// # Safety
/// `path` is a NUL-terminated C string.
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
