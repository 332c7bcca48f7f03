//! Removing a tree a test wrote: iteratively, with a constant number of
//! descriptors whatever its depth (a chain of 100,000 nested directories
//! once made std's `remove_dir_all`, which holds one per level, fail with
//! EMFILE), never following a link, and within a deadline. Each directory
//! is emptied from its own descriptor: files and empty directories go at
//! once; at a non-empty subdirectory the walk goes down into it, and back
//! up through `..` once it is empty — checked against the identity it
//! recorded on the way down, so a directory moved meanwhile stops the
//! removal instead of sending it elsewhere. Memory is one (device, inode)
//! pair per level.

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    #[error("not finished by its deadline (part of it is left)")]
    Deadline,
    #[error("a directory inside was moved while it was being removed")]
    Moved,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<Errno> for RemoveError {
    fn from(e: Errno) -> Self {
        RemoveError::Io(e.into())
    }
}

/// How long engine spends removing one tree a test left before it gives
/// up and moves what is left aside (a million files take a few seconds).
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// How long removal goes on after Ctrl-C before it moves the rest aside.
const INTERRUPTED_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

const DIR: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// Removes `name` in `parent` — a file, a link (itself) or a whole tree —
/// holding at most three descriptors of its own; absent is fine. Past
/// `deadline` it stops and says so, with what is left still in place.
pub fn remove_at(parent: BorrowedFd<'_>, name: &CStr, deadline: Option<Instant>) -> Result<(), RemoveError> {
    match rustix::fs::unlinkat(parent, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => return Ok(()),
        Err(Errno::ISDIR) | Err(Errno::PERM) => {}
        Err(e) => return Err(e.into()),
    }
    let mut cur = match rustix::fs::openat(parent, name, DIR, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    // Each level above: its identity, and where its reading stopped (the
    // child's own entry, read again — and removed, empty by then — when
    // the walk comes back up: no level is read from its start twice, or a
    // folder of 100,000 subfolders costs its square).
    let mut above: Vec<((u64, u64), i64)> = Vec::new();
    let began = Instant::now();
    // Past the deadline, or a while after Ctrl-C (a small tree still goes
    // at once): what is left is moved aside by the caller instead.
    let over = || {
        deadline.is_some_and(|d| Instant::now() > d)
            || (super::interrupt::requested() && began.elapsed() > INTERRUPTED_GRACE)
    };
    let mut resume = 0;
    loop {
        if over() {
            return Err(RemoveError::Deadline);
        }
        if let Some((child, at)) = empty_level(&cur, resume, &over)? {
            above.push((identity(cur.as_fd())?, at));
            cur = child;
            resume = 0;
            continue;
        }
        // `cur` is empty: back up, where the next pass removes it.
        let Some((expect, at)) = above.pop() else { break };
        let up = rustix::fs::openat(&cur, c"..", DIR, Mode::empty())?;
        if identity(up.as_fd())? != expect {
            return Err(RemoveError::Moved);
        }
        cur = up;
        resume = at;
    }
    drop(cur);
    match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Removes the files, links and empty directories in `dir`, reading from
/// position `from` (0: its start); the first subdirectory that is not
/// empty, opened, with the position of its entry, when there is one.
fn empty_level(dir: &OwnedFd, from: i64, over: &dyn Fn() -> bool) -> Result<Option<(OwnedFd, i64)>, RemoveError> {
    let mut entries = rustix::fs::Dir::read_from(dir)?;
    if from != 0 {
        entries.seek(from)?;
    }
    let (mut at, mut k) = (from, 0u64);
    while let Some(e) = entries.read() {
        let e = e?;
        let here = std::mem::replace(&mut at, e.offset());
        // A million entries in one folder: the clock is read every 4,096.
        k += 1;
        if k % 4096 == 0 && over() {
            return Err(RemoveError::Deadline);
        }
        let name = e.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => continue,
            Err(Errno::ISDIR) | Err(Errno::PERM) => {}
            Err(e) => return Err(e.into()),
        }
        match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => continue,
            Err(Errno::NOTEMPTY) | Err(Errno::EXIST) => {
                return Ok(Some((rustix::fs::openat(dir, name, DIR, Mode::empty())?, here)));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

fn identity(fd: BorrowedFd<'_>) -> Result<(u64, u64), RemoveError> {
    let st = rustix::fs::fstat(fd)?;
    Ok((st.st_dev, st.st_ino))
}

/// The folder of a target directory where what could not be removed in
/// time waits to be cleared (by the next run, in the background, and by
/// `engine recover`): a leftover never stops a later run.
pub const QUARANTINE: &str = ".engine-quarantine";

/// What became of a tree engine removed.
#[derive(Debug, PartialEq, Eq)]
pub enum Removed {
    Gone,
    /// Not removed by the deadline: the rest moved to this path.
    Quarantined(std::path::PathBuf),
}

/// Removes `path` within [`DEADLINE`] (or `deadline`); what is left is
/// moved into its directory's [`QUARANTINE`] folder (a rename: the same
/// file system), so the name is free again at once.
pub fn remove_or_quarantine(path: &std::path::Path, deadline: Option<Instant>) -> Result<Removed, RemoveError> {
    let deadline = deadline.unwrap_or_else(|| Instant::now() + DEADLINE);
    match remove_path(path, Some(deadline)) {
        Ok(()) => Ok(Removed::Gone),
        Err(first) => {
            let Some(dir) = path.parent() else { return Err(first) };
            set_aside(path, &dir.join(QUARANTINE), first)
        }
    }
}

/// Moves what is left of `path` into the folder `aside` (made if missing),
/// under a name of its own; `first` is why it is left. When `aside` will
/// not take it (on another file system, unwritable), a quarantine beside
/// `path` does: the same directory, so the same file system.
fn set_aside(path: &std::path::Path, aside: &std::path::Path, first: RemoveError) -> Result<Removed, RemoveError> {
    use std::os::unix::ffi::OsStrExt;
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else { return Err(first) };
    let parent = if parent.as_os_str().is_empty() { std::path::Path::new(".") } else { parent };
    let Ok(from) = rustix::fs::open(parent, DIR, Mode::empty()) else { return Err(first) };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let unique = format!("{}-{}", name.to_string_lossy(), nanos.as_nanos());
    let beside = parent.join(QUARANTINE);
    for q in std::iter::once(aside).chain((aside != beside).then_some(beside.as_path())) {
        let Ok(into) = own_dir(q) else { continue };
        // Both ends held as descriptors, neither's last component followed:
        // nothing swapped in at either name can steer the rename.
        if rustix::fs::renameat(&from, name.as_bytes(), &into, unique.as_bytes()).is_ok() {
            return Ok(Removed::Quarantined(q.join(&unique)));
        }
    }
    Err(first)
}

/// The quarantine folder at `q`, opened without following a link: made if
/// missing; anything else of that name (a file, a link — the name is
/// engine's) is removed first, the link itself, never what it points to.
fn own_dir(q: &std::path::Path) -> Result<OwnedFd, RemoveError> {
    use std::os::unix::ffi::OsStrExt;
    let parent = q.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let name = q.file_name().ok_or_else(|| std::io::Error::other(format!("{} names no entry", q.display())))?;
    let pfd = rustix::fs::open(parent, DIR, Mode::empty())?;
    match rustix::fs::openat(&pfd, name.as_bytes(), DIR, Mode::empty()) {
        Ok(fd) => return Ok(fd),
        Err(Errno::NOENT) => {}
        Err(Errno::LOOP) | Err(Errno::NOTDIR) => rustix::fs::unlinkat(&pfd, name.as_bytes(), AtFlags::empty())?,
        Err(e) => return Err(e.into()),
    }
    match rustix::fs::mkdirat(&pfd, name.as_bytes(), Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(rustix::fs::openat(&pfd, name.as_bytes(), DIR, Mode::empty())?)
}

/// Clears `dir`'s quarantine folder within `deadline`; how much is left
/// (entries), 0 when it is gone.
pub fn clear_quarantine(dir: &std::path::Path, deadline: Instant) -> usize {
    clear(&dir.join(QUARANTINE), deadline).left
}

/// What clearing a quarantine did.
#[derive(Debug, Default)]
pub struct Cleared {
    /// Entries removed.
    pub removed: usize,
    /// Entries left.
    pub left: usize,
    /// Why the first entry left was not removed (the deadline, a mount, …).
    pub why: Option<RemoveError>,
}

/// How many entries of a quarantine left are counted (past it, "at least").
pub const COUNT_CAP: usize = 10_000;

/// Clears the quarantine folder `q` entry by entry, until `deadline` or
/// Ctrl-C (a clear is work a run may leave for later; it never holds the
/// user). A link or file at that name is no quarantine: only the name goes.
pub fn clear(q: &std::path::Path, deadline: Instant) -> Cleared {
    let mut c = Cleared::default();
    match std::fs::symlink_metadata(q) {
        Err(_) => return c,
        Ok(m) if !m.is_dir() => {
            if std::fs::remove_file(q).is_ok() {
                c.removed += 1;
            }
            return c;
        }
        Ok(_) => {}
    }
    let Ok(rd) = std::fs::read_dir(q) else { return c };
    let mut stopped = false;
    for e in rd.flatten() {
        if Instant::now() > deadline || super::interrupt::requested() {
            stopped = true;
            break;
        }
        match remove_path(&e.path(), Some(deadline)) {
            Ok(()) => c.removed += 1,
            Err(why) => {
                c.left += 1;
                c.why.get_or_insert(why);
            }
        }
    }
    if stopped {
        c.left = std::fs::read_dir(q).map(|rd| rd.take(COUNT_CAP).count()).unwrap_or(0);
        c.why.get_or_insert(RemoveError::Deadline);
    }
    if c.left == 0 {
        let _ = std::fs::remove_dir(q);
    }
    c
}

/// Removes the tree at `path` (its last component not followed).
pub fn remove_path(path: &std::path::Path, deadline: Option<Instant>) -> Result<(), RemoveError> {
    use std::os::unix::ffi::OsStrExt;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let name = path.file_name().ok_or_else(|| std::io::Error::other(format!("{} names no entry", path.display())))?;
    let name = std::ffi::CString::new(name.as_bytes()).map_err(std::io::Error::other)?;
    let dir = rustix::fs::open(parent, DIR, Mode::empty())?;
    remove_at(dir.as_fd(), &name, deadline)
}

/// Removes one of engine's own folders at `path` — logs it staged, a
/// result that was never saved — by `deadline`, or as soon after Ctrl-C
/// as a small one goes; what is left is moved into the folder `aside`
/// (a quarantine on the same file system, cleared later), so the place is
/// free either way: what an interrupted run left there would otherwise be
/// taken for the result's own (empty log folders, a stopped trial's log),
/// and a tree planted there could hold engine past the user's Ctrl-C.
pub fn remove_own(path: &std::path::Path, aside: &std::path::Path, deadline: Instant) -> Result<Removed, RemoveError> {
    match remove_path(path, Some(deadline)) {
        Ok(()) => Ok(Removed::Gone),
        Err(_) if std::fs::symlink_metadata(path).is_err() => Ok(Removed::Gone),
        Err(first) => set_aside(path, aside, first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Descriptors this process has open now.
    fn open_fds() -> usize {
        std::fs::read_dir("/proc/self/fd").unwrap().count()
    }

    /// A chain `depth` directories deep under `top`, each with a file.
    fn chain(top: &std::path::Path, depth: usize) {
        std::fs::create_dir(top).unwrap();
        let mut cur = rustix::fs::open(top, DIR, Mode::empty()).unwrap();
        for _ in 0..depth {
            rustix::fs::mkdirat(&cur, c"d", Mode::from_raw_mode(0o755)).unwrap();
            let f =
                rustix::fs::openat(&cur, c"f", OFlags::CREATE | OFlags::WRONLY, Mode::from_raw_mode(0o644)).unwrap();
            drop(f);
            cur = rustix::fs::openat(&cur, c"d", DIR, Mode::empty()).unwrap();
        }
    }

    #[test]
    fn a_100000_deep_chain_goes_with_a_constant_number_of_descriptors() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("deep");
        chain(&top, 100_000);
        // In a child process (the limit is per process, and other tests
        // run beside this one): the descriptor limit far below the depth,
        // where a walk that holds one per level fails with EMFILE.
        let t = Instant::now();
        // SAFETY: the child only calls the removal (glibc's fork leaves
        // malloc usable) and exits; the parent waits for it.
        let status = unsafe {
            match libc::fork() {
                0 => {
                    let before = open_fds();
                    let low = libc::rlimit { rlim_cur: (before + 16) as u64, rlim_max: (before + 16) as u64 };
                    libc::setrlimit(libc::RLIMIT_NOFILE, &low);
                    let ok = remove_path(&top, Some(Instant::now() + Duration::from_secs(120))).is_ok();
                    let fds_back = open_fds() <= before;
                    libc::_exit(if ok && fds_back {
                        0
                    } else if ok {
                        2
                    } else {
                        1
                    });
                }
                pid => {
                    let mut status = 0;
                    libc::waitpid(pid, &mut status, 0);
                    status
                }
            }
        };
        assert!(libc::WIFEXITED(status), "{status}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "1: the removal failed; 2: descriptors were left open");
        assert!(!top.exists());
        eprintln!("100,000 levels removed in {:?}", t.elapsed());
    }

    /// A wide level whose subfolders each hold something: every one is
    /// removed when the walk comes back up to its entry (the reading goes
    /// on from there, not from the level's start).
    #[test]
    fn a_wide_level_of_full_folders_goes_whole() {
        let root = tempfile::tempdir().unwrap();
        let top = root.path().join("wide");
        std::fs::create_dir(&top).unwrap();
        for i in 0..5000 {
            let d = top.join(format!("d{i}"));
            std::fs::create_dir(&d).unwrap();
            if i % 3 == 0 {
                std::fs::create_dir_all(d.join("a/b")).unwrap();
                std::fs::write(d.join("a/b/f"), b"x").unwrap();
            } else {
                std::os::unix::fs::symlink("/etc/passwd", d.join("l")).unwrap();
            }
            std::fs::write(top.join(format!("f{i}")), b"y").unwrap();
        }
        remove_path(&top, None).unwrap();
        assert!(!top.exists());
        assert!(std::path::Path::new("/etc/passwd").exists());
    }

    #[test]
    fn links_are_removed_not_followed_and_a_deadline_stops_it() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "keep").unwrap();
        let top = d.path().join("t");
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        std::os::unix::fs::symlink(&outside, top.join("a/b/link")).unwrap();
        std::os::unix::fs::symlink(&outside, top.join("link")).unwrap();
        remove_path(&top, None).unwrap();
        assert!(!top.exists());
        assert_eq!(std::fs::read_to_string(outside.join("keep")).unwrap(), "keep");
        // A link as the tree itself: the link goes, not what it names.
        let l = d.path().join("l");
        std::os::unix::fs::symlink(&outside, &l).unwrap();
        remove_path(&l, None).unwrap();
        assert!(outside.join("keep").exists() && !l.exists());
        // Absent is fine; a deadline already past stops before anything.
        remove_path(&d.path().join("nothing"), None).unwrap();
        chain(&top, 10);
        let past = Instant::now() - Duration::from_secs(1);
        assert!(matches!(remove_path(&top, Some(past)), Err(RemoveError::Deadline)));
        assert!(top.exists());
    }

    /// A tree whose removal is cut short at once (its deadline passed).
    fn stuck(top: &std::path::Path) {
        std::fs::create_dir_all(top.join("d")).unwrap();
        std::fs::write(top.join("d/f"), b"x").unwrap();
    }

    #[test]
    fn a_quarantine_that_is_a_link_or_a_file_is_replaced_never_followed() {
        let base = tempfile::tempdir().unwrap();
        let outside = base.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let aside = base.path().join("q");
        let past = Instant::now() - Duration::from_secs(1);
        // A link to a folder on the same file system: once, engine's own
        // folder was renamed through it.
        std::os::unix::fs::symlink(&outside, &aside).unwrap();
        let own = base.path().join("own");
        stuck(&own);
        let r = remove_own(&own, &aside, past).unwrap();
        assert!(matches!(&r, Removed::Quarantined(to) if to.starts_with(&aside)), "{r:?}");
        assert!(!aside.is_symlink() && aside.is_dir(), "the link was replaced by a folder");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing went through the link");
        // A file of that name.
        std::fs::remove_dir_all(&aside).unwrap();
        std::fs::write(&aside, b"not a folder").unwrap();
        stuck(&own);
        assert!(matches!(remove_own(&own, &aside, past).unwrap(), Removed::Quarantined(_)));
        assert!(aside.is_dir() && !own.exists());
        // Cleared; a link at the quarantine's name is removed, not followed.
        let c = clear(&aside, Instant::now() + Duration::from_secs(5));
        assert_eq!((c.removed, c.left), (1, 0));
        std::os::unix::fs::symlink(&outside, &aside).unwrap();
        std::fs::write(outside.join("keep"), b"k").unwrap();
        clear(&aside, Instant::now() + Duration::from_secs(5));
        assert!(!aside.exists() && !aside.is_symlink());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"k");
    }

    #[test]
    #[ignore = "needs root"]
    fn a_quarantine_that_will_not_take_it_gives_way_to_one_beside_the_folder() {
        assert!(crate::is_root(), "mounts a tmpfs: run as root");
        let base = tempfile::tempdir().unwrap();
        // The quarantine asked for is another file system (a mount at its
        // name): the rename cannot cross it.
        let aside = base.path().join("q");
        std::fs::create_dir(&aside).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "q"])
            .arg(&aside)
            .status()
            .is_ok_and(|s| s.success());
        assert!(mounted, "as root the tmpfs must mount");
        let parent = base.path().join("result");
        let own = parent.join(".staging");
        stuck(&own);
        let r = remove_own(&own, &aside, Instant::now() - Duration::from_secs(1));
        let _ = std::process::Command::new("umount").arg(&aside).status();
        let Ok(Removed::Quarantined(to)) = r else { panic!("{r:?}") };
        assert!(to.starts_with(parent.join(QUARANTINE)), "{to:?}");
        assert!(!own.exists());
    }

    #[test]
    fn a_clear_stops_at_its_deadline_and_counts_what_is_left() {
        let base = tempfile::tempdir().unwrap();
        let q = base.path().join("q");
        std::fs::create_dir(&q).unwrap();
        for i in 0..50 {
            std::fs::create_dir(q.join(format!("e{i}"))).unwrap();
        }
        let c = clear(&q, Instant::now() - Duration::from_secs(1));
        assert_eq!((c.removed, c.left), (0, 50));
        assert!(matches!(c.why, Some(RemoveError::Deadline)));
        let c = clear(&q, Instant::now() + Duration::from_secs(10));
        assert_eq!((c.removed, c.left), (50, 0));
        assert!(!q.exists());
    }
}
