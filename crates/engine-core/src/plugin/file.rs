//! Plugin files of a profile: found in its folder and nowhere else, and the
//! limits its YAML sets for one call.

use super::limits::Limits;
use crate::model::profile::{LoadedProfile, PluginLimits};
use std::path::PathBuf;
use thiserror::Error;

/// Why a plugin path does not name a usable file in the profile's folder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PluginFileError {
    #[error("plugin file `{0}` does not exist")]
    Missing(String),
    #[error("plugin path `{0}` is a directory, not a `.wasm` file")]
    Directory(String),
    #[error("plugin path `{0}` leads out of the profile's folder (through a symlink or `..`)")]
    Escapes(String),
}

/// The plugin file `rel` names in the profile folder `dir`, checked on disk:
/// it exists, is a file, and resolves (symlinks followed) inside `dir`.
pub(crate) fn plugin_file(dir: &std::path::Path, rel: &str) -> Result<std::path::PathBuf, PluginFileError> {
    let lexical_escape = rel.starts_with('/')
        || std::path::Path::new(rel).components().any(|c| matches!(c, std::path::Component::ParentDir));
    if lexical_escape {
        return Err(PluginFileError::Escapes(rel.to_string()));
    }
    let joined = dir.join(rel);
    let real = joined.canonicalize().map_err(|_| PluginFileError::Missing(rel.to_string()))?;
    let root = dir.canonicalize().map_err(|_| PluginFileError::Missing(rel.to_string()))?;
    if !real.starts_with(&root) {
        return Err(PluginFileError::Escapes(rel.to_string()));
    }
    if real.is_dir() {
        return Err(PluginFileError::Directory(rel.to_string()));
    }
    Ok(real)
}

/// Why a profile's plugin cannot be used.
#[derive(Debug, Error)]
pub(crate) enum PluginPathError {
    #[error("profile {profile} is built into engine and has no folder for plugin `{rel}`")]
    Builtin { profile: String, rel: String },
    #[error("profile {profile}: {source}")]
    File { profile: String, source: PluginFileError },
}

/// The plugin `rel` of profile `lp`, checked again on disk when it is used
/// (the profile was checked when it was loaded; the file may have changed since).
pub(crate) fn plugin_path(lp: &LoadedProfile, rel: &str) -> Result<PathBuf, PluginPathError> {
    let profile = || lp.profile.id.clone();
    let dir = lp.dir().ok_or_else(|| PluginPathError::Builtin { profile: profile(), rel: rel.to_string() })?;
    plugin_file(dir, rel).map_err(|source| PluginPathError::File { profile: profile(), source })
}

/// The limits a profile sets for one plugin call, on top of the defaults.
pub fn limits(def: &PluginLimits) -> Limits {
    let mut l = Limits::default();
    if let Some(m) = &def.memory {
        l.memory = m.bytes();
    }
    if let Some(t) = &def.time {
        l.time = t.get();
    }
    l
}
