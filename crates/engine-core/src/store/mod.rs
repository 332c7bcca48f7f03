//! Saved results: `$ENGINE_HOME/results/<name>/result.json`, written
//! atomically (temp file, fsync, rename, fsync of the folder) and guarded by a
//! lock so two runs never interleave their writes; edits of result files, and
//! the check of a result file from elsewhere against the schema.

pub mod bulk;
pub mod edit;
pub mod index;
pub mod search;
pub mod series;
pub mod staging;
pub mod validate;

use crate::model::result::ResultFile;
use crate::sys::lock::{self, LockFile, TryLock};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Result files from outside (a repository's published results, a file a
/// command is given by path, a download) larger than this are refused
/// before they are read, so a hostile or runaway file cannot make engine
/// allocate without bound. The largest real result here (3,000 results
/// imported from PTS) is under 5 MiB.
pub(crate) const MAX_RESULT_BYTES: u64 = 64 << 20;

/// The saved results engine wrote itself (`ENGINE_HOME/results`) are read
/// whatever their size up to this sanity bound: a merge of 10,000 hosts is
/// hundreds of MiB, and no command refuses a result engine wrote.
pub(crate) const MAX_OWN_RESULT_BYTES: u64 = 16 << 30;

/// From this many identifiers a result is written without indentation (a
/// fleet's result: a third of the bytes; small results stay readable), and
/// its bulk beside it ([`bulk`]).
const COMPACT_FROM_IDENTIFIERS: usize = bulk::FROM_IDENTIFIERS;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("result name `{0}` is not allowed: {1}")]
    BadName(String, String),
    #[error("no saved result named `{0}`")]
    NotFound(String),
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}:{col}: not a valid result file: {msg}", path.display())]
    Invalid { path: PathBuf, line: usize, col: usize, msg: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("result `{0}` is in use by another engine process")]
    Locked(String),
}

/// Checks a result name: a name (`model::names`: one path component, no
/// `/`, no control characters) that also does not start with `.` or `-`
/// (hidden, or read as an option) nor holds `..` anywhere.
pub fn check_name(name: &str) -> Result<(), StoreError> {
    let bad = |why: String| Err(StoreError::BadName(crate::model::names::shown(name), why));
    if let Err(e) = crate::model::names::check(name) {
        return bad(e.to_string());
    }
    if name.contains("..") {
        return bad("it contains `..`".into());
    }
    if name.starts_with('.') || name.starts_with('-') {
        return bad("it starts with `.` or `-`".into());
    }
    Ok(())
}

/// A result name, checked once where it is given (`--save`, `--compare-to`):
/// the rules of [`check_name`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultName(String);

impl std::str::FromStr for ResultName {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, StoreError> {
        check_name(s)?;
        Ok(ResultName(s.to_string()))
    }
}

impl std::ops::Deref for ResultName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ResultName {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The folder that holds all saved results.
pub struct Store {
    root: PathBuf,
}

/// An exclusive lock on one result folder; released when dropped.
pub struct Lock {
    _file: LockFile,
}

impl Store {
    pub fn new(root: PathBuf) -> Self {
        Store { root }
    }

    /// The folder that holds the results.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn dir(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir(name).join("result.json")
    }

    pub fn exists(&self, name: &str) -> bool {
        check_name(name).is_ok()
            && fs::symlink_metadata(self.dir(name)).is_ok_and(|m| m.is_dir())
            && fs::symlink_metadata(self.path(name)).is_ok_and(|m| m.is_file())
    }

    /// The size of saved result `name`'s file (not its bulk), if it is one.
    pub fn size_of(&self, name: &str) -> Option<u64> {
        if !self.exists(name) {
            return None;
        }
        fs::symlink_metadata(self.path(name)).ok().map(|m| m.len())
    }

    /// The file of saved result `name`, opened beneath the results folder:
    /// neither its folder nor its file may be a link, and only a regular
    /// file is read (a FIFO put there is refused, never waited on).
    fn open_result(&self, name: &str) -> std::io::Result<fs::File> {
        crate::sys::safepath::open_regular_in(&self.root, &Path::new(name).join("result.json"))
    }

    /// Names of saved results, sorted.
    pub fn list(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            // A folder and a file of its own: links (to results elsewhere,
            // to files outside) are no results.
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| fs::symlink_metadata(e.path().join("result.json")).is_ok_and(|m| m.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            // engine's own folders beside the results (the quarantine) are none.
            .filter(|n| check_name(n).is_ok())
            .collect();
        names.sort();
        names
    }

    /// Saved result `name`, whole: a fleet's bulk (trial counters, system
    /// details) attached; what of it could not be read is said in `repaired`.
    pub fn load(&self, name: &str) -> Result<ResultFile, StoreError> {
        let mut f = self.load_lean(name)?;
        if let Some(b) = f.bulk.take() {
            let said = bulk::attach(&self.dir(name), &b, &mut f);
            f.repaired.extend(said);
        }
        Ok(f)
    }

    /// Saved result `name` for a view: a fleet's bulk is left where it is
    /// (`bulk` still names it). Not to be saved after an edit.
    pub fn load_lean(&self, name: &str) -> Result<ResultFile, StoreError> {
        check_name(name)?;
        let path = self.path(name);
        // A link (the folder or its file) is no result, as `list` says.
        let linked = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
        if linked(&self.dir(name)) || linked(&path) {
            return Err(StoreError::NotFound(name.to_string()));
        }
        match self.open_result(name) {
            Ok(f) => load_own(f, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::NotFound(name.to_string())),
            Err(source) => Err(StoreError::Read { path, source }),
        }
    }

    /// Takes the lock of result `name`, creating its folder.
    pub fn lock(&self, name: &str) -> Result<Lock, StoreError> {
        check_name(name)?;
        let dir = self.dir(name);
        fs::create_dir_all(&dir).map_err(|source| StoreError::Write { path: dir.clone(), source })?;
        if fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(StoreError::Write {
                path: dir.clone(),
                source: std::io::Error::other(
                    "the result folder is a symbolic link; engine writes only into real folders",
                ),
            });
        }
        let lock = self.lock_quiet(name)?;
        // Whoever held the lock before may have been killed mid-write.
        crate::sys::fs::remove_stale_temps(&dir);
        Ok(lock)
    }

    /// Writes result `name` atomically; the version it replaces is kept as
    /// `result.json.bak` (a hard link, no copy), so a file damaged later by
    /// hand or by a full disk elsewhere always has a good version beside it.
    /// A result of 30 identifiers or more keeps its bulk beside it: it is
    /// moved out of `file` for the writing and put back.
    pub fn save(&self, name: &str, file: &mut ResultFile) -> Result<(), StoreError> {
        check_name(name)?;
        let dir = self.dir(name);
        let path = self.path(name);
        let mut old_bulk = None;
        if path.is_file()
            && let Ok(bulk) = self
                .open_result(name)
                .map_err(|source| StoreError::Read { path: path.clone(), source })
                .and_then(|f| replaced_bulk(f, &path))
        {
            old_bulk = bulk;
            let bak = backup_path(&path);
            let tmp = dir.join(format!("{}result.json.bak", crate::sys::fs::temp_prefix()));
            let _ = fs::remove_file(&tmp);
            if fs::hard_link(&path, &tmp).is_ok() {
                let _ = fs::rename(&tmp, &bak);
                // When the backup already is this file (a save that failed
                // after linking it), rename(2) does nothing and keeps both names.
                let _ = fs::remove_file(&tmp);
            }
        }
        let big = file.systems.len() >= COMPACT_FROM_IDENTIFIERS;
        let frames = if big && file.bulk.is_none() {
            let frames = bulk::split(file);
            match bulk::write(&dir, &frames) {
                Ok(n) => file.bulk = Some(n),
                Err(source) => {
                    bulk::restore(file, frames);
                    return Err(StoreError::Write { path: dir, source });
                }
            }
            Some(frames)
        } else {
            None
        };
        let written = write_json(&path, file, big);
        let current = file.bulk.clone();
        if let Some(frames) = frames {
            bulk::restore(file, frames);
            file.bulk = None;
        }
        if written.is_ok() {
            bulk::prune(&dir, &[current.as_deref(), old_bulk.as_deref()]);
            self.indexed(|i| i.saved(self, name, file));
        }
        written
    }

    /// Keeps an existing index in step (`engine serve`'s; none is made
    /// here). Its failure loses nothing: the index checks every file's
    /// stamp when it is next opened, and reads again what changed.
    fn indexed(&self, update: impl FnOnce(&mut index::Index) -> Result<(), index::IndexError>) {
        if let Some(mut i) = index::Index::existing(self) {
            let _ = update(&mut i);
        }
    }

    /// Removes what killed runs left half-written in every result folder
    /// that no live process holds. Returns the paths removed.
    pub fn remove_stale_temps(&self) -> (Vec<PathBuf>, Vec<String>) {
        let mut out = Vec::new();
        let mut left = Vec::new();
        // One deadline for every result folder's quarantine, not one each.
        let by = std::time::Instant::now() + crate::sys::remove::DEADLINE;
        let Ok(rd) = fs::read_dir(&self.root) else { return (out, left) };
        for e in rd.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue; // a symlinked folder is not engine's to clean
            }
            let name = e.file_name().to_string_lossy().to_string();
            if check_name(&name).is_ok()
                && let Ok(_lock) = self.lock_quiet(&name)
            {
                let dir = self.dir(&name);
                out.extend(crate::sys::fs::remove_stale_temps(&dir));
                // What a killed run was writing never became the result's.
                let staged = dir.join(staging::STAGING);
                if fs::symlink_metadata(&staged).is_ok() {
                    match staging::remove_staging(&dir) {
                        Ok(()) => out.push(staged),
                        Err(e) => left.push(format!("{}: {e}", staged.display())),
                    }
                }
                // What a run set aside beside the result when the store's
                // quarantine would not take it.
                let q = dir.join(crate::sys::remove::QUARANTINE);
                let c = crate::sys::remove::clear(&q, by);
                if c.removed > 0 {
                    out.push(q.clone());
                }
                if let Some(why) = c.why.filter(|_| c.left > 0) {
                    left.push(format!("{}: {} entr(ies) that could not be removed ({why})", q.display(), c.left));
                }
                // A test's series is written atomically beside its logs.
                for test_dir in subdirs(&dir.join("logs")).iter().flat_map(|d| subdirs(d)) {
                    out.extend(crate::sys::fs::remove_stale_temps(&test_dir));
                }
            }
        }
        (out, left)
    }

    /// Clears what runs set aside in the store's quarantine (staged logs
    /// and unsaved result folders they could not remove in time), within
    /// `deadline`; where it is, and what became of it.
    pub fn clear_quarantine(&self, deadline: std::time::Instant) -> (PathBuf, crate::sys::remove::Cleared) {
        let q = self.root.join(crate::sys::remove::QUARANTINE);
        let c = crate::sys::remove::clear(&q, deadline);
        (q, c)
    }

    /// The lock of an existing folder, without creating anything.
    fn lock_quiet(&self, name: &str) -> Result<Lock, StoreError> {
        let path = self.dir(name).join(".lock");
        match lock::try_lock(&path).map_err(|source| StoreError::Write { path, source })? {
            TryLock::Held(file) => Ok(Lock { _file: file }),
            TryLock::Busy { .. } => Err(StoreError::Locked(name.to_string())),
        }
    }

    /// Removes the folder of result `name` when nothing was saved in it (a
    /// run that saved nothing leaves no empty folder). Call without its lock.
    pub fn discard_unsaved(&self, name: &str) {
        // Only a real folder engine made: a link there is not engine's.
        let real = fs::symlink_metadata(self.dir(name)).is_ok_and(|m| m.is_dir());
        if check_name(name).is_ok() && real && !self.path(name).exists() {
            let _ = crate::sys::remove::remove_own(
                &self.dir(name),
                &self.root.join(crate::sys::remove::QUARANTINE),
                std::time::Instant::now() + std::time::Duration::from_secs(10),
            );
        }
    }

    /// Removes result `name` (its folder, logs included): level by level,
    /// never crossing into a mount or through a link, within a minute or
    /// soon after Ctrl-C; what is left is set aside in the quarantine.
    pub fn delete(&self, name: &str) -> Result<(), StoreError> {
        check_name(name)?;
        let dir = self.dir(name);
        if !self.exists(name) && !dir.join(".lock").exists() {
            return Err(StoreError::NotFound(name.to_string()));
        }
        let _lock = self.lock(name)?;
        let dropped = self.drop_folder(&dir);
        self.indexed(|i| i.forget(name));
        dropped
    }

    /// Moves identifier `from`'s log folder of result `name` to `to`'s and
    /// points `file`'s entries and failures there (an identifier renamed):
    /// a later run under the old name must not write into the logs the
    /// renamed entries point at. Whatever an earlier identifier `to` left
    /// there is set aside first. The caller holds the folder's lock.
    pub fn move_logs(&self, name: &str, file: &mut ResultFile, from: &str, to: &str) -> Result<(), StoreError> {
        let (old, new) = (format!("logs/{}", unique_slug(from)), format!("logs/{}", unique_slug(to)));
        let dir = self.dir(name);
        let write = |path: PathBuf, e: std::io::Error| StoreError::Write { path, source: e };
        self.drop_folder(&dir.join(&new))?;
        match fs::rename(dir.join(&old), dir.join(&new)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(write(dir.join(&old), e)),
        }
        let moved = |p: &mut Option<String>| {
            if let Some(rest) = p.as_deref().and_then(|p| p.strip_prefix(&format!("{old}/"))) {
                *p = Some(format!("{new}/{rest}"));
            }
        };
        for e in file.results.iter_mut().flat_map(|r| r.entries.iter_mut()).filter(|e| e.identifier == to) {
            moved(&mut e.logs);
            moved(&mut e.monitor);
        }
        for x in file.failures.iter_mut().filter(|x| x.identifier == to) {
            moved(&mut x.log);
        }
        Ok(())
    }

    /// Removes identifier `id`'s log folder of result `name` (the
    /// identifier removed): a later identifier of that name starts clean.
    pub fn drop_logs(&self, name: &str, id: &str) -> Result<(), StoreError> {
        self.drop_folder(&self.dir(name).join(format!("logs/{}", unique_slug(id))))
    }

    /// Removes `path` if it is there (set aside what will not go).
    fn drop_folder(&self, path: &Path) -> Result<(), StoreError> {
        if fs::symlink_metadata(path).is_err() {
            return Ok(());
        }
        let by = std::time::Instant::now() + crate::sys::remove::DEADLINE;
        crate::sys::remove::remove_own(path, &self.root.join(crate::sys::remove::QUARANTINE), by)
            .map(|_| ())
            .map_err(|e| StoreError::Write { path: path.to_path_buf(), source: std::io::Error::other(e.to_string()) })
    }
}

/// The bulk file the saved result at `path` names, when the file is good
/// enough to be kept as the backup. A file from outside's size is parsed
/// whole; a fleet's (hundreds of MiB, engine's own) is not parsed again:
/// its `bulk` is read from its first bytes, where engine writes it.
fn replaced_bulk(file: fs::File, path: &Path) -> Result<Option<String>, StoreError> {
    let read = |source| StoreError::Read { path: path.to_path_buf(), source };
    let size = file.metadata().map_err(read)?.len();
    if size <= MAX_RESULT_BYTES {
        return load_own(file, path).map(|f| f.bulk);
    }
    let mut head = Vec::with_capacity(4096);
    file.take(4096).read_to_end(&mut head).map_err(read)?;
    let head = String::from_utf8_lossy(&head);
    let name = head
        .split_once("\"bulk\"")
        .and_then(|(_, rest)| rest.trim_start().strip_prefix(':'))
        .and_then(|rest| rest.trim_start().strip_prefix('"'))
        .and_then(|rest| rest.split_once('"'))
        .map(|(n, _)| n.to_string());
    Ok(name.filter(|n| bulk::is_bulk_name(n)))
}

/// Where the last good version of a result file is kept.
pub fn backup_path(path: &Path) -> PathBuf {
    path.with_extension("json.bak")
}

/// A result file from outside the store (see [`MAX_RESULT_BYTES`]).
pub fn load_file(path: &Path) -> Result<ResultFile, StoreError> {
    let bytes = crate::sys::fs::read_capped(path, MAX_RESULT_BYTES)
        .map_err(|source| StoreError::Read { path: path.to_path_buf(), source })?;
    parse(&bytes, path)
}

/// `file` as JSON, written atomically and streamed (a fleet's result is
/// hundreds of MiB: no copy of its bytes in memory); compact when `compact`.
fn write_json(path: &Path, file: &ResultFile, compact: bool) -> Result<(), StoreError> {
    crate::sys::fs::fill_atomic(path, |f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        if compact { serde_json::to_writer(&mut w, file) } else { serde_json::to_writer_pretty(&mut w, file) }
            .map_err(std::io::Error::other)?;
        std::io::Write::flush(&mut w)
    })
    .map_err(|source| StoreError::Write { path: path.to_path_buf(), source })
}

/// A saved result. Past the size of a file from outside it is parsed as it
/// is read (no copy of its bytes in memory: a fleet's result is hundreds of
/// MiB; damage stops the reading where it is, a file of zeros at its first
/// byte); smaller ones as any file, whose errors name the exact byte.
fn load_own(file: fs::File, path: &Path) -> Result<ResultFile, StoreError> {
    let read = |source| StoreError::Read { path: path.to_path_buf(), source };
    let size = file.metadata().map_err(read)?.len();
    if size <= MAX_RESULT_BYTES {
        let bytes = crate::sys::fs::read_capped_from(file, MAX_RESULT_BYTES).map_err(read)?;
        return parse_own(&bytes, path);
    }
    if size > MAX_OWN_RESULT_BYTES {
        return Err(read(crate::sys::fs::too_large(size, MAX_OWN_RESULT_BYTES)));
    }
    // Mapped, not read: the page cache's pages are parsed where they are
    // (no copy, no memory of our own for the bytes), and a slice parses
    // twice as fast as a reader, its results on two threads (a refused file
    // is parsed again on one, for the error's position). Engine replaces a
    // result by renaming a new file over it, so the mapped file is never
    // cut while it is read.
    // SAFETY: the map is read-only and private, and dropped before return.
    match unsafe { memmap2::Mmap::map(&file) } {
        Ok(map) => match crate::model::result::split::with(crate::model::result::split::FROM_BYTES, || {
            serde_json::from_slice(&map)
        }) {
            Ok(f) => Ok(loaded(f)),
            Err(_) => serde_json::from_slice(&map).map(loaded).map_err(|e| invalid(path, &e)),
        },
        Err(_) => {
            let reader = std::io::BufReader::with_capacity(1 << 20, file.take(MAX_OWN_RESULT_BYTES + 1));
            serde_json::from_reader(reader).map(loaded).map_err(|e| invalid(path, &e))
        }
    }
}

/// A serde_json error as damage at its position ("… at line L column C":
/// the position goes in front).
fn invalid(path: &Path, e: &serde_json::Error) -> StoreError {
    let msg = e.to_string();
    let msg = msg.rsplit_once(" at line ").map(|(m, _)| m.to_string()).unwrap_or(msg);
    StoreError::Invalid { path: path.to_path_buf(), line: e.line(), col: e.column(), msg }
}

/// A parsed result as engine uses it: what is not a number dropped (and
/// said), comparisons recomputed rather than trusted.
fn loaded(mut f: ResultFile) -> ResultFile {
    f.repaired = f.repair();
    f.comparisons.clear();
    f
}

/// A result file's bytes from outside the store (read from `path`, named in
/// errors) → the model. Invalid UTF-8 and nesting deeper than serde_json's
/// recursion limit (128) are errors with a position, like any other damage.
/// A `bulk` it names is not read: only a saved result's folder is engine's.
pub fn parse(bytes: &[u8], path: &Path) -> Result<ResultFile, StoreError> {
    let mut f = parse_own(bytes, path)?;
    if f.bulk.take().is_some() {
        f.repaired.push(
            "its trial counters and system details are in a file beside it, which engine reads only for its own saved results".into(),
        );
    }
    Ok(f)
}

fn parse_own(bytes: &[u8], path: &Path) -> Result<ResultFile, StoreError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, col) = crate::sys::fs::line_col(bytes, e.valid_up_to());
        let msg = format!("invalid UTF-8 (byte 0x{:02x})", bytes[e.valid_up_to()]);
        StoreError::Invalid { path: path.to_path_buf(), line, col, msg }
    })?;
    serde_json::from_str(text).map(loaded).map_err(|e| invalid(path, &e))
}

/// [`crate::sys::fs::write_atomic`], its error naming `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    crate::sys::fs::write_atomic(path, bytes).map_err(|source| StoreError::Write { path: path.to_path_buf(), source })
}

/// The folders in `dir` (not symlinks to folders).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else { return Vec::new() };
    rd.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect()
}

/// A name fit for a folder: lower case, `-` for runs of other characters,
/// at most 60 characters.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches(['-', '.']).chars().take(60).collect()
}

/// Where what could not be removed of result folder `folder` in time is
/// set aside: the store's quarantine, beside the result folders (the same
/// file system as they are).
fn quarantine_of(folder: &Path) -> PathBuf {
    folder.parent().unwrap_or(Path::new(".")).join(crate::sys::remove::QUARANTINE)
}

/// A folder name for `s` that no other string shares: `s` itself when it
/// is its own slug, else the slug and a hash of the whole string. A string
/// that already ends the way a hashed name does (`-` and 32 hex digits) is
/// hashed too, so none can be written to land on another's folder.
pub(crate) fn unique_slug(s: &str) -> String {
    let base = slug(s);
    if base == s && !looks_hashed(s) { base } else { format!("{base}-{}", crate::sys::hash::name_hash(s)) }
}

/// Whether `s` ends as [`unique_slug`]'s hashed names do.
fn looks_hashed(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 32 && b[b.len() - 33] == b'-' && b[b.len() - 32..].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_cannot_be_written_to_land_on_anothers() {
        let bfq = unique_slug("vda: BFQ");
        assert!(bfq.starts_with("vda-bfq-"), "{bfq}");
        // The hashed name itself, given as an identifier, gets a folder of its own.
        assert_ne!(unique_slug(&bfq), bfq);
        assert_eq!(unique_slug("vm"), "vm");
        assert_eq!(unique_slug("host-2"), "host-2");
    }

    #[test]
    fn names() {
        assert!(check_name("disk-2026").is_ok());
        assert!(check_name("my result").is_ok());
        for bad in ["", "a/b", "..", "../x", "a..b", ".hidden", "-x", "a\nb", "a\\b", &"x".repeat(101)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let e = check_name("x\u{1b}]0;owned\u{7}/y").unwrap_err().to_string();
        assert!(e.contains("contains `/`") && e.contains("\\u{1b}") && !e.contains('\u{1b}'), "{e}");
    }

    #[test]
    fn save_load_and_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        let lock = store.lock("r1").unwrap();
        assert!(matches!(store.lock("r1"), Err(StoreError::Locked(_))));
        drop(lock);
        let mut f = ResultFile::new("T");
        f.description = "d".into();
        store.save("r1", &mut f).unwrap();
        assert_eq!(store.load("r1").unwrap().description, "d");
        assert_eq!(store.list(), vec!["r1".to_string()]);
        assert!(matches!(store.load("nope"), Err(StoreError::NotFound(_))));
        let leftovers: Vec<_> = fs::read_dir(store.dir("r1"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn a_saved_result_loads_whatever_its_size_a_file_from_outside_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        let mut f = ResultFile::new("big");
        // Over the 64 MiB of a file from outside, as a fleet's merge is.
        f.description = "x".repeat((MAX_RESULT_BYTES + (1 << 20)) as usize);
        store.save("big", &mut f).unwrap();
        assert_eq!(store.load("big").unwrap().description.len(), f.description.len(), "engine reads what it wrote");
        let e = load_file(&store.path("big")).unwrap_err().to_string();
        assert!(e.contains("over engine's limit of 64 MiB"), "{e}");
    }
}
