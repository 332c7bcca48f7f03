//! Series files (`monitor.json.gz` beside a test's trial logs): written
//! atomically, read with limits — a shared result's series came from
//! someone else, and a gzip bomb must not make engine allocate without bound.

use crate::model::series::{FORMAT, Series};
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use std::io::{Read, Write};
use std::path::Path;

/// The file name of a series, in its test's log folder.
pub const FILE: &str = "monitor.json.gz";

/// Most bytes a series file may hold, compressed and unpacked. A day of
/// 1 s samples of 4 devices is about 40 MB of JSON.
const MAX_PACKED: u64 = 64 << 20;
const MAX_UNPACKED: u64 = 256 << 20;

/// Writes `s` to `path`, compressed.
pub(crate) fn write(path: &Path, s: &Series) -> std::io::Result<()> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    serde_json::to_writer(&mut gz, s)?;
    gz.flush()?;
    crate::sys::fs::write_atomic(path, &gz.finish()?)
}

/// Reads the series at `path`; why not, in words a view can show.
pub fn read(path: &Path) -> Result<Series, String> {
    read_within(path, MAX_UNPACKED)
}

fn read_within(path: &Path, max_unpacked: u64) -> Result<Series, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_PACKED {
        return Err(format!("{} is larger than {} MiB", path.display(), MAX_PACKED >> 20));
    }
    let mut text = Vec::new();
    GzDecoder::new(f)
        .take(max_unpacked + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("{} is not a gzip file: {e}", path.display()))?;
    if text.len() as u64 > max_unpacked {
        return Err(format!("{} unpacks to more than {} MiB", path.display(), max_unpacked >> 20));
    }
    let s: Series = serde_json::from_slice(&text).map_err(|e| format!("{}: not a series file: {e}", path.display()))?;
    if s.format != FORMAT {
        return Err(format!("{}: format `{}`, not {FORMAT}", path.display(), crate::sys::text::one_line(&s.format)));
    }
    let n = s.t_ms.len();
    if let Some(m) = s.metrics.iter().find(|m| m.values.len() != n) {
        return Err(format!("{}: `{}` has {} values for {n} samples", path.display(), m.key(), m.values.len()));
    }
    if s.trials.iter().any(|t| t.first >= n) || s.trials.windows(2).any(|w| w[0].first >= w[1].first) {
        return Err(format!("{}: its trials do not point at its samples in order", path.display()));
    }
    Ok(s)
}

/// `rel` when it stays inside the result folder: plain names only (a
/// shared result's file is someone else's text).
pub(crate) fn inside(rel: &str) -> Option<&Path> {
    let p = Path::new(rel);
    (!rel.is_empty() && p.components().all(|c| matches!(c, std::path::Component::Normal(_)))).then_some(p)
}

/// Where the series of `test` (`profile`) for `identifier` lives in a result
/// folder: the test's log folder, as a run names it.
pub(crate) fn logs_rel(profile: &str, test: &str, identifier: &str) -> String {
    format!("logs/{}/{}-{}", super::unique_slug(identifier), super::slug(profile), crate::sys::hash::short_hash(test))
}

/// Each entry's series of `file` (read from `folder`) as an absolute path,
/// for a merge to copy; a path leaving the folder is dropped, and said.
pub(crate) fn anchor(file: &mut crate::model::result::ResultFile, folder: &Path) -> Vec<String> {
    let mut dropped = Vec::new();
    for e in file.results.iter_mut().flat_map(|r| r.entries.iter_mut()) {
        if let Some(rel) = e.monitor.take() {
            match inside(&rel) {
                Some(p) => e.monitor = Some(folder.join(p).display().to_string()),
                None => dropped
                    .push(format!("series `{}` is not inside the result folder", crate::sys::text::one_line(&rel))),
            }
        }
    }
    dropped
}

/// Copies every anchored series of `file` into `folder` (the merged
/// result's), each where a run would have put it, and points the entries
/// there; a series that cannot be copied is left out, and said. Each is
/// read and written anew, not copied as bytes: a series from another
/// machine is checked (format, limits) before it lands.
pub(crate) fn carry(file: &mut crate::model::result::ResultFile, folder: &Path) -> Vec<String> {
    let mut copied: Vec<(String, String)> = Vec::new();
    let mut missing = Vec::new();
    for r in file.results.iter_mut() {
        for e in r.entries.iter_mut() {
            let Some(from) = e.monitor.take() else { continue };
            if let Some((_, to)) = copied.iter().find(|(f, _)| *f == from) {
                e.monitor = Some(to.clone());
                continue;
            }
            let rel = format!("{}/{FILE}", logs_rel(&r.profile, &r.test, &e.identifier));
            let to = folder.join(&rel);
            let done = read(Path::new(&from)).and_then(|s| {
                to.parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| write(&to, &s))
                    .map_err(|e| format!("cannot write {}: {e}", to.display()))
            });
            match done {
                Ok(()) => {
                    copied.push((from, rel.clone()));
                    e.monitor = Some(rel);
                }
                Err(why) => missing.push(format!("series of {} for {} left out: {why}", r.test, e.identifier)),
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
            trials: vec![TrialSpan { trial: 1, start_ms: 0.0, end_ms: 1000.0, first: 0 }],
            unavailable: vec![],
            late: 0,
            thinned: 0,
        }
    }

    #[test]
    fn a_series_reads_back_and_bad_files_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(FILE);
        write(&p, &sample()).unwrap();
        assert_eq!(read(&p).unwrap(), sample());
        std::fs::write(&p, b"not gzip").unwrap();
        assert!(read(&p).unwrap_err().contains("not a gzip file"));
        let mut bad = sample();
        bad.metrics[0].values.pop();
        write(&p, &bad).unwrap();
        assert!(read(&p).unwrap_err().contains("`vda:util` has 1 values for 2 samples"));
        assert!(read(&dir.path().join("gone")).unwrap_err().starts_with("cannot read"));
        // A bomb: a small file that unpacks past the limit is refused, not read whole.
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&vec![b' '; 3 << 20]).unwrap();
        std::fs::write(&p, gz.finish().unwrap()).unwrap();
        assert!(read_within(&p, 2 << 20).unwrap_err().contains("unpacks to more than 2 MiB"));
    }
}
