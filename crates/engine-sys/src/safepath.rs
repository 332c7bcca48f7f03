//! Safe paths: how engine, running as root, works in directories a test's
//! commands can write (its test directory, its trials' scratch directories,
//! a sandbox's private /tmp). A command may have replaced anything in there
//! with a symlink to /etc, and may keep doing so while engine works, so
//! engine never resolves such a path by string: it holds a directory file
//! descriptor opened when it made the directory, and reaches what is inside
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS)` (or, on kernels before 5.6, one `O_NOFOLLOW`
//! component at a time). Removing, chowning, reading, connecting to a socket
//! and handing a directory to a library (as `/proc/self/fd/N`) all start
//! from such a descriptor. This module is the one place that builds paths
//! inside a test's writable directories.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// A directory engine made or trusts, open; what is inside is reached only
/// through it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    /// Where it was when opened: for messages, and for handing to commands
    /// that resolve it themselves inside their sandbox.
    path: PathBuf,
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))
}

/// `rel` as plain components: no `..`, no root, no `.` games.
fn plain(rel: &Path) -> io::Result<PathBuf> {
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} leaves its directory (`..` or an absolute path)", rel.display()),
                ));
            }
        }
    }
    Ok(out)
}

/// Whether a path beneath a directory may go through symlinks (those that
/// stay beneath it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    Refused,
    Beneath,
}

/// openat2(2) of `path` beneath `dir`: never out of it (`..`, absolute
/// paths, symlinks that lead out: EXDEV), never through /proc's magic
/// links; `links` says whether symlinks beneath it are followed. The one
/// owner of openat2 in engine. ENOSYS on kernels before 5.6.
pub fn openat2_beneath(dir: BorrowedFd<'_>, path: &Path, flags: i32, mode: u32, links: Links) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    // Said plainly (the kernel's word would be EINVAL).
    if path.as_os_str().as_bytes().contains(&0) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"));
    }
    let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    if links == Links::Refused {
        // It covers the last component too, and says ELOOP where O_NOFOLLOW
        // with O_DIRECTORY would say ENOTDIR.
        resolve |= ResolveFlags::NO_SYMLINKS;
    }
    let oflags = OFlags::from_bits_retain((flags | libc::O_CLOEXEC) as u32);
    let mode = if flags & libc::O_CREAT != 0 { Mode::from_raw_mode(mode) } else { Mode::empty() };
    Ok(rustix::fs::openat2(dir, path, oflags, mode, resolve)?)
}

/// Refuses anything but a regular file behind `fd`, opened with
/// `O_NONBLOCK` so that a FIFO or a device did not hold the open; then
/// clears `O_NONBLOCK` for ordinary reads and writes.
pub fn regular_only(fd: &OwnedFd) -> io::Result<()> {
    use rustix::fs::{FileType, OFlags};
    let st = rustix::fs::fstat(fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags - OFlags::NONBLOCK)?;
    Ok(())
}

/// The regular file `rel` beneath the folder `dir`: `dir` itself may be
/// reached through a link (it is the person's own, as ENGINE_HOME is), but
/// nothing beneath it is followed, and a FIFO or a device there is refused,
/// never waited on.
pub fn open_regular_in(dir: &Path, rel: &Path) -> io::Result<File> {
    let d = File::open(dir)?;
    let fd = open_beneath(d.as_fd(), rel, libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK, 0)?;
    regular_only(&fd)?;
    Ok(File::from(fd))
}

/// openat2 beneath `dir` without symlinks; the component walk where the
/// kernel has no openat2.
fn open_beneath(dir: BorrowedFd<'_>, rel: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let rel = plain(rel)?;
    let target = if rel.as_os_str().is_empty() { PathBuf::from(".") } else { rel };
    match openat2_beneath(dir, &target, flags, mode, Links::Refused) {
        Ok(fd) => Ok(fd),
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => walk(dir, &target, flags, mode),
        Err(e) => Err(refusal(e, &target)),
    }
}

/// ELOOP from RESOLVE_NO_SYMLINKS, EXDEV from RESOLVE_BENEATH: said plainly.
fn refusal(e: io::Error, rel: &Path) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::EXDEV) => io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is or goes through a symlink, which engine does not follow here", rel.display()),
        ),
        _ => e,
    }
}

/// One component at a time, each opened without following a symlink.
fn walk(dir: BorrowedFd<'_>, rel: &Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let parts: Vec<_> = rel.components().collect();
    let mut cur = dir.try_clone_to_owned()?;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let f = if last { flags } else { libc::O_PATH | libc::O_DIRECTORY };
        let c = cstr(Path::new(part.as_os_str()))?;
        // SAFETY: valid descriptor and C string.
        let fd = unsafe { libc::openat(cur.as_raw_fd(), c.as_ptr(), f | libc::O_NOFOLLOW | libc::O_CLOEXEC, mode) };
        if fd < 0 {
            return Err(refusal(io::Error::last_os_error(), rel));
        }
        // SAFETY: a new descriptor we own.
        cur = unsafe { OwnedFd::from_raw_fd(fd) };
    }
    Ok(cur)
}

impl Dir {
    /// Opens a directory engine made (or the user named): its last
    /// component must not be a symlink.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = cstr(path)?;
        // SAFETY: a valid C string.
        let fd =
            unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor we own.
        Ok(Dir { fd: unsafe { OwnedFd::from_raw_fd(fd) }, path: path.to_path_buf() })
    }

    /// Where it was when opened (what commands resolve themselves).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path the kernel resolves to this very directory, whatever has
    /// been renamed or replaced since (for libraries that take a path).
    pub fn fd_path(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// `rel` (relative, or absolute under [`Dir::path`]) as components beneath it.
    pub fn relative(&self, p: &Path) -> io::Result<PathBuf> {
        let rel = if p.is_absolute() {
            p.strip_prefix(&self.path).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} is not inside {}", p.display(), self.path.display()),
                )
            })?
        } else {
            p
        };
        plain(rel)
    }

    /// The directory `rel` beneath this one.
    pub fn open_dir(&self, rel: &Path) -> io::Result<Dir> {
        let rel = self.relative(rel)?;
        let fd = open_beneath(self.fd(), &rel, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        Ok(Dir { fd, path: self.path.join(rel) })
    }

    /// The file `rel` beneath this one, for reading.
    pub fn open_file(&self, rel: &Path) -> io::Result<File> {
        let rel = self.relative(rel)?;
        Ok(File::from(open_beneath(self.fd(), &rel, libc::O_RDONLY | libc::O_NOCTTY, 0)?))
    }

    /// The regular file `rel` beneath this one, for reading: a FIFO or a
    /// device there is refused (never waited on).
    pub fn open_regular(&self, rel: &Path) -> io::Result<File> {
        let rel = self.relative(rel)?;
        let f = File::from(open_beneath(self.fd(), &rel, libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK, 0)?);
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
        }
        Ok(f)
    }

    /// The parent of `rel` beneath this one, and `rel`'s last name.
    fn parent_of(&self, rel: &Path) -> io::Result<(Dir, CString)> {
        let rel = self.relative(rel)?;
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the directory itself, not something in it"))?;
        let parent = rel.parent().unwrap_or(Path::new(""));
        let dir = if parent.as_os_str().is_empty() {
            Dir { fd: self.fd.try_clone()?, path: self.path.clone() }
        } else {
            self.open_dir(parent)?
        };
        Ok((dir, cstr(Path::new(name))?))
    }

    /// Removes `rel` beneath this one, whatever it is (a tree, a file, a
    /// symlink — the link itself); absent is fine.
    pub fn remove(&self, rel: &Path) -> io::Result<()> {
        let (parent, name) = match self.parent_of(rel) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            r => r?,
        };
        // SAFETY: valid descriptor and C string.
        if unsafe { libc::unlinkat(parent.fd.as_raw_fd(), name.as_ptr(), 0) } == 0 {
            return Ok(());
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::ENOENT) => Ok(()),
            // A directory: removed level by level from the parent's
            // descriptor, never following a link, with a constant number
            // of descriptors however deep it goes.
            Some(libc::EISDIR) | Some(libc::EPERM) => {
                let deadline = std::time::Instant::now() + super::remove::DEADLINE;
                super::remove::remove_at(parent.fd(), &name, Some(deadline)).map_err(|e| match e {
                    super::remove::RemoveError::Io(e) => e,
                    other => io::Error::other(other.to_string()),
                })
            }
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// A new, empty directory `name` here, replacing whatever was there
    /// (never following it), owned by `owner`, open.
    pub fn fresh_dir(&self, name: &str, owner: Option<(u32, u32)>) -> io::Result<Dir> {
        self.remove(Path::new(name))?;
        let c = cstr(Path::new(name))?;
        // SAFETY: valid descriptor and C string.
        if unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let d = self.open_dir(Path::new(name))?;
        if let Some((uid, gid)) = owner {
            d.chown(uid, gid)?;
        }
        Ok(d)
    }

    /// Gives this directory (not what a path names now) to `uid:gid`.
    pub fn chown(&self, uid: u32, gid: u32) -> io::Result<()> {
        // SAFETY: a valid descriptor.
        if unsafe { libc::fchown(self.fd.as_raw_fd(), uid, gid) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Gives it and everything under it (links themselves, never what
    /// they name) to `uid:gid`.
    pub fn chown_tree(&self, uid: u32, gid: u32) -> io::Result<()> {
        self.chown(uid, gid)?;
        chown_under(self.fd(), uid, gid, 0)
    }

    /// Whether it holds nothing. Run after every trial, so one getdents on a
    /// fresh descriptor into a stack buffer (rustix's `RawDir`; std's
    /// `read_dir` stats, allocates 32 KiB and copies each name).
    pub fn is_empty(&self) -> bool {
        let Ok(d) = open_beneath(self.fd(), Path::new(""), libc::O_RDONLY | libc::O_DIRECTORY, 0) else {
            return false;
        };
        // Room for any entry (names are at most 255 bytes).
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 1024];
        let mut entries = rustix::fs::RawDir::new(&d, &mut buf);
        while let Some(e) = entries.next() {
            let Ok(e) = e else { return false };
            if !matches!(e.file_name().to_bytes(), b"." | b"..") {
                return false;
            }
        }
        true
    }

    /// Whether `other` is this very directory (device and inode).
    pub fn same_as(&self, other: &Dir) -> bool {
        let id = |d: &Dir| {
            // SAFETY: zeroed stat is a valid out-parameter; a valid descriptor.
            let mut st: libc::stat64 = unsafe { std::mem::zeroed() };
            (unsafe { libc::fstat64(d.fd.as_raw_fd(), &mut st) } == 0).then_some((st.st_dev, st.st_ino))
        };
        id(self).is_some_and(|a| Some(a) == id(other))
    }

    /// Renames `from` to `to`, both beneath this directory (the entries
    /// themselves: a link is renamed, not followed).
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (a, an) = self.parent_of(from)?;
        let (b, bn) = self.parent_of(to)?;
        // SAFETY: valid descriptors and C strings.
        if unsafe { libc::renameat(a.fd.as_raw_fd(), an.as_ptr(), b.fd.as_raw_fd(), bn.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Connects to the Unix socket `rel` beneath this one (a server's
    /// readiness), without following a link to a socket elsewhere.
    pub fn connect(&self, rel: &Path) -> io::Result<std::os::unix::net::UnixStream> {
        let rel = self.relative(rel)?;
        let fd = open_beneath(self.fd(), &rel, libc::O_PATH, 0)?;
        // Connecting through the descriptor's /proc link reaches the inode
        // opened above, not whatever the name points at now.
        connect_now(Path::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())))
    }

    /// Bytes used by everything under it (st_blocks, not following links,
    /// not crossing into other file systems' mounts), how many entries it
    /// holds, and whether the walk stopped at its depth bound with
    /// directories below unmeasured.
    pub fn usage_bounded(&self) -> Usage {
        let mut u = Usage::default();
        u.bytes = usage_of(self.fd(), 0, &mut u);
        u
    }
}

/// Connects to the Unix socket at `path` without waiting: a listener whose
/// queue is full (a test's server can keep it so) answers `WouldBlock`
/// at once instead of holding engine in `connect` through every signal.
pub fn connect_now(path: &Path) -> io::Result<std::os::unix::net::UnixStream> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: plain syscall; the descriptor is ours from here.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: zeroed sockaddr_un is valid; the path is copied within its bounds.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "socket path too long"));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    let len = (std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1) as libc::socklen_t;
    // SAFETY: a valid socket and address of `len` bytes.
    let r = unsafe { libc::connect(sock.as_raw_fd(), (&addr as *const libc::sockaddr_un).cast(), len) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(std::os::unix::net::UnixStream::from(sock))
}

/// What [`Dir::usage_bounded`] found.
#[derive(Debug, Default, Clone, Copy)]
pub struct Usage {
    pub bytes: u64,
    pub entries: u64,
    /// The walk stopped at its depth bound.
    pub deeper: bool,
}

fn chown_under(dir: BorrowedFd<'_>, uid: u32, gid: u32, depth: usize) -> io::Result<()> {
    let fd = open_beneath(dir, Path::new(""), libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let raw = fd.as_raw_fd();
    // SAFETY: fdopendir takes over the descriptor; closed by closedir.
    let dirp = unsafe { libc::fdopendir(fd.into_raw_fd()) };
    if dirp.is_null() {
        return Err(io::Error::last_os_error());
    }
    let mut result = Ok(());
    loop {
        // SAFETY: a valid DIR stream.
        let e = unsafe { libc::readdir64(dirp) };
        if e.is_null() {
            break;
        }
        // SAFETY: readdir returned a valid entry.
        let (name, kind) = unsafe { (std::ffi::CStr::from_ptr((*e).d_name.as_ptr()), (*e).d_type) };
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        // SAFETY: valid descriptor and name.
        if unsafe { libc::fchownat(raw, name.as_ptr(), uid, gid, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            result = Err(io::Error::last_os_error());
            break;
        }
        if kind == libc::DT_DIR && depth < MAX_DEPTH {
            // SAFETY: valid descriptor and name.
            let sub = unsafe {
                libc::openat(
                    raw,
                    name.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            };
            if sub < 0 {
                result = Err(io::Error::last_os_error());
                break;
            }
            // SAFETY: a new descriptor we own.
            let sub = unsafe { OwnedFd::from_raw_fd(sub) };
            if let Err(e) = chown_under(sub.as_fd(), uid, gid, depth + 1) {
                result = Err(e);
                break;
            }
        }
    }
    // SAFETY: the stream we opened.
    unsafe { libc::closedir(dirp) };
    result
}

/// Most directory levels [`Dir::usage`] descends.
const MAX_DEPTH: usize = 64;

fn usage_of(dir: BorrowedFd<'_>, depth: usize, tally: &mut Usage) -> u64 {
    let Ok(fd) = open_beneath(dir, Path::new(""), libc::O_RDONLY | libc::O_DIRECTORY, 0) else { return 0 };
    let raw = fd.as_raw_fd();
    // SAFETY: fdopendir takes over the descriptor; closed by closedir.
    let dirp = unsafe { libc::fdopendir(fd.into_raw_fd()) };
    if dirp.is_null() {
        return 0;
    }
    let mut total = 0u64;
    loop {
        // SAFETY: a valid DIR stream.
        let e = unsafe { libc::readdir64(dirp) };
        if e.is_null() {
            break;
        }
        // SAFETY: readdir returned a valid entry.
        let (name, kind) = unsafe { (std::ffi::CStr::from_ptr((*e).d_name.as_ptr()), (*e).d_type) };
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        // SAFETY: zeroed stat is a valid out-parameter.
        let mut st: libc::stat64 = unsafe { std::mem::zeroed() };
        // SAFETY: valid descriptor, name and out-parameter.
        if unsafe { libc::fstatat64(raw, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            continue;
        }
        total += st.st_blocks as u64 * 512;
        tally.entries += 1;
        if kind == libc::DT_DIR && depth >= MAX_DEPTH {
            tally.deeper = true;
        }
        if kind == libc::DT_DIR && depth < MAX_DEPTH {
            // SAFETY: valid descriptor and name.
            let sub = unsafe {
                libc::openat(
                    raw,
                    name.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            };
            if sub >= 0 {
                // SAFETY: a new descriptor we own.
                let sub = unsafe { OwnedFd::from_raw_fd(sub) };
                total += usage_of(sub.as_fd(), depth + 1, tally);
            }
        }
    }
    // SAFETY: the stream we opened.
    unsafe { libc::closedir(dirp) };
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn only_an_empty_directory_is_empty() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("dir");
        std::fs::create_dir(&dir).unwrap();
        let open = Dir::open(&dir).unwrap();
        assert!(open.is_empty());
        // More names than one read of the directory returns.
        for i in 0..200 {
            std::fs::write(dir.join(format!("a-rather-long-file-name-{i:04}")), "").unwrap();
        }
        assert!(!open.is_empty());
        for i in 0..199 {
            std::fs::remove_file(dir.join(format!("a-rather-long-file-name-{i:04}"))).unwrap();
        }
        assert!(!open.is_empty(), "the last name is still there");
        std::fs::remove_file(dir.join("a-rather-long-file-name-0199")).unwrap();
        assert!(open.is_empty());
        std::fs::write(dir.join(".hidden"), "").unwrap();
        assert!(!open.is_empty());
        std::os::unix::fs::symlink(d.path().join("empty"), d.path().join("link")).unwrap();
        std::fs::create_dir(d.path().join("empty")).unwrap();
        assert!(Dir::open(&d.path().join("link")).is_err(), "a link to a directory is not one");
        assert!(Dir::open(&dir.join(".hidden")).is_err(), "a file is not a directory");
    }

    #[test]
    fn nothing_is_reached_through_a_planted_symlink() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let test = d.path().join("test");
        std::fs::create_dir(&test).unwrap();
        symlink(outside.path(), test.join("link")).unwrap();
        symlink(outside.path().join("secret"), test.join("file")).unwrap();
        let dir = Dir::open(&test).unwrap();
        for rel in ["link/secret", "file", "../test/file", "link"] {
            assert!(dir.open_file(Path::new(rel)).is_err(), "{rel} was opened");
        }
        assert!(dir.open_dir(Path::new("link")).is_err());
        assert!(dir.relative(Path::new("/etc/passwd")).is_err());
        // Nothing is removed through a link; removing a link removes the
        // link, never what it names.
        dir.remove(Path::new("link/secret")).unwrap_err();
        dir.remove(Path::new("link")).unwrap();
        assert!(outside.path().join("secret").exists());
        // A directory replaced by a link is replaced again by a real one.
        symlink(outside.path(), test.join("trial")).unwrap();
        let t = dir.fresh_dir("trial", None).unwrap();
        assert!(t.is_empty());
        assert!(!std::fs::symlink_metadata(test.join("trial")).unwrap().file_type().is_symlink());
        assert!(outside.path().join("secret").exists());
        std::fs::write(test.join("trial/x"), vec![1u8; 10_000]).unwrap();
        assert!(!t.is_empty());
        assert!(dir.usage_bounded().bytes >= 10_000, "{:?}", dir.usage_bounded());
        // The fd path is the directory engine opened, even after a swap.
        std::fs::rename(test.join("trial"), test.join("moved")).unwrap();
        symlink(outside.path(), test.join("trial")).unwrap();
        assert!(t.fd_path().join("x").exists());
        dir.remove(Path::new("moved")).unwrap();
        assert!(!test.join("moved").exists());
    }

    #[test]
    fn a_socket_behind_a_link_is_not_connected() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let sock = outside.path().join("s");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        symlink(&sock, d.path().join("s")).unwrap();
        let dir = Dir::open(d.path()).unwrap();
        assert!(dir.connect(Path::new("s")).is_err());
        let _l2 = std::os::unix::net::UnixListener::bind(d.path().join("real")).unwrap();
        assert!(dir.connect(&d.path().join("real")).is_ok());
    }
}
