//! Finding profiles and suites by reference: `fio`, `fio@1.0`, `suite/disk`,
//! or a path. The search path is `ENGINE_PROFILE_PATH`, then the user folder
//! in `ENGINE_HOME`, then the profiles compiled into the binary.

use super::diag::{Diagnostic, Diagnostics, Pos, did_you_mean};
use super::load::{self, LoadedProfile, LoadedSuite, Origin};
use crate::env;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

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
}

impl ResolveError {
    pub fn hint(&self) -> Option<&str> {
        match self {
            ResolveError::NotFound { hint, .. } => Some(hint),
            ResolveError::NoVersion { .. } => {
                Some("drop the version to take the newest, or list versions with `engine list profiles`")
            }
            ResolveError::Cycle(_) => Some("remove the item that includes the suite again"),
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

/// The profiles and suites visible to this run.
pub struct Catalog {
    roots: Vec<PathBuf>,
}

impl Catalog {
    /// The search path from the environment, with `user_dir` (in ENGINE_HOME).
    pub fn from_env(user_dir: &Path) -> Self {
        let mut roots: Vec<PathBuf> = std::env::var(env::ENGINE_PROFILE_PATH)
            .unwrap_or_default()
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
        roots.push(user_dir.to_path_buf());
        Catalog { roots }
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
                        origin: Origin::File(file),
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
                    .and_then(|t| load::profile_from_str(&t, &f.display, f.origin.clone())),
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

    pub fn has_profile(&self, id: &str) -> bool {
        let id = id.split('@').next().unwrap_or(id);
        self.profile_files().iter().any(|(i, _)| i == id)
    }

    pub fn has_suite(&self, id: &str) -> bool {
        self.suite_files().iter().any(|(i, _)| i == id)
    }

    /// Loads profile `reference` (`fio`, `fio@1`, `fio@1.0`, `fio@1.0.2`).
    pub fn profile(&self, reference: &str) -> Result<LoadedProfile, ResolveError> {
        let (id, want) = match reference.split_once('@') {
            Some((i, v)) => (i, Some(v)),
            None => (reference, None),
        };
        let candidates: Vec<Found> =
            self.profile_files().into_iter().filter(|(i, _)| i == id).map(|(_, f)| f).collect();
        if candidates.is_empty() {
            return Err(self.not_found(reference));
        }
        let mut found = Vec::new();
        for f in candidates {
            let text = f.read()?;
            let p = load::profile_from_str(&text, &f.display, f.origin.clone()).map_err(ResolveError::Invalid)?;
            match want {
                None => return Ok(p),
                Some(w) if version_matches(&p.profile.version, w) => return Ok(p),
                Some(_) => found.push(p.profile.version.clone()),
            }
        }
        Err(ResolveError::NoVersion {
            id: id.to_string(),
            want: want.unwrap_or("").to_string(),
            found: found.join(", "),
        })
    }

    /// Loads suite `id` (`disk` for `suite/disk`).
    pub fn suite(&self, id: &str) -> Result<LoadedSuite, ResolveError> {
        let Some((_, f)) = self.suite_files().into_iter().find(|(i, _)| i == id) else {
            return Err(self.not_found(&format!("suite/{id}")));
        };
        let text = f.read()?;
        load::suite_from_str(&text, id, &f.display).map_err(ResolveError::Invalid)
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

fn io_diag(display: &str, e: ResolveError) -> Diagnostics {
    Diagnostics(vec![Diagnostic::new(display, Pos::UNKNOWN, e.to_string())])
}

/// `1` matches 1.x.y, `1.2` matches 1.2.y, `1.2.3` only itself.
pub fn version_matches(version: &str, want: &str) -> bool {
    let have: Vec<&str> = version.split(['.', '-', '+']).collect();
    let want: Vec<&str> = want.split('.').collect();
    want.len() <= have.len() && want.iter().zip(&have).all(|(w, h)| w == h)
}

/// Loads a profile from a path: a `profile.yaml`, or a folder holding one.
pub fn profile_from_path(path: &Path) -> Result<LoadedProfile, ResolveError> {
    let file = if path.is_dir() { path.join("profile.yaml") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&file).map_err(|source| ResolveError::Io { path: file.clone(), source })?;
    load::profile_from_str(&text, &file.display().to_string(), Origin::File(file.clone()))
        .map_err(ResolveError::Invalid)
}

/// Loads a suite from a path.
pub fn suite_from_path(path: &Path) -> Result<LoadedSuite, ResolveError> {
    let text = std::fs::read_to_string(path).map_err(|source| ResolveError::Io { path: path.to_path_buf(), source })?;
    let id = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
    load::suite_from_str(&text, &id, &path.display().to_string()).map_err(ResolveError::Invalid)
}

/// A profile plus the presets a suite gives it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub profile: Arc<LoadedProfile>,
    pub presets: Vec<crate::expand::Preset>,
    /// From a suite item marked `optional`: skipped quietly when its
    /// programs are missing or it needs root.
    pub optional: bool,
}

/// Flattens a suite (and the suites it includes) into planned profiles.
pub fn flatten_suite(
    catalog: &Catalog,
    suite: &LoadedSuite,
    stack: &mut Vec<String>,
) -> Result<Vec<Planned>, ResolveError> {
    use super::yaml_index::Seg;
    if stack.contains(&suite.id) {
        return Err(ResolveError::Cycle(suite.id.clone()));
    }
    stack.push(suite.id.clone());
    let mut out = Vec::new();
    let mut diags = Diagnostics::default();
    for (i, item) in suite.suite.tests.iter().enumerate() {
        let at = |k: &str| vec![Seg::from("tests"), Seg::from(i), Seg::from(k)];
        if let Some(s) = &item.suite {
            match catalog.suite(s) {
                Ok(inner) => out.extend(flatten_suite(catalog, &inner, stack)?),
                Err(ResolveError::NotFound { hint, .. }) => diags.push(
                    Diagnostic::new(&suite.display, suite.index.value(&at("suite")), format!("no suite named `{s}`"))
                        .with_hint(hint),
                ),
                Err(e) => return Err(e),
            }
        } else if let Some(p) = &item.profile {
            match catalog.profile(p) {
                Ok(lp) => {
                    let presets = item
                        .options
                        .iter()
                        .map(|(k, v)| {
                            let mut path = at("options");
                            path.push(Seg::from(k.as_str()));
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
                        .collect();
                    out.push(Planned { profile: Arc::new(lp), presets, optional: item.optional });
                }
                Err(ResolveError::NotFound { hint, .. }) => diags.push(
                    Diagnostic::new(
                        &suite.display,
                        suite.index.value(&at("profile")),
                        format!("no profile named `{p}`"),
                    )
                    .with_hint(hint),
                ),
                Err(e @ ResolveError::NoVersion { .. }) => diags.push(
                    Diagnostic::new(&suite.display, suite.index.value(&at("profile")), e.to_string())
                        .with_hint("drop the version to take the newest"),
                ),
                Err(e) => return Err(e),
            }
        }
    }
    stack.pop();
    if !diags.is_empty() {
        return Err(ResolveError::Invalid(diags));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert!(version_matches("1.2.3", "1"));
        assert!(version_matches("1.2.3", "1.2"));
        assert!(version_matches("1.2.3", "1.2.3"));
        assert!(!version_matches("1.2.3", "1.3"));
        assert!(!version_matches("1.2.3", "1.2.3.4"));
    }

    #[test]
    fn builtin_profiles_all_load() {
        let dir = tempfile::tempdir().unwrap();
        let cat = Catalog { roots: vec![dir.path().to_path_buf()] };
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
