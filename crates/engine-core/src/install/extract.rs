//! Unpacking archives without writing outside the destination, and within
//! bounds: members with absolute paths or `..`, symlinks that lead outside,
//! hard links to anything but a file unpacked before them, and devices,
//! FIFOs and sockets are refused with the member named; setuid, setgid,
//! sticky and world-write bits are dropped; and the unpacked total stops at
//! [`Limits`] (a multiple of the archive's size, and an absolute cap), so a
//! small archive cannot fill the disk. The caller unpacks into a temporary
//! folder and renames it into place, removing it on any error, so an
//! install is never half extracted.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
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
    pub(crate) const SUFFIXES: &[&str] =
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

/// Mode bits no unpacked member keeps: setuid, setgid and sticky (engine
/// runs as root; an archive must not hand out its privileges), and write
/// for others (root runs what is unpacked; no other user may change it).
const STRIPPED: u32 = 0o7002;

/// What every member costs beyond its bytes (its tar header), so millions
/// of empty files count too.
const MEMBER_COST: u64 = 512;

/// What any archive may unpack to whatever its size: the ratio only
/// matters above this.
pub(crate) const FLOOR: u64 = 8 << 20;

/// How much one archive may unpack to: at most `max_ratio` times its own
/// size (at least [`FLOOR`]) and never more than `max_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: u64,
    pub max_ratio: u64,
    /// Why the limits are what they are, or how to raise them (for the error).
    pub note: &'static str,
}

impl Limits {
    /// Profiles' downloads: large source trees fit (Debian's Linux 6.1
    /// tarball, 138 MB, unpacks to 1.36 GB in 83,731 members: 10 times its
    /// size); zeros do not.
    pub const DOWNLOADS: Limits = Limits {
        max_bytes: 4 << 30,
        max_ratio: 100,
        note: "ENGINE_DOWNLOAD_UNPACK_MAX and ENGINE_DOWNLOAD_UNPACK_RATIO raise the limits",
    };

    /// The unpacked total allowed for an archive of `size` bytes, and why.
    fn budget(&self, size: u64) -> (u64, String) {
        let by_ratio = size.saturating_mul(self.max_ratio).max(FLOOR);
        if by_ratio < self.max_bytes {
            let at_least = if by_ratio == FLOOR { format!(", at least {}", bytes(FLOOR)) } else { String::new() };
            (by_ratio, format!("{} times the archive's {}{at_least}", self.max_ratio, bytes(size)))
        } else {
            (self.max_bytes, "the most engine unpacks from one archive".into())
        }
    }
}

fn bytes(n: u64) -> String {
    crate::units::format_bytes_binary(n)
}

#[derive(Debug, Error)]
pub enum ExtractError {
    #[error("{archive}: member `{member}` {why}; nothing was extracted")]
    Refused { archive: String, member: String, why: String },
    #[error(
        "{archive}: stopped at member `{member}`: it unpacks to more than {} ({why}); nothing was extracted; {note}",
        bytes(*limit)
    )]
    TooLarge { archive: String, member: String, limit: u64, why: String, note: &'static str },
    #[error("{archive}: cannot extract `{member}`: {source}")]
    Write { archive: String, member: String, source: io::Error },
    #[error("{archive}: not a valid archive: {msg}")]
    Corrupt { archive: String, msg: String },
    #[error("extraction interrupted")]
    Interrupted,
}

/// The unpacked total so far, against the archive's budget.
struct Tally {
    archive: String,
    used: u64,
    limit: u64,
    why: String,
    note: &'static str,
}

impl Tally {
    fn new(archive: &str, size: u64, limits: &Limits) -> Tally {
        let (limit, why) = limits.budget(size);
        Tally { archive: archive.to_string(), used: 0, limit, why, note: limits.note }
    }

    fn error(&self, member: &str) -> ExtractError {
        ExtractError::TooLarge {
            archive: self.archive.clone(),
            member: member.to_string(),
            limit: self.limit,
            why: self.why.clone(),
            note: self.note,
        }
    }

    /// Counts a member of `size` bytes (rounded to tar's 512-byte blocks,
    /// plus its header) before any of it is written.
    fn add(&mut self, member: &str, size: u64) -> Result<(), ExtractError> {
        let cost = size.div_ceil(512).saturating_mul(512).saturating_add(MEMBER_COST);
        self.used = self.used.saturating_add(cost);
        if self.used > self.limit { Err(self.error(member)) } else { Ok(()) }
    }

    /// Bytes still allowed.
    fn left(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }
}

/// A decompressed tar stream cut off past its budget: what the member
/// count cannot see (long names and extension headers the tar reader holds
/// in memory) is bounded too. `hit` says the cut was the reason for an error.
struct Capped<R> {
    inner: R,
    left: u64,
    hit: Rc<Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            self.hit.set(true);
            return Err(io::Error::other("the archive unpacks to more than its limit"));
        }
        let n = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let got = self.inner.read(&mut buf[..n])?;
        self.left -= got as u64;
        Ok(got)
    }
}

/// Why a member's path cannot be extracted.
#[derive(Debug, Error)]
enum UnsafePath {
    #[error("has an absolute path")]
    Absolute,
    #[error("climbs out with `..`")]
    Climbs,
}

/// The path of a member made relative and plain: refuses absolute paths and `..`.
fn member_path(p: &Path) -> Result<PathBuf, UnsafePath> {
    if p.has_root() {
        return Err(UnsafePath::Absolute);
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            Component::ParentDir => return Err(UnsafePath::Climbs),
            Component::RootDir | Component::Prefix(_) => return Err(UnsafePath::Absolute),
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

/// Unpacks `archive` (named `name` in messages) into the existing folder
/// `dest`, within `limits`. On an error part of it may be there: the
/// caller's temporary folder goes.
pub fn extract(archive: &Path, name: &str, format: Format, dest: &Path, limits: &Limits) -> Result<(), ExtractError> {
    let corrupt = |e: &dyn std::fmt::Display| ExtractError::Corrupt { archive: name.to_string(), msg: e.to_string() };
    let f = File::open(archive).map_err(|e| corrupt(&e))?;
    let size = f.metadata().map_err(|e| corrupt(&e))?.len();
    let tally = Tally::new(name, size, limits);
    let r = BufReader::with_capacity(1 << 20, f);
    let reader: Box<dyn Read> = match format {
        Format::Tar => Box::new(r),
        Format::TarGz => Box::new(flate2::read::MultiGzDecoder::new(r)),
        Format::TarXz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(r)),
        Format::TarBz2 => Box::new(bzip2::read::MultiBzDecoder::new(r)),
        Format::TarZst => Box::new(ruzstd::decoding::StreamingDecoder::new(r).map_err(|e| corrupt(&e))?),
        Format::Zip => return extract_zip(archive, name, dest, tally),
    };
    extract_tar(reader, name, dest, tally)
}

/// What a tar archive has unpacked so far: its files (hard links may name
/// only these) and its symlinks (checked again at the end).
#[derive(Default)]
struct Seen {
    files: HashSet<PathBuf>,
    links: Vec<(PathBuf, String)>,
}

fn extract_tar(reader: Box<dyn Read>, name: &str, dest: &Path, mut tally: Tally) -> Result<(), ExtractError> {
    let corrupt = |e: &dyn std::fmt::Display| ExtractError::Corrupt { archive: name.to_string(), msg: e.to_string() };
    let hit = Rc::new(Cell::new(false));
    // The end-of-archive blocks and tar's padding are not members.
    let left = tally.limit.saturating_add(64 << 10);
    let mut ar = tar::Archive::new(Capped { inner: reader, left, hit: hit.clone() });
    ar.set_preserve_permissions(true);
    ar.set_mask(STRIPPED);
    ar.set_preserve_mtime(true);
    ar.set_unpack_xattrs(false);
    ar.set_overwrite(true);
    let root = dest.canonicalize().map_err(|e| corrupt(&e))?;
    let mut seen = Seen::default();
    let mut last = String::new();
    let r = (|| {
        for entry in ar.entries().map_err(|e| corrupt(&e))? {
            if crate::sys::interrupt::requested() {
                return Err(ExtractError::Interrupted);
            }
            let mut entry = entry.map_err(|e| corrupt(&e))?;
            tar_member(&mut entry, &root, name, &mut tally, &mut seen, &mut last)?;
        }
        Ok(())
    })();
    match r {
        Err(ExtractError::Corrupt { .. } | ExtractError::Write { .. }) if hit.get() => {
            Err(tally.error(if last.is_empty() { "(its first header)" } else { &last }))
        }
        r => r,
    }?;
    check_links(&root, name, &seen.links)
}

/// Checks and unpacks one tar member; `last` is left naming it.
fn tar_member<R: Read>(
    entry: &mut tar::Entry<R>,
    root: &Path,
    name: &str,
    tally: &mut Tally,
    seen: &mut Seen,
    last: &mut String,
) -> Result<(), ExtractError> {
    let corrupt = |e: &dyn std::fmt::Display| ExtractError::Corrupt { archive: name.to_string(), msg: e.to_string() };
    let raw: PathBuf = entry.path().map_err(|e| corrupt(&e))?.into_owned();
    let member = raw.display().to_string();
    member.clone_into(last);
    let refuse = |why: String| ExtractError::Refused { archive: name.to_string(), member: member.clone(), why };
    let rel = member_path(&raw).map_err(|u| refuse(u.to_string()))?;
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
                seen.links.push((rel.clone(), member.clone()));
            } else if !member_path(&target).is_ok_and(|t| seen.files.contains(&t)) {
                return Err(refuse(format!("is a hard link to `{t}`, which is not a file unpacked before it")));
            }
        }
        T::XGlobalHeader | T::XHeader | T::GNULongName | T::GNULongLink => return Ok(()),
        // Engine packs none, and a source tree needs none: an archive with one
        // was made by hand (or is a system image), and a silently incomplete
        // install would fail later, further from the cause.
        T::Char | T::Block | T::Fifo => {
            return Err(refuse("is a device or FIFO; engine unpacks only files, folders and links".into()));
        }
        _ => return Err(refuse(format!("has an unsupported type ({:?})", kind))),
    }
    if rel.as_os_str().is_empty() {
        return Ok(());
    }
    // A sparse member's size is the one it takes once unpacked.
    tally.add(&member, entry.size())?;
    match entry.unpack_in(root) {
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
    if matches!(kind, T::Regular | T::Continuous | T::GNUSparse) {
        seen.files.insert(rel);
    }
    Ok(())
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

fn extract_zip(archive: &Path, name: &str, dest: &Path, mut tally: Tally) -> Result<(), ExtractError> {
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
        zip_member(&mut file, &root, name, &mut tally, &mut links)?;
    }
    check_links(&root, name, &links)
}

/// The file-type bits of a Unix mode, and the types a zip member may not have.
const S_IFMT: u32 = 0o170000;
const SPECIAL: [u32; 4] = [0o020000, 0o060000, 0o010000, 0o140000];

/// Checks and unpacks one zip member.
fn zip_member<R: Read>(
    file: &mut zip::read::ZipFile<'_, R>,
    root: &Path,
    name: &str,
    tally: &mut Tally,
    links: &mut Vec<(PathBuf, String)>,
) -> Result<(), ExtractError> {
    use std::os::unix::fs::PermissionsExt;
    let corrupt = |e: &dyn std::fmt::Display| ExtractError::Corrupt { archive: name.to_string(), msg: e.to_string() };
    let member: String = file.name().map(Cow::into_owned).map_err(|e| corrupt(&e))?;
    let refuse = |why: String| ExtractError::Refused { archive: name.to_string(), member: member.clone(), why };
    let rel = member_path(Path::new(&member)).map_err(|u| refuse(u.to_string()))?;
    if file.enclosed_name().is_none() {
        return Err(refuse("would be written outside the destination".into()));
    }
    if file.unix_mode().is_some_and(|m| SPECIAL.contains(&(m & S_IFMT))) {
        return Err(refuse("is a device, FIFO or socket; engine unpacks only files, folders and links".into()));
    }
    if rel.as_os_str().is_empty() {
        return Ok(());
    }
    let out = root.join(&rel);
    let werr = |source: io::Error| ExtractError::Write { archive: name.to_string(), member: member.clone(), source };
    // Parents must be real folders inside the root (no planted symlink).
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).map_err(werr)?;
        let real = parent.canonicalize().map_err(werr)?;
        if !real.starts_with(root) {
            return Err(refuse("would be written outside the destination (through a symlink)".into()));
        }
    }
    tally.add(&member, file.size())?;
    if file.is_dir() {
        return std::fs::create_dir_all(&out).map_err(werr);
    }
    if file.is_symlink() {
        let mut target = String::new();
        (&mut *file).take(4096).read_to_string(&mut target).map_err(werr)?;
        if !symlink_inside(&rel, Path::new(&target)) {
            return Err(refuse(format!("is a symlink to `{target}`, outside the destination")));
        }
        let _ = std::fs::remove_file(&out);
        std::os::unix::fs::symlink(&target, &out).map_err(werr)?;
        links.push((rel, member.clone()));
        return Ok(());
    }
    let _ = std::fs::remove_file(&out);
    let mut w = crate::sys::fs::create_exclusive(&out).map_err(werr)?;
    // The size in the header may lie: what is written is counted too.
    let allowed = tally.left() + file.size().div_ceil(512) * 512;
    let written = io::copy(&mut (&mut *file).take(allowed + 1), &mut w).map_err(werr)?;
    if written > allowed {
        return Err(tally.error(&member));
    }
    let mode = file.unix_mode().map(|m| m & 0o777 & !STRIPPED).filter(|m| *m != 0).unwrap_or(0o644);
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(mode)).map_err(werr)
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
        unpack_within(name, bytes, &Limits::DOWNLOADS)
    }

    fn unpack_within(name: &str, bytes: &[u8], limits: &Limits) -> Result<tempfile::TempDir, ExtractError> {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join(name);
        std::fs::write(&src, bytes).unwrap();
        let out = tempfile::tempdir().unwrap();
        extract(&src, name, Format::of(name).unwrap(), out.path(), limits)?;
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

    /// A tar member of `kind` with `mode`, `size` bytes of `data` and a link target.
    fn member(b: &mut tar::Builder<Vec<u8>>, name: &str, kind: tar::EntryType, mode: u32, data: &[u8], link: &str) {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(data.len() as u64);
        if link.is_empty() {
            b.append_data(&mut h, name, data).unwrap();
        } else {
            b.append_link(&mut h, name, link).unwrap();
        }
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn mode(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn setuid_setgid_sticky_and_world_write_are_dropped() {
        use tar::EntryType as T;
        let mut b = tar::Builder::new(Vec::new());
        member(&mut b, "d", T::Directory, 0o1777, b"", "");
        member(&mut b, "d/suid", T::Regular, 0o4755, b"x", "");
        member(&mut b, "d/sgid", T::Regular, 0o2755, b"x", "");
        member(&mut b, "d/open", T::Regular, 0o666, b"x", "");
        let out = unpack("m.tar", &b.into_inner().unwrap()).unwrap();
        let o = out.path();
        assert_eq!(mode(&o.join("d")), 0o775);
        assert_eq!(mode(&o.join("d/suid")), 0o755);
        assert_eq!(mode(&o.join("d/sgid")), 0o755);
        assert_eq!(mode(&o.join("d/open")), 0o664);

        use std::io::Write;
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default().external_attributes((0o100000 | 0o6777) << 16);
        z.start_file("suid", o).unwrap();
        z.write_all(b"x").unwrap();
        let out = unpack("m.zip", &z.finish().unwrap().into_inner()).unwrap();
        assert_eq!(mode(&out.path().join("suid")), 0o775);
    }

    #[test]
    fn devices_and_fifos_are_refused() {
        use tar::EntryType as T;
        for kind in [T::Char, T::Block, T::Fifo] {
            let mut b = tar::Builder::new(Vec::new());
            member(&mut b, "ok", T::Regular, 0o644, b"x", "");
            member(&mut b, "dev", kind, 0o666, b"", "");
            let e = unpack("d.tar", &b.into_inner().unwrap()).unwrap_err().to_string();
            assert!(e.contains("member `dev` is a device or FIFO"), "{kind:?}: {e}");
        }
        // A zip says a member's type in its Unix mode: a FIFO, a socket.
        for m in [0o010644u32, 0o140644, 0o020644] {
            let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            z.start_file("p", zip::write::SimpleFileOptions::default().external_attributes(m << 16)).unwrap();
            let e = unpack("d.zip", &z.finish().unwrap().into_inner()).unwrap_err().to_string();
            assert!(e.contains("member `p` is a device, FIFO or socket"), "{m:o}: {e}");
        }
    }

    #[test]
    fn hard_links_only_to_files_unpacked_before() {
        use tar::EntryType as T;
        let mut b = tar::Builder::new(Vec::new());
        member(&mut b, "a/file", T::Regular, 0o644, b"data", "");
        member(&mut b, "b/same", T::Link, 0o644, b"", "./a/file");
        let out = unpack("h.tar", &b.into_inner().unwrap()).unwrap();
        assert_eq!(std::fs::read(out.path().join("b/same")).unwrap(), b"data");

        for (target, why) in [
            ("later", "not a file unpacked before it"),
            ("a", "not a file unpacked before it"),
            ("../../etc/passwd", "not a file unpacked before it"),
            ("/etc/passwd", "not a file unpacked before it"),
        ] {
            let mut b = tar::Builder::new(Vec::new());
            member(&mut b, "a", T::Directory, 0o755, b"", "");
            member(&mut b, "link", T::Link, 0o644, b"", target);
            member(&mut b, "later", T::Regular, 0o644, b"x", "");
            let e = unpack("h.tar", &b.into_inner().unwrap()).unwrap_err().to_string();
            assert!(e.contains(&format!("member `link` is a hard link to `{target}`")) && e.contains(why), "{e}");
        }
    }

    #[test]
    fn a_bomb_stops_at_the_ratio_or_the_cap_before_writing() {
        let limits = Limits { max_bytes: 64 << 20, max_ratio: 100, note: "the note" };
        // 16 MiB of zeros: a 16 KiB archive may unpack to 8 MiB (the floor).
        let tar = tar_of(&[("small", b"x"), ("zeros", &vec![0u8; 16 << 20])]);
        let e = unpack_within("b.tar.gz", &gz(&tar), &limits).unwrap_err();
        let s = e.to_string();
        assert!(matches!(e, ExtractError::TooLarge { limit, .. } if limit == FLOOR), "{s}");
        assert!(s.contains("stopped at member `zeros`") && s.contains("times the archive's"), "{s}");
        assert!(s.contains("at least 8.0 MiB") && s.contains("the note"), "{s}");
        // The cap, whatever the ratio allows.
        let cap = Limits { max_bytes: 1 << 20, max_ratio: 1000, note: "" };
        let tar = tar_of(&[("zeros", &vec![0u8; 2 << 20])]);
        let s = unpack_within("c.tar", &tar, &cap).unwrap_err().to_string();
        assert!(s.contains("more than 1.0 MiB (the most engine unpacks from one archive)"), "{s}");
        // A zip the same.
        use std::io::Write;
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        z.start_file("zeros", o).unwrap();
        z.write_all(&vec![0u8; 16 << 20]).unwrap();
        let s = unpack_within("b.zip", &z.finish().unwrap().into_inner(), &limits).unwrap_err().to_string();
        assert!(s.contains("stopped at member `zeros`"), "{s}");
    }

    #[test]
    fn many_empty_files_and_huge_headers_count_too() {
        let limits = Limits { max_bytes: 64 << 20, max_ratio: 10, note: "" };
        // 20,000 empty files: 20,000 headers (10 MB) from a small archive.
        let names: Vec<String> = (0..20_000).map(|i| format!("f{i}")).collect();
        let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        let e = unpack_within("e.tar.gz", &gz(&tar_of(&files)), &limits).unwrap_err();
        assert!(matches!(e, ExtractError::TooLarge { .. }), "{e}");
        // A long-name header the tar reader would hold in memory whole: 16 MiB.
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::GNULongName);
        h.set_size(16 << 20);
        h.set_cksum();
        let mut raw = h.as_bytes().to_vec();
        raw.resize(512 + (16 << 20), b'a');
        let e = unpack_within("l.tar.gz", &gz(&raw), &limits).unwrap_err();
        assert!(matches!(e, ExtractError::TooLarge { ref member, .. } if member == "(its first header)"), "{e}");
    }
}
