//! Packing folders into reproducible `.tar.gz` archives (the same files give
//! the same bytes: sorted entries, one fixed mtime, owner 0, no user names,
//! modes 0644/0755, a gzip header without time or name) and unpacking them
//! safely: only plain files and folders, every path relative and inside,
//! bounded in count and size. Links of any kind are refused (engine never
//! packs one), so nothing can point outside.

use flate2::Compression;
use flate2::read::GzDecoder;
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use thiserror::Error;

/// The mtime of every packed entry: 2000-01-01T00:00:00Z.
pub const FIXED_MTIME: u64 = 946_684_800;
/// Most entries one archive may unpack to.
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes one archive may unpack to (256 MiB).
pub const MAX_UNPACKED: u64 = 256 << 20;

#[derive(Debug, Error)]
pub enum PackError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path} is a {kind}; a repository archive holds only plain files and folders")]
    NotPlain { path: PathBuf, kind: &'static str },
    #[error("the archive is damaged: {0}")]
    Damaged(String),
    #[error("the archive entry `{path}` {why}; nothing was unpacked")]
    Unsafe { path: String, why: &'static str },
    #[error("the archive unpacks to more than {limit}; nothing was unpacked")]
    TooBig { limit: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
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
pub fn pack_dir(src: &Path, prefix: &str) -> Result<Vec<u8>, PackError> {
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
pub fn pack(dirs: &[String], items: &[Item]) -> Result<Vec<u8>, PackError> {
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

/// Unpacks verified archive `bytes` into `dest` (created; it must not
/// exist). On any refusal `dest` is removed again: nothing of the archive
/// stays. Returns the relative paths of the files written.
pub fn unpack(bytes: &[u8], dest: &Path) -> Result<Vec<String>, PackError> {
    std::fs::create_dir(dest).map_err(|source| PackError::Write { path: dest.to_path_buf(), source })?;
    let r = unpack_into(bytes, dest);
    if r.is_err() {
        let _ = std::fs::remove_dir_all(dest);
    }
    r
}

fn unpack_into(bytes: &[u8], dest: &Path) -> Result<Vec<String>, PackError> {
    let mut ar = tar::Archive::new(GzDecoder::new(bytes));
    let damaged = |e: io::Error| PackError::Damaged(e.to_string());
    let mut total: u64 = 0;
    let mut files = Vec::new();
    for (n, entry) in ar.entries().map_err(damaged)?.enumerate() {
        if n >= MAX_ENTRIES {
            return Err(PackError::TooBig { limit: format!("{MAX_ENTRIES} entries") });
        }
        let mut entry = entry.map_err(damaged)?;
        let raw = entry.path().map_err(damaged)?.to_path_buf();
        let shown = raw.to_string_lossy().to_string();
        let unsafe_path = |why| PackError::Unsafe { path: shown.clone(), why };
        let mut rel = PathBuf::new();
        for c in raw.components() {
            match c {
                Component::Normal(x) => rel.push(x),
                Component::CurDir => {}
                Component::ParentDir => return Err(unsafe_path("climbs out with `..`")),
                Component::RootDir | Component::Prefix(_) => return Err(unsafe_path("is an absolute path")),
            }
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        let target = dest.join(&rel);
        match entry.header().entry_type() {
            tar::EntryType::Directory => {
                std::fs::create_dir_all(&target).map_err(|source| PackError::Write { path: target.clone(), source })?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let size = entry.header().size().map_err(damaged)?;
                total = total.saturating_add(size);
                if total > MAX_UNPACKED {
                    return Err(PackError::TooBig { limit: format!("{MAX_UNPACKED} bytes") });
                }
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|source| PackError::Write { path: parent.to_path_buf(), source })?;
                    // A folder made here is real; refuse one that is a link.
                    if std::fs::symlink_metadata(parent).is_ok_and(|m| !m.is_dir()) {
                        return Err(unsafe_path("lies under something that is not a folder"));
                    }
                }
                let exec = entry.header().mode().map(|m| m & 0o100 != 0).unwrap_or(false);
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                    .mode(if exec { 0o755 } else { 0o644 })
                    .open(&target)
                    .map_err(|source| PackError::Write { path: target.clone(), source })?;
                let mut limited = (&mut entry).take(size);
                let copied = io::copy(&mut limited, &mut f)
                    .map_err(|source| PackError::Write { path: target.clone(), source })?;
                if copied != size {
                    return Err(PackError::Damaged(format!("`{shown}` ends early")));
                }
                files.push(rel.to_string_lossy().to_string());
            }
            tar::EntryType::Symlink | tar::EntryType::Link => {
                return Err(unsafe_path("is a link (repository archives hold only files and folders)"));
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            tar::EntryType::GNULongName | tar::EntryType::GNULongLink => {}
            _ => return Err(unsafe_path("is a device, FIFO or other special file")),
        }
    }
    Ok(files)
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
        let files = unpack(&a, &out).unwrap();
        assert_eq!(files, vec!["p/profile.yaml".to_string(), "p/sub/run.sh".to_string()]);
        assert_eq!(std::fs::read_to_string(out.join("p/profile.yaml")).unwrap(), "id: p\n");
        assert!(std::fs::metadata(out.join("p/sub/run.sh")).unwrap().permissions().mode() & 0o100 != 0);
    }

    fn raw_tar(f: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        f(&mut b);
        let t = b.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(&t).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn traversal_absolute_and_links_are_refused_and_nothing_stays() {
        let d = tempfile::tempdir().unwrap();
        // `tar` refuses to write `..` itself; write the name into the header.
        let dotdot = raw_tar(|b| {
            let mut h = tar::Header::new_gnu();
            h.as_gnu_mut().unwrap().name[..9].copy_from_slice(b"../evil\0\0");
            h.set_size(1);
            h.set_mode(0o644);
            h.set_cksum();
            b.append(&h, &b"x"[..]).unwrap();
        });
        let out = d.path().join("a");
        let e = unpack(&dotdot, &out).unwrap_err();
        assert!(e.to_string().contains("`..`"), "{e}");
        assert!(!out.exists() && !d.path().join("evil").exists());

        let link = raw_tar(|b| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            b.append_link(&mut h, "p/link", "/etc/passwd").unwrap();
        });
        let e = unpack(&link, &d.path().join("b")).unwrap_err();
        assert!(e.to_string().contains("link"), "{e}");
        assert!(!d.path().join("b").exists());

        let abs = raw_tar(|b| {
            let mut h = tar::Header::new_gnu();
            h.as_gnu_mut().unwrap().name[..8].copy_from_slice(b"/tmp/x\0\0");
            h.set_size(1);
            h.set_mode(0o644);
            h.set_cksum();
            b.append(&h, &b"x"[..]).unwrap();
        });
        let e = unpack(&abs, &d.path().join("c")).unwrap_err();
        assert!(e.to_string().contains("absolute"), "{e}");

        assert!(matches!(unpack(b"not a gzip", &d.path().join("d")), Err(PackError::Damaged(_))));
        assert!(!d.path().join("d").exists());
    }
}
