//! Work forked into a child process of its own session (io's jobs, as fio
//! forks each job and each calls `setsid`): the child runs a function, not a
//! program, writes what it has to say into a pipe and leaves with `_exit`;
//! it dies with the thread that forked it. A page shared with such children
//! holds the flag they stop on.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::AtomicBool;

/// A page shared with forked children, holding one flag (false at first).
pub struct SharedFlag(NonNull<AtomicBool>);

// SAFETY: the page holds one atomic; it lives until the value is dropped.
unsafe impl Send for SharedFlag {}
// SAFETY: as above: only atomic accesses go through it.
unsafe impl Sync for SharedFlag {}

impl SharedFlag {
    pub fn new() -> std::io::Result<SharedFlag> {
        // SAFETY: a fresh anonymous mapping, zeroed by the kernel (false).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        NonNull::new(p.cast()).map(SharedFlag).ok_or_else(|| std::io::Error::other("mmap returned null"))
    }

    pub fn flag(&self) -> &AtomicBool {
        // SAFETY: mapped, aligned (a page) and initialised (zero is false).
        unsafe { self.0.as_ref() }
    }
}

impl Drop for SharedFlag {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer borrowed.
        unsafe { libc::munmap(self.0.as_ptr().cast(), 4096) };
    }
}

/// How a forked child ended, when not with exit 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Killed(i32),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Exited(c) => write!(f, "exited {c}"),
            Ended::Killed(s) => write!(f, "was killed by signal {s}"),
        }
    }
}

/// Why forked work gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    #[error("cannot {0}: {1}")]
    Os(&'static str, std::io::Error),
    #[error("its process {0}")]
    Ended(Ended),
}

/// Runs `body` in a forked child of its own session, which writes what it
/// has to say into the file it is given (`body` says whether that went
/// well: the child's exit status); returns all it wrote once it has exited
/// 0.
///
/// The child runs `body` and nothing else of this process: system calls,
/// and the allocations glibc's malloc allows after a fork (keep `body` to
/// that — no locks another thread may hold). It dies with the forking
/// thread (`PR_SET_PDEATHSIG`).
pub fn run(body: impl FnOnce(File) -> bool) -> Result<Vec<u8>, ForkError> {
    let mut fds = [0; 2];
    // SAFETY: a valid array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(ForkError::Os("make a pipe", std::io::Error::last_os_error()));
    }
    // SAFETY: both just opened, owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child runs only `body` (see above) and leaves with _exit.
    match unsafe { libc::fork() } {
        -1 => Err(ForkError::Os("fork", std::io::Error::last_os_error())),
        0 => {
            drop(r);
            // SAFETY: plain system calls on this process.
            unsafe {
                libc::setsid();
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            }
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(File::from(w)))).unwrap_or(false);
            // SAFETY: leaves without running the parent's destructors or atexit.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        pid => {
            drop(w);
            collect(pid, r)
        }
    }
}

fn collect(pid: i32, r: OwnedFd) -> Result<Vec<u8>, ForkError> {
    let mut bytes = Vec::new();
    let read = File::from(r).read_to_end(&mut bytes);
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let got = unsafe { libc::waitpid(pid, &mut status, 0) };
        if got == pid || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    read.map_err(|e| ForkError::Os("read what it wrote", e))?;
    if libc::WIFSIGNALED(status) {
        return Err(ForkError::Ended(Ended::Killed(libc::WTERMSIG(status))));
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        return Err(ForkError::Ended(Ended::Exited(libc::WEXITSTATUS(status))));
    }
    Ok(bytes)
}

/// This process's session id.
pub fn session() -> u64 {
    // SAFETY: getsid(0) asks about this process; it cannot fail for it.
    unsafe { libc::getsid(0) as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::atomic::Ordering;

    #[test]
    fn the_child_is_a_session_of_its_own_and_what_it_wrote_comes_back() {
        let flag = SharedFlag::new().unwrap();
        let got = run(|mut w| {
            let seen = flag.flag().load(Ordering::SeqCst);
            flag.flag().store(true, Ordering::SeqCst);
            w.write_all(format!("{} {seen}", session()).as_bytes()).is_ok()
        })
        .unwrap();
        let text = String::from_utf8(got).unwrap();
        let (sid, seen) = text.split_once(' ').unwrap();
        assert_ne!(sid.parse::<u64>().unwrap(), session(), "a session of its own");
        assert_eq!(seen, "false");
        assert!(flag.flag().load(Ordering::SeqCst), "the page is shared");
    }

    #[test]
    fn a_child_that_fails_or_is_killed_says_how() {
        assert!(matches!(run(|_| false), Err(ForkError::Ended(Ended::Exited(1)))));
        let killed = run(|_| {
            // SAFETY: kills this (the child) process.
            unsafe { libc::raise(libc::SIGKILL) };
            true
        });
        let e = killed.err().unwrap();
        assert_eq!(e.to_string(), "its process was killed by signal 9");
    }
}
