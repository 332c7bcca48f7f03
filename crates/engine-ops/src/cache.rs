//! `engine cache fill|list|clean`: the download cache, and folders of
//! downloads for machines without the internet. The CLI prints what these
//! return.

use crate::install::batch_tests;
use crate::{Context, Failure, exit};
use engine::catalog::Catalog;
use engine::install::State;
use engine::install::download::{DownloadError, Downloader, ProgressSink, Want};
use engine::sys::interrupt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One download of `engine cache fill`.
#[derive(Debug)]
pub struct Filled {
    pub sha256: String,
    pub file: String,
    /// Where it came from (`cache`, a URL).
    pub origin: String,
    /// The copy made with `--to`.
    pub copied_to: Option<PathBuf>,
}

/// How `engine cache fill` went, download by download.
#[derive(Debug, Default)]
pub struct Fill {
    pub filled: Vec<Filled>,
    /// Downloads that failed, as messages.
    pub failed: Vec<String>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// A copy for `--to` could not be written: the fill stopped there.
    pub copy_failed: Option<CopyError>,
}

impl Fill {
    pub fn exit_code(&self) -> i32 {
        match (self.interrupted, &self.copy_failed, self.failed.is_empty()) {
            (true, _, _) => exit::INTERRUPTED,
            (false, Some(_), _) => exit::ERROR,
            (false, None, false) => exit::INSTALL_FAILED,
            (false, None, true) => exit::OK,
        }
    }
}

/// Every download of every known profile, by sha256: (file, profile references).
fn known_downloads(catalog: &Catalog) -> HashMap<String, (String, Vec<String>)> {
    let mut out: HashMap<String, (String, Vec<String>)> = HashMap::new();
    for lp in catalog.all_profiles().into_iter().flatten() {
        let Some(inst) = &lp.profile.install else { continue };
        for d in &inst.downloads {
            let Some(sha) = &d.sha256 else { continue };
            let e = out.entry(sha.to_ascii_lowercase()).or_insert_with(|| (d.file.clone(), Vec::new()));
            e.1.push(lp.reference());
        }
    }
    out
}

/// The downloads `refs`' profiles name (every entry), once each.
pub fn wants(cx: &Context, refs: &[String]) -> Result<Vec<Want>, Failure> {
    let tests = batch_tests(cx, refs, &[])?;
    let mut wants: Vec<Want> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in &tests {
        if !seen.insert(t.profile.reference()) {
            continue;
        }
        let Some(inst) = &t.profile.profile.install else { continue };
        for d in &inst.downloads {
            let sha = d.sha256.clone().unwrap_or_default().to_ascii_lowercase();
            if !wants.iter().any(|w| w.sha256 == sha) {
                wants.push(Want { file: d.file.clone(), sha256: sha, size: d.size, urls: d.urls.clone() });
            }
        }
    }
    Ok(wants)
}

/// Fetches and verifies `wants` into the cache; with `to`, copies each
/// (atomically, unless an identical file is there) into that folder.
pub fn fill(cx: &Context, wants: &[Want], to: Option<&Path>, progress: Option<ProgressSink>) -> Result<Fill, Failure> {
    interrupt::install().map_err(|e| Failure::error(format!("cannot install signal handlers: {e}")))?;
    let settings = engine::install::download::Settings { progress, ..cx.settings.downloads.clone() };
    let dl = Downloader::new(cx.home.downloads(), settings).map_err(|e| Failure::error(e.to_string()))?;
    if let Some(to) = to {
        std::fs::create_dir_all(to).map_err(|e| Failure::error(format!("cannot create {}: {e}", to.display())))?;
    }
    let mut out = Fill::default();
    for (w, r) in wants.iter().zip(dl.fetch_all(wants)) {
        match r {
            Ok(f) => {
                let copied_to = match to.map(|to| copy(&f.path, &to.join(&w.file), &w.sha256)).transpose() {
                    Ok(c) => c,
                    Err(e) => {
                        out.copy_failed = Some(e);
                        return Ok(out);
                    }
                };
                let origin = f.origin.to_string();
                out.filled.push(Filled { sha256: w.sha256.clone(), file: w.file.clone(), origin, copied_to });
            }
            Err(DownloadError::Interrupted { .. }) => {
                out.interrupted = true;
                return Ok(out);
            }
            Err(e) => out.failed.push(e.to_string()),
        }
    }
    Ok(out)
}

/// A `--to` copy that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct CopyError {
    pub path: PathBuf,
    source: std::io::Error,
}

fn copy(from: &Path, dest: &Path, sha256: &str) -> Result<PathBuf, CopyError> {
    let same = engine::sys::hash::sha256_file(dest).ok().is_some_and(|s| s == sha256);
    if !same {
        engine::sys::fs::copy_atomic(from, dest).map_err(|source| CopyError { path: dest.to_path_buf(), source })?;
    }
    Ok(dest.to_path_buf())
}

/// A cached download: its SHA-256, size, and the file and profiles that name it.
#[derive(Debug)]
pub struct Cached {
    pub sha256: String,
    pub size: u64,
    pub named_by: Option<(String, Vec<String>)>,
}

/// What `engine cache list` shows.
#[derive(Debug)]
pub struct Listing {
    pub downloads_dir: PathBuf,
    pub downloads: Vec<Cached>,
    pub installed_dir: PathBuf,
    /// Each installed profile folder and its state (none: not finished).
    pub installed: Vec<(String, Option<State>)>,
}

pub fn list(cx: &Context) -> Listing {
    let home = &cx.home;
    let mut known = known_downloads(cx.catalog());
    let dir = home.downloads();
    let mut downloads: Vec<Cached> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                downloads.push(Cached { named_by: known.remove(&name), sha256: name, size });
            }
        }
    }
    downloads.sort_by(|a, b| a.sha256.cmp(&b.sha256));
    let mut installed: Vec<(String, Option<State>)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(home.installed()) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || !e.path().is_dir() {
                continue;
            }
            let state = engine::install::read_state(&e.path());
            installed.push((name, state));
        }
    }
    installed.sort_by(|a, b| a.0.cmp(&b.0));
    Listing { downloads_dir: dir, downloads, installed_dir: home.installed(), installed }
}

/// What `engine cache clean` removed.
#[derive(Debug)]
pub struct Cleaned {
    pub dir: PathBuf,
    pub files: u64,
    pub bytes: u64,
}

/// Removes unfinished downloads and those no known profile names (`all`: every one).
pub fn clean(cx: &Context, all: bool) -> Cleaned {
    let known = known_downloads(cx.catalog());
    let dir = cx.home.downloads();
    let (mut files, mut bytes) = (0u64, 0u64);
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let partial = name.ends_with(".part");
            let unknown = !known.contains_key(&name);
            if all || partial || unknown {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                if std::fs::remove_file(e.path()).is_ok() {
                    files += 1;
                    bytes += size;
                }
            }
        }
    }
    Cleaned { dir, files, bytes }
}
