//! `engine repo publish DIR --out OUT --key SECRET`: packs every profile
//! folder (`DIR/test-profiles/<id>/`), suite (`DIR/suites/<id>.yaml`) and
//! result (`DIR/results/<name>/result.json`, and `--result NAME` from the
//! result store) reproducibly, adds what is new to OUT's index (versions
//! already published stay: a repository is a history), and writes and
//! signs the index. A version already published with other content is
//! refused: users who synced it would otherwise hold two different things
//! under one name.

use super::RepoError;
use super::index::{
    self, Archive, Index, ProfileEntry, ProfileVersion, ResultEntry, ResultVersion, SuiteEntry, SuiteVersion,
};
use super::pack;
use super::sign::SecretKey;
use crate::sys::fs::write_atomic;
use crate::sys::hash::sha256_hex;
use std::path::{Path, PathBuf};

/// The trusted comment of every index signature.
pub const TRUSTED_COMMENT: &str = "engine repository index";

/// What publishing did to one version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Added,
    /// Published before with the same content.
    Unchanged,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so `{:9}` aligns the report's column.
        f.pad(match self {
            Status::Added => "added",
            Status::Unchanged => "unchanged",
        })
    }
}

/// One line of what publishing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub what: String,
    pub status: Status,
}

pub struct Options<'a> {
    pub dir: &'a Path,
    pub out: &'a Path,
    pub key: &'a SecretKey,
    /// Extra result files (path, name).
    pub results: Vec<(PathBuf, String)>,
    pub title: Option<String>,
    /// Generic package names the profiles may use.
    pub packages: &'a crate::install::packages::Catalog,
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), RepoError> {
    write_atomic(path, bytes).map_err(|source| RepoError::Write { path: path.to_path_buf(), source })
}

fn sorted_children(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    v.sort();
    v
}

/// Writes `bytes` to OUT/`rel` unless an identical file is there.
fn put(out: &Path, rel: &str, bytes: &[u8]) -> Result<(), RepoError> {
    let p = out.join(rel);
    if std::fs::read(&p).is_ok_and(|b| b == bytes) {
        return Ok(());
    }
    write(&p, bytes)
}

fn archive_for(rel: String, bytes: &[u8]) -> Archive {
    Archive { path: rel, sha256: sha256_hex(bytes), size: bytes.len() as u64 }
}

/// An entry of one of the index's lists (profiles, suites, results): a
/// name and its published versions.
trait Entry {
    type Version: Published;
    fn named(name: &str) -> Self;
    fn name(&self) -> &str;
    fn versions(&mut self) -> &mut Vec<Self::Version>;
}

/// A published version: its version string and its archive.
trait Published {
    fn version(&self) -> &str;
    fn archive(&self) -> &Archive;
}

macro_rules! entry {
    ($entry:ty, $version:ty, $name:ident) => {
        impl Entry for $entry {
            type Version = $version;
            fn named(name: &str) -> Self {
                Self { $name: name.to_string(), versions: Vec::new() }
            }
            fn name(&self) -> &str {
                &self.$name
            }
            fn versions(&mut self) -> &mut Vec<$version> {
                &mut self.versions
            }
        }
        impl Published for $version {
            fn version(&self) -> &str {
                &self.version
            }
            fn archive(&self) -> &Archive {
                &self.archive
            }
        }
    };
}

entry!(ProfileEntry, ProfileVersion, id);
entry!(SuiteEntry, SuiteVersion, id);
entry!(ResultEntry, ResultVersion, name);

/// The versions of the entry `name` in `list`, the entry added when the
/// list has none: the one insert-or-update of the index.
fn versions_of<'a, E: Entry>(list: &'a mut Vec<E>, name: &str) -> &'a mut Vec<E::Version> {
    let i = match list.iter().position(|e| e.name() == name) {
        Some(i) => i,
        None => {
            list.push(E::named(name));
            list.len() - 1
        }
    };
    list[i].versions()
}

/// Adds version `v` of `what`, packed to `bytes` at `rel`, unless that
/// version is published: unchanged with the same archive, refused (with
/// `conflict`'s message) with another.
fn add_version<V: Published>(
    o: &Options,
    versions: &mut Vec<V>,
    v: V,
    (rel, bytes): (&str, &[u8]),
    what: String,
    conflict: impl FnOnce(&V) -> String,
) -> Result<Change, RepoError> {
    match versions.iter().find(|x| x.version() == v.version()) {
        Some(old) if old.archive().sha256 == v.archive().sha256 => Ok(Change { what, status: Status::Unchanged }),
        Some(old) => Err(RepoError::Publish(conflict(old))),
        None => {
            put(o.out, rel, bytes)?;
            versions.push(v);
            Ok(Change { what, status: Status::Added })
        }
    }
}

/// Sorts a list by name and each entry's versions oldest first.
fn sort_entries<E: Entry>(list: &mut [E]) {
    list.sort_by(|a, b| a.name().cmp(b.name()));
    for e in list {
        e.versions().sort_by(|a, b| crate::model::version::compare(a.version(), b.version()));
    }
}

/// OUT's index, or a new one when there is none.
fn read_index(out: &Path) -> Result<Index, RepoError> {
    let path = out.join("index.json");
    match std::fs::read(&path) {
        Ok(b) => Ok(index::parse(&b, &path.display().to_string())?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index { format: index::FORMAT, ..Default::default() }),
        Err(e) => Err(RepoError::Read { path, msg: e.to_string() }),
    }
}

/// Publishes; returns what changed.
pub fn publish(o: &Options) -> Result<Vec<Change>, RepoError> {
    let mut index = read_index(o.out)?;
    if let Some(t) = &o.title {
        index.title = t.clone();
    }
    let engine = super::engine_version().to_string();
    let mut changes = Vec::new();
    let profiles = publish_profiles(o, &mut index, &engine, &mut changes)?;
    let suites = publish_suites(o, &mut index, &engine, &mut changes)?;
    let results = publish_results(o, &mut index, &engine, &mut changes)?;
    if !(profiles || suites || results) {
        return Err(RepoError::Publish(format!(
            "{} holds no `test-profiles/<id>/profile.yaml`, `suites/<id>.yaml` nor `results/<name>/result.json`",
            o.dir.display()
        )));
    }
    sort_entries(&mut index.profiles);
    sort_entries(&mut index.suites);
    sort_entries(&mut index.results);
    write_signed(o, &index)?;
    Ok(changes)
}

/// Each `test-profiles/<id>/` folder, which must load and validate.
/// Returns whether there was one.
fn publish_profiles(
    o: &Options,
    index: &mut Index,
    engine: &str,
    changes: &mut Vec<Change>,
) -> Result<bool, RepoError> {
    let mut found = false;
    for folder in sorted_children(&o.dir.join("test-profiles")) {
        if !folder.join("profile.yaml").is_file() {
            continue;
        }
        found = true;
        let lp = crate::profile::load::profile_from_path(&folder, o.packages)
            .map_err(|e| RepoError::Publish(e.to_string()))?;
        let p = &lp.profile;
        let bytes = pack::pack_dir(&folder, &p.id)
            .map_err(|source| RepoError::Pack { what: folder.display().to_string(), source })?;
        let rel = format!("profiles/{id}/{id}-{v}.tar.gz", id = p.id, v = p.version);
        let a = archive_for(rel.clone(), &bytes);
        let mut programs: Vec<String> = p.executor.programs();
        programs.extend(p.requirements.programs.iter().map(|r| r.name.clone()));
        programs.sort();
        programs.dedup();
        let v = ProfileVersion {
            version: p.version.clone(),
            title: p.title.clone(),
            test_type: format!("{:?}", p.test_type).to_lowercase(),
            executor: p.executor.kind().to_string(),
            programs,
            archive: a.clone(),
            engine: engine.to_string(),
        };
        let what = format!("profile {}@{}", p.id, p.version);
        let versions = versions_of(&mut index.profiles, &p.id);
        changes.push(add_version(o, versions, v, (&rel, &bytes), what.clone(), |old| {
            format!(
                "{what} is already published with other content (sha256 {}; this folder packs to {}): \
                 bump `version:` in {}",
                old.archive.sha256, a.sha256, lp.display
            )
        })?);
    }
    Ok(found)
}

/// Each `suites/<id>.yaml`, at its `version:` (else 1.0.0). Returns whether there was one.
fn publish_suites(o: &Options, index: &mut Index, engine: &str, changes: &mut Vec<Change>) -> Result<bool, RepoError> {
    let mut found = false;
    for file in sorted_children(&o.dir.join("suites")) {
        if file.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        found = true;
        let s = crate::profile::load::suite_from_path(&file).map_err(|e| RepoError::Publish(e.to_string()))?;
        let version = s.suite.version.clone().unwrap_or_else(|| "1.0.0".to_string());
        // What every user's `repo add` would refuse is refused here, where it can be fixed.
        if !crate::profile::validate::is_valid_id(&s.id) || crate::model::names::check(&version).is_err() {
            return Err(RepoError::Publish(format!(
                "{}: `{}@{}` cannot be published: a suite's file name is its id (lower-case letters, digits, \
                 `-` and `_`) and its version a name of at most 100 bytes",
                file.display(),
                crate::model::names::shown(&s.id),
                crate::model::names::shown(&version)
            )));
        }
        let text = std::fs::read(&file).map_err(|e| RepoError::Read { path: file.clone(), msg: e.to_string() })?;
        let bytes = pack::pack(&[], &[pack::Item { path: format!("{}.yaml", s.id), bytes: text, executable: false }])
            .map_err(|source| RepoError::Pack { what: file.display().to_string(), source })?;
        let rel = format!("suites/{id}/{id}-{version}.tar.gz", id = s.id);
        let v = SuiteVersion {
            version: version.clone(),
            title: s.suite.title.clone(),
            tests: s.suite.tests.len(),
            archive: archive_for(rel.clone(), &bytes),
            engine: engine.to_string(),
        };
        let what = format!("suite {}@{version}", s.id);
        let versions = versions_of(&mut index.suites, &s.id);
        changes.push(add_version(o, versions, v, (&rel, &bytes), what.clone(), |old| {
            format!(
                "{what} is already published with other content (sha256 {}): add or bump `version:` in {}",
                old.archive.sha256,
                file.display()
            )
        })?);
    }
    Ok(found)
}

/// Each `results/<name>/result.json` and `--result`: a new version
/// whenever the file changed. Returns whether there was one.
fn publish_results(o: &Options, index: &mut Index, engine: &str, changes: &mut Vec<Change>) -> Result<bool, RepoError> {
    let mut results: Vec<(PathBuf, String)> = Vec::new();
    for d in sorted_children(&o.dir.join("results")) {
        if d.join("result.json").is_file() {
            let name = d.file_name().unwrap_or_default().to_string_lossy().to_string();
            results.push((d.join("result.json"), name));
        }
    }
    results.extend(o.results.iter().cloned());
    let found = !results.is_empty();
    for (path, name) in results {
        crate::store::check_name(&name).map_err(|e| RepoError::Publish(e.to_string()))?;
        let file = crate::store::load_file(&path).map_err(|e| RepoError::Publish(e.to_string()))?;
        let bytes = std::fs::read(&path).map_err(|e| RepoError::Read { path: path.clone(), msg: e.to_string() })?;
        let packed = pack::pack(&[], &[pack::Item { path: "result.json".into(), bytes, executable: false }])
            .map_err(|source| RepoError::Pack { what: path.display().to_string(), source })?;
        let sha = sha256_hex(&packed);
        let versions = versions_of(&mut index.results, &name);
        let latest = crate::model::version::newest(versions, |v| v.version.as_str(), None);
        if let Some(l) = latest.filter(|l| l.archive.sha256 == sha) {
            changes.push(Change { what: format!("result {name}@{}", l.version), status: Status::Unchanged });
            continue;
        }
        let n = versions.iter().filter_map(|v| semver::Version::parse(&v.version).ok()).map(|v| v.major).max();
        let version = format!("{}.0.0", n.map(|n| n + 1).unwrap_or(1));
        let rel = format!("results/{name}/{name}-{version}.tar.gz");
        put(o.out, &rel, &packed)?;
        versions.push(ResultVersion {
            version: version.clone(),
            title: file.title.clone(),
            identifiers: file.systems.iter().map(|s| s.identifier.to_string()).collect(),
            results: file.results.len(),
            archive: archive_for(rel, &packed),
            engine: engine.to_string(),
        });
        changes.push(Change { what: format!("result {name}@{version}"), status: Status::Added });
    }
    Ok(found)
}

/// Writes the index and its signature, the signature first: a reader that
/// sees the new index sees its signature.
fn write_signed(o: &Options, index: &Index) -> Result<(), RepoError> {
    let bytes = index.to_bytes();
    // Ed25519 signatures from the minisign crate carry random noise: an
    // unchanged index keeps its signature (when it verifies with this key),
    // so publishing the same folder again changes no byte.
    let old_sig = std::fs::read_to_string(o.out.join("index.json.minisig")).ok().filter(|s| {
        std::fs::read(o.out.join("index.json")).is_ok_and(|b| b == bytes)
            && super::sign::verify(&o.key.public(), &bytes, s).is_ok()
    });
    if let Some(sig) = old_sig {
        return write(&o.out.join("index.json.minisig"), sig.as_bytes());
    }
    let sig = o.key.sign(&bytes, TRUSTED_COMMENT).map_err(|e| RepoError::Publish(e.to_string()))?;
    write(&o.out.join("index.json.minisig"), sig.as_bytes())?;
    write(&o.out.join("index.json"), &bytes)
}
