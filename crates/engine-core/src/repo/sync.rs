//! Syncing a repository: fetch the index (conditionally), check its
//! signature before reading it, then fetch, verify (size and sha256 against
//! the signed index) and unpack the newest version of every profile and
//! suite and every result. A refusal changes nothing: `repo add` builds the
//! copy in a temporary folder renamed into place at the end; `repo update`
//! writes the new index last, after everything it names is in place.
//! Older versions are fetched when a reference asks for them.

use super::fetch::{FetchError, Fetched, Source};
use super::index::{self, Archive, Index};
use super::pack::PackError;
use super::sign::{self, PublicKey};
use super::{Local, RepoConf, RepoError, State};
use crate::install::download::Settings;
use crate::install::extract;
use crate::model::names;
use crate::store::write_atomic;
use crate::sys::hash::sha256_hex;
use crate::sys::time::unix_secs as now_secs;
use std::path::{Path, PathBuf};

/// What a sync did.
#[derive(Debug, Default)]
pub struct Synced {
    /// The index had not changed (one conditional request).
    pub unchanged: bool,
    /// Archives fetched and unpacked.
    pub fetched: Vec<String>,
    /// Requests made.
    pub requests: usize,
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), RepoError> {
    write_atomic(path, bytes)
        .map_err(|e| RepoError::Write { path: path.to_path_buf(), source: std::io::Error::other(e.to_string()) })
}

/// What kind of thing an archive holds, and where it unpacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Profile,
    Suite,
    Result,
}

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::Profile => "profiles",
            Kind::Suite => "suites",
            Kind::Result => "results",
        }
    }
    fn word(self) -> &'static str {
        match self {
            Kind::Profile => "profile",
            Kind::Suite => "suite",
            Kind::Result => "result",
        }
    }
}

/// Where `id@version` of `kind` unpacks in the local copy `dir`. Both are
/// names (`model::names`): the index was checked when it was synced, and
/// they are checked again here, where they become a path (a copy synced by
/// an older engine was not checked as closely).
pub(crate) fn unpacked_dir(dir: &Path, kind: Kind, id: &str, version: &str) -> Result<PathBuf, RepoError> {
    let bad = |field: &str, name: &str, source| RepoError::Name {
        what: format!("{} {field}", kind.word()),
        name: names::shown(name),
        source,
    };
    names::check(id).map_err(|e| bad(if kind == Kind::Result { "name" } else { "id" }, id, e))?;
    names::check(version).map_err(|e| bad("version", version, e))?;
    Ok(dir.join(kind.folder()).join(format!("{id}@{version}")))
}

/// The main file of an unpacked entry.
pub(crate) fn main_file(dir: &Path, kind: Kind, id: &str, version: &str) -> Result<PathBuf, RepoError> {
    let d = unpacked_dir(dir, kind, id, version)?;
    Ok(match kind {
        Kind::Profile => d.join(id).join("profile.yaml"),
        Kind::Suite => d.join(format!("{id}.yaml")),
        Kind::Result => d.join("result.json"),
    })
}

/// Whether the entry is unpacked from the archive the index names.
fn is_current(dir: &Path, kind: Kind, id: &str, version: &str, a: &Archive) -> bool {
    let (Ok(d), Ok(main)) = (unpacked_dir(dir, kind, id, version), main_file(dir, kind, id, version)) else {
        return false;
    };
    std::fs::read_to_string(d.join(".sha256")).is_ok_and(|s| s.trim() == a.sha256) && main.is_file()
}

/// Fetches, verifies and unpacks one archive into the local copy `dir`.
fn fetch_archive(
    source: &Source,
    dir: &Path,
    kind: Kind,
    id: &str,
    version: &str,
    a: &Archive,
    engine: &str,
) -> Result<(), RepoError> {
    let final_dir = unpacked_dir(dir, kind, id, version)?;
    let what = format!("{} {id}@{version} ({})", kind.word(), source.url_of(&a.path));
    super::check_engine(&what, engine)?;
    let bytes = match source.get_bytes(&a.path, a.size.clamp(1, index::MAX_ARCHIVE_BYTES)) {
        Ok(b) => b,
        Err(FetchError::TooLarge { .. }) => {
            return Err(RepoError::Size { what, expected: a.size, found: a.size + 1 });
        }
        Err(e) => return Err(e.into()),
    };
    if bytes.len() as u64 != a.size {
        return Err(RepoError::Size { what, expected: a.size, found: bytes.len() as u64 });
    }
    let found = sha256_hex(&bytes);
    if found != a.sha256 {
        return Err(RepoError::Sha256 { what, expected: a.sha256.clone(), found });
    }
    let parent = dir.join(kind.folder());
    std::fs::create_dir_all(&parent).map_err(|source| RepoError::Write { path: parent.clone(), source })?;
    let tmp = parent.join(format!(".tmp-{id}@{version}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let files = unpack(&bytes, &tmp, &what, &a.path)?;
    let expected = match kind {
        Kind::Profile => format!("{id}/profile.yaml"),
        Kind::Suite => format!("{id}.yaml"),
        Kind::Result => "result.json".to_string(),
    };
    let stray = files.iter().find(|f| match kind {
        Kind::Profile => !f.starts_with(&format!("{id}/")),
        _ => **f != expected,
    });
    if !files.contains(&expected) || stray.is_some() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(RepoError::Pack {
            what,
            source: PackError::Damaged(match stray {
                Some(s) => format!("it holds `{s}`, outside what a {} archive holds", kind.word()),
                None => format!("it has no `{expected}`"),
            }),
        });
    }
    write(&tmp.join(".sha256"), format!("{}\n", a.sha256).as_bytes())?;
    if final_dir.exists() {
        std::fs::remove_dir_all(&final_dir).map_err(|source| RepoError::Write { path: final_dir.clone(), source })?;
    }
    std::fs::rename(&tmp, &final_dir).map_err(|source| RepoError::Write { path: final_dir, source })?;
    Ok(())
}

/// How much a repository archive may unpack to: it holds a profile's
/// folder, a suite or a result file (engine reads none larger than 64 MiB),
/// all of which compress far less than 100 times.
pub(crate) const UNPACK_LIMITS: extract::Limits = extract::Limits {
    max_bytes: crate::store::MAX_RESULT_BYTES,
    max_ratio: 100,
    note: "a repository archive holds a profile, a suite or a result, never this much: it is damaged or hostile",
};

/// Unpacks verified archive bytes into the new folder `tmp` with the install
/// module's safe extraction (the same path-traversal, link, device and mode
/// checks as downloads, within [`UNPACK_LIMITS`]); returns the files in it,
/// relative. On a refusal nothing stays.
fn unpack(bytes: &[u8], tmp: &Path, what: &str, rel: &str) -> Result<Vec<String>, RepoError> {
    let r = (|| {
        std::fs::create_dir_all(tmp).map_err(|source| RepoError::Write { path: tmp.to_path_buf(), source })?;
        let file = tmp.with_extension("tar.gz");
        write(&file, bytes)?;
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let r = extract::extract(&file, name, extract::Format::TarGz, tmp, &UNPACK_LIMITS);
        let _ = std::fs::remove_file(&file);
        r.map_err(|e| RepoError::Pack { what: what.to_string(), source: PackError::Refused(e) })?;
        let mut files = Vec::new();
        walk(tmp, Path::new(""), &mut files).map_err(|source| RepoError::Pack { what: what.to_string(), source })?;
        Ok(files)
    })();
    if r.is_err() {
        let _ = std::fs::remove_dir_all(tmp);
    }
    r
}

/// Files under `dir` (relative); a link, or a file whose name is not a name
/// (`model::names`), is refused (engine never packs one).
fn walk(dir: &Path, rel: &Path, out: &mut Vec<String>) -> Result<(), PackError> {
    let read = |source| PackError::Read { path: dir.to_path_buf(), source };
    for e in std::fs::read_dir(dir).map_err(read)? {
        let e = e.map_err(read)?;
        let ft = e.file_type().map_err(read)?;
        let r = rel.join(e.file_name());
        let shown = || names::shown(&r.to_string_lossy());
        if let Err(source) = names::check(&e.file_name().to_string_lossy()) {
            return Err(PackError::NotAName { shown: shown(), source });
        }
        if ft.is_symlink() {
            return Err(PackError::Link { shown: shown() });
        } else if ft.is_dir() {
            walk(&e.path(), &r, out)?;
        } else {
            out.push(r.to_string_lossy().to_string());
        }
    }
    Ok(())
}

/// Everything a sync keeps current: the newest version of each profile and
/// suite, and every result's newest version.
fn wanted(index: &Index) -> Vec<(Kind, String, String, Archive, String)> {
    let mut out = Vec::new();
    for p in &index.profiles {
        if let Some(v) = crate::model::version::newest(&p.versions, |v| v.version.as_str(), None) {
            out.push((Kind::Profile, p.id.clone(), v.version.clone(), v.archive.clone(), v.engine.clone()));
        }
    }
    for s in &index.suites {
        if let Some(v) = crate::model::version::newest(&s.versions, |v| v.version.as_str(), None) {
            out.push((Kind::Suite, s.id.clone(), v.version.clone(), v.archive.clone(), v.engine.clone()));
        }
    }
    for r in &index.results {
        if let Some(v) = crate::model::version::newest(&r.versions, |v| v.version.as_str(), None) {
            out.push((Kind::Result, r.name.clone(), v.version.clone(), v.archive.clone(), v.engine.clone()));
        }
    }
    out
}

/// A fetched and checked index: its bytes, signature text, parsed form and
/// HTTP validators.
type NewIndex = (Vec<u8>, Option<String>, Index, super::fetch::Validators);

/// Fetches and checks the index; `None` when it has not changed.
fn fetch_index(
    source: &Source,
    conf: &RepoConf,
    prev: Option<&State>,
    out: &mut Synced,
) -> Result<Option<NewIndex>, RepoError> {
    let cond = prev.filter(|p| p.url == conf.url).map(|p| &p.validators);
    out.requests += 1;
    let (bytes, validators) = match source.get("index.json", cond, index::MAX_INDEX_BYTES)? {
        Fetched::NotModified => return Ok(None),
        Fetched::Body { bytes, validators } => (bytes, validators),
    };
    let sig = match (&conf.key, conf.insecure) {
        (Some(k), _) => {
            let key = PublicKey::parse(k)
                .map_err(|e| RepoError::Signature { what: format!("repository `{}`", conf.name), source: e })?;
            out.requests += 1;
            let sig = source.get_bytes("index.json.minisig", 64 << 10)?;
            let sig = String::from_utf8_lossy(&sig).to_string();
            sign::verify(&key, &bytes, &sig)
                .map_err(|e| RepoError::Signature { what: source.url_of("index.json"), source: e })?;
            Some(sig)
        }
        (None, true) => None,
        (None, false) => return Err(RepoError::NoKey { url: conf.url.clone() }),
    };
    let index = index::parse(&bytes, &source.url_of("index.json"))?;
    Ok(Some((bytes, sig, index, validators)))
}

fn write_copy(dir: &Path, bytes: &[u8], sig: Option<&str>, state: &State) -> Result<(), RepoError> {
    match sig {
        Some(s) => write(&dir.join("index.json.minisig"), s.as_bytes())?,
        None => {
            let _ = std::fs::remove_file(dir.join("index.json.minisig"));
        }
    }
    write(&dir.join("index.json"), bytes)?;
    let mut st = serde_json::to_vec_pretty(state).expect("state serializes");
    st.push(b'\n');
    write(&dir.join("state.json"), &st)
}

/// `engine repo add`: the first sync into a new local copy, then the
/// registry entry. Nothing stays when it fails.
pub fn add(root: &Path, conf: &RepoConf, settings: &Settings) -> Result<Synced, RepoError> {
    if let Err(e) = names::check(&conf.name) {
        return Err(RepoError::BadName { name: names::shown(&conf.name), why: e.to_string() });
    }
    if root.join(&conf.name).exists() || super::Repos::load(root).confs()?.iter().any(|c| c.name == conf.name) {
        return Err(RepoError::Exists(conf.name.clone()));
    }
    if conf.key.is_none() && !conf.insecure {
        return Err(RepoError::NoKey { url: conf.url.clone() });
    }
    let source = Source::new(&conf.url, settings)?;
    let mut out = Synced::default();
    let (bytes, sig, index, validators) = fetch_index(&source, conf, None, &mut out)?.expect("unconditional");
    std::fs::create_dir_all(root).map_err(|source| RepoError::Write { path: root.to_path_buf(), source })?;
    let tmp = root.join(format!(".new-{}-{}", conf.name, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let r = (|| {
        for (kind, id, version, a, engine) in wanted(&index) {
            out.requests += 1;
            fetch_archive(&source, &tmp, kind, &id, &version, &a, &engine)?;
            out.fetched.push(format!("{}/{id}@{version}", kind.folder()));
        }
        let state =
            State { url: conf.url.clone(), synced_at: now_secs(), index_sha256: sha256_hex(&bytes), validators };
        std::fs::create_dir_all(&tmp).map_err(|source| RepoError::Write { path: tmp.clone(), source })?;
        write_copy(&tmp, &bytes, sig.as_deref(), &state)?;
        let dest = root.join(&conf.name);
        std::fs::rename(&tmp, &dest).map_err(|source| RepoError::Write { path: dest, source })?;
        super::register(root, conf)
    })();
    if r.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        if !super::Repos::load(root).confs().is_ok_and(|c| c.iter().any(|c| c.name == conf.name)) {
            let _ = std::fs::remove_dir_all(root.join(&conf.name));
        }
    }
    r.map(|_| out)
}

/// `engine repo update NAME`: a conditional fetch of the index; when it
/// changed, the new archives, then the new index.
pub fn update(local: &Local, settings: &Settings) -> Result<Synced, RepoError> {
    let source = Source::new(&local.conf.url, settings)?;
    let mut out = Synced::default();
    let Some((bytes, sig, index, validators)) = fetch_index(&source, &local.conf, Some(&local.state), &mut out)? else {
        out.unchanged = true;
        let state = State { synced_at: now_secs(), ..local.state.clone() };
        let mut st = serde_json::to_vec_pretty(&state).expect("state serializes");
        st.push(b'\n');
        write(&local.dir.join("state.json"), &st)?;
        return Ok(out);
    };
    for (kind, id, version, a, engine) in wanted(&index) {
        if is_current(&local.dir, kind, &id, &version, &a) {
            continue;
        }
        out.requests += 1;
        fetch_archive(&source, &local.dir, kind, &id, &version, &a, &engine)?;
        out.fetched.push(format!("{}/{id}@{version}", kind.folder()));
    }
    let state =
        State { url: local.conf.url.clone(), synced_at: now_secs(), index_sha256: sha256_hex(&bytes), validators };
    write_copy(&local.dir, &bytes, sig.as_deref(), &state)?;
    Ok(out)
}

/// Makes sure `id@version` of `kind` is unpacked in the local copy, fetching
/// it when it is not (an older version a reference or a result asks for).
/// Returns its main file.
pub(crate) fn ensure(
    local: &Local,
    kind: Kind,
    id: &str,
    version: &str,
    settings: &Settings,
) -> Result<PathBuf, RepoError> {
    let (a, engine) = match kind {
        Kind::Profile => local
            .index
            .profile(id)
            .and_then(|p| p.versions.iter().find(|v| v.version == version))
            .map(|v| (v.archive.clone(), v.engine.clone())),
        Kind::Suite => local
            .index
            .suite(id)
            .and_then(|p| p.versions.iter().find(|v| v.version == version))
            .map(|v| (v.archive.clone(), v.engine.clone())),
        Kind::Result => local
            .index
            .result(id)
            .and_then(|p| p.versions.iter().find(|v| v.version == version))
            .map(|v| (v.archive.clone(), v.engine.clone())),
    }
    .ok_or_else(|| RepoError::Publish(format!("`{}` lists no {} {id}@{version}", local.conf.name, kind.word())))?;
    if !is_current(&local.dir, kind, id, version, &a) {
        let source = Source::new(&local.conf.url, settings)?;
        fetch_archive(&source, &local.dir, kind, id, version, &a, &engine).map_err(|e| match e {
            RepoError::Fetch(f) => RepoError::Offline {
                what: format!("{} {id}@{version}", kind.word()),
                repo: local.conf.name.clone(),
                source: f,
            },
            e => e,
        })?;
    }
    main_file(&local.dir, kind, id, version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_an_unchecked_copy_never_become_paths() {
        let d = Path::new("/e/repos/team");
        assert_eq!(unpacked_dir(d, Kind::Result, "r", "1.0.0").unwrap(), d.join("results/r@1.0.0"));
        assert_eq!(main_file(d, Kind::Profile, "fio", "1.2.0").unwrap(), d.join("profiles/fio@1.2.0/fio/profile.yaml"));
        for (id, version, want) in [
            ("r", "x/../../../../var/tmp/bait", "result version `x/../../../../var/tmp/bait` cannot name a folder"),
            ("../../x", "1", "result name `../../x` cannot name a folder: it contains `/`"),
            ("r", "..", "it is `..`"),
            ("r\u{1b}[2J", "1", "result name `r\\u{1b}[2J`"),
        ] {
            let e = unpacked_dir(d, Kind::Result, id, version).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
            assert!(main_file(d, Kind::Result, id, version).is_err());
            let a = Archive { path: "x".into(), sha256: "0".repeat(64), size: 1 };
            assert!(!is_current(d, Kind::Result, id, version, &a));
        }
        let e = unpacked_dir(d, Kind::Suite, "a/b", "1").unwrap_err().to_string();
        assert!(e.starts_with("suite id `a/b`"), "{e}");
    }

    /// A local copy whose index an older engine took without the name
    /// checks: asking for the hostile version writes nothing anywhere.
    #[test]
    fn ensure_refuses_a_hostile_version_in_an_old_copy() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("repos/team");
        std::fs::create_dir_all(&dir).unwrap();
        let archive = Archive { path: "results/r/r.tar.gz".into(), sha256: "0".repeat(64), size: 1 };
        let version = index::ResultVersion {
            version: "x/../../../../escaped".into(),
            title: String::new(),
            identifiers: Vec::new(),
            results: 0,
            archive,
            engine: "0.1.0".into(),
        };
        let index = Index {
            format: index::FORMAT,
            results: vec![index::ResultEntry { name: "r".into(), versions: vec![version] }],
            ..Index::default()
        };
        let conf = RepoConf { name: "team".into(), url: home.path().display().to_string(), key: None, insecure: true };
        let local = Local { conf, dir: dir.clone(), index, state: State::default() };
        let e = ensure(&local, Kind::Result, "r", "x/../../../../escaped", &Settings::default()).unwrap_err();
        assert!(matches!(e, RepoError::Name { .. }), "{e}");
        assert!(e.to_string().contains("result version `x/../../../../escaped` cannot name a folder"), "{e}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written in the copy");
        assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 1, "nor beside it");
    }
}
