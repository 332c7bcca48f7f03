//! The bulk of a fleet's result, beside its `result.json`: each trial's
//! device and CPU counters (`trial_io`) and each system's captured details
//! (`systems[].details`) — two thirds of a host's bytes, which no view reads.
//! A result of [`FROM_IDENTIFIERS`] or more identifiers keeps them in
//! `bulk-<16 hex>.bin`, named by `result.json`'s `bulk`; the views load
//! `result.json` alone (lean), commands that write or export a result attach
//! the bulk. Smaller results keep everything in `result.json`.
//!
//! The file is `engine-bulk 2\n`, then one frame per identifier: the
//! identifier's length (u32 LE) and UTF-8 bytes, the payload's length (u64
//! LE), and the payload, a gzip member (its CRC checked) of the frame's JSON.
//! Frames are independent: a merge appends one per host as it reads the
//! hosts, and a damaged frame loses only its own identifier's counters.

use crate::model::facts::Identifier;
use crate::model::result::{ResultFile, TrialIo};
use crate::model::system::SystemInfo;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// From this many identifiers a saved result keeps its bulk beside it.
pub const FROM_IDENTIFIERS: usize = 30;

/// Version 2 groups the results of a test whose counters are the same
/// (all of them, as every result of a trial shares its counters); version
/// 1 files (one result per counters) still load.
const MAGIC: &[u8] = b"engine-bulk 2\n";
const MAGIC_1: &[u8] = b"engine-bulk 1\n";
/// Starts each frame of version 2: after damage, reading resumes at the
/// next one (a false match inside a payload fails its length, CRC or
/// identifier checks).
const FRAME: &[u8] = b"\xebBF\x02";
/// A bulk file is read whole (an export or an edit); past this it is damage.
const MAX_FILE: u64 = 16 << 30;
/// An identifier longer than this is damage, not a name.
const MAX_ID: u32 = 4096;
/// A frame's JSON is one host's counters: a few hundred KiB.
const MAX_FRAME: u64 = 256 << 20;

/// One identifier's bulk.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Frame {
    pub identifier: Identifier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<SystemInfo>,
    /// (test, the result ids, their entries' counters).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trial_io: Vec<(String, ResultIds, Vec<TrialIo>)>,
}

/// The results of one test that share counters: a list (version 2) or one
/// id (version 1).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResultIds {
    One(String),
    Many(Vec<String>),
}

impl ResultIds {
    fn into_vec(self) -> Vec<String> {
        match self {
            ResultIds::One(id) => vec![id],
            ResultIds::Many(ids) => ids,
        }
    }
}

/// Whether `name` is what engine names a bulk file (nothing else is opened:
/// the name comes from a file on disk).
pub(crate) fn is_bulk_name(name: &str) -> bool {
    name.len() == 25
        && name.starts_with("bulk-")
        && name.ends_with(".bin")
        && name[5..21].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Moves every identifier's counters and details out of `f`, one frame per
/// system (an identifier with neither still gets its frame, so a missing
/// frame means damage).
pub fn split(f: &mut ResultFile) -> Vec<Frame> {
    let mut at: HashMap<Identifier, usize> = HashMap::new();
    let mut frames: Vec<Frame> = Vec::with_capacity(f.systems.len());
    for s in &mut f.systems {
        at.insert(s.identifier.clone(), frames.len());
        frames.push(Frame { identifier: s.identifier.clone(), details: s.details.take(), trial_io: Vec::new() });
    }
    for r in &mut f.results {
        for e in &mut r.entries {
            if e.trial_io.is_empty() {
                continue;
            }
            let i = *at.entry(e.identifier.clone()).or_insert_with(|| {
                frames.push(Frame { identifier: e.identifier.clone(), ..Frame::default() });
                frames.len() - 1
            });
            let io = std::mem::take(&mut e.trial_io);
            match frames[i].trial_io.last_mut() {
                // The test's previous result had these counters: named with it.
                Some((test, ResultIds::Many(ids), last)) if *test == r.test && *last == io => {
                    ids.push(r.result.clone());
                }
                _ => frames[i].trial_io.push((r.test.clone(), ResultIds::Many(vec![r.result.clone()]), io)),
            }
        }
    }
    frames
}

/// Puts frames back into `f`: details on their system, counters on their
/// entry. Frames of identifiers or tests `f` no longer has are dropped.
pub fn restore(f: &mut ResultFile, frames: impl IntoIterator<Item = Frame>) {
    let systems: HashMap<Identifier, usize> =
        f.systems.iter().enumerate().map(|(i, s)| (s.identifier.clone(), i)).collect();
    let results: HashMap<(String, String), usize> =
        f.results.iter().enumerate().map(|(i, r)| ((r.test.clone(), r.result.clone()), i)).collect();
    let mut entries: HashMap<usize, HashMap<Identifier, usize>> = HashMap::new();
    for frame in frames {
        if let Some(&s) = systems.get(&frame.identifier) {
            f.systems[s].details = frame.details.or(f.systems[s].details.take());
        }
        for (test, ids, io) in frame.trial_io {
            let mut key = (test, String::new());
            for result in ids.into_vec() {
                key.1 = result;
                let Some(&r) = results.get(&key) else { continue };
                let by_id = entries.entry(r).or_insert_with(|| {
                    f.results[r].entries.iter().enumerate().map(|(i, e)| (e.identifier.clone(), i)).collect()
                });
                if let Some(&e) = by_id.get(&frame.identifier) {
                    f.results[r].entries[e].trial_io = io.clone();
                }
            }
        }
    }
}

/// Appends frames to a new bulk file in a result's folder; [`Writer::finish`]
/// gives it its name, the temporary file is removed if it is dropped.
pub struct Writer {
    out: BufWriter<tempfile::NamedTempFile>,
    dir: PathBuf,
}

impl Writer {
    pub fn create(dir: &Path) -> io::Result<Writer> {
        let tmp = tempfile::Builder::new().prefix(&crate::sys::fs::temp_prefix()).tempfile_in(dir)?;
        let mut out = BufWriter::with_capacity(1 << 20, tmp);
        out.write_all(MAGIC)?;
        Ok(Writer { out, dir: dir.to_path_buf() })
    }

    pub(crate) fn frame(&mut self, frame: &Frame) -> io::Result<()> {
        self.out.write_all(&encode(frame)?)
    }

    /// Appends a frame [`encode`] made (on another thread).
    pub(crate) fn encoded(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    /// Syncs the file and names it `bulk-<16 hex>.bin`; returns the name.
    pub fn finish(self) -> io::Result<String> {
        use std::os::unix::fs::PermissionsExt;
        let tmp = self.out.into_inner().map_err(|e| e.into_error())?;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
        tmp.as_file().sync_all()?;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let name = format!("bulk-{:016x}.bin", (nanos as u64) ^ (u64::from(std::process::id()) << 40));
        tmp.persist_noclobber(self.dir.join(&name)).map_err(|e| e.error)?;
        Ok(name)
    }

    /// The frames written so far, read back (a merge that ends small keeps
    /// everything in `result.json`).
    pub fn read_back(mut self) -> io::Result<(Vec<Frame>, Vec<String>)> {
        self.out.flush()?;
        let tmp = self.out.into_inner().map_err(|e| e.into_error())?;
        let mut missing = Vec::new();
        let frames = read_from(tmp.reopen()?, &tmp.path().display().to_string(), &mut missing);
        Ok((frames, missing))
    }
}

/// A frame as the file holds it: header and compressed payload.
pub fn encode(frame: &Frame) -> io::Result<Vec<u8>> {
    // Serialized first, compressed in one write: flate2 zeroes its output
    // buffer's spare room on every write, and serde writes token by token
    // (that was 60 % of a merge's time).
    let json = serde_json::to_vec(frame).map_err(io::Error::other)?;
    let id = frame.identifier.as_bytes();
    let header = FRAME.len() + 12 + id.len();
    let mut out = Vec::with_capacity(header + json.len() / 4);
    out.extend_from_slice(FRAME);
    out.extend_from_slice(&(id.len() as u32).to_le_bytes());
    out.extend_from_slice(id);
    out.extend_from_slice(&[0; 8]);
    let mut gz = GzEncoder::new(out, Compression::fast());
    gz.write_all(&json)?;
    let mut out = gz.finish()?;
    let len = (out.len() - header) as u64;
    out[header - 8..header].copy_from_slice(&len.to_le_bytes());
    Ok(out)
}

/// Writes `frames` as result `dir`'s bulk file; returns its name.
pub(crate) fn write(dir: &Path, frames: &[Frame]) -> io::Result<String> {
    let mut w = Writer::create(dir)?;
    for f in frames {
        w.frame(f)?;
    }
    w.finish()
}

/// Reads bulk file `name` of the result in `dir` into `f` (whose `bulk`
/// names it). Returns what could not be read, one line each; the rest is
/// attached.
pub(crate) fn attach(dir: &Path, name: &str, f: &mut ResultFile) -> Vec<String> {
    let mut said = Vec::new();
    if !is_bulk_name(name) {
        said.push(format!(
            "`bulk` names {}, which is not a bulk file's name: the trial counters and system details are not loaded",
            crate::model::names::shown(name)
        ));
        return said;
    }
    let path = dir.join(name);
    // A regular file of the folder's own: a link or a FIFO put there is
    // refused, never followed or waited on.
    let frames = match crate::sys::safepath::open_regular_in(dir, Path::new(name)) {
        Ok(file) => read_from(file, &path.display().to_string(), &mut said),
        Err(e) => {
            said.push(format!("{}: {e}: the trial counters and system details are not loaded", path.display()));
            return said;
        }
    };
    let mut seen: std::collections::HashSet<Identifier> = frames.iter().map(|fr| fr.identifier.clone()).collect();
    restore(f, frames);
    let lost: Vec<&str> =
        f.systems.iter().map(|s| s.identifier.as_str()).filter(|id| !seen.remove(*id)).collect::<Vec<_>>();
    if !lost.is_empty() && said.is_empty() {
        said.push(format!("{} has no frame for {}", path.display(), list(&lost)));
    } else if !lost.is_empty() {
        said.push(format!("the trial counters and system details of {} are not loaded", list(&lost)));
    }
    said
}

/// `n identifier(s) (a, b, c, …)`.
fn list(ids: &[&str]) -> String {
    let shown: Vec<String> = ids.iter().take(3).map(|i| crate::model::names::shown(i)).collect();
    let more = if ids.len() > 3 { ", …" } else { "" };
    format!("{} identifier(s) ({}{more})", ids.len(), shown.join(", "))
}

/// Every good frame of a bulk file; damage is said in `said` (a damaged
/// frame is skipped; in version 2 reading resumes at the next frame, in
/// version 1 it stops where the framing is lost).
fn read_from(mut file: File, shown: &str, said: &mut Vec<String>) -> Vec<Frame> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    let read = if size > MAX_FILE {
        Err(format!("{size} bytes, over {MAX_FILE}"))
    } else {
        file.read_to_end(&mut bytes).map_err(|e| e.to_string())
    };
    if let Err(e) = read {
        said.push(format!("{shown}: {e}: the trial counters and system details are not loaded"));
        return Vec::new();
    }
    let v2 = bytes.starts_with(MAGIC);
    if !v2 && !bytes.starts_with(MAGIC_1) {
        said.push(format!("{shown} is not a bulk file (its first bytes are not `engine-bulk 1` or `2`)"));
        return Vec::new();
    }
    let mut frames = Vec::new();
    let mut at = MAGIC.len();
    while at < bytes.len() {
        let damage = match frame_at(&bytes[at..], v2) {
            Ok((len, Ok(frame))) => {
                at += len;
                frames.push(frame);
                continue;
            }
            Ok((len, Err(why))) if !v2 => {
                at += len;
                said.push(format!("{shown}: {why}"));
                continue;
            }
            Ok((_, Err(why))) => {
                said.push(format!("{shown}: {why}"));
                None
            }
            Err(why) => Some(why),
        };
        let next = if v2 { bytes[at + 1..].windows(FRAME.len()).position(|w| w == FRAME) } else { None };
        match (damage, next) {
            (damage, Some(n)) => {
                let resumed = at + 1 + n;
                if let Some(why) = damage {
                    said.push(format!("{shown} is damaged at byte {at}: {why}; reading resumes at byte {resumed}"));
                }
                at = resumed;
            }
            (Some(why), None) => {
                said.push(format!("{shown} is damaged at byte {at}: {why}; the frames after it are not read"));
                break;
            }
            (None, None) => break,
        }
    }
    frames
}

fn le_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().expect("4 bytes"))
}

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

/// Why the framing of a bulk file breaks at some byte.
#[derive(Debug, thiserror::Error)]
enum Broken {
    #[error("no frame starts there")]
    NoFrame,
    #[error("it ends inside a frame's header")]
    InHeader,
    #[error("an identifier of {0} bytes")]
    LongIdentifier(u32),
    #[error("it ends inside an identifier")]
    InIdentifier,
    /// The identifier shown escaped.
    #[error("the frame of {id} claims {len} bytes, more than the file holds")]
    Overlong { id: String, len: u64 },
}

/// Why one well-framed frame's payload is not loaded (identifiers shown
/// escaped).
#[derive(Debug, thiserror::Error)]
enum Unreadable {
    #[error("the frame of {id} is damaged ({source}): its trial counters and system details are not loaded")]
    Damaged { id: String, source: serde_json::Error },
    #[error("a frame headed {id} holds {holds}: not loaded")]
    Mismatch { id: String, holds: String },
}

/// The frame at the start of `b`: its length in the file and the frame
/// (or why its payload is unreadable); `Err` when the framing is broken.
fn frame_at(b: &[u8], v2: bool) -> Result<(usize, Result<Frame, Unreadable>), Broken> {
    let mut p = 0;
    if v2 {
        if !b.starts_with(FRAME) {
            return Err(Broken::NoFrame);
        }
        p = FRAME.len();
    }
    let id_len = b.get(p..p + 4).map(le_u32).ok_or(Broken::InHeader)?;
    if id_len > MAX_ID {
        return Err(Broken::LongIdentifier(id_len));
    }
    let id_end = p + 4 + id_len as usize;
    let id = b.get(p + 4..id_end).ok_or(Broken::InIdentifier)?;
    let id = String::from_utf8_lossy(id).into_owned();
    let len = b.get(id_end..id_end + 8).map(le_u64).ok_or(Broken::InHeader)?;
    let header = id_end + 8;
    let shown = || crate::model::names::shown(&id);
    if len > (b.len() - header) as u64 {
        return Err(Broken::Overlong { id: shown(), len });
    }
    let payload = &b[header..header + len as usize];
    let decoded = GzDecoder::new(payload).take(MAX_FRAME);
    let frame = serde_json::from_reader::<_, Frame>(decoded)
        .map_err(|source| Unreadable::Damaged { id: shown(), source })
        .and_then(|fr| match fr.identifier == id {
            true => Ok(fr),
            false => Err(Unreadable::Mismatch { id: shown(), holds: crate::model::names::shown(&fr.identifier) }),
        });
    Ok((header + len as usize, frame))
}

/// Removes bulk files in `dir` other than `keep` (the current one and the
/// backup's), and leftovers of killed writers are removed by the store's
/// temp sweep.
pub(crate) fn prune(dir: &Path, keep: &[Option<&str>]) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if is_bulk_name(&name) && !keep.contains(&Some(name.as_str())) && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::{DeviceIo, ResultEntry, System, TestResult};

    fn fleet(n: usize) -> ResultFile {
        let mut f = ResultFile::new("fleet");
        for i in 0..n {
            f.systems.push(System {
                identifier: format!("host-{i}").into(),
                details: Some(SystemInfo::default()),
                ..Default::default()
            });
        }
        let mut r = TestResult::sample("t1", "r");
        for i in 0..n {
            let mut e =
                ResultEntry::from_trials(&format!("host-{i}"), vec![1.0, 2.0], None, vec![], String::new().into())
                    .unwrap();
            e.trial_io = vec![
                TrialIo {
                    devices: vec![DeviceIo { device: "sda".into(), read_bytes: i as u64, ..Default::default() }],
                    user_seconds: 0.5,
                    ..Default::default()
                };
                2
            ];
            r.entries.push(e);
        }
        // A second result of the test shares its trials' counters; another
        // test has its own.
        let r2 = TestResult { result: "r2".into(), ..r.clone() };
        let mut t2 = TestResult { test: "t2".into(), ..r.clone() };
        t2.entries.iter_mut().for_each(|e| e.trial_io[0].user_seconds = 0.25);
        f.results.extend([r, r2, t2]);
        f
    }

    #[test]
    fn results_that_share_their_trials_counters_share_one_copy() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = fleet(3);
        let before = serde_json::to_string(&f).unwrap();
        let frames = split(&mut f);
        let groups: Vec<(&str, &ResultIds)> = frames[1].trial_io.iter().map(|(t, ids, _)| (t.as_str(), ids)).collect();
        let many = |ids: &[&str]| ResultIds::Many(ids.iter().map(|s| s.to_string()).collect());
        assert_eq!(groups, [("t1", &many(&["r", "r2"])), ("t2", &many(&["r"]))]);
        // Version 1 (one result id per counters, as a string) still loads.
        let v1: Vec<Frame> = frames
            .iter()
            .map(|fr| Frame {
                identifier: fr.identifier.clone(),
                details: fr.details.clone(),
                trial_io: fr
                    .trial_io
                    .iter()
                    .flat_map(|(t, ids, io)| match ids {
                        ResultIds::Many(ids) => {
                            ids.iter().map(|id| (t.clone(), ResultIds::One(id.clone()), io.clone()))
                        }
                        ResultIds::One(_) => unreachable!("split writes lists"),
                    })
                    .collect(),
            })
            .collect();
        let mut bytes = MAGIC_1.to_vec();
        // A version 1 frame is a version 2 frame without its start mark.
        v1.iter().for_each(|fr| bytes.extend(&encode(fr).unwrap()[FRAME.len()..]));
        std::fs::write(dir.path().join("bulk-00000000000000aa.bin"), bytes).unwrap();
        let said = attach(dir.path(), "bulk-00000000000000aa.bin", &mut f);
        assert!(said.is_empty(), "{said:?}");
        assert_eq!(serde_json::to_string(&f).unwrap(), before);
    }

    #[test]
    fn the_bulk_goes_out_and_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = fleet(40);
        let before = serde_json::to_string(&f).unwrap();
        let frames = split(&mut f);
        assert_eq!(frames.len(), 40);
        assert!(
            f.results[0].entries.iter().all(|e| e.trial_io.is_empty()) && f.systems.iter().all(|s| s.details.is_none())
        );
        let name = write(dir.path(), &frames).unwrap();
        assert!(is_bulk_name(&name), "{name}");
        let said = attach(dir.path(), &name, &mut f);
        assert!(said.is_empty(), "{said:?}");
        assert_eq!(serde_json::to_string(&f).unwrap(), before);
    }

    #[test]
    fn a_damaged_or_cut_bulk_file_loads_what_it_can_and_says_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = fleet(5);
        let frames = split(&mut f);
        let name = write(dir.path(), &frames).unwrap();
        let path = dir.path().join(&name);
        let good = std::fs::read(&path).unwrap();
        // A flipped byte inside the third frame's payload: only host-2 is lost.
        let third = MAGIC.len() + (0..2).map(|i| frame_len(&good, i)).sum::<usize>();
        let mut bad = good.clone();
        bad[third + 16 + 6 + 20] ^= 0xff;
        std::fs::write(&path, &bad).unwrap();
        let mut g = f.clone();
        let said = attach(dir.path(), &name, &mut g);
        let lost: Vec<&str> =
            g.results[0].entries.iter().filter(|e| e.trial_io.is_empty()).map(|e| e.identifier.as_str()).collect();
        assert_eq!(lost, ["host-2"]);
        assert!(
            said[0].contains("the frame of host-2 is damaged") && said[1].contains("1 identifier(s) (host-2)"),
            "{said:?}"
        );
        // A header's lengths broken: only that frame is lost, reading
        // resumes at the next frame.
        let mut bad = good.clone();
        bad[third + 4..third + 8].copy_from_slice(&[0xff; 4]);
        std::fs::write(&path, &bad).unwrap();
        let mut g = f.clone();
        let said = attach(dir.path(), &name, &mut g);
        let lost: Vec<&str> =
            g.results[0].entries.iter().filter(|e| e.trial_io.is_empty()).map(|e| e.identifier.as_str()).collect();
        assert_eq!(lost, ["host-2"], "{said:?}");
        assert!(said[0].contains("an identifier of 4294967295 bytes; reading resumes at byte"), "{said:?}");
        // Cut in the middle of the fourth frame: the first three load.
        let fourth = third + frame_len(&good, 2);
        std::fs::write(&path, &good[..fourth + 30]).unwrap();
        let mut g = f.clone();
        let said = attach(dir.path(), &name, &mut g);
        assert_eq!(g.results[0].entries.iter().filter(|e| !e.trial_io.is_empty()).count(), 3);
        assert!(said.iter().any(|s| s.contains("2 identifier(s) (host-3, host-4)")), "{said:?}");
        // A name that is not a bulk file's, a link, a missing file: nothing opened, said.
        assert!(attach(dir.path(), "../../etc/passwd", &mut f.clone())[0].contains("not a bulk file's name"));
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("bulk-00000000000000aa.bin")).unwrap();
        assert!(attach(dir.path(), "bulk-00000000000000aa.bin", &mut f.clone())[0].contains("not loaded"));
    }

    /// Bytes of frame `i` (from 0) in a bulk file.
    fn frame_len(bytes: &[u8], i: usize) -> usize {
        let mut at = MAGIC.len();
        let mut len = 0;
        for _ in 0..=i {
            let id = le_u32(&bytes[at + 4..at + 8]) as usize;
            let pl = le_u64(&bytes[at + 8 + id..at + 16 + id]) as usize;
            len = 16 + id + pl;
            at += len;
        }
        len
    }
}
