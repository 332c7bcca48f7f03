//! Command-line references → what to run: profiles with presets, or the
//! tests of a saved result.

use super::{Failure, exit};
use engine::expand::{Preset, Test};
use engine::profile::resolve::{self, Catalog, Planned, ResolveError};
use engine::result::Store;
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

pub fn failure(e: ResolveError) -> Failure {
    let code = match &e {
        ResolveError::Invalid(_) => exit::INVALID,
        ResolveError::Io { .. } => exit::ERROR,
        _ => exit::USAGE,
    };
    let hint = e.hint().map(str::to_string);
    let mut f = Failure::new(code, e.to_string());
    f.hint = hint;
    f
}

fn looks_like_path(r: &str) -> bool {
    r.ends_with(".yaml") || r.starts_with('.') || r.starts_with('/') || (r.contains('/') && Path::new(r).exists())
}

pub fn resolve(reference: &str, catalog: &Catalog, store: &Store) -> Result<Resolved, Failure> {
    let planned =
        |p| Ok(Resolved::Planned(vec![Planned { profile: Arc::new(p), presets: Vec::new(), optional: false }]));
    if let Some(id) = reference.strip_prefix("suite/") {
        let s = catalog.suite(id).map_err(failure)?;
        return Ok(Resolved::Planned(resolve::flatten_suite(catalog, &s, &mut Vec::new()).map_err(failure)?));
    }
    if let Some(name) = reference.strip_prefix("result/") {
        return saved(name, catalog, store, None);
    }
    // `team/fio@1.2`, `team/suite/disk`, `team/results/NAME` when `team` is an added repository.
    if let Some((local, rest)) = catalog.split_repo(reference) {
        if rest.starts_with("suite/") {
            let s = catalog.suite(reference).map_err(failure)?;
            return Ok(Resolved::Planned(resolve::flatten_suite(catalog, &s, &mut Vec::new()).map_err(failure)?));
        }
        if let Some(name) = rest.strip_prefix("results/") {
            return shared(local, name, catalog, store);
        }
        warn_if_old(local);
        return planned(catalog.profile(reference).map_err(failure)?);
    }
    if looks_like_path(reference) {
        let p = Path::new(reference);
        if !p.exists() {
            return Err(Failure::new(exit::USAGE, format!("{reference} does not exist")));
        }
        let is_profile = p.is_dir() || p.file_name().is_some_and(|f| f == "profile.yaml") || !is_suite_file(p);
        if is_profile {
            return planned(resolve::profile_from_path(p).map_err(failure)?);
        }
        let s = resolve::suite_from_path(p).map_err(failure)?;
        return Ok(Resolved::Planned(resolve::flatten_suite(catalog, &s, &mut Vec::new()).map_err(failure)?));
    }
    if catalog.has_profile(reference) {
        return planned(catalog.profile(reference).map_err(failure)?);
    }
    if store.exists(reference) {
        return saved(reference, catalog, store, None);
    }
    if catalog.has_suite(reference) {
        let s = catalog.suite(reference).map_err(failure)?;
        return Ok(Resolved::Planned(resolve::flatten_suite(catalog, &s, &mut Vec::new()).map_err(failure)?));
    }
    // Not found: let the catalog phrase it with a suggestion.
    catalog.profile(reference).map_err(failure).and_then(planned)
}

/// A synced copy older than this gets a reminder to update it.
const OLD_COPY: std::time::Duration = std::time::Duration::from_secs(7 * 86400);

fn warn_if_old(local: &engine::repo::Local) {
    let age = local.state.age();
    if age > OLD_COPY {
        eprintln!(
            "warning: the copy of repository `{}` was synced {} ago; `engine repo update {}` fetches what changed",
            local.conf.name,
            engine::repo::describe_age(age),
            local.conf.name
        );
    }
}

/// `team/results/NAME`: the published result, copied into the result store
/// under its name the first time, then re-run like a saved result (a new
/// identifier is appended).
fn shared(local: &engine::repo::Local, name: &str, catalog: &Catalog, store: &Store) -> Result<Resolved, Failure> {
    use engine::repo::{index, sync};
    warn_if_old(local);
    let repo = &local.conf.name;
    let Some(entry) = local.index.result(name) else {
        let names: Vec<&str> = local.index.results.iter().map(|r| r.name.as_str()).collect();
        return Err(Failure::new(exit::USAGE, format!("repository `{repo}` publishes no result `{name}`")).hint(
            if names.is_empty() {
                format!("`{repo}` publishes no results")
            } else {
                format!("it publishes: {}", names.join(", "))
            },
        ));
    };
    let v = index::newest(&entry.versions, |v| v.version.as_str(), None)
        .ok_or_else(|| Failure::new(exit::USAGE, format!("`{repo}/results/{name}` has no version")))?;
    let path = sync::ensure(local, sync::Kind::Result, name, &v.version).map_err(super::repo::failure)?;
    let published = engine::result::store::load_file(&path).map_err(super::store_failure)?;
    if store.exists(name) {
        let mine = store.load(name).map_err(super::store_failure)?;
        let theirs: Vec<&str> = published.systems.iter().map(|s| s.identifier.as_str()).collect();
        if !theirs.iter().all(|i| mine.system(i).is_some()) {
            return Err(Failure::new(
                exit::USAGE,
                format!("a saved result `{name}` exists and is not the copy of `{repo}/results/{name}`"),
            )
            .hint(format!(
                "rename or delete yours (`engine result delete {name}`) to compare against the published one"
            )));
        }
    } else {
        store.save(name, &published).map_err(super::store_failure)?;
        eprintln!("copied {repo}/results/{name} (version {}) into result `{name}`", v.version);
    }
    saved(name, catalog, store, Some(repo))
}

/// A YAML file with a top-level `tests:` and no `executor:` is a suite.
pub fn is_suite_file(p: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(p) else { return false };
    let ix = engine::profile::yaml_index::YamlIndex::build(&text);
    ix.has(&engine::path!["tests"]) && !ix.has(&engine::path!["executor"])
}

/// The tests of saved result `name`, matched to today's profiles by id,
/// major.minor version and option values.
/// `via`: the repository a shared result came from, which stands in for a
/// repository the result names but that is not added here, and for local
/// profiles of the publisher's that are not here.
fn saved(name: &str, catalog: &Catalog, store: &Store, via: Option<&str>) -> Result<Resolved, Failure> {
    let file = store.load(name).map_err(super::store_failure)?;
    let mut tests: Vec<Test> = Vec::new();
    let mut missing = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in &file.results {
        if !seen.insert(r.test.clone()) {
            continue;
        }
        // A repository's profile runs again at the exact version the result
        // records, from that repository (fetched when needed); a local one
        // at the same major.minor.
        let (reference, found) = match &r.repository {
            Some(repo) => {
                // The repository as added here: by URL (users name it as they like), else by name.
                let here = catalog.repos().list.iter().find(|l| l.conf.url == repo.url).map(|l| l.conf.name.clone());
                let name = here
                    .or_else(|| catalog.repos().get(&repo.name).map(|_| repo.name.clone()))
                    .or_else(|| via.map(str::to_string))
                    .unwrap_or_else(|| repo.name.clone());
                let found = match catalog.repos().get(&name) {
                    Some(_) => {
                        catalog.profile_from_repo(&name, &r.profile, &r.profile_version).map_err(|e| e.to_string())
                    }
                    None => {
                        Err(format!("add its repository: `engine repo add {} {} --key PUBKEY`", repo.name, repo.url))
                    }
                };
                (format!("{name}/{}@{}", r.profile, r.profile_version), found)
            }
            None => {
                let mm: Vec<&str> = r.profile_version.split('.').take(2).collect();
                let reference = format!("{}@{}", r.profile, mm.join("."));
                let found = catalog.profile(&reference).or_else(|e| match via {
                    Some(v) => catalog.profile(&format!("{v}/{reference}")).map_err(|_| e),
                    None => Err(e),
                });
                (reference, found.map_err(|e| e.to_string()))
            }
        };
        let profile = match found {
            Ok(p) => Arc::new(p),
            Err(why) => {
                missing.push(format!("{} ({reference} is not available: {why})", r.description));
                continue;
            }
        };
        match engine::expand::test_from_choices(&profile, &r.options) {
            Some(t) => tests.push(t),
            None => {
                missing.push(format!("{}: {} (its options no longer exist in {reference})", r.profile, r.description))
            }
        }
    }
    Ok(Resolved::Saved { name: name.to_string(), tests, missing })
}

/// Presets from `--option` flags.
pub fn cli_presets(options: &[String]) -> Result<Vec<Preset>, Failure> {
    options.iter().map(|o| engine::expand::parse_cli_option(o).map_err(|e| expand_failure(e, exit::USAGE))).collect()
}

pub fn expand_failure(e: engine::expand::ExpandError, code: i32) -> Failure {
    match e {
        engine::expand::ExpandError::AtFile(d) => Failure::new(exit::INVALID, d.to_string()),
        engine::expand::ExpandError::CommandLine { msg, hint } => Failure::new(code, msg).hint(hint),
    }
}
