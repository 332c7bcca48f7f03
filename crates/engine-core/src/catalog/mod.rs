//! Finding profiles and suites: `profile_of`/`suite_of` take the parts a
//! reference was classified into (`name.rs`), `profile`/`suite` classify a
//! text first. References: `fio`, `fio@1.0`, `suite/disk`,
//! or a path. The search path is `ENGINE_PROFILE_PATH`, then the user folder
//! in `ENGINE_HOME`, then the profiles compiled into the binary.

use crate::model::diag::{Diagnostic, Diagnostics, Pos, did_you_mean};
use crate::model::profile::{LoadedProfile, Origin};
use crate::model::version;
use crate::profile::load::{self, LoadedSuite};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

pub mod name;
pub mod reference;

use name::{Name, split_version};

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_files.rs"));
}

#[derive(Debug, Error)]
pub enum ResolveError {
    #[error("no profile, suite or saved result named `{reference}`")]
    NotFound { reference: String, hint: String },
    #[error("no profile `{id}` with a version matching `{want}` (found {found})")]
    NoVersion { id: String, want: String, found: String },
    #[error("{0}")]
    Invalid(Diagnostics),
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("suite `{0}` includes itself")]
    Cycle(String),
    /// Suites nested deeper than [`MAX_SUITE_DEPTH`], or expanding to more
    /// than [`crate::expand::MAX_TESTS`] items: a few files must not cost
    /// without bound (a diamond of suites doubles at every level).
    #[error("suite `{suite}` {why}")]
    TooLarge { suite: String, why: String },
    /// A profile repository could not give what was asked (unreachable,
    /// refused on trust, needs a newer engine).
    #[error("{msg}")]
    Repo { msg: String, hint: Option<String>, trust: bool },
    #[error("{0} does not exist")]
    NoSuchPath(String),
    /// A repository publishes no such result (or no version of it).
    #[error("{msg}")]
    NoSharedResult { msg: String, hint: Option<String> },
    /// A saved result's test came from a repository not added here.
    #[error("add its repository: `engine repo add {name} {url} --key PUBKEY`")]
    RepoNotAdded { name: String, url: String },
    /// A saved result of that name that is not the published one.
    #[error("a saved result `{name}` exists and is not the copy of `{repo}/results/{name}`")]
    NotTheCopy { name: String, repo: String },
    /// The published copy of a shared result could not be fetched.
    #[error(transparent)]
    Fetch(crate::repo::RepoError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl From<load::LoadError> for ResolveError {
    fn from(e: load::LoadError) -> Self {
        match e {
            load::LoadError::Io { path, source } => ResolveError::Io { path, source },
            load::LoadError::Invalid(d) => ResolveError::Invalid(d),
        }
    }
}

impl From<crate::repo::RepoError> for ResolveError {
    fn from(e: crate::repo::RepoError) -> Self {
        ResolveError::Repo { msg: e.to_string(), hint: e.hint(), trust: e.is_trust() }
    }
}

impl ResolveError {
    /// `X/…` where no repository `X` is added.
    pub(crate) fn no_repo(reference: &str, repo: &str) -> Self {
        ResolveError::NotFound {
            reference: reference.to_string(),
            hint: format!("no repository named `{repo}` is added; list them with `engine repo list`"),
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            ResolveError::NotFound { hint, .. } => Some(hint.clone()),
            ResolveError::NoVersion { .. } => {
                Some("drop the version to take the newest, or list versions with `engine list profiles`".into())
            }
            ResolveError::Cycle(_) => Some("remove the item that includes the suite again".into()),
            ResolveError::TooLarge { .. } => Some("list the tests in fewer suites, each included once".into()),
            ResolveError::Repo { hint, .. } | ResolveError::NoSharedResult { hint, .. } => hint.clone(),
            ResolveError::NotTheCopy { name, .. } => Some(format!(
                "rename or delete yours (`engine result delete {name}`) to compare against the published one"
            )),
            _ => None,
        }
    }
}

/// One file found on the search path.
#[derive(Debug, Clone)]
struct Found {
    /// `test-profiles/fio/profile.yaml` or `suites/disk.yaml`, relative to its root.
    rel: String,
    display: String,
    origin: Origin,
    text: Option<&'static str>,
}

impl Found {
    fn read(&self) -> Result<String, ResolveError> {
        match (&self.text, &self.origin) {
            (Some(t), _) => Ok((*t).to_string()),
            (None, Origin::File(p)) => {
                std::fs::read_to_string(p).map_err(|source| ResolveError::Io { path: p.clone(), source })
            }
            (None, Origin::Builtin) => unreachable!("built-in files carry their text"),
        }
    }
}

/// The profiles and suites visible to this run: local folders and the
/// built-in ones, then the added profile repositories.
pub struct Catalog {
    roots: Vec<PathBuf>,
    /// Generic package names profiles may use.
    packages: Arc<load::Packages>,
    /// How repository archives are fetched when a reference needs one.
    downloads: crate::install::download::Settings,
    /// `$ENGINE_HOME/repos` (read when a reference needs it).
    repos_root: Option<PathBuf>,
    repos: std::sync::OnceLock<crate::repo::Repos>,
}

/// Ids of the built-in profiles and suites (a repository may not take one as its name).
pub fn builtin_ids() -> Vec<String> {
    builtin::BUILTIN_FILES
        .iter()
        .filter_map(|(rel, _)| {
            rel.strip_prefix("test-profiles/")
                .and_then(|r| r.strip_suffix("/profile.yaml"))
                .or_else(|| rel.strip_prefix("suites/").and_then(|r| r.strip_suffix(".yaml")))
        })
        .map(str::to_string)
        .collect()
}

impl Catalog {
    /// The search path: `extra` folders (`ENGINE_PROFILE_PATH`), then
    /// `user_dir` (ENGINE_HOME), then the built-in profiles; the repositories
    /// added in `user_dir/repos`.
    pub fn new(
        extra: &[PathBuf],
        user_dir: &Path,
        packages: Arc<load::Packages>,
        downloads: crate::install::download::Settings,
    ) -> Self {
        let mut roots = extra.to_vec();
        roots.push(user_dir.to_path_buf());
        let repos_root = Some(user_dir.join("repos"));
        Catalog { roots, packages, downloads, repos_root, repos: std::sync::OnceLock::new() }
    }

    /// How repository archives are fetched.
    pub(crate) fn downloads(&self) -> &crate::install::download::Settings {
        &self.downloads
    }

    /// The generic package names profiles may use.
    pub fn packages(&self) -> &load::Packages {
        &self.packages
    }

    /// The added repositories as synced here (read once).
    pub fn repos(&self) -> &crate::repo::Repos {
        self.repos.get_or_init(|| match &self.repos_root {
            Some(r) => crate::repo::Repos::load(r),
            None => crate::repo::Repos { root: PathBuf::new(), list: Vec::new(), warnings: Vec::new() },
        })
    }

    /// Loads `id@version` from repository `local` (fetching it when only the index has it).
    fn repo_profile_at(
        &self,
        local: &crate::repo::Local,
        id: &str,
        version: &str,
    ) -> Result<LoadedProfile, ResolveError> {
        let file = crate::repo::sync::ensure(local, crate::repo::sync::Kind::Profile, id, version, &self.downloads)?;
        let mut p = load::profile_from_path(&file, &self.packages)?;
        p.source = Some(local.reference());
        Ok(p)
    }

    /// A profile from one repository: `fio`, `fio@1.2`, `fio@1.2.3`.
    pub(crate) fn repo_profile(
        &self,
        local: &crate::repo::Local,
        id: &str,
        want: Option<&str>,
    ) -> Result<LoadedProfile, ResolveError> {
        let name = &local.conf.name;
        let rest = with_version(id, want);
        let Some(entry) = local.index.profile(id) else {
            let ids: Vec<String> = local.index.profiles.iter().map(|p| format!("{name}/{}", p.id)).collect();
            let hint = match did_you_mean(&format!("{name}/{id}"), ids.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("list what `{name}` holds with `engine list profiles`"),
            };
            return Err(ResolveError::NotFound { reference: format!("{name}/{rest}"), hint });
        };
        match version::newest(&entry.versions, |v| v.version.as_str(), want) {
            Some(v) => self.repo_profile_at(local, id, &v.version),
            None => Err(ResolveError::NoVersion {
                id: format!("{name}/{id}"),
                want: want.unwrap_or("").to_string(),
                found: entry.versions.iter().map(|v| v.version.clone()).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Loads `id@version` exactly from repository `name` (a result's re-run).
    pub(crate) fn profile_from_repo(&self, name: &str, id: &str, version: &str) -> Result<LoadedProfile, ResolveError> {
        let Some(local) = self.repos().get(name) else {
            return Err(ResolveError::NotFound {
                reference: format!("{name}/{id}@{version}"),
                hint: format!(
                    "no repository named `{name}` is added: add it with `engine repo add {name} URL --key KEY`"
                ),
            });
        };
        self.repo_profile(local, id, Some(version))
    }

    /// The newest version of `id` in each repository (in the order they
    /// were added) matching `want`.
    fn repo_candidates<'a>(
        &'a self,
        id: &str,
        want: Option<&str>,
    ) -> Vec<(&'a crate::repo::Local, &'a crate::repo::index::ProfileVersion)> {
        self.repos()
            .list
            .iter()
            .filter_map(|l| {
                let e = l.index.profile(id)?;
                version::newest(&e.versions, |v| v.version.as_str(), want).map(|v| (l, v))
            })
            .collect()
    }

    fn files(&self, top: &str) -> Vec<Found> {
        let mut out = Vec::new();
        for root in &self.roots {
            let dir = root.join(top);
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
            entries.sort();
            for p in entries {
                let (file, rel) = if top == "test-profiles" {
                    let f = p.join("profile.yaml");
                    let name = p.file_name().unwrap_or_default().to_string_lossy().to_string();
                    (f, format!("test-profiles/{name}/profile.yaml"))
                } else {
                    if p.extension().is_none_or(|e| e != "yaml") {
                        continue;
                    }
                    let name = p.file_name().unwrap_or_default().to_string_lossy().to_string();
                    (p.clone(), format!("suites/{name}"))
                };
                if file.is_file() {
                    out.push(Found {
                        rel,
                        display: file.display().to_string(),
                        origin: Origin::File(std::path::absolute(&file).unwrap_or(file)),
                        text: None,
                    });
                }
            }
        }
        for (rel, text) in builtin::BUILTIN_FILES {
            let is_profile = rel.starts_with("test-profiles/") && rel.ends_with("/profile.yaml");
            let is_suite = rel.starts_with("suites/");
            if (top == "test-profiles" && is_profile) || (top == "suites" && is_suite) {
                out.push(Found {
                    rel: rel.to_string(),
                    display: format!("<built-in>/{rel}"),
                    origin: Origin::Builtin,
                    text: Some(text),
                });
            }
        }
        out
    }

    /// Profile ids in search order (a folder name is the profile's id by convention).
    fn profile_files(&self) -> Vec<(String, Found)> {
        self.files("test-profiles")
            .into_iter()
            .map(|f| {
                let id = f.rel.trim_start_matches("test-profiles/").trim_end_matches("/profile.yaml").to_string();
                (id, f)
            })
            .collect()
    }

    fn suite_files(&self) -> Vec<(String, Found)> {
        self.files("suites")
            .into_iter()
            .map(|f| (f.rel.trim_start_matches("suites/").trim_end_matches(".yaml").to_string(), f))
            .collect()
    }

    /// Every visible profile (the first of each id on the search path), loaded;
    /// broken ones come back as errors.
    pub fn all_profiles(&self) -> Vec<Result<LoadedProfile, Diagnostics>> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for (id, f) in self.profile_files() {
            if !seen.insert(id) {
                continue;
            }
            out.push(
                f.read()
                    .map_err(|e| io_diag(&f.display, e))
                    .and_then(|t| load::profile_from_str(&t, &f.display, f.origin.clone(), &self.packages)),
            );
        }
        out
    }

    /// Suite ids and their display paths.
    pub fn all_suites(&self) -> Vec<(String, String)> {
        let mut seen = std::collections::HashSet::new();
        self.suite_files()
            .into_iter()
            .filter(|(id, _)| seen.insert(id.clone()))
            .map(|(id, f)| (id, f.display))
            .collect()
    }

    /// Where the profiles that `id`'s first match hides are (a user profile
    /// named like a built-in one shadows it).
    pub fn shadowed(&self, id: &str) -> Vec<String> {
        self.profile_files().into_iter().filter(|(i, _)| i == id).skip(1).map(|(_, f)| f.display).collect()
    }

    pub(crate) fn has_profile(&self, id: &str) -> bool {
        self.profile_files().iter().any(|(i, _)| i == id)
            || self.repos().list.iter().any(|l| l.index.profile(id).is_some())
    }

    pub(crate) fn has_suite(&self, id: &str) -> bool {
        self.suite_files().iter().any(|(i, _)| i == id) || self.repos().list.iter().any(|l| l.index.suite(id).is_some())
    }

    /// Loads profile `reference` (`fio`, `fio@1`, `fio@1.0`, `fio@1.0.2`, or
    /// `team/fio…` from repository `team`). Without a repository the newest
    /// matching version wins: the local one (the first on the search path),
    /// else each repository in the order they were added; on a tie the
    /// earlier one.
    pub(crate) fn profile(&self, reference: &str) -> Result<LoadedProfile, ResolveError> {
        match name::classify(reference, self.repos()) {
            Name::RepoProfile { repo, id, want } => self.repo_profile(repo, id, want),
            Name::NoRepo { repo } => Err(ResolveError::no_repo(reference, repo)),
            _ => {
                let (id, want) = split_version(reference);
                self.profile_of(id, want)
            }
        }
    }

    /// Profile `id` (at version `want`) from the search path or any
    /// repository: the newest matching version wins (see [`Catalog::profile`]).
    pub(crate) fn profile_of(&self, id: &str, want: Option<&str>) -> Result<LoadedProfile, ResolveError> {
        let reference = with_version(id, want);
        let reference = reference.as_str();
        let candidates: Vec<Found> =
            self.profile_files().into_iter().filter(|(i, _)| i == id).map(|(_, f)| f).collect();
        let remote = self.repo_candidates(id, want);
        if candidates.is_empty() && remote.is_empty() {
            if self.repos().list.iter().any(|l| l.index.profile(id).is_some()) {
                let found: Vec<String> = self
                    .repos()
                    .list
                    .iter()
                    .filter_map(|l| l.index.profile(id).map(|e| (l, e)))
                    .flat_map(|(l, e)| e.versions.iter().map(move |v| format!("{}/{id}@{}", l.conf.name, v.version)))
                    .collect();
                return Err(ResolveError::NoVersion {
                    id: id.to_string(),
                    want: want.unwrap_or("").to_string(),
                    found: found.join(", "),
                });
            }
            return Err(self.not_found(reference));
        }
        let mut found = Vec::new();
        let mut local = None;
        for f in candidates {
            let text = f.read()?;
            let p = load::profile_from_str(&text, &f.display, f.origin.clone(), &self.packages)
                .map_err(ResolveError::Invalid)?;
            match want {
                Some(w) if !version::matches(&p.profile.version, w) => found.push(p.profile.version.clone()),
                _ => {
                    local = Some(p);
                    break;
                }
            }
        }
        let best =
            remote.into_iter().reduce(|a, b| if version::compare(&b.1.version, &a.1.version).is_gt() { b } else { a });
        match (local, best) {
            (Some(lp), Some((l, v))) if version::compare(&v.version, &lp.profile.version).is_gt() => {
                self.repo_profile_at(l, id, &v.version)
            }
            (Some(lp), _) => Ok(lp),
            (None, Some((l, v))) => self.repo_profile_at(l, id, &v.version),
            (None, None) => {
                for l in &self.repos().list {
                    if let Some(e) = l.index.profile(id) {
                        found.extend(e.versions.iter().map(|v| format!("{}/{id}@{}", l.conf.name, v.version)));
                    }
                }
                Err(ResolveError::NoVersion {
                    id: id.to_string(),
                    want: want.unwrap_or("").to_string(),
                    found: found.join(", "),
                })
            }
        }
    }

    /// Loads suite `id` (`disk` for `suite/disk`), or `team/suite/disk[@1.0]`
    /// from repository `team`. Without a repository the local suite wins,
    /// unless a repository has a newer version.
    pub fn suite(&self, id: &str) -> Result<LoadedSuite, ResolveError> {
        match name::classify(&format!("suite/{id}"), self.repos()) {
            Name::Suite { repo, id, want } => self.suite_of(repo, id, want),
            _ => unreachable!("`suite/…` is always a suite"),
        }
    }

    /// Suite `sid` (at version `want`) from repository `repo`, or without
    /// one: the local suite, unless a repository has a newer version.
    pub(crate) fn suite_of(
        &self,
        repo: Option<&crate::repo::Local>,
        sid: &str,
        want: Option<&str>,
    ) -> Result<LoadedSuite, ResolveError> {
        if let Some(local) = repo {
            return self.repo_suite(local, sid, want);
        }
        let id = with_version(sid, want);
        let local = match self.suite_files().into_iter().find(|(i, _)| i == sid) {
            Some((_, f)) => {
                let text = f.read()?;
                let s = load::suite_from_str(&text, sid, &f.display).map_err(ResolveError::Invalid)?;
                let v = s.suite.version.clone().unwrap_or_else(|| "1.0.0".into());
                want.is_none_or(|w| version::matches(&v, w)).then_some((s, v))
            }
            None => None,
        };
        let best = self
            .repos()
            .list
            .iter()
            .filter_map(|l| {
                let e = l.index.suite(sid)?;
                version::newest(&e.versions, |v| v.version.as_str(), want).map(|v| (l, v.version.clone()))
            })
            .reduce(|a, b| if version::compare(&b.1, &a.1).is_gt() { b } else { a });
        match (local, best) {
            (Some((_, lv)), Some((l, v))) if version::compare(&v, &lv).is_gt() => self.repo_suite(l, sid, Some(&v)),
            (Some((s, _)), _) => Ok(s),
            (None, Some((l, v))) => self.repo_suite(l, sid, Some(&v)),
            (None, None) => Err(self.not_found(&format!("suite/{id}"))),
        }
    }

    /// A suite from one repository: `disk`, `disk@1.0`.
    fn repo_suite(
        &self,
        local: &crate::repo::Local,
        id: &str,
        want: Option<&str>,
    ) -> Result<LoadedSuite, ResolveError> {
        let name = &local.conf.name;
        let rest = with_version(id, want);
        let Some(entry) = local.index.suite(id) else {
            return Err(ResolveError::NotFound {
                reference: format!("{name}/suite/{rest}"),
                hint: format!("list what `{name}` holds with `engine list suites`"),
            });
        };
        let Some(v) = version::newest(&entry.versions, |v| v.version.as_str(), want) else {
            return Err(ResolveError::NoVersion {
                id: format!("{name}/suite/{id}"),
                want: want.unwrap_or("").to_string(),
                found: entry.versions.iter().map(|v| v.version.clone()).collect::<Vec<_>>().join(", "),
            });
        };
        let file = crate::repo::sync::ensure(local, crate::repo::sync::Kind::Suite, id, &v.version, &self.downloads)?;
        let mut s = load::suite_from_path(&file)?;
        s.source = Some(local.reference());
        Ok(s)
    }

    fn not_found(&self, reference: &str) -> ResolveError {
        let mut names: Vec<String> = self.profile_files().into_iter().map(|(i, _)| i).collect();
        names.extend(self.suite_files().into_iter().map(|(i, _)| format!("suite/{i}")));
        let hint = match did_you_mean(reference, names.iter().map(String::as_str)) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "list what exists with `engine list profiles` and `engine list suites`".to_string(),
        };
        ResolveError::NotFound { reference: reference.to_string(), hint }
    }
}

/// `fio` and `1.2` → `fio@1.2`, as a message names it.
fn with_version(id: &str, want: Option<&str>) -> String {
    match want {
        Some(v) => format!("{id}@{v}"),
        None => id.to_string(),
    }
}

fn io_diag(display: &str, e: ResolveError) -> Diagnostics {
    Diagnostics(vec![Diagnostic::new(display, Pos::UNKNOWN, e.to_string())])
}

/// A profile plus the presets a suite gives it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub profile: Arc<LoadedProfile>,
    pub presets: Vec<crate::expand::Preset>,
    /// From a suite item marked `optional`: skipped quietly when its
    /// programs are missing or it needs root.
    pub optional: bool,
    /// The trials' time budget the suite gives it (the outermost suite
    /// that sets one).
    pub budget: Option<std::time::Duration>,
    /// The monitors' interval the suite gives it (the outermost suite that
    /// sets one).
    pub monitor_interval: Option<std::time::Duration>,
    /// The set-ups the suite gives it (the outermost suite that sets them).
    pub setups: Option<u32>,
    /// From a suite: its options resolve from the presets and the profile's
    /// defaults, never a menu (a suite runs unattended).
    pub from_suite: bool,
}

/// The presets suite item `i` gives its profile, each with where it is written.
fn presets_of(suite: &LoadedSuite, i: usize, item: &crate::model::profile::SuiteItem) -> Vec<crate::expand::Preset> {
    use crate::profile::yaml_index::Seg;
    item.options
        .iter()
        .map(|(k, v)| {
            let path = vec![Seg::from("tests"), Seg::from(i), Seg::from("options"), Seg::from(k.as_str())];
            crate::expand::Preset {
                option: k.clone(),
                entries: v.items().into_iter().map(str::to_string).collect(),
                origin: crate::expand::Origin::Suite {
                    file: suite.display.clone(),
                    key: suite.index.key(&path),
                    value: suite.index.value(&path),
                },
            }
        })
        .collect()
}

/// How deep suites may include suites.
pub const MAX_SUITE_DEPTH: usize = 8;

/// A suite's items as profiles with presets, its inner suites flattened;
/// `stack` holds the suites being flattened (a suite that includes itself
/// is an error). Items that name nothing are diagnostics at their position.
pub fn flatten_suite(
    catalog: &Catalog,
    suite: &LoadedSuite,
    stack: &mut Vec<String>,
) -> Result<Vec<Planned>, ResolveError> {
    if stack.contains(&suite.id) {
        return Err(ResolveError::Cycle(suite.id.clone()));
    }
    if stack.len() >= MAX_SUITE_DEPTH {
        let why = format!("nests suites more than {MAX_SUITE_DEPTH} deep ({} …)", stack.join(" → "));
        return Err(ResolveError::TooLarge { suite: suite.id.clone(), why });
    }
    stack.push(suite.id.clone());
    let mut out = Vec::new();
    let mut diags = Diagnostics::default();
    for (i, item) in suite.suite.tests.iter().enumerate() {
        // Counted as they come: each level stops once past the bound, so
        // the work is bounded too, not only the result.
        if out.len() > crate::expand::MAX_TESTS {
            let why = format!("expands to more than {} items", crate::expand::MAX_TESTS);
            return Err(ResolveError::TooLarge { suite: suite.id.clone(), why });
        }
        if let Some(s) = &item.suite {
            match flatten_item_suite(catalog, suite, s, stack) {
                Ok(p) => out.extend(p),
                Err(Item::Diag(d)) => diags.push(item_diag(suite, i, "suite", d)),
                Err(Item::Stop(e)) => return Err(e),
            }
        } else if let Some(p) = &item.profile {
            match item_profile(catalog, suite, p) {
                Ok(lp) => out.push(Planned {
                    from_suite: true,
                    profile: Arc::new(lp),
                    presets: presets_of(suite, i, item),
                    optional: item.optional,
                    budget: None,
                    monitor_interval: None,
                    setups: None,
                }),
                Err(Item::Diag(d)) => diags.push(item_diag(suite, i, "profile", d)),
                Err(Item::Stop(e)) => return Err(e),
            }
        }
    }
    stack.pop();
    if out.len() > crate::expand::MAX_TESTS {
        let why = format!("expands to more than {} items", crate::expand::MAX_TESTS);
        return Err(ResolveError::TooLarge { suite: suite.id.clone(), why });
    }
    suite_settings(suite, &mut out, &mut diags);
    if !diags.is_empty() {
        return Err(ResolveError::Invalid(diags));
    }
    Ok(out)
}

/// What `suite` sets for every test in it (over what inner suites set:
/// the outermost wins): the trials' budget, the monitors' interval, the
/// set-ups; a value out of range is a diagnostic where it is written.
fn suite_settings(suite: &LoadedSuite, out: &mut [Planned], diags: &mut Diagnostics) {
    if let Some(b) = &suite.suite.budget {
        if b.get().is_zero() {
            diags.push(
                Diagnostic::new(
                    &suite.display,
                    suite.index.value(&[crate::profile::yaml_index::Seg::from("budget")]),
                    "budget must be longer than zero",
                )
                .with_hint("the time each test's trials may take, such as `5s`".to_string()),
            );
        } else {
            out.iter_mut().for_each(|p| p.budget = Some(b.get()));
        }
    }
    if let Some(m) = &suite.suite.monitor_interval {
        match crate::monitor::check_interval(m.get()) {
            Ok(every) => out.iter_mut().for_each(|p| p.monitor_interval = Some(every)),
            Err(why) => diags.push(
                Diagnostic::new(
                    &suite.display,
                    suite.index.value(&[crate::profile::yaml_index::Seg::from("monitor_interval")]),
                    why.to_string(),
                )
                .with_hint("how often the monitors sample, such as `250ms`".to_string()),
            ),
        }
    }
    match suite.suite.setups {
        Some(0) => diags.push(
            Diagnostic::new(
                &suite.display,
                suite.index.value(&[crate::profile::yaml_index::Seg::from("setups")]),
                "setups must be at least 1",
            )
            .with_hint("how many times each test is set up afresh, such as `3`".to_string()),
        ),
        Some(n) => out.iter_mut().for_each(|p| p.setups = Some(n)),
        None => {}
    }
}

/// What a suite item that names nothing usable gives.
enum Item {
    /// A diagnostic at the item: what is wrong, and a hint.
    Diag((String, String)),
    /// An error that stops the whole suite.
    Stop(ResolveError),
}

/// The diagnostic of suite item `i`, at its `key`.
fn item_diag(suite: &LoadedSuite, i: usize, key: &str, (msg, hint): (String, String)) -> Diagnostic {
    use crate::profile::yaml_index::Seg;
    let at = vec![Seg::from("tests"), Seg::from(i), Seg::from(key)];
    Diagnostic::new(&suite.display, suite.index.value(&at), msg).with_hint(hint)
}

/// A repository's suite names that repository's profiles and suites first:
/// the repository it came from, when it is added here.
fn home_repo<'c>(catalog: &'c Catalog, suite: &LoadedSuite) -> Option<&'c crate::repo::Local> {
    suite.source.as_ref().and_then(|src| catalog.repos().get(&src.name))
}

/// The inner suite `s` of an item, flattened.
fn flatten_item_suite(
    catalog: &Catalog,
    suite: &LoadedSuite,
    s: &str,
    stack: &mut Vec<String>,
) -> Result<Vec<Planned>, Item> {
    let found = match home_repo(catalog, suite) {
        Some(local) => {
            let (id, want) = split_version(s);
            catalog.suite_of(Some(local), id, want).or_else(|_| catalog.suite(s))
        }
        None => catalog.suite(s),
    };
    match found {
        Ok(inner) => flatten_suite(catalog, &inner, stack).map_err(Item::Stop),
        Err(ResolveError::NotFound { hint, .. }) => Err(Item::Diag((format!("no suite named `{s}`"), hint))),
        Err(e) => Err(Item::Stop(e)),
    }
}

/// The profile `p` an item names.
fn item_profile(catalog: &Catalog, suite: &LoadedSuite, p: &str) -> Result<LoadedProfile, Item> {
    let found = match home_repo(catalog, suite).filter(|_| !p.contains('/')) {
        Some(local) => {
            let (id, want) = split_version(p);
            match catalog.repo_profile(local, id, want) {
                Err(ResolveError::NotFound { .. }) => catalog.profile(p),
                other => other,
            }
        }
        None => catalog.profile(p),
    };
    found.map_err(|e| match e {
        ResolveError::NotFound { hint, .. } => Item::Diag((format!("no profile named `{p}`"), hint)),
        e @ ResolveError::NoVersion { .. } => Item::Diag((e.to_string(), "drop the version to take the newest".into())),
        e => Item::Stop(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert!(version::matches("1.2.3", "1"));
        assert!(version::matches("1.2.3", "1.2"));
        assert!(version::matches("1.2.3", "1.2.3"));
        assert!(!version::matches("1.2.3", "1.3"));
        assert!(!version::matches("1.2.3", "1.2.3.4"));
    }

    #[test]
    fn builtin_profiles_all_load() {
        let dir = tempfile::tempdir().unwrap();
        let cat = Catalog {
            roots: vec![dir.path().to_path_buf()],
            packages: Arc::new(load::Packages::builtin()),
            downloads: Default::default(),
            repos_root: None,
            repos: std::sync::OnceLock::new(),
        };
        let all = cat.all_profiles();
        assert!(all.len() >= 3, "fs-mark, fio, sqlite at least");
        for p in all {
            if let Err(d) = p {
                panic!("{d}");
            }
        }
        for (id, _) in cat.all_suites() {
            let s = cat.suite(&id).unwrap_or_else(|e| panic!("suite {id}: {e}"));
            flatten_suite(&cat, &s, &mut Vec::new()).unwrap_or_else(|e| panic!("suite {id}: {e}"));
        }
    }
}
