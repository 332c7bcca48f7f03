//! Where system facts are read from: the live `/` or a captured tree of
//! `/sys`, `/proc` and `/etc` files (test fixtures). Every read can fail;
//! callers turn failures into `unknown`, never into errors.

use std::io;
use std::path::{Path, PathBuf};

/// Read-only access to a file-system namespace rooted somewhere.
pub trait Source: Send + Sync {
    /// The text of the file at absolute `path`.
    fn read(&self, path: &str) -> io::Result<String>;
    /// Names in the directory at absolute `path`, sorted.
    fn list(&self, path: &str) -> io::Result<Vec<String>>;
    /// `path` with symlinks resolved, as an absolute path in this namespace.
    fn canonical(&self, path: &str) -> io::Result<String>;
    /// Whether something exists at `path`.
    fn exists(&self, path: &str) -> bool {
        self.canonical(path).is_ok()
    }
    /// Whether commands may be run to learn more (only for the live system).
    fn live(&self) -> bool {
        false
    }
}

/// Files under `root` (`/` for the live system).
pub struct Fs {
    root: PathBuf,
}

impl Fs {
    pub fn live() -> Self {
        Fs { root: PathBuf::from("/") }
    }
    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root: PathBuf = root.into();
        Fs { root: root.canonicalize().unwrap_or(root) }
    }
    fn full(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }
}

impl Source for Fs {
    fn read(&self, path: &str) -> io::Result<String> {
        std::fs::read_to_string(self.full(path))
    }
    fn list(&self, path: &str) -> io::Result<Vec<String>> {
        let mut v: Vec<String> = std::fs::read_dir(self.full(path))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        Ok(v)
    }
    fn canonical(&self, path: &str) -> io::Result<String> {
        let c = std::fs::canonicalize(self.full(path))?;
        let rel = c.strip_prefix(&self.root).map_err(|_| io::Error::other("path leaves the source root"))?;
        Ok(format!("/{}", rel.display()))
    }
    fn live(&self) -> bool {
        self.root == Path::new("/")
    }
}

/// The trimmed text of `path`, or `None` when it cannot be read or is empty.
pub(crate) fn text(src: &dyn Source, path: &str) -> Option<String> {
    src.read(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// `path` parsed as a number.
pub(crate) fn number<T: std::str::FromStr>(src: &dyn Source, path: &str) -> Option<T> {
    text(src, path)?.parse().ok()
}

/// The last component of a path.
pub(crate) fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
