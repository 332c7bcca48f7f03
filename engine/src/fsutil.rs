//! Opening files safely when engine runs as root in a directory others can
//! write to: never follow a symlink planted where engine writes, never
//! truncate a file engine did not create.

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
pub fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).create(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).mode(0o644).open(path)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
