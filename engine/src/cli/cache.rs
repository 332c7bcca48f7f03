//! `engine cache fill|list|clean`: the download cache, and folders of
//! downloads for machines without the internet.

use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine::catalog::Catalog;
use engine::install::download::{self, Downloader, Want};
use engine::install::{STATE_FILE, State};
use engine::ops::Context;
use engine::ops::install::batch_tests;
use engine::sys::interrupt;
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum CacheCommand {
    /// Download every file REF's profiles may need (all entries, all platforms) and verify it;
    /// with --to, also copy them into a folder for ENGINE_DOWNLOAD_CACHE on offline machines
    Fill(FillArgs),
    /// List cached downloads (and the profiles that name them) and installed profiles
    List,
    /// Remove cached downloads no known profile names, and unfinished downloads
    Clean(CleanArgs),
}

#[derive(Args, Debug)]
pub struct FillArgs {
    #[arg(required = true, value_name = "REF")]
    pub refs: Vec<String>,
    /// Folder to copy the files into, by file name (created if missing)
    #[arg(long, value_name = "DIR")]
    pub to: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// Remove every cached download
    #[arg(long)]
    pub all: bool,
}

pub fn run(cx: &Context, c: CacheCommand) -> Result<i32, Failure> {
    match c {
        CacheCommand::Fill(a) => fill(cx, a),
        CacheCommand::List => list(cx),
        CacheCommand::Clean(a) => clean(cx, a),
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

fn fill(cx: &Context, a: FillArgs) -> Result<i32, Failure> {
    let home = &cx.home;
    let tests = batch_tests(cx, &a.refs, &[])?;
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
    if wants.is_empty() {
        outln!("nothing to download: these profiles have no downloads");
        return Ok(exit::OK);
    }
    interrupt::install().map_err(|e| Failure::new(exit::ERROR, format!("cannot install signal handlers: {e}")))?;
    let mut settings = cx.settings.downloads.clone();
    settings.progress = Some(super::downloads::progress());
    let dl = Downloader::new(home.downloads(), settings).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    if let Some(to) = &a.to {
        std::fs::create_dir_all(to)
            .map_err(|e| Failure::new(exit::ERROR, format!("cannot create {}: {e}", to.display())))?;
    }
    let mut code = exit::OK;
    for (w, r) in wants.iter().zip(dl.fetch_all(&wants)) {
        match r {
            Ok(f) => {
                let mut line = format!("{}  {}  {}", w.sha256, w.file, f.origin);
                if let Some(to) = &a.to {
                    let dest = to.join(&w.file);
                    let same = engine::sys::hash::sha256_file(&dest).ok().is_some_and(|s| s == w.sha256);
                    if !same {
                        engine::sys::fs::copy_atomic(&f.path, &dest)
                            .map_err(|e| Failure::new(exit::ERROR, format!("cannot write {}: {e}", dest.display())))?;
                    }
                    line.push_str(&format!(" → {}", dest.display()));
                }
                outln!("{line}");
            }
            Err(download::DownloadError::Interrupted { .. }) => return Ok(exit::INTERRUPTED),
            Err(e) => {
                errln!("error: {e}");
                code = exit::INSTALL_FAILED;
            }
        }
    }
    Ok(code)
}

fn list(cx: &Context) -> Result<i32, Failure> {
    let home = &cx.home;
    let known = known_downloads(cx.catalog());
    let dir = home.downloads();
    let mut rows: Vec<(String, u64)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                rows.push((name, e.metadata().map(|m| m.len()).unwrap_or(0)));
            }
        }
    }
    rows.sort();
    outln!("downloads in {}:", dir.display());
    if rows.is_empty() {
        outln!("  (none)");
    }
    let mut total = 0;
    for (sha, size) in &rows {
        total += size;
        let who = match known.get(sha) {
            Some((file, refs)) => format!("{file} ({})", refs.join(", ")),
            None => "(no known profile names it)".into(),
        };
        outln!("  {}  {:>10}  {who}", &sha[..12], engine::units::format_bytes_binary(*size));
    }
    if !rows.is_empty() {
        outln!("  {} file(s), {}", rows.len(), engine::units::format_bytes_binary(total));
    }
    outln!("installed in {}:", home.installed().display());
    let mut installed: Vec<(String, Option<State>)> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(home.installed()) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || !e.path().is_dir() {
                continue;
            }
            let state =
                std::fs::read_to_string(e.path().join(STATE_FILE)).ok().and_then(|t| serde_json::from_str(&t).ok());
            installed.push((name, state));
        }
    }
    installed.sort_by(|a, b| a.0.cmp(&b.0));
    if installed.is_empty() {
        outln!("  (none)");
    }
    for (name, state) in installed {
        match state {
            Some(s) => outln!("  {name}  installed {} in {:.1} s", s.installed_at, s.seconds),
            None => outln!("  {name}  not finished (no {STATE_FILE}): `engine install` redoes it"),
        }
    }
    Ok(exit::OK)
}

fn clean(cx: &Context, a: CleanArgs) -> Result<i32, Failure> {
    let home = &cx.home;
    let known = known_downloads(cx.catalog());
    let dir = home.downloads();
    let (mut n, mut bytes) = (0u64, 0u64);
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let partial = name.ends_with(".part");
            let unknown = !known.contains_key(&name);
            if a.all || partial || unknown {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                if std::fs::remove_file(e.path()).is_ok() {
                    n += 1;
                    bytes += size;
                }
            }
        }
    }
    outln!("removed {n} file(s), {} from {}", engine::units::format_bytes_binary(bytes), dir.display());
    Ok(exit::OK)
}
