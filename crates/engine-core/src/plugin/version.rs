//! Which `engine:plugin` interface a component exports, and whether this
//! engine speaks its version (semver: the same major, or for 0.x the same
//! minor, as `INTERFACE_VERSION`).

/// The version of `sdk/wit/plugin.wit` this engine implements.
pub const INTERFACE_VERSION: &str = "0.1.0";
const PACKAGE: &str = "engine:plugin";

/// What a plugin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Workload,
    Parser,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Workload => "workload",
            Kind::Parser => "parser",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error(
        "it was built for {PACKAGE}@{found}, another major version than this engine's {PACKAGE}@{INTERFACE_VERSION}"
    )]
    Incompatible { found: String },
    #[error("it exports no {PACKAGE} workload or parser interface (exports: {})", list(.exports))]
    NoInterface { exports: Vec<String> },
    #[error("it exports both a workload and a parser; a plugin is one of them")]
    Both,
}

fn list(v: &[String]) -> String {
    if v.is_empty() { "none".into() } else { v.join(", ") }
}

/// (major, minor-if-major-is-0): versions with the same key are compatible.
fn compat_key(v: &semver::Version) -> (u64, u64) {
    if v.major == 0 { (0, v.minor) } else { (v.major, 0) }
}

/// The kind of plugin whose component exports `exports` (instance names such
/// as `engine:plugin/workload@0.1.0`), and the exact export name to call.
pub(crate) fn check<'a>(exports: impl IntoIterator<Item = &'a str>) -> Result<(Kind, String), VersionError> {
    let ours = semver::Version::parse(INTERFACE_VERSION).expect("valid version");
    let mut found = Vec::new();
    let mut all = Vec::new();
    for name in exports {
        all.push(name.to_string());
        let Some(rest) = name.strip_prefix(PACKAGE).and_then(|r| r.strip_prefix('/')) else { continue };
        let (iface, version) = rest.split_once('@').unwrap_or((rest, ""));
        let kind = match iface {
            "workload" => Kind::Workload,
            "parser" => Kind::Parser,
            _ => continue,
        };
        let v = semver::Version::parse(version).map_err(|_| VersionError::Incompatible {
            found: if version.is_empty() { "(no version)".into() } else { version.into() },
        })?;
        if compat_key(&v) != compat_key(&ours) || v > ours {
            return Err(VersionError::Incompatible { found: version.to_string() });
        }
        found.push((kind, name.to_string()));
    }
    match found.len() {
        0 => Err(VersionError::NoInterface { exports: all }),
        1 => Ok(found.remove(0)),
        _ => Err(VersionError::Both),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wit_file_has_this_version() {
        let wit = include_str!("../../../../sdk/wit/plugin.wit");
        assert!(wit.contains(&format!("package engine:plugin@{INTERFACE_VERSION};")));
    }

    #[test]
    fn versions() {
        assert_eq!(check(["engine:plugin/workload@0.1.0"]).unwrap().0, Kind::Workload);
        assert_eq!(check(["wasi:cli/run@0.2.0", "engine:plugin/parser@0.1.0"]).unwrap().0, Kind::Parser);
        let e = check(["engine:plugin/workload@1.0.0"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it was built for engine:plugin@1.0.0, another major version than this engine's engine:plugin@0.1.0"
        );
        assert!(matches!(check(["engine:plugin/workload@0.2.0"]), Err(VersionError::Incompatible { .. })));
        assert!(matches!(check(["wasi:cli/run@0.2.0"]), Err(VersionError::NoInterface { .. })));
    }
}
