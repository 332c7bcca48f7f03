//! Lock files: std's `File::lock`/`try_lock` (an `flock` on Linux) on a file
//! opened without following symlinks. The kernel releases a lock when its
//! process ends however it ends, so a killed run never leaves a stale one;
//! the file may hold who has it, so a refused caller can say who is in the way.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct LockFile {
    file: File,
}

/// What [`try_lock`] found.
#[derive(Debug)]
pub enum TryLock {
    Held(LockFile),
    /// Another open file description holds it; `holder` is what it wrote.
    Busy {
        holder: String,
    },
}

/// Takes `path` (created if missing) without waiting. A lock file another
/// user made (and this one may not write) is locked read-only: `flock`
/// needs no write access, only the holder text cannot be written.
pub fn try_lock(path: &Path) -> io::Result<TryLock> {
    let mut file = match super::fs::open_lock(path) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => super::fs::open_read_nofollow(path)?,
        r => r?,
    };
    match file.try_lock() {
        Ok(()) => Ok(TryLock::Held(LockFile { file })),
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            Ok(TryLock::Busy { holder })
        }
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Takes `path` (created if missing), waiting while another holds it.
pub fn lock(path: &Path) -> io::Result<LockFile> {
    let file = super::fs::open_lock(path)?;
    file.lock()?;
    Ok(LockFile { file })
}

impl LockFile {
    /// Replaces what the file says about its holder.
    pub fn set_holder(&mut self, text: &str) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.rewind()?;
        self.file.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_who_it_is() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.lock");
        let TryLock::Held(mut a) = try_lock(&p).unwrap() else { panic!("free lock refused") };
        a.set_holder("pid 42").unwrap();
        // flock locks belong to the open file description: a second open in
        // this process conflicts as another process's would.
        match try_lock(&p).unwrap() {
            TryLock::Busy { holder } => assert_eq!(holder, "pid 42"),
            TryLock::Held(_) => panic!("a held lock was taken twice"),
        }
        drop(a);
        assert!(matches!(try_lock(&p).unwrap(), TryLock::Held(_)));
        let _b = lock(&p).unwrap();
    }
}
