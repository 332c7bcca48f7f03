//! What one command-line reference names: its text classified once
//! (`name.rs`: the grammar), then resolved by the one function of its kind.

use super::name::{Name, classify};
use super::{Catalog, Planned, ResolveError, flatten_suite};
use crate::expand::Test;
use crate::model::version;
use crate::profile::load;
use crate::repo::{Local, sync};
use crate::store::Store;
use std::path::Path;
use std::sync::Arc;

/// What one reference names.
pub enum Resolved {
    Planned(Vec<Planned>),
    /// A saved result: its tests (those whose profile exists) and the ones that cannot run.
    Saved {
        name: String,
        tests: Vec<Test>,
        missing: Vec<String>,
    },
}

/// A reference resolved, and what the person running it should know.
pub struct Resolution {
    pub resolved: Resolved,
    /// Warnings and notes (an old repository copy, a shared result copied in).
    pub notes: Vec<String>,
}

/// A synced copy older than this gets a reminder to update it.
const OLD_COPY: std::time::Duration = std::time::Duration::from_secs(7 * 86400);

/// A YAML file with a top-level `tests:` and no `executor:` is a suite.
pub fn is_suite_file(p: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(p) else { return false };
    let ix = crate::profile::yaml_index::YamlIndex::build(&text);
    ix.has(&crate::path!["tests"]) && !ix.has(&crate::path!["executor"])
}

/// What `reference` names, from `catalog` and the saved results in `store`,
/// for a run: a shared result (`team/results/NAME`) is copied into `store`
/// first, so the run appends to it.
pub fn resolve(reference: &str, catalog: &Catalog, store: &Store) -> Result<Resolution, ResolveError> {
    let mut notes = Vec::new();
    let resolved = resolve_noting(reference, catalog, store, &mut notes, true)?;
    Ok(Resolution { resolved, notes })
}

/// What `reference` names, as [`resolve`] but changing nothing: a shared
/// result is read where the repository copy keeps it (`engine info`).
pub fn look_up(reference: &str, catalog: &Catalog, store: &Store) -> Result<Resolution, ResolveError> {
    let mut notes = Vec::new();
    let resolved = resolve_noting(reference, catalog, store, &mut notes, false)?;
    Ok(Resolution { resolved, notes })
}

fn one(p: crate::model::profile::LoadedProfile) -> Resolved {
    Resolved::Planned(vec![Planned {
        profile: Arc::new(p),
        presets: Vec::new(),
        optional: false,
        budget: None,
        monitor_interval: None,
        setups: None,
        from_suite: false,
    }])
}

fn suite(catalog: &Catalog, s: &load::LoadedSuite) -> Result<Resolved, ResolveError> {
    Ok(Resolved::Planned(flatten_suite(catalog, s, &mut Vec::new())?))
}

/// One function per kind of reference, the reference classified once.
fn resolve_noting(
    reference: &str,
    catalog: &Catalog,
    store: &Store,
    notes: &mut Vec<String>,
    copy: bool,
) -> Result<Resolved, ResolveError> {
    match classify(reference, catalog.repos()) {
        Name::Suite { repo, id, want } => suite(catalog, &catalog.suite_of(repo, id, want)?),
        Name::Result(name) => saved(name, catalog, store, None),
        Name::SharedResult { repo, name } => {
            notes.extend(old_copy(repo));
            shared(repo, name, catalog, store, notes, copy)
        }
        Name::RepoProfile { repo, id, want } => {
            notes.extend(old_copy(repo));
            Ok(one(catalog.repo_profile(repo, id, want)?))
        }
        Name::Path(p) => from_path(p, catalog),
        Name::NoRepo { repo } => Err(ResolveError::no_repo(reference, repo)),
        Name::Word { text, id, want } => word(text, id, want, catalog, store),
    }
}

/// A profile or suite file, or a profile folder.
fn from_path(p: &Path, catalog: &Catalog) -> Result<Resolved, ResolveError> {
    if !p.exists() {
        return Err(ResolveError::NoSuchPath(p.display().to_string()));
    }
    let is_profile = p.is_dir() || p.file_name().is_some_and(|f| f == "profile.yaml") || !is_suite_file(p);
    if is_profile {
        return Ok(one(load::profile_from_path(p, catalog.packages())?));
    }
    suite(catalog, &load::suite_from_path(p)?)
}

/// A bare word: a profile, else a saved result, else a suite; not found,
/// the catalog phrases it with a suggestion.
fn word(text: &str, id: &str, want: Option<&str>, catalog: &Catalog, store: &Store) -> Result<Resolved, ResolveError> {
    if catalog.has_profile(id) {
        return Ok(one(catalog.profile_of(id, want)?));
    }
    if store.exists(text) {
        return saved(text, catalog, store, None);
    }
    if catalog.has_suite(id) {
        return suite(catalog, &catalog.suite_of(None, id, want)?);
    }
    catalog.profile_of(id, want).map(one)
}

/// The reminder for a repository copy synced long ago.
fn old_copy(local: &Local) -> Option<String> {
    let age = local.state.age();
    (age > OLD_COPY).then(|| {
        format!(
            "warning: the copy of repository `{}` was synced {} ago; `engine repo update {}` fetches what changed",
            local.conf.name,
            crate::repo::describe_age(age),
            local.conf.name
        )
    })
}

/// `team/results/NAME`: the published result, copied into the result store
/// under its name the first time (when `copy`), then re-run like a saved
/// result (a new identifier is appended).
fn shared(
    local: &Local,
    name: &str,
    catalog: &Catalog,
    store: &Store,
    notes: &mut Vec<String>,
    copy: bool,
) -> Result<Resolved, ResolveError> {
    let repo = &local.conf.name;
    let Some(entry) = local.index.result(name) else {
        let names: Vec<&str> = local.index.results.iter().map(|r| r.name.as_str()).collect();
        let hint = if names.is_empty() {
            format!("`{repo}` publishes no results")
        } else {
            format!("it publishes: {}", names.join(", "))
        };
        let msg = format!("repository `{repo}` publishes no result `{name}`");
        return Err(ResolveError::NoSharedResult { msg, hint: Some(hint) });
    };
    let v = version::newest(&entry.versions, |v| v.version.as_str(), None).ok_or_else(|| {
        ResolveError::NoSharedResult { msg: format!("`{repo}/results/{name}` has no version"), hint: None }
    })?;
    let path =
        sync::ensure(local, sync::Kind::Result, name, &v.version, catalog.downloads()).map_err(ResolveError::Fetch)?;
    let published = crate::store::load_file(&path)?;
    if !copy {
        return Ok(saved_file(name, &published, catalog, Some(repo)));
    }
    if store.exists(name) {
        let mine = store.load_lean(name)?;
        if !published.systems.iter().all(|s| mine.system(&s.identifier).is_some()) {
            return Err(ResolveError::NotTheCopy { name: name.to_string(), repo: repo.clone() });
        }
    } else {
        store.save(name, &mut published.clone())?;
        notes.push(format!("copied {repo}/results/{name} (version {}) into result `{name}`", v.version));
    }
    saved(name, catalog, store, Some(repo))
}

/// Where the profile of a saved result's test is found today: its reference
/// and the profile, or why it is not available.
fn profile_of(
    r: &crate::model::result::TestResult,
    catalog: &Catalog,
    via: Option<&str>,
) -> (String, Result<crate::model::profile::LoadedProfile, ResolveError>) {
    // A repository's profile runs again at the exact version the result
    // records, from that repository (fetched when needed); a local one
    // at the same major.minor.
    match &r.repository {
        Some(repo) => {
            // The repository as added here: by URL (users name it as they like), else by name.
            let here = catalog.repos().list.iter().find(|l| l.conf.url == repo.url).map(|l| l.conf.name.clone());
            let name = here
                .or_else(|| catalog.repos().get(&repo.name).map(|_| repo.name.clone()))
                .or_else(|| via.map(str::to_string))
                .unwrap_or_else(|| repo.name.clone());
            let found = match catalog.repos().get(&name) {
                Some(_) => catalog.profile_from_repo(&name, &r.profile, &r.profile_version),
                None => Err(ResolveError::RepoNotAdded { name: repo.name.clone(), url: repo.url.clone() }),
            };
            (format!("{name}/{}@{}", r.profile, r.profile_version), found)
        }
        None => {
            let mm: Vec<&str> = r.profile_version.split('.').take(2).collect();
            let mm = mm.join(".");
            let reference = format!("{}@{mm}", r.profile);
            let found =
                catalog.profile_of(&r.profile, Some(&mm)).or_else(|e| match via.and_then(|v| catalog.repos().get(v)) {
                    Some(local) => catalog.repo_profile(local, &r.profile, Some(&mm)).map_err(|_| e),
                    None => Err(e),
                });
            (reference, found)
        }
    }
}

/// The tests of saved result `name`, matched to today's profiles by id,
/// major.minor version and option values. `via`: the repository a shared
/// result came from, which stands in for a repository the result names but
/// that is not added here, and for local profiles of the publisher's that
/// are not here.
fn saved(name: &str, catalog: &Catalog, store: &Store, via: Option<&str>) -> Result<Resolved, ResolveError> {
    Ok(saved_file(name, &store.load_lean(name)?, catalog, via))
}

fn saved_file(name: &str, file: &crate::model::result::ResultFile, catalog: &Catalog, via: Option<&str>) -> Resolved {
    let mut tests: Vec<Test> = Vec::new();
    let mut missing = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in &file.results {
        if !seen.insert(r.test.clone()) {
            continue;
        }
        // Kept as PTS's own at import: no profile does its work, so none runs for it.
        if let Some(why) = r.not_runnable() {
            missing.push(format!("{}: {} (not runnable here: {why})", r.title, r.description));
            continue;
        }
        let (reference, found) = profile_of(r, catalog, via);
        let profile = match found {
            Ok(p) => Arc::new(p),
            Err(why) => {
                missing.push(format!("{} ({reference} is not available: {why})", r.description));
                continue;
            }
        };
        match crate::expand::test_from_choices(&profile, &r.options) {
            Some(t) => tests.push(t),
            None => {
                missing.push(format!("{}: {} (its options no longer exist in {reference})", r.profile, r.description))
            }
        }
    }
    Resolved::Saved { name: name.to_string(), tests, missing }
}
