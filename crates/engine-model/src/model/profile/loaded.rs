//! A profile as loaded: where it came from and what that means for how it runs.

use super::file::Profile;
use super::sandbox::SandboxDef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a profile or suite file came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into the binary from the repository's `test-profiles/` and `suites/`.
    Builtin,
    /// A file on disk (user dir, `ENGINE_PROFILE_PATH`, or a path given on the command line).
    File(PathBuf),
}

/// A profile that loaded and passed every check.
#[derive(Debug, Clone)]
pub struct LoadedProfile {
    pub profile: Profile,
    /// What to show in messages (`test-profiles/fio/profile.yaml`).
    pub display: String,
    pub origin: Origin,
    /// The profile repository it came from (none: local or built-in).
    pub source: Option<RepositoryRef>,
}

impl LoadedProfile {
    /// `fio@1.0.0`.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.profile.id, self.profile.version)
    }

    /// Whether it runs confined unless `--sandbox`/`--no-sandbox` say
    /// otherwise: a repository's profile always (its publisher is not
    /// trusted with the machine), another when it asks (`sandbox:`).
    pub fn confined_by_default(&self) -> bool {
        self.shared() || self.profile.sandbox.as_ref().is_some_and(SandboxDef::on)
    }

    /// Whether someone other than its user wrote it: from a repository, or
    /// imported from PTS. Such a profile gets the sandbox's defaults at
    /// most, unless the user grants more.
    pub fn shared(&self) -> bool {
        self.source.is_some() || self.profile.imported_from.is_some()
    }

    /// The folder its file is in, where its helper files and plugins are:
    /// `.` for a bare `profile.yaml`; none for a built-in profile.
    pub fn dir(&self) -> Option<&Path> {
        match &self.origin {
            Origin::File(f) => Some(f.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))),
            Origin::Builtin => None,
        }
    }
}

/// A profile repository, as a result records it: re-running the result
/// takes the same profile version from the same repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepositoryRef {
    /// The name it was added under (`team`).
    pub name: String,
    /// Its URL.
    pub url: String,
    /// SHA-256 of the signed index the profile was taken from.
    pub index_sha256: String,
}
