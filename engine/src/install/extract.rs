//! Unpacking archives without writing outside the destination: members
//! with absolute paths or `..`, symlinks or hard links that lead outside,
//! and device files are refused with the member named. The caller unpacks
//! into a temporary folder and renames it into place, so an install is
//! never half extracted.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};
use thiserror::Error;

/// Archive formats engine unpacks, by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Tar,
    TarGz,
    TarXz,
    TarBz2,
    TarZst,
    Zip,
}

impl Format {
    pub const SUFFIXES: &[&str] =
        &[".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar.zst", ".tzst", ".zip"];

    pub fn of(name: &str) -> Option<Format> {
        let n = name.to_ascii_lowercase();
        let f = if n.ends_with(".tar.gz") || n.ends_with(".tgz") {
            Format::TarGz
        } else if n.ends_with(".tar.xz") || n.ends_with(".txz") {
            Format::TarXz
        } else if n.ends_with(".tar.bz2") || n.ends_with(".tbz2") {
            Format::TarBz2
        } else if n.ends_with(".tar.zst") || n.ends_with(".tzst") {
            Format::TarZst
        } else if n.ends_with(".tar") {
            Format::Tar
        } else if n.ends_with(".zip") {
            Format::Zip
        } else {
            return None;
        };
        Some(f)
    }
}

#[derive(Debug, Error)]
pub enum ExtractError {
    #[error("{archive}: member `{member}` {why}; nothing was extracted")]
    Refused { archive: String, member: String, why: String },
    #[error("{archive}: cannot extract `{member}`: {source}")]
    Write { archive: String, member: String, source: io::Error },
    #[error("{archive}: not a valid archive: {msg}")]
    Corrupt { archive: String, msg: String },
    #[error("extraction interrupted")]
    Interrupted,
}

/// The path of a member made relative and plain: refuses absolute paths and `..`.
fn member_path(p: &Path) -> Result<PathBuf, String> {
    if p.has_root() {
        return Err("has an absolute path".into());
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            Component::ParentDir => return Err("climbs out with `..`".into()),
            Component::RootDir | Component::Prefix(_) => return Err("has an absolute path".into()),
        }
    }
    Ok(out)
}

/// Whether a symlink at `link` (relative to the root) pointing at `target`
/// stays inside the root, read lexically.
fn symlink_inside(link: &Path, target: &Path) -> bool {
    if target.has_root() {
        return false;
    }
    let mut depth: i64 = link.parent().map(|p| p.components().count() as i64).unwrap_or(0);
    for c in target.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// Unpacks `archive` (named `name` in messages) into the existing folder `dest`.
pub fn extract(archive: &Path, name: &str, format: Format, dest: &Path) -> Result<(), ExtractError> {
    let corrupt = |e: &dyn std::fmt::Display| ExtractError::Corrupt { archive: name.to_string(), msg: e.to_string() };
    let f = File::open(archive).map_err(|e| corrupt(&e))?;
    let r = BufReader::with_capacity(1 << 20, f);
    let reader: Box<dyn Read> = match format {
        Format::Tar => Box::new(r),
        Format::TarGz => Box::new(flate2::read::MultiGzDecoder::new(r)),
        Format::TarXz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(r)),
        Format::TarBz2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
        Format::TarZst => Box::new(ruzstd::decoding::StreamingDecoder::new(r).map_err(|e| corrupt(&e))?),
        Format::Zip => return extract_zip(archive, name, dest),
    };
    extract_tar(reader, name, dest)
}

fn extract_tar(reader: Box<dyn Read>, name: &str, dest: &Path) -> Result<(), ExtractError> {
    let corrupt = |e: &dyn std::fmt::Display| ExtractError::Corrupt { archive: name.to_string(), msg: e.to_string() };
    let mut ar = tar::Archive::new(reader);
    ar.set_preserve_permissions(true);
    ar.set_preserve_mtime(true);
    ar.set_unpack_xattrs(false);
    ar.set_overwrite(true);
    let root = dest.canonicalize().map_err(|e| corrupt(&e))?;
    let mut links: Vec<(PathBuf, String)> = Vec::new();
    for entry in ar.entries().map_err(|e| corrupt(&e))? {
        if crate::sys::interrupt::requested() {
            return Err(ExtractError::Interrupted);
        }
        let mut entry = entry.map_err(|e| corrupt(&e))?;
        let raw: PathBuf = entry.path().map_err(|e| corrupt(&e))?.into_owned();
        let member = raw.display().to_string();
        let refuse = |why: String| ExtractError::Refused { archive: name.to_string(), member: member.clone(), why };
        let rel = member_path(&raw).map_err(refuse)?;
        let kind = entry.header().entry_type();
        use tar::EntryType as T;
        match kind {
            T::Regular | T::Continuous | T::Directory | T::GNUSparse => {}
            T::Symlink | T::Link => {
                let target: PathBuf = match entry.link_name().map_err(|e| corrupt(&e))? {
                    Some(t) => t.into_owned(),
                    None => return Err(refuse("is a link without a target".into())),
                };
                let t = target.display().to_string();
                if kind == T::Symlink {
                    if !symlink_inside(&rel, &target) {
                        return Err(refuse(format!("is a symlink to `{t}`, outside the destination")));
                    }
                    links.push((rel.clone(), member.clone()));
                } else if member_path(&target).is_err() {
                    return Err(refuse(format!("is a hard link to `{t}`, outside the destination")));
                }
            }
            T::XGlobalHeader | T::XHeader | T::GNULongName | T::GNULongLink => continue,
            T::Char | T::Block | T::Fifo => return Err(refuse("is a device or FIFO".into())),
            _ => return Err(refuse(format!("has an unsupported type ({:?})", kind))),
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        match entry.unpack_in(&root) {
            Ok(true) => {}
            Ok(false) => return Err(refuse("would be written outside the destination".into())),
            Err(e) if e.to_string().contains("outside of destination") => {
                return Err(refuse("would be written outside the destination (through a symlink)".into()));
            }
            Err(e) => {
                let source = io_source(e);
                return Err(ExtractError::Write { archive: name.to_string(), member, source });
            }
        }
    }
    check_links(&root, name, &links)
}

/// The underlying I/O error of a tar error (its message wraps the path).
fn io_source(e: io::Error) -> io::Error {
    let kind = e.kind();
    let raw = e.raw_os_error();
    let mut src: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|x| x as _);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<io::Error>()
            && io.raw_os_error().is_some()
        {
            return io::Error::from_raw_os_error(io.raw_os_error().unwrap_or(0));
        }
        src = s.source();
    }
    match raw {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(kind, e.to_string()),
    }
}

/// Every symlink, resolved now that all members exist, must lead inside `root`.
fn check_links(root: &Path, name: &str, links: &[(PathBuf, String)]) -> Result<(), ExtractError> {
    for (rel, member) in links {
        if let Ok(real) = root.join(rel).canonicalize()
            && !real.starts_with(root)
        {
            return Err(ExtractError::Refused {
                archive: name.to_string(),
                member: member.clone(),
                why: format!("is a symlink that resolves to {}, outside the destination", real.display()),
            });
        }
    }
    Ok(())
}

fn extract_zip(archive: &Path, name: &str, dest: &Path) -> Result<(), ExtractError> {
    use std::os::unix::fs::PermissionsExt;
    let corrupt = |e: &dyn std::fmt::Display| ExtractError::Corrupt { archive: name.to_string(), msg: e.to_string() };
    let f = File::open(archive).map_err(|e| corrupt(&e))?;
    let mut zip = zip::ZipArchive::new(BufReader::new(f)).map_err(|e| corrupt(&e))?;
    let root = dest.canonicalize().map_err(|e| corrupt(&e))?;
    let mut links = Vec::new();
    for i in 0..zip.len() {
        if crate::sys::interrupt::requested() {
            return Err(ExtractError::Interrupted);
        }
        let mut file = zip.by_index(i).map_err(|e| corrupt(&e))?;
        let member: String = file.name().map(Cow::into_owned).map_err(|e| corrupt(&e))?;
        let refuse = |why: String| ExtractError::Refused { archive: name.to_string(), member: member.clone(), why };
        let rel = member_path(Path::new(&member)).map_err(refuse)?;
        if file.enclosed_name().is_none() {
            return Err(refuse("would be written outside the destination".into()));
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        let out = root.join(&rel);
        let werr =
            |source: io::Error| ExtractError::Write { archive: name.to_string(), member: member.clone(), source };
        // Parents must be real folders inside the root (no planted symlink).
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(werr)?;
            let real = parent.canonicalize().map_err(werr)?;
            if !real.starts_with(&root) {
                return Err(refuse("would be written outside the destination (through a symlink)".into()));
            }
        }
        if file.is_dir() {
            std::fs::create_dir_all(&out).map_err(werr)?;
            continue;
        }
        if file.is_symlink() {
            let mut target = String::new();
            file.read_to_string(&mut target).map_err(werr)?;
            if !symlink_inside(&rel, Path::new(&target)) {
                return Err(refuse(format!("is a symlink to `{target}`, outside the destination")));
            }
            let _ = std::fs::remove_file(&out);
            std::os::unix::fs::symlink(&target, &out).map_err(werr)?;
            links.push((rel, member.clone()));
            continue;
        }
        let _ = std::fs::remove_file(&out);
        let mut w = crate::sys::fs::create_exclusive(&out).map_err(werr)?;
        io::copy(&mut file, &mut w).map_err(werr)?;
        let mode = file.unix_mode().map(|m| m & 0o777).filter(|m| *m != 0).unwrap_or(0o644);
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(mode)).map_err(werr)?;
    }
    check_links(&root, name, &links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_paths_and_symlink_targets() {
        assert_eq!(member_path(Path::new("./a/b")).unwrap(), PathBuf::from("a/b"));
        assert!(member_path(Path::new("/etc/passwd")).is_err());
        assert!(member_path(Path::new("a/../../x")).is_err());
        assert!(symlink_inside(Path::new("a/link"), Path::new("../b")));
        assert!(!symlink_inside(Path::new("a/link"), Path::new("../../b")));
        assert!(!symlink_inside(Path::new("link"), Path::new("/etc")));
        assert_eq!(Format::of("linux-6.15.tar.xz"), Some(Format::TarXz));
        assert_eq!(Format::of("x.TGZ"), Some(Format::TarGz));
        assert_eq!(Format::of("tool.bin"), None);
    }

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, data) in files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            b.append_data(&mut h, name, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    fn unpack(name: &str, bytes: &[u8]) -> Result<tempfile::TempDir, ExtractError> {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join(name);
        std::fs::write(&src, bytes).unwrap();
        let out = tempfile::tempdir().unwrap();
        extract(&src, name, Format::of(name).unwrap(), out.path())?;
        Ok(out)
    }

    #[test]
    fn every_format_unpacks() {
        use std::io::Write;
        let tar = tar_of(&[("pkg/a.txt", b"alpha"), ("pkg/sub/b.txt", b"beta")]);
        let gz = {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&tar).unwrap();
            e.finish().unwrap()
        };
        let xz = {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 1);
            e.write_all(&tar).unwrap();
            e.finish().unwrap()
        };
        let bz = {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(&tar).unwrap();
            e.finish().unwrap()
        };
        let zst = ruzstd::encoding::compress_to_vec(&tar[..], ruzstd::encoding::CompressionLevel::Fastest);
        let zip = {
            let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            z.start_file("pkg/a.txt", o).unwrap();
            z.write_all(b"alpha").unwrap();
            z.start_file("pkg/sub/b.txt", o).unwrap();
            z.write_all(b"beta").unwrap();
            z.finish().unwrap().into_inner()
        };
        for (name, bytes) in [
            ("x.tar", &tar),
            ("x.tar.gz", &gz),
            ("x.tar.xz", &xz),
            ("x.tar.bz2", &bz),
            ("x.tar.zst", &zst),
            ("x.zip", &zip),
        ] {
            let out = unpack(name, bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(std::fs::read_to_string(out.path().join("pkg/a.txt")).unwrap(), "alpha", "{name}");
            assert_eq!(std::fs::read_to_string(out.path().join("pkg/sub/b.txt")).unwrap(), "beta", "{name}");
        }
    }

    #[test]
    fn zip_members_that_escape_are_refused() {
        use std::io::Write;
        for (member, want) in [("../evil", "climbs out"), ("/abs/evil", "absolute")] {
            let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            z.start_file(member, zip::write::SimpleFileOptions::default()).unwrap();
            z.write_all(b"x").unwrap();
            let bytes = z.finish().unwrap().into_inner();
            let e = unpack("e.zip", &bytes).unwrap_err().to_string();
            assert!(e.contains(&format!("member `{member}`")) && e.contains(want), "{e}");
        }
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        z.add_symlink("etc", "/etc", zip::write::SimpleFileOptions::default()).unwrap();
        let bytes = z.finish().unwrap().into_inner();
        let e = unpack("s.zip", &bytes).unwrap_err().to_string();
        assert!(e.contains("member `etc` is a symlink to `/etc`"), "{e}");
    }

    #[test]
    fn a_symlink_chain_that_resolves_outside_is_refused() {
        // `up -> .` is inside; `out -> up/..` reads as inside but is the parent.
        let mut b = tar::Builder::new(Vec::new());
        for (name, target) in [("up", "."), ("out", "up/..")] {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
            b.append_link(&mut h, name, target).unwrap();
        }
        let bytes = b.into_inner().unwrap();
        let e = unpack("c.tar", &bytes).unwrap_err().to_string();
        assert!(e.contains("member `out` is a symlink that resolves to"), "{e}");
    }
}
