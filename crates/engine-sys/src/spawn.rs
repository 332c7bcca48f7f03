//! Starting a trial's command the way `posix_spawn` does — a child that
//! shares engine's memory and runs only until `execve` — but with the
//! parent-death signal set in it. std's `Command` can set that only with a
//! `pre_exec` hook, which makes it `fork`: copying the page tables of a
//! process the size of engine (wasmtime, the built-in workloads) cost about
//! 175 µs a trial here, a third of a short trial's overhead.
//!
//! The child runs on its own small stack while the parent thread waits
//! (`CLONE_VM | CLONE_VFORK`), and makes only system calls: no allocation,
//! no locks. Everything it needs is prepared by the parent first.

use std::cell::RefCell;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What the child needs, prepared in the parent (the child cannot allocate).
struct Prepared {
    path: CString,
    argv: Vec<*const libc::c_char>,
    /// Into the [`EnvBlock`] the [`Launch`] holds.
    envp: *const *const libc::c_char,
    cwd: CString,
    fds: [RawFd; 3],
    parent: libc::pid_t,
    mask: libc::sigset_t,
    /// Written by the child when something before `execve` (or it) failed.
    error: libc::c_int,
}

fn cstr(b: &[u8]) -> io::Result<CString> {
    CString::new(b)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a command or its environment"))
}

/// `program` as `execvp` would find it, with the child's `PATH`.
fn resolve(program: &OsStr, path: Option<&OsStr>) -> io::Result<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    let dirs = path.map(OsStr::to_os_string).unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(&dirs) {
        let p = if dir.as_os_str().is_empty() { Path::new(".").join(program) } else { dir.join(program) };
        let Ok(c) = cstr(p.as_os_str().as_bytes()) else { continue };
        // SAFETY: a valid C string.
        if std::fs::metadata(&p).is_ok_and(|m| m.is_file()) && unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Ok(p);
        }
    }
    Err(io::Error::new(io::ErrorKind::NotFound, format!("{} not found in PATH", program.to_string_lossy())))
}

/// A command ready to start: everything the child needs, allocated.
pub struct Launch {
    p: Box<Prepared>,
    _args: Vec<CString>,
    _env: Rc<EnvBlock>,
}

/// A child's environment as `execve` takes it, and where its `PATH` found
/// the last program.
struct EnvBlock {
    _strings: Vec<CString>,
    ptrs: Vec<*const libc::c_char>,
    path: Option<OsString>,
    found: RefCell<Option<(OsString, PathBuf)>>,
}

/// The variables a block was built for, and the block.
type LastEnv = (Vec<(String, String)>, Rc<EnvBlock>);

thread_local! {
    /// The last environment built, for the next command with the same
    /// variables (every trial of a test): building some 40 C strings per
    /// trial was a tenth of engine's own time per trial of `/bin/true`.
    static LAST_ENV: RefCell<Option<LastEnv>> = const { RefCell::new(None) };
}

/// Engine's environment with `env` over it, built or reused.
fn env_block(env: &[(String, String)]) -> io::Result<Rc<EnvBlock>> {
    if let Some(b) = LAST_ENV.with_borrow(|last| last.as_ref().filter(|(k, _)| k == env).map(|(_, b)| Rc::clone(b))) {
        return Ok(b);
    }
    let mut vars: Vec<(OsString, OsString)> =
        inherited().iter().filter(|(k, _)| !env.iter().any(|(e, _)| OsStr::new(e) == k)).cloned().collect();
    vars.extend(env.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
    let path = vars.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone());
    let strings: Vec<CString> = vars
        .into_iter()
        .map(|(k, v)| {
            let mut b = k.into_vec();
            b.push(b'=');
            b.extend(v.into_vec());
            cstr(&b)
        })
        .collect::<Result<_, _>>()?;
    let ptrs = strings.iter().map(|c| c.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let b = Rc::new(EnvBlock { _strings: strings, ptrs, path, found: RefCell::new(None) });
    LAST_ENV.set(Some((env.to_vec(), Rc::clone(&b))));
    Ok(b)
}

impl EnvBlock {
    /// `program` resolved with this environment's `PATH` (the last one kept).
    fn resolve(&self, program: &OsStr) -> io::Result<PathBuf> {
        if let Some((p, exe)) = &*self.found.borrow()
            && p == program
        {
            return Ok(exe.clone());
        }
        let exe = resolve(program, self.path.as_deref())?;
        *self.found.borrow_mut() = Some((program.to_os_string(), exe.clone()));
        Ok(exe)
    }
}

/// Engine's environment, read once: engine never changes it, and reading
/// it takes the environment lock and copies every variable.
fn inherited() -> &'static [(OsString, OsString)] {
    static VARS: std::sync::OnceLock<Vec<(OsString, OsString)>> = std::sync::OnceLock::new();
    VARS.get_or_init(|| std::env::vars_os().collect())
}

/// The size of the child's stack: its function needs a few hundred bytes.
const STACK: usize = 64 << 10;

thread_local! {
    /// The child's stack, reused: allocating and freeing it per trial made
    /// the allocator give memory back to the kernel and take it again.
    static CHILD_STACK: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0u8; STACK]);
}

impl Launch {
    /// `program` with `args`, engine's environment with `env` over it, in
    /// `cwd`, with `fds` as its stdin, stdout and stderr (they must stay
    /// open until [`Launch::start`]).
    pub fn new(
        program: &OsStr,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        fds: [RawFd; 3],
    ) -> io::Result<Launch> {
        let env = env_block(env)?;
        let exe = env.resolve(program)?;
        let path = cstr(exe.as_os_str().as_bytes())?;
        let arg_c: Vec<CString> = std::iter::once(cstr(program.as_bytes()))
            .chain(args.iter().map(|a| cstr(a.as_bytes())))
            .collect::<Result<_, _>>()?;
        let p = Box::new(Prepared {
            path,
            argv: arg_c.iter().map(|c| c.as_ptr()).chain(std::iter::once(std::ptr::null())).collect(),
            envp: env.ptrs.as_ptr(),
            cwd: cstr(cwd.as_os_str().as_bytes())?,
            fds,
            // SAFETY: getpid cannot fail.
            parent: unsafe { libc::getpid() },
            // SAFETY: a zeroed sigset_t is a valid value, filled in by start.
            mask: unsafe { std::mem::zeroed() },
            error: 0,
        });
        Ok(Launch { p, _args: arg_c, _env: env })
    }

    /// Starts it, in a session (and process group) of its own with no
    /// controlling terminal, killed (SIGKILL) when
    /// engine dies. Returns its pid once it runs the program.
    pub fn start(mut self) -> io::Result<libc::pid_t> {
        CHILD_STACK.with_borrow_mut(|stack| self.start_on(stack))
    }

    fn start_on(&mut self, stack: &mut [u8]) -> io::Result<libc::pid_t> {
        // SAFETY: the stack grows down from its end, aligned to 16 as the ABI wants.
        let top = unsafe { stack.as_mut_ptr().add(stack.len()) };
        let top = (top as usize & !15) as *mut libc::c_void;
        let p: *mut Prepared = &mut *self.p;
        // Every signal blocked until the child has reset its handlers: a
        // handler of engine's must not run on the child's stack.
        // SAFETY: valid sigset pointers; `p` outlives the child's use of it
        // (CLONE_VFORK: the parent waits until the child execs or exits).
        let pid = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut (*p).mask);
            let pid =
                libc::clone(child, top, libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD, p as *mut libc::c_void);
            let clone_error = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &(*p).mask, std::ptr::null_mut());
            if pid < 0 {
                return Err(clone_error);
            }
            pid
        };
        // SAFETY: the child no longer runs: it exec'd or exited.
        let error = unsafe { std::ptr::read_volatile(&(*p).error) };
        if error != 0 {
            let mut status = 0;
            // SAFETY: reaping the child that failed before exec.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            return Err(io::Error::from_raw_os_error(error));
        }
        Ok(pid)
    }
}

/// Every descriptor from 3 up closes at exec: what engine itself inherited
/// without close-on-exec (a file the shell opened, a terminal on fd 5) must
/// not reach a test's command. 0–2 are the command's own, set just before.
///
/// # Safety
/// Between fork and exec (or where closing at exec is meant for all).
pub unsafe fn no_inherited_descriptors() {
    // SAFETY: marks descriptors close-on-exec; no memory is touched.
    unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as libc::c_int) };
}

/// Says why the child could not go on (errno, for the parent) and ends it.
///
/// # Safety
/// Only in the forked child; `p` is the parent's, read by it after the
/// child is gone.
unsafe fn fail(p: &mut Prepared) -> ! {
    // SAFETY: the parent's struct, which it reads after the child is gone.
    unsafe {
        std::ptr::write_volatile(&mut p.error, (*libc::__errno_location()).max(1));
        libc::_exit(127)
    }
}

/// The child, until `execve`. System calls only.
extern "C" fn child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's Prepared, alive while the parent waits.
    let p = unsafe { &mut *(arg as *mut Prepared) };
    // SAFETY: system calls on valid pointers the parent prepared; the
    // parent is suspended until execve or _exit.
    unsafe {
        // Engine's Ctrl-C and SIGTERM handlers must not run here, on memory
        // shared with engine, in the moment between unblocking and execve
        // (which resets every handler); SIGPIPE goes back to its default too
        // (Rust ignores it, and execve keeps what is ignored). The fault
        // handlers (wasmtime's, Rust's) are left: these few system calls
        // cannot fault, and a reset is a system call each.
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in super::interrupt::HANDLED.into_iter().chain([libc::SIGPIPE]) {
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
        // A session of its own: no controlling terminal, so nothing it runs
        // can open /dev/tty, take the terminal's foreground or push input
        // into it; its session id is its pid, so its group is killable.
        if libc::setsid() < 0 {
            fail(p);
        }
        for (i, &fd) in p.fds.iter().enumerate() {
            let target = i as RawFd;
            let r = if fd == target {
                // Already in place: only its close-on-exec flag goes.
                libc::fcntl(fd, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, target)
            };
            if r < 0 {
                fail(p);
            }
        }
        if libc::chdir(p.cwd.as_ptr()) != 0 {
            fail(p);
        }
        no_inherited_descriptors();
        // Killed with engine, even by kill -9; and not started if engine is already gone.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
            fail(p);
        }
        if libc::getppid() != p.parent {
            *libc::__errno_location() = libc::ESRCH;
            fail(p);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &p.mask, std::ptr::null_mut());
        libc::execve(p.path.as_ptr(), p.argv.as_ptr(), p.envp);
        fail(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn wait(pid: libc::pid_t) -> i32 {
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        status
    }

    #[test]
    fn runs_with_its_arguments_environment_folder_group_and_session() {
        let d = tempfile::tempdir().unwrap();
        let out = std::fs::File::create(d.path().join("out")).unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let env = vec![("ENGINE_SPAWN_TEST".to_string(), "v a l".to_string())];
        let args = vec![
            "-c".to_string(),
            "echo \"$ENGINE_SPAWN_TEST|$1|$(pwd)|$(ps -o pgid= $$)|$$|$(ps -o sid= $$)|$(ps -o tty= $$)\"".into(),
            "sh".into(),
            "x y".into(),
        ];
        let fds = [null.as_raw_fd(), out.as_raw_fd(), out.as_raw_fd()];
        let pid = Launch::new(OsStr::new("sh"), &args, &env, d.path(), fds).unwrap().start().unwrap();
        assert_eq!(libc::WEXITSTATUS(wait(pid)), 0);
        let text = std::fs::read_to_string(d.path().join("out")).unwrap();
        let parts: Vec<&str> = text.trim().split('|').collect();
        assert_eq!(&parts[..3], ["v a l", "x y", d.path().canonicalize().unwrap().to_str().unwrap()], "{text}");
        assert_eq!(parts[3].trim(), parts[4], "a process group of its own: {text}");
        assert_eq!(parts[5].trim(), parts[4], "a session of its own: {text}");
        assert_eq!(parts[6].trim(), "?", "no controlling terminal: {text}");
    }

    #[test]
    fn a_missing_program_is_an_error_not_a_child() {
        let null = std::fs::File::open("/dev/null").unwrap();
        let fds = [null.as_raw_fd(); 3];
        let e = Launch::new(OsStr::new("no-such-program-xyz"), &[], &[], Path::new("/"), fds).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let run = |prog: &str, cwd: &str| Launch::new(OsStr::new(prog), &[], &[], Path::new(cwd), fds).unwrap().start();
        assert_eq!(run("/etc/passwd", "/").unwrap_err().raw_os_error(), Some(libc::EACCES));
        assert_eq!(run("/bin/true", "/no/such/dir").unwrap_err().raw_os_error(), Some(libc::ENOENT));
        let pid = run("/bin/true", "/").unwrap();
        assert_eq!(libc::WEXITSTATUS(wait(pid)), 0);
    }
}
