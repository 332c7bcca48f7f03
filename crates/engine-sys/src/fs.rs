//! Files written safely: atomically (temp file, fsync, rename), and when
//! engine runs as root in a directory others can write to, never following a
//! symlink planted where engine writes, never truncating a file engine did
//! not create.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `bytes` to a new file at `path`, replacing what engine left there
/// before: an existing entry (a file, or a symlink — the link itself, not its
/// target) is unlinked first, then the file is created exclusively without
/// following symlinks, so a link planted in between makes the write fail
/// instead of landing elsewhere.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => return Err(io::Error::other(format!("{} is a directory", path.display()))),
        Ok(_) => std::fs::remove_file(path)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)?;
    f.write_all(bytes)
}

/// Opens `path` for appending, creating it; refuses a symlink.
///
/// A test may have put something else there (a build step can replace its
/// install log): opened without waiting (`O_NONBLOCK`: a FIFO with no
/// reader fails at once instead of blocking engine for good), and anything
/// but a regular file is refused.
pub fn append(path: &Path) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    let f = OpenOptions::new()
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .mode(0o644)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // What a FIFO without a reader says to a non-blocking writer.
            Some(libc::ENXIO) => io::Error::other(format!("{} is not a regular file (a FIFO)", path.display())),
            _ => e,
        })?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::other(format!("{} is not a regular file", path.display())));
    }
    // SAFETY: our own descriptor; clears O_NONBLOCK for ordinary writes.
    unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, libc::O_APPEND) };
    Ok(f)
}

/// Opens (or creates) `path` for a lock without truncating it; refuses a symlink.
pub fn open_lock(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)
}

/// Opens an existing file read-only, not following a symlink.
pub fn open_read_nofollow(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

/// Opens an existing regular file to read, where a test could have put
/// something else: no symlink followed, never waiting (`O_NONBLOCK`: a
/// FIFO with no writer would block engine for good), anything but a
/// regular file refused.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let f =
        OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK).open(path)?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    Ok(f)
}

/// Creates a file that must not exist yet (no symlink followed).
pub fn create_exclusive(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o600)
        .open(path)
}

/// The prefix of this process's temporary files and folders:
/// `.tmp-<pid>-`. A kill -9 leaves them behind; the pid says whose they
/// were, so [`remove_stale_temps`] can tell a dead run's from a live one's.
pub fn temp_prefix() -> String {
    format!(".tmp-{}-", std::process::id())
}

/// The last `max` bytes of the file at `path` as text (lossy), never more:
/// a command's log can be as large as the command made it.
pub fn read_tail(path: &Path, max: u64) -> String {
    use std::io::{Read, Seek};
    let Ok(mut f) = open_regular(path) else { return String::new() };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if f.seek(io::SeekFrom::Start(len.saturating_sub(max))).is_err() {
        return String::new();
    }
    let mut v = Vec::new();
    let _ = f.take(max).read_to_end(&mut v);
    String::from_utf8_lossy(&v).into_owned()
}

/// Removes what killed runs left in `dir`: entries named `.tmp-<pid>-…`
/// whose process is gone (files, and folders with what they hold).
/// Returns the paths removed. Entries of live processes are never touched.
pub fn remove_stale_temps(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    // One deadline for them all: many slow leftovers do not add up.
    let deadline = std::time::Instant::now() + super::remove::DEADLINE;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix(".tmp-").and_then(|r| r.split('-').next()).and_then(|p| p.parse().ok())
        else {
            continue;
        };
        if super::proc::pid_alive(pid) {
            continue;
        }
        let p = e.path();
        let gone = super::remove::remove_path(&p, Some(deadline));
        if gone.is_ok() {
            out.push(p);
        }
    }
    out
}

/// Writes `path` atomically: a temp file next to it (named for this process,
/// so what a kill -9 leaves is found and removed), fsync, rename, fsync of
/// the folder. Readers see the old file or the new one, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    fill_atomic(path, |f| f.write_all(bytes))
}

/// Copies `from` to `to` as [`write_atomic`] writes, streamed (downloads
/// can be large).
pub fn copy_atomic(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = File::open(from)?;
    fill_atomic(to, |f| io::copy(&mut src, f).map(drop))
}

/// Writes `path` atomically as [`write_atomic`] does, its bytes from `fill`.
pub fn fill_atomic(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(&temp_prefix()).tempfile_in(dir)?;
    fill(tmp.as_file_mut())?;
    // Temp files are created 0600; results and reports are meant to be read.
    tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Free bytes for an unprivileged writer in the file system holding `path`.
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: zeroed statvfs is a valid out-parameter.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Why a file of `size` bytes is not read: over `cap`.
pub fn too_large(size: u64, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("it is {} MiB, over engine's limit of {} MiB for this kind of file", size >> 20, cap >> 20),
    )
}

/// Reads a file that comes from outside (a result, a PTS export) with a
/// size cap checked before reading and again while reading (a file that
/// grows, or a device such as `/dev/zero`, stops at the cap): memory stays
/// bounded whatever the file holds.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    read_capped_from(File::open(path)?, cap)
}

/// [`read_capped`] of a file already open.
pub fn read_capped_from(f: File, cap: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let too_big = |size: u64| too_large(size, cap);
    let size = f.metadata()?.len();
    if size > cap {
        return Err(too_big(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    f.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Line and column (1-based, in bytes) of byte offset `at` in `bytes`.
pub fn line_col(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let col = at - before.iter().rposition(|b| *b == b'\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_a_directory_in_a_logs_place_is_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("install.log");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let t = std::time::Instant::now();
        assert!(append(&fifo).is_err(), "a FIFO with no reader");
        assert!(t.elapsed() < std::time::Duration::from_secs(1), "waited on the FIFO");
        std::fs::create_dir(d.path().join("dir.log")).unwrap();
        assert!(append(&d.path().join("dir.log")).is_err());
        let mut f = append(&d.path().join("ok.log")).unwrap();
        f.write_all(b"a").unwrap();
        append(&d.path().join("ok.log")).unwrap().write_all(b"b").unwrap();
        assert_eq!(std::fs::read_to_string(d.path().join("ok.log")).unwrap(), "ab");
    }

    #[test]
    fn planted_symlinks_are_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = d.path().join("trial-1.log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        // write_new replaces the link, not the file it points at.
        write_new(&link, b"log").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "log");
        assert!(!std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        // append and open_lock refuse a link outright.
        let link2 = d.path().join("step.log");
        std::os::unix::fs::symlink(&victim, &link2).unwrap();
        assert!(append(&link2).is_err());
        assert!(open_lock(&link2).is_err());
        assert!(create_exclusive(&link2).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // A lock file keeps its contents.
        let lock = d.path().join(".lock");
        std::fs::write(&lock, "x").unwrap();
        drop(open_lock(&lock).unwrap());
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "x");
    }

    #[test]
    fn stale_temps_of_dead_processes_only() {
        let d = tempfile::tempdir().unwrap();
        // A pid above the kernel's maximum (4194304) never runs.
        let dead = d.path().join(".tmp-4999999-abc");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("x"), "x").unwrap();
        std::fs::write(d.path().join(".tmp-4999998-f"), "x").unwrap();
        let mine = d.path().join(format!("{}x", temp_prefix()));
        std::fs::write(&mine, "x").unwrap();
        std::fs::write(d.path().join(".tmp-other"), "x").unwrap();
        std::fs::write(d.path().join("result.json"), "x").unwrap();
        let removed = remove_stale_temps(d.path());
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(!dead.exists() && mine.exists() && d.path().join(".tmp-other").exists());
    }

    #[test]
    fn capped_reads() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![b'x'; 3 << 20]).unwrap();
        assert_eq!(read_capped(&p, 4 << 20).unwrap().len(), 3 << 20);
        let e = read_capped(&p, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "it is 3 MiB, over engine's limit of 1 MiB for this kind of file");
        // A device reports size 0 and never ends: the cap stops it.
        assert!(read_capped(Path::new("/dev/zero"), 1 << 20).is_err());
        assert_eq!(line_col(b"ab\ncd", 4), (2, 2));
        assert_eq!(line_col(b"ab", 0), (1, 1));
    }
}
