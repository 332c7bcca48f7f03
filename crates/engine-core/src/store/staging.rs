//! A run's logs on their way into a result folder. The runner never writes
//! into a result folder: it writes a test's logs into a staging folder the
//! store made for the run (`.staging/` inside the result folder, under the
//! folder's lock, so on the same file system), and the store takes them
//! into place — with the monitor's series, which it writes itself — once
//! the test has ended. The result folder has one writer, and what a killed
//! run was writing never shows in it: the next run that takes the lock (or
//! `engine recover`) removes the staging folder.

use super::{Store, StoreError};
use crate::model::series::Series;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The staging folder's name inside a result folder.
pub const STAGING: &str = ".staging";

/// How long removing a staging folder may take: it holds logs engine wrote
/// (flat files in a few folders), never a tree a test made; what is left
/// then (or a moment after Ctrl-C) is set aside in the store's quarantine.
const REMOVE_WITHIN: Duration = Duration::from_secs(10);

/// How long a run's start spends clearing the store's quarantine (what
/// earlier runs set aside); `engine recover` clears the rest.
const CLEAR_WITHIN: Duration = Duration::from_secs(2);

/// How deep a staged tree is merged into an existing one: a log folder is
/// `logs/IDENTIFIER/TEST`, and its files are flat.
const MAX_DEPTH: u32 = 8;

/// The staging folder of one run of one result. Removed when dropped.
pub struct Staging {
    /// The result folder.
    folder: PathBuf,
    /// `folder/.staging`.
    root: PathBuf,
    /// The same two with no link on their way, as a message may name them.
    real: Option<(PathBuf, PathBuf)>,
}

/// What became of a test's logs and series when the store took them.
#[derive(Debug)]
pub struct Kept {
    /// Whether the staged logs were moved into place.
    pub logs: Result<(), StoreError>,
    /// Where the series is, relative to the result folder: written, or why not.
    pub series: Option<Result<String, StoreError>>,
}

impl Store {
    /// A fresh staging folder for a run of result `name`. The caller holds
    /// the folder's lock ([`Store::lock`]): whatever a staging folder holds
    /// then is what a killed run left, and it is removed first.
    pub fn staging(&self, name: &str) -> Result<Staging, StoreError> {
        super::check_name(name)?;
        let folder = self.dir(name);
        let root = folder.join(STAGING);
        let by = Instant::now() + CLEAR_WITHIN;
        self.clear_quarantine(by);
        crate::sys::remove::clear(&folder.join(crate::sys::remove::QUARANTINE), by);
        remove_staging(&folder).map_err(|source| StoreError::Write { path: root.clone(), source })?;
        std::fs::create_dir(&root).map_err(|source| StoreError::Write { path: root.clone(), source })?;
        let real = std::fs::canonicalize(&root).ok().and_then(|r| Some((r.parent()?.to_path_buf(), r)));
        let real = real.filter(|(_, r)| *r != root);
        Ok(Staging { folder, root, real })
    }
}

impl Staging {
    /// Where the runner writes the logs that belong at `rel` in the result
    /// folder (a test's log folder, `logs/…`).
    pub fn dir(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Takes what the runner staged for `rel` into the result folder —
    /// files replace files of the same name (a later round's logs), folders
    /// merge — and writes `series` beside them.
    pub fn keep(&self, rel: &str, series: Option<&Series>) -> Kept {
        let staged = self.dir(rel);
        let to = self.folder.join(rel);
        let moved = match std::fs::symlink_metadata(&staged) {
            Ok(m) if m.is_dir() => to
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| merge(&staged, &to, 0))
                .map_err(|source| StoreError::Write { path: to.clone(), source }),
            _ => Ok(()),
        };
        let series = series.map(|s| {
            let path = to.join(super::series::FILE);
            std::fs::create_dir_all(&to)
                .and_then(|()| super::series::write(&path, s))
                .map_err(|source| StoreError::Write { path, source })?;
            Ok(format!("{rel}/{}", super::series::FILE))
        });
        Kept { logs: moved, series }
    }

    /// The place in the result folder of a path the runner gave out
    /// (a failed trial's log): relative to the folder, once kept.
    pub fn kept_as(&self, staged: &Path) -> Option<String> {
        let real = self.real.as_ref().and_then(|(_, r)| staged.strip_prefix(r).ok());
        staged.strip_prefix(&self.root).ok().or(real).map(|r| r.display().to_string())
    }
}

impl Staging {
    /// `text` (a failure's message) with the staged paths it names written
    /// as the places they were kept at.
    pub fn kept_text(&self, text: &str) -> String {
        let swap = |text: String, root: &Path, folder: &Path| {
            swap_path(&text, &root.display().to_string(), &folder.display().to_string())
        };
        let text = swap(text.to_string(), &self.root, &self.folder);
        match &self.real {
            Some((folder, root)) => swap(text, root, folder),
            None => text,
        }
    }
}

/// `text` with the path `from` written as `to` where it is a whole path or
/// leads one (`from/…`), never inside a longer name (`from-x`, `fromX`,
/// `x/from`).
fn swap_path(text: &str, from: &str, to: &str) -> String {
    let in_name = |c: char| c.is_alphanumeric() || "._-~+@".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let after = &rest[i + from.len()..];
        let before = out.chars().last().filter(|_| i == 0).or_else(|| rest[..i].chars().last());
        let whole = before.is_none_or(|c| !(in_name(c) || c == '/'))
            && after.chars().next().is_none_or(|c| c == '/' || !in_name(c));
        out.push_str(&rest[..i]);
        out.push_str(if whole { to } else { from });
        rest = after;
    }
    out.push_str(rest);
    out
}

impl Drop for Staging {
    fn drop(&mut self) {
        // What was not kept (a run stopped between a test's end and its
        // keeping) is not the result's.
        let _ = remove_staging(&self.folder);
    }
}

/// Removes `folder/.staging`, if there is one: what is not gone by the
/// deadline, or soon after Ctrl-C, is moved into the quarantine beside the
/// result folders, so the place is free again either way.
pub(super) fn remove_staging(folder: &Path) -> std::io::Result<()> {
    let root = folder.join(STAGING);
    match std::fs::symlink_metadata(&root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        // A link or file of that name is no staging folder: only the name goes.
        Ok(m) if !m.is_dir() => std::fs::remove_file(&root),
        Ok(_) => crate::sys::remove::remove_own(&root, &super::quarantine_of(folder), Instant::now() + REMOVE_WITHIN)
            .map(|_| ())
            .map_err(|e| std::io::Error::other(e.to_string())),
    }
}

/// Moves `from` to `to`: renamed whole when `to` is not there, else entry
/// by entry — a folder merges into a folder, and a file is appended to a
/// file of the same name (a later round's `trial-1.log` or `pre_test.log`
/// goes after the earlier round's, as the runner's own appends did). A
/// `logs` folder the user moved to another file system (a link) is
/// copied into, not renamed into.
fn merge(from: &Path, to: &Path, depth: u32) -> std::io::Result<()> {
    let there = std::fs::symlink_metadata(to);
    match (std::fs::rename(from, to), &there) {
        (Ok(()), _) => return Ok(()),
        (Err(_), Ok(m)) if depth < MAX_DEPTH && m.is_dir() => {}
        (Err(e), Err(_)) if e.raw_os_error() == Some(libc::EXDEV) && depth < MAX_DEPTH => {
            std::fs::create_dir(to)?;
        }
        (Err(e), _) => return Err(e),
    }
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (f, t) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        match std::fs::symlink_metadata(&t) {
            Ok(m) if kind.is_dir() && m.is_dir() => merge(&f, &t, depth + 1)?,
            Ok(m) if kind.is_file() && m.is_file() => append(&f, &t)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && kind.is_dir() => merge(&f, &t, depth + 1)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && kind.is_file() => match std::fs::rename(&f, &t) {
                Err(e) if e.raw_os_error() == Some(libc::EXDEV) => append(&f, &t)?,
                r => r?,
            },
            // Only folders and files are staged; anything else there is
            // not overwritten.
            _ => return Err(std::io::Error::other(format!("{} is in the way", t.display()))),
        }
    }
    Ok(())
}

/// Appends the staged file `from` to `to` (made when missing; a link
/// there is not followed) and removes `from`.
fn append(from: &Path, to: &Path) -> std::io::Result<()> {
    // A regular file only: nothing staged is ever waited on.
    let mut src = crate::sys::fs::open_regular(from)?;
    let mut dst = crate::sys::fs::append(to)?;
    std::io::copy(&mut src, &mut dst)?;
    std::fs::remove_file(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series() -> Series {
        Series {
            format: crate::model::series::FORMAT.into(),
            interval_ms: 1000,
            t_ms: Vec::new(),
            metrics: Vec::new(),
            trials: Vec::new(),
            unavailable: Vec::new(),
            late: 0,
            thinned: 0,
            workload: None,
        }
    }

    #[test]
    fn staged_logs_reach_the_folder_only_when_kept() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        let staging = store.staging("r").unwrap();
        let rel = "logs/id/test-1";
        std::fs::create_dir_all(staging.dir(rel)).unwrap();
        std::fs::write(staging.dir(rel).join("trial-1.log"), "one").unwrap();
        assert!(!store.dir("r").join(rel).exists(), "nothing shows before it is kept");
        let kept = staging.keep(rel, Some(&series()));
        assert_eq!(kept.series.unwrap().unwrap(), format!("{rel}/monitor.json.gz"));
        assert_eq!(std::fs::read_to_string(store.dir("r").join(rel).join("trial-1.log")).unwrap(), "one");
        assert!(super::super::series::read_in(&store.dir("r"), &format!("{rel}/monitor.json.gz")).is_ok());
        assert_eq!(
            staging.kept_as(&staging.dir(rel).join("trial-1.log")).as_deref(),
            Some("logs/id/test-1/trial-1.log")
        );

        // A later round of the same test: its logs follow the earlier
        // round's in the same files; others stay.
        std::fs::create_dir_all(staging.dir(rel)).unwrap();
        std::fs::write(staging.dir(rel).join("trial-1.log"), "two").unwrap();
        std::fs::write(staging.dir(rel).join("server-x.log"), "s").unwrap();
        assert!(staging.keep(rel, None).series.is_none());
        let dir = store.dir("r").join(rel);
        assert_eq!(std::fs::read_to_string(dir.join("trial-1.log")).unwrap(), "onetwo");
        assert!(dir.join("server-x.log").is_file() && dir.join("monitor.json.gz").is_file());
        let said = format!("sh exited 1; see {}", staging.dir(rel).join("trial-1.log").display());
        assert_eq!(staging.kept_text(&said), format!("sh exited 1; see {}/trial-1.log", dir.display()));
        drop(staging);
        assert!(!store.dir("r").join(STAGING).exists(), "the staging folder goes with the run");
    }

    #[test]
    fn what_a_killed_run_staged_is_removed_by_the_next() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        let left = store.dir("r").join(STAGING).join("logs/id/t");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(left.join("trial-1.log"), "half").unwrap();
        let staging = store.staging("r").unwrap();
        assert!(!left.exists());
        assert!(staging.dir("logs").parent().unwrap().is_dir());
    }

    /// `logs` a link to another file system (the user keeps logs
    /// elsewhere): rename says EXDEV, so the logs are copied — none lost.
    #[test]
    fn logs_on_another_file_system_are_copied_not_lost() {
        let elsewhere = tempfile::tempdir_in("/dev/shm").unwrap();
        let home = tempfile::tempdir().unwrap();
        let dev = |p: &Path| std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(p).unwrap());
        assert_ne!(dev(elsewhere.path()), dev(home.path()), "the test needs two file systems");
        let store = Store::new(home.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), store.dir("r").join("logs")).unwrap();
        let staging = store.staging("r").unwrap();
        let rel = "logs/id/test-1";
        std::fs::create_dir_all(staging.dir(rel).join("sub")).unwrap();
        std::fs::write(staging.dir(rel).join("trial-1.log"), "one").unwrap();
        std::fs::write(staging.dir(rel).join("sub/x.log"), "x").unwrap();
        let kept = staging.keep(rel, Some(&series()));
        kept.logs.unwrap();
        kept.series.unwrap().unwrap();
        let there = elsewhere.path().join("id/test-1");
        assert_eq!(std::fs::read_to_string(there.join("trial-1.log")).unwrap(), "one");
        assert_eq!(std::fs::read_to_string(there.join("sub/x.log")).unwrap(), "x");
        assert!(there.join("monitor.json.gz").is_file());
        // A second round, across the file systems too.
        std::fs::create_dir_all(staging.dir(rel)).unwrap();
        std::fs::write(staging.dir(rel).join("trial-1.log"), "two").unwrap();
        staging.keep(rel, None).logs.unwrap();
        assert_eq!(std::fs::read_to_string(there.join("trial-1.log")).unwrap(), "onetwo");
    }

    /// Something other than a file where a log goes is not overwritten,
    /// and the keeping says why.
    #[test]
    fn what_is_in_a_logs_way_is_named_not_replaced() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::new(home.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        let rel = "logs/id/t";
        std::fs::create_dir_all(store.dir("r").join(rel)).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", store.dir("r").join(rel).join("trial-1.log")).unwrap();
        let staging = store.staging("r").unwrap();
        std::fs::create_dir_all(staging.dir(rel)).unwrap();
        std::fs::write(staging.dir(rel).join("trial-1.log"), "one").unwrap();
        let e = staging.keep(rel, None).logs.unwrap_err();
        assert!(e.to_string().contains("trial-1.log"), "{e}");
        assert!(std::fs::symlink_metadata(store.dir("r").join(rel).join("trial-1.log")).unwrap().is_symlink());
    }

    /// A message naming the staged log by its real path (ENGINE_HOME
    /// reached through a link) names the kept one all the same.
    #[test]
    fn a_message_naming_the_real_path_is_rewritten_too() {
        let real = tempfile::tempdir().unwrap();
        let link = tempfile::tempdir().unwrap();
        let home = link.path().join("home");
        std::os::unix::fs::symlink(real.path(), &home).unwrap();
        let store = Store::new(home.clone());
        let _lock = store.lock("r").unwrap();
        let staging = store.staging("r").unwrap();
        let rel = "logs/id/t";
        let real_log = real.path().canonicalize().unwrap().join("r/.staging").join(rel).join("pre_test.log");
        let said = format!("pre_test step 1 failed: see {}", real_log.display());
        let out = staging.kept_text(&said);
        assert!(!out.contains(".staging"), "{out}");
        assert!(out.ends_with("/r/logs/id/t/pre_test.log"), "{out}");
        assert_eq!(staging.kept_as(&real_log).as_deref(), Some("logs/id/t/pre_test.log"));
    }

    #[test]
    fn only_whole_paths_are_rewritten_not_a_longer_name() {
        let base = tempfile::tempdir().unwrap();
        let store = Store::new(base.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        let staging = store.staging("r").unwrap();
        let root = base.path().join("r/.staging");
        let said = format!("{0}/logs/x and {0}EVIL and {0}-b and zz{0}/y and {0}", root.display());
        let out = staging.kept_text(&said);
        let folder = base.path().join("r");
        let want = format!("{0}/logs/x and {1}EVIL and {1}-b and zz{1}/y and {0}", folder.display(), root.display());
        assert_eq!(out, want);
    }

    #[test]
    fn a_staging_folder_that_will_not_go_is_set_aside_and_never_stops_a_run() {
        let base = tempfile::tempdir().unwrap();
        let store = Store::new(base.path().to_path_buf());
        let _lock = store.lock("r").unwrap();
        // A killed run's staging folder with a mount inside: removing it
        // fails at once (EBUSY) and would have failed every later run.
        let left = base.path().join("r").join(STAGING).join("m");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(left.join("x"), b"x").unwrap();
        // Root only: a tmpfs mounted inside (CI runs as root).
        let mounted = crate::sys::is_root()
            && std::process::Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=1m", "t"])
                .arg(&left)
                .status()
                .is_ok_and(|s| s.success());
        assert_eq!(mounted, crate::sys::is_root(), "as root the tmpfs must mount");
        if mounted {
            std::fs::write(left.join("inside"), b"kept").unwrap();
        }
        let staging = store.staging("r").unwrap();
        assert!(staging.dir("logs/a").starts_with(base.path().join("r").join(STAGING)));
        drop(staging);
        let q = base.path().join(crate::sys::remove::QUARANTINE);
        if mounted {
            // Set aside whole, the mount with it, its file untouched.
            let aside: Vec<_> = std::fs::read_dir(&q).unwrap().flatten().map(|e| e.path()).collect();
            assert_eq!(aside.len(), 1, "{aside:?}");
            assert_eq!(std::fs::read(aside[0].join("m/inside")).unwrap(), b"kept");
            let (_, c) = store.clear_quarantine(Instant::now() + Duration::from_secs(5));
            assert_eq!(c.left, 1);
            assert!(c.why.is_some_and(|e| e.to_string().contains("busy")), "the reason is the mount's");
            assert!(std::process::Command::new("umount").arg(aside[0].join("m")).status().unwrap().success());
            let (_, c) = store.clear_quarantine(Instant::now() + Duration::from_secs(5));
            assert_eq!((c.removed, c.left), (1, 0));
        }
        assert!(!base.path().join("r").join(STAGING).exists());
        assert!(!q.exists(), "the quarantine is removed once empty");
    }
}
