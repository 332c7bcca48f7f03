//! Series files (`monitor.json.gz` beside a test's trial logs): written
//! atomically, read with limits — a shared result's series came from
//! someone else, and a gzip bomb must not make engine allocate without bound.

use crate::model::series::{FORMAT, Series};
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The file name of a series, in its test's log folder.
pub const FILE: &str = "monitor.json.gz";

/// Most bytes a series file may hold, compressed and unpacked. A day of
/// 1 s samples of 4 devices is about 40 MB of JSON.
const MAX_PACKED: u64 = 64 << 20;
const MAX_UNPACKED: u64 = 256 << 20;

/// Writes `s` to `path`, compressed.
pub(crate) fn write(path: &Path, s: &Series) -> std::io::Result<()> {
    // Serialized first, compressed in one write (flate2 zeroes its buffer's
    // spare room on each write; serde writes token by token).
    let json = serde_json::to_vec(s)?;
    let mut gz = GzEncoder::new(Vec::with_capacity(json.len() / 4), Compression::default());
    gz.write_all(&json)?;
    crate::sys::fs::write_atomic(path, &gz.finish()?)
}

/// Why a series file could not be read, in words a view can show.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    #[error("`{0}` is not a path inside the result folder")]
    Outside(String),
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{} is larger than {} MiB", path.display(), MAX_PACKED >> 20)]
    TooLarge { path: PathBuf },
    #[error("{} is not a gzip file: {source}", path.display())]
    NotGzip { path: PathBuf, source: std::io::Error },
    #[error("{} unpacks to more than {} MiB", path.display(), max >> 20)]
    Unpacks { path: PathBuf, max: u64 },
    #[error("{}: not a series file: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{}: {what}", path.display())]
    Inconsistent { path: PathBuf, what: String },
}

/// Reads the series `rel` names in result folder `folder` (no symlink is
/// followed, only a regular file is read).
pub fn read_in(folder: &Path, rel: &str) -> Result<Series, SeriesError> {
    let rel = inside(rel).ok_or_else(|| SeriesError::Outside(crate::sys::text::one_line(rel).into_owned()))?;
    let path = folder.join(rel);
    let f = crate::sys::safepath::Dir::open(folder)
        .and_then(|d| d.open_regular(rel))
        .map_err(|source| SeriesError::Read { path: path.clone(), source })?;
    decode(f, &path, MAX_UNPACKED)
}

/// The series in `f` (read from `path`), at most `max_unpacked` bytes of JSON.
fn decode(f: std::fs::File, path: &Path, max_unpacked: u64) -> Result<Series, SeriesError> {
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_PACKED {
        return Err(SeriesError::TooLarge { path: path.to_path_buf() });
    }
    let mut text = Vec::new();
    GzDecoder::new(f)
        .take(max_unpacked + 1)
        .read_to_end(&mut text)
        .map_err(|source| SeriesError::NotGzip { path: path.to_path_buf(), source })?;
    if text.len() as u64 > max_unpacked {
        return Err(SeriesError::Unpacks { path: path.to_path_buf(), max: max_unpacked });
    }
    let s: Series =
        serde_json::from_slice(&text).map_err(|source| SeriesError::Json { path: path.to_path_buf(), source })?;
    let bad = |what: String| SeriesError::Inconsistent { path: path.to_path_buf(), what };
    if s.format != FORMAT {
        return Err(bad(format!("format `{}`, not {FORMAT}", crate::sys::text::one_line(&s.format))));
    }
    let n = s.t_ms.len();
    if let Some(m) = s.metrics.iter().find(|m| m.values.len() != n) {
        let key = crate::sys::text::one_line(&m.key()).into_owned();
        return Err(bad(format!("`{key}` has {} values for {n} samples", m.values.len())));
    }
    if s.trials.iter().any(|t| t.first >= n) || s.trials.windows(2).any(|w| w[0].first >= w[1].first) {
        return Err(bad("its trials do not point at its samples in order".into()));
    }
    Ok(s)
}

/// `rel` when it stays inside the result folder: plain names only (a
/// shared result's file is someone else's text).
pub fn inside(rel: &str) -> Option<&Path> {
    let p = Path::new(rel);
    (!rel.is_empty() && p.components().all(|c| matches!(c, std::path::Component::Normal(_)))).then_some(p)
}

/// Where the series of `test` (`profile`) for `identifier` lives in a result
/// folder: the test's log folder, as a run names it.
pub fn logs_rel(profile: &str, test: &str, identifier: &str) -> String {
    format!("logs/{}/{}-{}", super::unique_slug(identifier), super::slug(profile), crate::sys::hash::name_hash(test))
}

/// The series of a merge's inputs: an entry's `monitor` holds an index
/// into this while the merge runs (never saved).
#[derive(Debug, Default)]
pub struct Sources(Vec<(std::path::PathBuf, String)>);

/// Each entry's series of `file` (read from `folder`) noted in `sources`,
/// for a merge to copy; a path leaving the folder is dropped, and said.
pub fn anchor(file: &mut crate::model::result::ResultFile, folder: &Path, sources: &mut Sources) -> Vec<String> {
    let mut dropped = Vec::new();
    for e in file.results.iter_mut().flat_map(|r| r.entries.iter_mut()) {
        let Some(rel) = e.monitor.take() else { continue };
        if inside(&rel).is_some() {
            e.monitor = Some(sources.0.len().to_string());
            sources.0.push((folder.to_path_buf(), rel));
        } else {
            dropped.push(format!("series `{}` is not inside the result folder", crate::sys::text::one_line(&rel)));
        }
    }
    dropped
}

/// Copies every anchored series of `file` into `folder` (the merged
/// result's), each where a run would have put it, and points the entries
/// there; a series that cannot be copied is left out, and said. Each is
/// read and written anew, not copied as bytes: a series from another
/// machine is checked (format, limits) before it lands.
pub fn carry(file: &mut crate::model::result::ResultFile, folder: &Path, sources: &Sources) -> Vec<String> {
    let mut copied: Vec<(String, String)> = Vec::new();
    let mut missing = Vec::new();
    for r in file.results.iter_mut() {
        for e in r.entries.iter_mut() {
            let Some(token) = e.monitor.take() else { continue };
            if let Some((_, to)) = copied.iter().find(|(t, _)| *t == token) {
                e.monitor = Some(to.clone());
                continue;
            }
            let Some((from_folder, from)) = token.parse::<usize>().ok().and_then(|i| sources.0.get(i)) else {
                continue;
            };
            let rel = format!("{}/{FILE}", logs_rel(&r.profile, &r.test, &e.identifier));
            // Folder names are one per test and identifier; never let a
            // second series land on one a first was written to.
            if copied.iter().any(|(_, r)| *r == rel) {
                missing.push(format!(
                    "series of {} for {} left out: its folder {rel} is another entry's",
                    crate::sys::text::one_line(&r.test),
                    crate::sys::text::one_line(&e.identifier)
                ));
                continue;
            }
            let to = folder.join(&rel);
            let done = read_in(from_folder, from).map_err(|e| e.to_string()).and_then(|s| {
                to.parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| write(&to, &s))
                    .map_err(|e| format!("cannot write {}: {e}", to.display()))
            });
            match done {
                Ok(()) => {
                    copied.push((token, rel.clone()));
                    e.monitor = Some(rel);
                }
                Err(why) => missing.push(format!(
                    "series of {} for {} left out: {why}",
                    crate::sys::text::one_line(&r.test),
                    crate::sys::text::one_line(&e.identifier)
                )),
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::series::{Metric, TrialSpan};

    fn sample() -> Series {
        Series {
            format: FORMAT.into(),
            interval_ms: 1000,
            t_ms: vec![0.0, 1000.0],
            metrics: vec![Metric {
                name: "util".into(),
                source: "vda".into(),
                unit: "%".into(),
                values: vec![None, Some(12.5)],
            }],
            trials: vec![TrialSpan { trial: 1, start_ms: 0.0, end_ms: 1000.0, first: 0, trials: 1 }],
            unavailable: vec![],
            late: 0,
            thinned: 0,
            workload: None,
        }
    }

    #[test]
    fn a_series_reads_back_and_bad_files_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE);
        let read = |rel: &str| read_in(dir.path(), rel).map_err(|e| e.to_string());
        write(&p, &sample()).unwrap();
        assert_eq!(read(FILE).unwrap(), sample());
        std::fs::write(&p, b"not gzip").unwrap();
        assert!(read(FILE).unwrap_err().contains("not a gzip file"));
        let mut bad = sample();
        bad.metrics[0].values.pop();
        bad.metrics[0].source = "vda\u{1b}]0;x\u{7}".into();
        write(&p, &bad).unwrap();
        let e = read(FILE).unwrap_err();
        assert!(e.contains("has 1 values for 2 samples") && !e.contains('\u{1b}'), "{e:?}");
        for (first, second) in [(2, 0), (1, 1)] {
            let mut bad = sample();
            bad.trials[0].first = first;
            bad.trials.push(TrialSpan { trial: 2, start_ms: 0.0, end_ms: 0.0, first: second, trials: 1 });
            write(&p, &bad).unwrap();
            assert!(read(FILE).unwrap_err().contains("do not point at its samples in order"), "{first} {second}");
        }
        assert!(read("gone").unwrap_err().starts_with("cannot read"));
        assert!(read("../x").unwrap_err().contains("is not a path inside the result folder"));
        // A link or a FIFO where the series should be: refused, not followed or waited on.
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        assert!(read("link").unwrap_err().starts_with("cannot read"));
        let fifo = std::ffi::CString::new(dir.path().join("fifo").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(read("fifo").unwrap_err().contains("not a regular file"));
        // A bomb: a small file that unpacks past the limit is refused, not read whole.
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&vec![b' '; 3 << 20]).unwrap();
        std::fs::write(&p, gz.finish().unwrap()).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        assert!(decode(f, &p, 2 << 20).unwrap_err().to_string().contains("unpacks to more than 2 MiB"));
    }
}
