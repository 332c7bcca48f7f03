//! Checking a result file before it is merged with others: it must satisfy
//! `schemas/result.schema.json`, be of the format version this engine
//! writes, and come from an engine of the same major version (before 1.0 the
//! minor counts as the major, as Cargo reads versions). A file that fails any
//! of these is not merged at all: its values cannot be trusted to mean what
//! this engine's do.

use super::{self as store, StoreError};
use crate::model::result::{ResultFile, SCHEMA_VERSION};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a file is refused.
#[derive(Debug, Error)]
pub enum Rejected {
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    #[error("not JSON at line {line} column {col}: {msg}")]
    NotJson { line: usize, col: usize, msg: String },
    #[error("does not match schemas/result.schema.json: {}", summary(.0))]
    Schema(Vec<String>),
    #[error("result format version {found}; this engine reads version {SCHEMA_VERSION}")]
    Format { found: u64 },
    #[error(
        "written by engine {found} (identifier `{identifier}`); this is engine {ours}, and results merge only within one major version"
    )]
    Version { identifier: String, found: String, ours: String },
    #[error("{0}")]
    Load(StoreError),
}

fn summary(errors: &[String]) -> String {
    match errors {
        [] => "no detail".to_string(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

/// A refused file, with its path.
#[derive(Debug, Error)]
#[error("{}: {reason}", path.display())]
pub struct Invalid {
    pub path: PathBuf,
    pub reason: Rejected,
}

/// The result schema, compiled once.
pub struct Validator {
    schema: jsonschema::Validator,
}

impl Default for Validator {
    fn default() -> Self {
        Self::new()
    }
}

impl Validator {
    pub fn new() -> Self {
        let schema =
            jsonschema::draft7::new(&crate::model::result::schema()).expect("the generated result schema compiles");
        Validator { schema }
    }

    /// Reads `path` and checks it; the loaded file when it passes. The typed
    /// parse (unknown fields refused, every required field there) decides;
    /// the schema is walked only for a file it refuses or had to repair (a
    /// null where a number belongs, which the schema refuses), to say what
    /// is wrong — a fleet's 10,000 valid inputs are parsed once, not twice.
    pub fn check_file(&self, path: &Path) -> Result<ResultFile, Invalid> {
        let invalid = |reason| Invalid { path: path.to_path_buf(), reason };
        let bytes =
            crate::sys::fs::read_capped(path, store::MAX_RESULT_BYTES).map_err(|e| invalid(Rejected::Read(e)))?;
        let parsed = store::parse(&bytes, path);
        if let Ok(f) = &parsed
            && f.repaired.is_empty()
        {
            check_own(f).map_err(invalid)?;
            return parsed.map_err(|e| invalid(Rejected::Load(e)));
        }
        if let Ok(text) = std::str::from_utf8(&bytes) {
            self.check_text(text).map_err(invalid)?;
        }
        parsed.map_err(|e| invalid(Rejected::Load(e)))
    }

    /// Checks the text of a result file: JSON, schema, format and engine version.
    pub(crate) fn check_text(&self, text: &str) -> Result<(), Rejected> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            let msg = e.to_string();
            let msg = msg.rsplit_once(" at line ").map(|(m, _)| m.to_string()).unwrap_or(msg);
            Rejected::NotJson { line: e.line(), col: e.column(), msg }
        })?;
        let errors: Vec<String> = self
            .schema
            .iter_errors(&value)
            .take(20)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
            })
            .collect();
        if !errors.is_empty() {
            return Err(Rejected::Schema(errors));
        }
        let found = value["schema_version"].as_u64().unwrap_or(0);
        if found != u64::from(SCHEMA_VERSION) {
            return Err(Rejected::Format { found });
        }
        let ours = env!("CARGO_PKG_VERSION");
        for s in value["systems"].as_array().into_iter().flatten() {
            let v = s["engine_version"].as_str().unwrap_or("");
            if compatible(v, ours) == Some(false) {
                return Err(Rejected::Version {
                    identifier: s["identifier"].as_str().unwrap_or("").to_string(),
                    found: v.to_string(),
                    ours: ours.to_string(),
                });
            }
        }
        Ok(())
    }
}

/// Whether engine `version` writes results engine `ours` merges with:
/// A saved result engine wrote (its types already checked by loading it):
/// its format and the engine versions of its systems, as [`Validator`]
/// checks a file from elsewhere — without a second parse of a file that
/// may be hundreds of MiB.
pub fn check_own(f: &ResultFile) -> Result<(), Rejected> {
    if f.schema_version != SCHEMA_VERSION {
        return Err(Rejected::Format { found: u64::from(f.schema_version) });
    }
    let ours = env!("CARGO_PKG_VERSION");
    match f.systems.iter().find(|s| compatible(&s.engine_version, ours) == Some(false)) {
        Some(s) => Err(Rejected::Version {
            identifier: s.identifier.clone().into(),
            found: s.engine_version.clone(),
            ours: ours.to_string(),
        }),
        None => Ok(()),
    }
}

/// the same major (before 1.0, the same minor; before 0.1, the same patch).
/// `None` when `version` is not an engine version (a result imported from
/// PTS names PTS's), which the check leaves alone.
pub(crate) fn compatible(version: &str, ours: &str) -> Option<bool> {
    let v = semver::Version::parse(version).ok()?;
    let o = semver::Version::parse(ours).ok()?;
    let line = |v: &semver::Version| match (v.major, v.minor) {
        (0, 0) => (0, 0, v.patch),
        (0, m) => (0, m, 0),
        (m, _) => (m, 0, 0),
    };
    Some(line(&v) == line(&o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_merge_within_a_major() {
        assert_eq!(compatible("1.4.0", "1.9.2"), Some(true));
        assert_eq!(compatible("2.0.0", "1.9.2"), Some(false));
        assert_eq!(compatible("0.1.0", "0.1.7"), Some(true));
        assert_eq!(compatible("0.2.0", "0.1.7"), Some(false));
        assert_eq!(compatible("Phoronix Test Suite 10.8.6", "0.1.0"), None);
    }

    #[test]
    fn files_are_checked_against_the_schema_and_version() {
        let v = Validator::new();
        let mut f = ResultFile::new("t");
        f.systems.push(crate::model::result::System {
            identifier: "h1".into(),
            engine_version: env!("CARGO_PKG_VERSION").into(),
            started: "2026-11-30T10:00:00Z".into(),
            ..Default::default()
        });
        let good = serde_json::to_string(&f).unwrap();
        v.check_text(&good).unwrap();
        let mut bad: serde_json::Value = serde_json::from_str(&good).unwrap();
        bad["systems"][0]["started"] = serde_json::Value::Null;
        let e = v.check_text(&bad.to_string()).unwrap_err().to_string();
        assert!(e.starts_with("does not match schemas/result.schema.json: /systems/0/started: null"), "{e}");
        let mut other = f.clone();
        other.systems[0].engine_version = "9.0.0".into();
        let e = v.check_text(&serde_json::to_string(&other).unwrap()).unwrap_err().to_string();
        assert!(e.contains("written by engine 9.0.0 (identifier `h1`)"), "{e}");
        assert!(matches!(v.check_text("{"), Err(Rejected::NotJson { .. })));
    }
}
