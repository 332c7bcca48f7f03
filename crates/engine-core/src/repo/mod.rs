//! Profile repositories: a folder or HTTP(S) location holding `index.json`
//! (profiles, suites and results with their versions, archives, sha256 and
//! sizes), its detached minisign signature `index.json.minisig`, and the
//! archives. Users add one by URL and name (`engine repo add team URL --key
//! RW…`) and refer to what it holds as `team/fio`, `team/fio@1.2`,
//! `team/suite/disk`, `team/results/NAME`.
//!
//! Every synced repository is kept under `$ENGINE_HOME/repos/NAME/`:
//! `index.json` and its signature as last verified, `state.json` (when,
//! from where, the index's sha256 and HTTP validators), and what was
//! unpacked: `profiles/<id>@<version>/<id>/`, `suites/<id>@<version>/<id>.yaml`,
//! `results/<name>@<version>/result.json`. The list of repositories, in the
//! order they were added, is `$ENGINE_HOME/repos/repos.json`.

pub mod fetch;
pub mod index;
pub mod pack;
pub mod publish;
pub mod sign;
pub mod sync;

use crate::store::write_atomic;
use index::Index;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Names a repository may not take: they start other references.
pub(crate) const RESERVED: &[&str] =
    &["suite", "suites", "result", "results", "profile", "profiles", "test-profiles", "repo", "repos", "local"];

#[derive(Debug, Error)]
pub enum RepoError {
    #[error("repository name `{name}` is not allowed: {why}")]
    BadName { name: String, why: String },
    #[error("a repository named `{0}` is already added")]
    Exists(String),
    #[error("no repository named `{0}` is added")]
    Unknown(String),
    #[error("refusing {url}: no public key given to check its signature")]
    NoKey { url: String },
    #[error("{what}: {source}")]
    Signature { what: String, source: sign::SignError },
    #[error(transparent)]
    Index(#[from] index::IndexError),
    #[error(transparent)]
    Fetch(#[from] fetch::FetchError),
    #[error("{what}: sha256 {found}, expected {expected} (from the signed index); nothing of it was unpacked")]
    Sha256 { what: String, expected: String, found: String },
    #[error("{what}: {found} bytes, expected {expected} (from the signed index); nothing of it was unpacked")]
    Size { what: String, expected: u64, found: u64 },
    #[error("{what}: {source}")]
    Pack { what: String, source: pack::PackError },
    /// An index entry whose id, name or version cannot be a folder name.
    #[error("{what} `{name}` cannot name a folder: {source}")]
    Name { what: String, name: String, source: crate::model::names::NameError },
    #[error("{what} needs engine {needs} or newer (this is {this})")]
    TooNew { what: String, needs: String, this: String },
    #[error("{what} is not in the local copy of `{repo}`, and {source}")]
    Offline { what: String, repo: String, source: fetch::FetchError },
    #[error("{0}")]
    Publish(String),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read {path}: {msg}")]
    Read { path: PathBuf, msg: String },
}

impl RepoError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            RepoError::BadName { .. } => {
                "use lower-case letters, digits, `.`, `_` and `-`, unlike any built-in profile or suite".into()
            }
            RepoError::Exists(n) => format!("remove it first with `engine repo remove {n}`, or pick another name"),
            RepoError::Unknown(_) => "list the added repositories with `engine repo list`".into(),
            RepoError::NoKey { .. } => "pass the publisher's public key with `--key RW…` (or a .pub file); \
                `--insecure-no-signature` adds it unchecked"
                .into(),
            RepoError::Signature { .. } => "the index was changed after it was signed, or signed with another key: \
                ask the publisher for the right key; nothing was changed here"
                .into(),
            RepoError::Index(e) => e.hint().to_string(),
            RepoError::Sha256 { .. } | RepoError::Size { .. } => {
                "the repository's files do not match its signed index: a server or mirror changed them".into()
            }
            RepoError::TooNew { .. } => "upgrade engine".into(),
            RepoError::Name { source, .. } => format!(
                "{}; the copy was synced from a damaged or hostile index: `engine repo update` checks it again",
                source.hint()
            ),
            RepoError::Pack { source: pack::PackError::Refused(_), .. } => {
                "the archive is the one the index names (its sha256 matches), but what it holds is not \
                what engine unpacks: tell the publisher; nothing of it was kept"
                    .into()
            }
            RepoError::Offline { .. } => "try again when the repository is reachable".into(),
            _ => return None,
        })
    }

    /// A refusal on trust: signature, sha256 or size.
    pub(crate) fn is_trust(&self) -> bool {
        matches!(self, RepoError::Signature { .. } | RepoError::Sha256 { .. } | RepoError::Size { .. })
    }
}

/// One added repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConf {
    pub name: String,
    pub url: String,
    /// The publisher's minisign public key (`RW…`); none with `--insecure-no-signature`.
    #[serde(default)]
    pub key: Option<String>,
    /// Added without a key: its index is not checked.
    #[serde(default)]
    pub insecure: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Registry {
    repos: Vec<RepoConf>,
}

/// What the last sync of a repository left.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub url: String,
    /// Seconds since the epoch when the index was last fetched or confirmed unchanged.
    pub synced_at: u64,
    /// SHA-256 of the index bytes.
    pub index_sha256: String,
    #[serde(default)]
    pub validators: fetch::Validators,
}

impl State {
    pub fn age(&self) -> Duration {
        let now = crate::sys::time::unix_secs();
        Duration::from_secs(now.saturating_sub(self.synced_at))
    }
}

/// `3 days`, `5 minutes`: an age in its largest whole unit.
pub fn describe_age(d: Duration) -> String {
    let s = d.as_secs();
    let (n, unit) = match s {
        0..60 => (s, "second"),
        60..3600 => (s / 60, "minute"),
        3600..86400 => (s / 3600, "hour"),
        _ => (s / 86400, "day"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// A repository as synced here.
#[derive(Debug, Clone)]
pub struct Local {
    pub conf: RepoConf,
    pub dir: PathBuf,
    pub index: Index,
    pub state: State,
}

impl Local {
    /// Provenance recorded in results.
    pub(crate) fn reference(&self) -> crate::model::profile::RepositoryRef {
        crate::model::profile::RepositoryRef {
            name: self.conf.name.clone(),
            url: self.conf.url.clone(),
            index_sha256: self.state.index_sha256.clone(),
        }
    }
}

/// `$ENGINE_HOME/repos/` and the repositories in it.
pub struct Repos {
    pub root: PathBuf,
    pub list: Vec<Local>,
    /// Repositories whose local copy could not be read.
    pub warnings: Vec<String>,
}

impl Repos {
    /// Reads the registry and each repository's local copy (no network).
    pub fn load(root: &Path) -> Repos {
        let mut out = Repos { root: root.to_path_buf(), list: Vec::new(), warnings: Vec::new() };
        let reg = match read_registry(root) {
            Ok(r) => r,
            Err(e) => {
                out.warnings.push(e.to_string());
                return out;
            }
        };
        for conf in reg.repos {
            let dir = root.join(&conf.name);
            match read_local(&dir) {
                Ok((index, state)) => out.list.push(Local { conf, dir, index, state }),
                Err(e) => out
                    .warnings
                    .push(format!("repository `{}`: {e}; run `engine repo update {}`", conf.name, conf.name)),
            }
        }
        out
    }

    pub fn get(&self, name: &str) -> Option<&Local> {
        self.list.iter().find(|l| l.conf.name == name)
    }

    pub(crate) fn confs(&self) -> Result<Vec<RepoConf>, RepoError> {
        Ok(read_registry(&self.root)?.repos)
    }
}

fn read_registry(root: &Path) -> Result<Registry, RepoError> {
    let p = root.join("repos.json");
    match std::fs::read(&p) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| RepoError::Read { path: p, msg: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Registry::default()),
        Err(e) => Err(RepoError::Read { path: p, msg: e.to_string() }),
    }
}

fn write_registry(root: &Path, reg: &Registry) -> Result<(), RepoError> {
    let p = root.join("repos.json");
    let mut bytes = serde_json::to_vec_pretty(reg).expect("the registry serializes");
    bytes.push(b'\n');
    write_atomic(&p, &bytes).map_err(|e| RepoError::Write { path: p, source: std::io::Error::other(e.to_string()) })
}

fn read_local(dir: &Path) -> Result<(Index, State), RepoError> {
    let ip = dir.join("index.json");
    let bytes = std::fs::read(&ip).map_err(|e| RepoError::Read { path: ip.clone(), msg: e.to_string() })?;
    // Checked in full when it was synced; here (every command that lists or
    // resolves) a plain typed read is enough and much cheaper.
    let index: Index = serde_json::from_slice(&bytes)
        .or_else(|_| index::parse(&bytes, &ip.display().to_string()))
        .map_err(RepoError::from)?;
    let sp = dir.join("state.json");
    let state: State = std::fs::read(&sp)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        .map_err(|msg| RepoError::Read { path: sp, msg })?;
    Ok((index, state))
}

/// Checks a name for `engine repo add`: a name (`model::names`) and one
/// plain word that starts no other kind of reference and names no built-in
/// profile or suite.
pub fn check_name(name: &str, builtin: &[String]) -> Result<(), RepoError> {
    let bad = |why: String| Err(RepoError::BadName { name: crate::model::names::shown(name), why });
    if name.contains('/') {
        return bad("it contains `/`, which separates the repository from what it holds (`NAME/fio`)".into());
    }
    if let Err(e) = crate::model::names::check(name) {
        return bad(e.to_string());
    }
    if name.is_empty() || name.len() > 64 {
        return bad("it must be 1 to 64 characters".into());
    }
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !first_ok || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c)) {
        return bad("only lower-case letters, digits, `.`, `_` and `-` (starting with a letter or digit)".into());
    }
    if name.contains("..") {
        return bad("it contains `..`".into());
    }
    if RESERVED.contains(&name) {
        return bad(format!("`{name}/…` already means something else"));
    }
    if builtin.iter().any(|b| b == name) {
        return bad(format!("it is the name of a built-in profile or suite, so `{name}` alone would be ambiguous"));
    }
    Ok(())
}

/// Adds `conf` to the registry after its first sync succeeded.
pub(crate) fn register(root: &Path, conf: &RepoConf) -> Result<(), RepoError> {
    let mut reg = read_registry(root)?;
    if reg.repos.iter().any(|r| r.name == conf.name) {
        return Err(RepoError::Exists(conf.name.clone()));
    }
    reg.repos.push(conf.clone());
    write_registry(root, &reg)
}

/// Removes repository `name`: its entry and its local copy.
pub fn remove(root: &Path, name: &str) -> Result<(), RepoError> {
    let mut reg = read_registry(root)?;
    let before = reg.repos.len();
    reg.repos.retain(|r| r.name != name);
    if reg.repos.len() == before {
        return Err(RepoError::Unknown(name.to_string()));
    }
    write_registry(root, &reg)?;
    let dir = root.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|source| RepoError::Write { path: dir, source })?;
    }
    Ok(())
}

/// The version of this engine.
pub(crate) fn engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Refuses an entry that needs a newer engine.
pub(crate) fn check_engine(what: &str, needs: &str) -> Result<(), RepoError> {
    let this = semver::Version::parse(engine_version()).expect("our version is semver");
    match semver::Version::parse(needs) {
        Ok(n) if n > this => Err(RepoError::TooNew {
            what: what.to_string(),
            needs: needs.to_string(),
            this: engine_version().to_string(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let builtin = vec!["fio".to_string(), "disk".to_string()];
        assert!(check_name("team", &builtin).is_ok());
        assert!(check_name("team-2.lab_x", &builtin).is_ok());
        for bad in ["a/b", "", "suite", "result", "results", "fio", "disk", "Team", "-x", "a..b", "a b"] {
            assert!(check_name(bad, &builtin).is_err(), "{bad:?}");
        }
        assert!(check_name("a/b", &builtin).unwrap_err().to_string().contains("`/`"));
        assert_eq!(describe_age(Duration::from_secs(3 * 86400 + 5)), "3 days");
        assert_eq!(describe_age(Duration::from_secs(61)), "1 minute");
    }
}
