//! The user namespace a confined test's commands run in: root inside is an
//! unprivileged user outside. Inside uids and gids 0–65535 map to host ids
//! [`BASE`]…[`BASE`]+65535 (a range in systemd's block for containers,
//! 524288–1879048191, that no account owns), so what the command holds as
//! "root" — its capabilities included — acts only on files and processes of
//! those ids: a file the host's root owns is `nobody`'s to it, whatever its
//! mode; `open_by_handle_at`, raw I/O, module loading and the rest check
//! the host's namespace, where the command has nothing.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// First host id of the range (a multiple of 65536).
pub const BASE: u32 = 0x6E00_0000;
/// How many ids are mapped: every 16-bit id a tool may switch to.
pub const SIZE: u32 = 65536;
/// The id `nobody` has inside (unprivileged steps run as it).
pub const NOBODY: u32 = 65534;

/// The host uid (and gid) that `inside` is.
pub fn host_id(inside: u32) -> u32 {
    BASE + inside
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: a valid array for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: two new descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A new user namespace with the mapping above, as a descriptor commands
/// join with `setns`. Made by a short-lived child (a multithreaded process
/// cannot unshare its own), whose maps engine writes from outside.
pub fn create() -> io::Result<OwnedFd> {
    let (ready_r, ready_w) = pipe()?;
    let (done_r, done_w) = pipe()?;
    // SAFETY: the child makes only async-signal-safe system calls and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: raw system calls on our own descriptors; never returns.
        unsafe {
            // The ends the parent uses: held here, its close would never be seen.
            libc::close(ready_r.as_raw_fd());
            libc::close(done_w.as_raw_fd());
            let ok = [u8::from(libc::unshare(libc::CLONE_NEWUSER) == 0)];
            libc::write(ready_w.as_raw_fd(), ok.as_ptr().cast(), 1);
            let mut b = [0u8];
            libc::read(done_r.as_raw_fd(), b.as_mut_ptr().cast(), 1);
            libc::_exit(0);
        }
    }
    drop((ready_w, done_r));
    let made = map_child(pid, &ready_r);
    drop(done_w);
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    made
}

/// Waits for the child's namespace, writes its maps, opens it.
fn map_child(pid: libc::pid_t, ready: &OwnedFd) -> io::Result<OwnedFd> {
    let mut ok = [0u8];
    // SAFETY: reading one byte into our buffer.
    let n = unsafe { libc::read(ready.as_raw_fd(), ok.as_mut_ptr().cast(), 1) };
    if n != 1 || ok[0] != 1 {
        return Err(io::Error::other("the kernel refused a new user namespace (user.max_user_namespaces is 0?)"));
    }
    let map = format!("0 {BASE} {SIZE}\n");
    for file in ["uid_map", "gid_map"] {
        std::fs::write(format!("/proc/{pid}/{file}"), &map)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot write the user namespace's {file}: {e}")))?;
    }
    Ok(OwnedFd::from(std::fs::File::open(format!("/proc/{pid}/ns/user"))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs root"]
    fn root_inside_is_an_unprivileged_id_outside() {
        assert!(crate::is_root(), "mapping a namespace for other ids needs root: run as root with --include-ignored");
        let ns = create().unwrap();
        let d = tempfile::tempdir().unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let secret = d.path().join("secret");
        std::fs::write(&secret, "s").unwrap();
        std::fs::write(d.path().join("open"), "o").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        let c = std::ffi::CString::new(secret.to_str().unwrap()).unwrap();
        let o = std::ffi::CString::new(d.path().join("open").to_str().unwrap()).unwrap();
        let fd = ns.as_raw_fd();
        // SAFETY: the child makes only system calls and exits.
        let code = unsafe {
            let pid = libc::fork();
            if pid == 0 {
                let step = libc::setns(fd, libc::CLONE_NEWUSER) == 0
                    && libc::setresgid(0, 0, 0) == 0
                    && libc::setresuid(0, 0, 0) == 0;
                if !step {
                    libc::_exit(10);
                }
                // Root inside, with every capability of the namespace.
                let denied = libc::open(c.as_ptr(), libc::O_RDONLY) < 0;
                let readable = libc::open(o.as_ptr(), libc::O_RDONLY) >= 0;
                libc::_exit(if denied && readable { 0 } else { 11 });
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            libc::WEXITSTATUS(status)
        };
        assert_eq!(code, 0, "root inside read a 0600 file of the host's root, or could not read a 0644 one");
    }
}
