//! `install:`: packages, downloads and build steps a profile needs.

use super::options::Scalar;
use crate::units::Duration;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `install:` section: what `engine install` (and `engine benchmark`,
/// before the first test) puts in `$ENGINE_HOME/installed/<id>@<version>/`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Install {
    /// System packages by generic name (`build-utilities`, `flex`), mapped per
    /// distribution family in `packages.yaml`; each has a check that skips it
    /// when present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<PackageItem>,
    /// Files to fetch into the download cache, verify, and extract (archives)
    /// or copy into the install directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downloads: Vec<Download>,
    /// Steps run in the install directory after the downloads, with
    /// `NUM_CPU_CORES` and the like set, logged to `install.log`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build: Vec<BuildStep>,
}

/// A generic package name, or one that only some tests need.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PackageItem {
    /// A generic name from `packages.yaml`.
    Name(String),
    /// A generic name needed only by tests whose values match `when`.
    When {
        name: String,
        /// Only for tests whose option values match (`{source: debian}`).
        when: IndexMap<String, Scalar>,
    },
}

impl PackageItem {
    pub fn name(&self) -> &str {
        match self {
            PackageItem::Name(n) | PackageItem::When { name: n, .. } => n,
        }
    }
    pub fn when(&self) -> Option<&IndexMap<String, Scalar>> {
        match self {
            PackageItem::Name(_) => None,
            PackageItem::When { when, .. } => Some(when),
        }
    }
}

impl<'de> Deserialize<'de> for PackageItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Detailed {
            name: String,
            #[serde(default)]
            when: IndexMap<String, Scalar>,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PackageItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a generic package name, or `{name: …, when: {…}}`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PackageItem, E> {
                Ok(PackageItem::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<PackageItem, A::Error> {
                let d = Detailed::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(PackageItem::When { name: d.name, when: d.when })
            }
        }
        d.deserialize_any(V)
    }
}

/// One file to download: verified by size and sha256 before it is used.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Download {
    /// File name in the install directory (and in `ENGINE_DOWNLOAD_CACHE`
    /// folders): `tiobench-0.4.2.tar.gz`.
    pub file: String,
    /// Its SHA-256 (64 hex digits). Required: a download is never used unverified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Its size in bytes (checked before and after the transfer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Mirrors, tried in order (`https://`; `http://` only with `insecure: true`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
    /// Allow `http://` mirrors (the sha256 still guards the content).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure: bool,
    /// Only on these platforms: `linux`, `x86_64`, `linux-aarch64`, or a
    /// comma-separated list; elsewhere the download is left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Unpack an archive (`.tar.gz`, `.tgz`, `.tar.xz`, `.tar.bz2`, `.tar.zst`,
    /// `.zip`) into the install directory (the default for those names);
    /// `false` copies the file as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extract: Option<bool>,
    /// Only for tests whose option values match (`{source: kernel-org}`).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub when: IndexMap<String, Scalar>,
}

/// A build step: `shell` (run by `/bin/sh -e -c`) or `program` + `args`, run
/// in the install directory.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildStep {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Longest the step may take (default 60m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// Only for tests whose option values match.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub when: IndexMap<String, Scalar>,
}
