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
use crate::store::write_atomic;
use crate::sys::hash::sha256_hex;
use std::path::{Path, PathBuf};

/// The trusted comment of every index signature.
pub const TRUSTED_COMMENT: &str = "engine repository index";

/// One line of what publishing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub what: String,
    /// `added`, `unchanged`.
    pub status: &'static str,
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
    write_atomic(path, bytes)
        .map_err(|e| RepoError::Write { path: path.to_path_buf(), source: std::io::Error::other(e.to_string()) })
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

/// Publishes; returns what changed.
pub fn publish(o: &Options) -> Result<Vec<Change>, RepoError> {
    let mut index = match std::fs::read(o.out.join("index.json")) {
        Ok(b) => index::parse(&b, &o.out.join("index.json").display().to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Index { format: index::FORMAT, ..Default::default() },
        Err(e) => return Err(RepoError::Read { path: o.out.join("index.json"), msg: e.to_string() }),
    };
    if let Some(t) = &o.title {
        index.title = t.clone();
    }
    let engine = super::engine_version().to_string();
    let mut changes = Vec::new();
    let mut found_any = false;

    // Profiles: each must load and validate.
    for folder in sorted_children(&o.dir.join("test-profiles")) {
        if !folder.join("profile.yaml").is_file() {
            continue;
        }
        found_any = true;
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
            engine: engine.clone(),
        };
        let entry = match index.profiles.iter_mut().position(|e| e.id == p.id) {
            Some(i) => &mut index.profiles[i],
            None => {
                index.profiles.push(ProfileEntry { id: p.id.clone(), versions: Vec::new() });
                index.profiles.last_mut().unwrap()
            }
        };
        let what = format!("profile {}@{}", p.id, p.version);
        match entry.versions.iter().find(|x| x.version == p.version) {
            Some(old) if old.archive.sha256 == a.sha256 => changes.push(Change { what, status: "unchanged" }),
            Some(old) => {
                return Err(RepoError::Publish(format!(
                    "{what} is already published with other content (sha256 {}; this folder packs to {}): \
                     bump `version:` in {}",
                    old.archive.sha256, a.sha256, lp.display
                )));
            }
            None => {
                put(o.out, &rel, &bytes)?;
                entry.versions.push(v);
                changes.push(Change { what, status: "added" });
            }
        }
    }

    // Suites: `version:` in the file, else 1.0.0.
    for file in sorted_children(&o.dir.join("suites")) {
        if file.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        found_any = true;
        let s = crate::profile::load::suite_from_path(&file).map_err(|e| RepoError::Publish(e.to_string()))?;
        let version = s.suite.version.clone().unwrap_or_else(|| "1.0.0".to_string());
        let text = std::fs::read(&file).map_err(|e| RepoError::Read { path: file.clone(), msg: e.to_string() })?;
        let bytes = pack::pack(&[], &[pack::Item { path: format!("{}.yaml", s.id), bytes: text, executable: false }])
            .map_err(|source| RepoError::Pack { what: file.display().to_string(), source })?;
        let rel = format!("suites/{id}/{id}-{version}.tar.gz", id = s.id);
        let a = archive_for(rel.clone(), &bytes);
        let v = SuiteVersion {
            version: version.clone(),
            title: s.suite.title.clone(),
            tests: s.suite.tests.len(),
            archive: a.clone(),
            engine: engine.clone(),
        };
        let entry = match index.suites.iter_mut().position(|e| e.id == s.id) {
            Some(i) => &mut index.suites[i],
            None => {
                index.suites.push(SuiteEntry { id: s.id.clone(), versions: Vec::new() });
                index.suites.last_mut().unwrap()
            }
        };
        let what = format!("suite {}@{version}", s.id);
        match entry.versions.iter().find(|x| x.version == version) {
            Some(old) if old.archive.sha256 == a.sha256 => changes.push(Change { what, status: "unchanged" }),
            Some(old) => {
                return Err(RepoError::Publish(format!(
                    "{what} is already published with other content (sha256 {}): add or bump `version:` in {}",
                    old.archive.sha256,
                    file.display()
                )));
            }
            None => {
                put(o.out, &rel, &bytes)?;
                entry.versions.push(v);
                changes.push(Change { what, status: "added" });
            }
        }
    }

    // Results: a new version whenever the file changed.
    let mut results: Vec<(PathBuf, String)> = Vec::new();
    for d in sorted_children(&o.dir.join("results")) {
        if d.join("result.json").is_file() {
            let name = d.file_name().unwrap_or_default().to_string_lossy().to_string();
            results.push((d.join("result.json"), name));
        }
    }
    results.extend(o.results.iter().cloned());
    for (path, name) in results {
        found_any = true;
        crate::store::check_name(&name).map_err(|e| RepoError::Publish(e.to_string()))?;
        let file = crate::store::load_file(&path).map_err(|e| RepoError::Publish(e.to_string()))?;
        let bytes = std::fs::read(&path).map_err(|e| RepoError::Read { path: path.clone(), msg: e.to_string() })?;
        let packed = pack::pack(&[], &[pack::Item { path: "result.json".into(), bytes, executable: false }])
            .map_err(|source| RepoError::Pack { what: path.display().to_string(), source })?;
        let sha = sha256_hex(&packed);
        let entry = match index.results.iter_mut().position(|e| e.name == name) {
            Some(i) => &mut index.results[i],
            None => {
                index.results.push(ResultEntry { name: name.clone(), versions: Vec::new() });
                index.results.last_mut().unwrap()
            }
        };
        let latest = crate::model::version::newest(&entry.versions, |v| v.version.as_str(), None);
        if latest.is_some_and(|l| l.archive.sha256 == sha) {
            changes.push(Change { what: format!("result {name}@{}", latest.unwrap().version), status: "unchanged" });
            continue;
        }
        let n = entry.versions.iter().filter_map(|v| semver::Version::parse(&v.version).ok()).map(|v| v.major).max();
        let version = format!("{}.0.0", n.map(|n| n + 1).unwrap_or(1));
        let rel = format!("results/{name}/{name}-{version}.tar.gz");
        put(o.out, &rel, &packed)?;
        entry.versions.push(ResultVersion {
            version: version.clone(),
            title: file.title.clone(),
            identifiers: file.systems.iter().map(|s| s.identifier.clone()).collect(),
            results: file.results.len(),
            archive: archive_for(rel, &packed),
            engine: engine.clone(),
        });
        changes.push(Change { what: format!("result {name}@{version}"), status: "added" });
    }
    if !found_any {
        return Err(RepoError::Publish(format!(
            "{} holds no `test-profiles/<id>/profile.yaml`, `suites/<id>.yaml` nor `results/<name>/result.json`",
            o.dir.display()
        )));
    }

    index.profiles.sort_by(|a, b| a.id.cmp(&b.id));
    index.suites.sort_by(|a, b| a.id.cmp(&b.id));
    index.results.sort_by(|a, b| a.name.cmp(&b.name));
    for p in &mut index.profiles {
        p.versions.sort_by(|a, b| crate::model::version::compare(&a.version, &b.version));
    }
    for s in &mut index.suites {
        s.versions.sort_by(|a, b| crate::model::version::compare(&a.version, &b.version));
    }
    for r in &mut index.results {
        r.versions.sort_by(|a, b| crate::model::version::compare(&a.version, &b.version));
    }
    let bytes = index.to_bytes();
    // Ed25519 signatures from the minisign crate carry random noise: an
    // unchanged index keeps its signature (when it verifies with this key),
    // so publishing the same folder again changes no byte.
    let old_sig = std::fs::read_to_string(o.out.join("index.json.minisig")).ok().filter(|s| {
        std::fs::read(o.out.join("index.json")).is_ok_and(|b| b == bytes)
            && super::sign::verify(&o.key.public(), &bytes, s).is_ok()
    });
    if let Some(sig) = old_sig {
        write(&o.out.join("index.json.minisig"), sig.as_bytes())?;
        return Ok(changes);
    }
    let sig = o.key.sign(&bytes, TRUSTED_COMMENT).map_err(|e| RepoError::Publish(e.to_string()))?;
    // The signature first: a reader that sees the new index sees its signature.
    write(&o.out.join("index.json.minisig"), sig.as_bytes())?;
    write(&o.out.join("index.json"), &bytes)?;
    Ok(changes)
}
