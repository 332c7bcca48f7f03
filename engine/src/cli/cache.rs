//! `engine cache fill|list|clean`: the download cache, and folders of
//! downloads for machines without the internet.

use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine_model::units::format_bytes_binary;
use engine_ops::vocab::install::STATE_FILE;
use engine_ops::{Context, cache};
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

fn fill(cx: &Context, a: FillArgs) -> Result<i32, Failure> {
    let wants = cache::wants(cx, &a.refs)?;
    if wants.is_empty() {
        outln!("nothing to download: these profiles have no downloads");
        return Ok(exit::OK);
    }
    let done = cache::fill(cx, &wants, a.to.as_deref(), Some(super::downloads::progress()))?;
    for f in &done.filled {
        let to = f.copied_to.as_ref().map(|p| format!(" → {}", p.display())).unwrap_or_default();
        outln!("{}  {}  {}{to}", f.sha256, f.file, f.origin);
    }
    for e in &done.failed {
        errln!("error: {e}");
    }
    if let Some(e) = &done.copy_failed {
        return Err(Failure::error(e.to_string()));
    }
    Ok(done.exit_code())
}

fn list(cx: &Context) -> Result<i32, Failure> {
    let l = cache::list(cx);
    outln!("downloads in {}:", l.downloads_dir.display());
    if l.downloads.is_empty() {
        outln!("  (none)");
    }
    for d in &l.downloads {
        let who = match &d.named_by {
            Some((file, refs)) => format!("{file} ({})", refs.join(", ")),
            None => "(no known profile names it)".into(),
        };
        outln!("  {}  {:>10}  {who}", &d.sha256[..12], format_bytes_binary(d.size));
    }
    if !l.downloads.is_empty() {
        let total = l.downloads.iter().map(|d| d.size).sum();
        outln!("  {} file(s), {}", l.downloads.len(), format_bytes_binary(total));
    }
    outln!("installed in {}:", l.installed_dir.display());
    if l.installed.is_empty() {
        outln!("  (none)");
    }
    for (name, state) in &l.installed {
        match state {
            Some(s) => outln!("  {name}  installed {} in {:.1} s", s.installed_at, s.seconds),
            None => outln!("  {name}  not finished (no {STATE_FILE}): `engine install` redoes it"),
        }
    }
    Ok(exit::OK)
}

fn clean(cx: &Context, a: CleanArgs) -> Result<i32, Failure> {
    let c = cache::clean(cx, a.all);
    outln!("removed {} file(s), {} from {}", c.files, format_bytes_binary(c.bytes), c.dir.display());
    Ok(exit::OK)
}
