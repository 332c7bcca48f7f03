//! Running a step or server as an unprivileged user when engine runs as
//! root: programs such as PostgreSQL refuse root. The user is `nobody`
//! (its own group, no supplementary groups); it keeps one capability,
//! CAP_DAC_READ_SEARCH, so it can reach the test's directory through the
//! 0700 directories above it (`/root/...`, temporary directories) — it can
//! read, but writes only where it owns the directory: engine hands it the
//! test's and trials' scratch directories.

use std::ffi::CString;
use std::process::Command;

/// The user unprivileged steps run as.
pub const USER: &str = "nobody";

/// CAP_DAC_READ_SEARCH (linux/capability.h).
const CAP_DAC_READ_SEARCH: u32 = 2;
/// _LINUX_CAPABILITY_VERSION_3.
pub(super) const CAP_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
pub(super) struct CapHeader {
    pub(super) version: u32,
    pub(super) pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct CapData {
    pub(super) effective: u32,
    pub(super) permitted: u32,
    pub(super) inheritable: u32,
}

/// Who unprivileged commands run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unprivileged {
    pub uid: u32,
    pub gid: u32,
}

/// The unprivileged user does not exist on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("engine runs as root and this test runs a program as the unprivileged user `{USER}`, which does not exist")]
pub struct NoSuchUser;

/// The unprivileged user when engine runs as root (`None` otherwise: then
/// commands run as engine's own user, which is what they need).
pub fn when_root() -> Result<Option<Unprivileged>, NoSuchUser> {
    if !crate::is_root() {
        return Ok(None);
    }
    let name = CString::new(USER).expect("no NUL");
    // SAFETY: getpwnam returns a pointer into static storage or NULL; we
    // copy the two numbers out at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err(NoSuchUser);
    }
    // SAFETY: pw is non-null and points to a valid passwd.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some(Unprivileged { uid, gid }))
}

impl Unprivileged {
    /// Makes `cmd` drop to this user before it runs, keeping only the
    /// capability to traverse (and read) directories.
    pub fn apply(self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        let Unprivileged { uid, gid } = self;
        // SAFETY: the closure runs between fork and exec and makes only
        // async-signal-safe system calls; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                let check = |r: libc::c_long| if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) };
                check(libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0) as libc::c_long)?;
                check(libc::setgroups(0, std::ptr::null()) as libc::c_long)?;
                check(libc::setgid(gid) as libc::c_long)?;
                check(libc::setuid(uid) as libc::c_long)?;
                let hdr = CapHeader { version: CAP_VERSION_3, pid: 0 };
                let bit = 1u32 << CAP_DAC_READ_SEARCH;
                let data = [
                    CapData { effective: bit, permitted: bit, inheritable: bit },
                    CapData { effective: 0, permitted: 0, inheritable: 0 },
                ];
                check(libc::syscall(libc::SYS_capset, &hdr as *const CapHeader, data.as_ptr()))?;
                check(libc::prctl(
                    libc::PR_CAP_AMBIENT,
                    libc::PR_CAP_AMBIENT_RAISE as libc::c_ulong,
                    CAP_DAC_READ_SEARCH as libc::c_ulong,
                    0,
                    0,
                ) as libc::c_long)?;
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unprivileged_command_reaches_a_private_directory_and_is_not_root() {
        let Some(u) = when_root().unwrap() else {
            return; // not root: nothing to drop
        };
        let d = tempfile::tempdir().unwrap(); // 0700, owned by root
        let inner = d.path().join("mine");
        std::fs::create_dir(&inner).unwrap();
        std::os::unix::fs::chown(&inner, Some(u.uid), Some(u.gid)).unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "id -u; touch ok && echo wrote; touch ../no 2>/dev/null || echo refused"]).current_dir(&inner);
        u.apply(&mut cmd);
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.lines().collect::<Vec<_>>(), [u.uid.to_string().as_str(), "wrote", "refused"], "{text}");
    }
}
