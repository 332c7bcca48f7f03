//! Packing folders into reproducible `.tar.gz` archives (the same files give
//! the same bytes: sorted entries, one fixed mtime, owner 0, no user names,
//! modes 0644/0755, a gzip header without time or name). Links, special
//! files and file names that are not names (`model::names`) are refused.
//! Unpacking is the install module's safe extraction (see `sync`).

use flate2::Compression;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The mtime of every packed entry: 2000-01-01T00:00:00Z.
pub(crate) const FIXED_MTIME: u64 = 946_684_800;

#[derive(Debug, Error)]
pub enum PackError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path} is a {kind}; a repository archive holds only plain files and folders")]
    NotPlain { path: PathBuf, kind: &'static str },
    /// Every file unpacks under the name it has here, on every user's machine.
    #[error("{}: its name cannot be a file name: {source}", path.display())]
    BadName { path: PathBuf, source: crate::model::names::NameError },
    #[error("the archive is damaged: {0}")]
    Damaged(String),
    /// An unpacked member whose name is not a name (shown escaped).
    #[error("`{shown}` is not a file name: {source}")]
    NotAName { shown: String, source: crate::model::names::NameError },
    /// An unpacked member that is a link (shown escaped).
    #[error("`{shown}` is a link; repository archives hold only files and folders")]
    Link { shown: String },
    /// Safe extraction refused it (traversal, a link, a device, its size).
    #[error(transparent)]
    Refused(crate::install::extract::ExtractError),
}

/// Files of `dir` (relative paths, sorted), folders included, dot-files left out.
fn walk(dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, bool)>) -> Result<(), PackError> {
    let rd = std::fs::read_dir(dir).map_err(|source| PackError::Read { path: dir.to_path_buf(), source })?;
    let mut names: Vec<_> = rd
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .map_err(|source| PackError::Read { path: dir.to_path_buf(), source })?;
    names.sort();
    for name in names {
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = dir.join(&name);
        if let Err(source) = crate::model::names::check(&name.to_string_lossy()) {
            return Err(PackError::BadName { path, source });
        }
        let meta = std::fs::symlink_metadata(&path).map_err(|source| PackError::Read { path: path.clone(), source })?;
        let r = rel.join(&name);
        let ft = meta.file_type();
        if ft.is_symlink() {
            return Err(PackError::NotPlain { path, kind: "symbolic link" });
        } else if ft.is_dir() {
            out.push((r.clone(), true));
            walk(&path, &r, out)?;
        } else if ft.is_file() {
            out.push((r, false));
        } else {
            return Err(PackError::NotPlain { path, kind: "special file" });
        }
    }
    Ok(())
}

/// One file to pack from memory: its path in the archive and its bytes.
pub struct Item {
    pub path: String,
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// Packs folder `src` as `prefix/…`.
pub(crate) fn pack_dir(src: &Path, prefix: &str) -> Result<Vec<u8>, PackError> {
    let mut entries = Vec::new();
    walk(src, Path::new(""), &mut entries)?;
    let mut items = Vec::new();
    let mut dirs = vec![prefix.to_string()];
    for (rel, is_dir) in entries {
        let name = format!("{prefix}/{}", rel.to_string_lossy());
        if is_dir {
            dirs.push(name);
            continue;
        }
        let p = src.join(&rel);
        let bytes = std::fs::read(&p).map_err(|source| PackError::Read { path: p.clone(), source })?;
        let mode = std::fs::metadata(&p).map(|m| m.permissions().mode()).unwrap_or(0o644);
        items.push(Item { path: name, bytes, executable: mode & 0o100 != 0 });
    }
    pack(&dirs, &items)
}

/// Packs folders `dirs` and files `items` in byte order of their paths.
pub(crate) fn pack(dirs: &[String], items: &[Item]) -> Result<Vec<u8>, PackError> {
    enum E<'a> {
        Dir,
        File(&'a Item),
    }
    let mut all: Vec<(String, E)> = dirs.iter().map(|d| (format!("{d}/"), E::Dir)).collect();
    all.extend(items.iter().map(|i| (i.path.clone(), E::File(i))));
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let gz = flate2::GzBuilder::new().mtime(0).write(Vec::new(), Compression::new(9));
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    let err = |e: io::Error| PackError::Damaged(e.to_string());
    for (name, e) in &all {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(FIXED_MTIME);
        h.set_uid(0);
        h.set_gid(0);
        match e {
            E::Dir => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                tar.append_data(&mut h, name, io::empty()).map_err(err)?;
            }
            E::File(i) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(if i.executable { 0o755 } else { 0o644 });
                h.set_size(i.bytes.len() as u64);
                tar.append_data(&mut h, &i.path, i.bytes.as_slice()).map_err(err)?;
            }
        }
    }
    let gz = tar.into_inner().map_err(err)?;
    let mut out = gz.finish().map_err(err)?;
    out.flush().map_err(err)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_is_reproducible_and_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("p");
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("profile.yaml"), "id: p\n").unwrap();
        std::fs::write(src.join("sub/run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(src.join("sub/run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(src.join(".swp"), "x").unwrap();
        let a = pack_dir(&src, "p").unwrap();
        // Other mtimes and the same content: the same bytes.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(src.join("profile.yaml"), "id: p\n").unwrap();
        let b = pack_dir(&src, "p").unwrap();
        assert_eq!(a, b);
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(d.path().join("a.tar.gz"), &a).unwrap();
        use crate::install::extract;
        extract::extract(&d.path().join("a.tar.gz"), "a", extract::Format::TarGz, &out, &extract::Limits::DOWNLOADS)
            .unwrap();
        assert_eq!(std::fs::read_to_string(out.join("p/profile.yaml")).unwrap(), "id: p\n");
        assert!(std::fs::metadata(out.join("p/sub/run.sh")).unwrap().permissions().mode() & 0o100 != 0);
        assert!(!out.join("p/.swp").exists(), "dot-files are left out");
    }

    #[test]
    fn a_file_whose_name_is_no_name_is_not_packed() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("ok.yaml"), "x").unwrap();
        std::fs::write(d.path().join("a\\b"), "x").unwrap();
        let e = pack_dir(d.path(), "p").unwrap_err();
        assert!(matches!(e, PackError::BadName { .. }), "{e}");
        assert!(e.to_string().contains("it contains `\\`"), "{e}");
    }
}
