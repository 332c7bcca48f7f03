//! The repository index (`index.json`): every profile, suite and result a
//! repository holds, each with its versions and, per version, the packed
//! archive's path, sha256 and size and the engine version it needs.
//! `schemas/repository-index.schema.json` is generated from these types.
//!
//! Reading one is bounded: at most [`MAX_INDEX_BYTES`], nesting limited by the
//! JSON reader, every field checked (types, hex digests, sizes, relative
//! archive paths without `..`), and an error names the field and position.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Version of the index format this engine reads and writes.
pub const FORMAT: u32 = 1;
/// Largest index accepted (16 MiB: about 40,000 entries).
pub const MAX_INDEX_BYTES: u64 = 16 << 20;
/// Largest archive an index may list (64 MiB).
pub const MAX_ARCHIVE_BYTES: u64 = 64 << 20;

/// A repository's index.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Index {
    /// Format version (1).
    pub format: u32,
    /// What the publisher calls the repository (users pick their own name when adding it).
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Profiles, by id, sorted.
    #[serde(default)]
    pub profiles: Vec<ProfileEntry>,
    /// Suites, by id, sorted.
    #[serde(default)]
    pub suites: Vec<SuiteEntry>,
    /// Result files to compare against, by name, sorted.
    #[serde(default)]
    pub results: Vec<ResultEntry>,
}

/// One profile and its published versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileEntry {
    /// Profile id (`fio`).
    pub id: String,
    /// Oldest first.
    pub versions: Vec<ProfileVersion>,
}

/// One published version of a profile: what `engine list profiles` shows
/// without unpacking it, and its archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileVersion {
    /// The profile's `version` (semver).
    pub version: String,
    pub title: String,
    /// `disk`, `processor` … as in the profile.
    pub test_type: String,
    /// `external`, `builtin` or `wasm`.
    pub executor: String,
    /// Programs it needs on PATH (so listing can say `ready` or `needs …`).
    #[serde(default)]
    pub programs: Vec<String>,
    pub archive: Archive,
    /// Oldest engine version that can use it (semver).
    pub engine: String,
}

/// One suite and its published versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteEntry {
    /// Suite id (`disk` for `NAME/suite/disk`).
    pub id: String,
    pub versions: Vec<SuiteVersion>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteVersion {
    /// The suite's `version` (semver; `1.0.0` when the file gives none).
    pub version: String,
    pub title: String,
    /// Number of items.
    pub tests: usize,
    pub archive: Archive,
    /// Oldest engine version that can use it (semver).
    pub engine: String,
}

/// One published result file and its versions (each publish that changed it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultEntry {
    /// Result name (`NAME/results/<name>`).
    pub name: String,
    pub versions: Vec<ResultVersion>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultVersion {
    /// 1, 2, … in publishing order.
    pub version: String,
    pub title: String,
    /// Its identifiers (systems), in order.
    pub identifiers: Vec<String>,
    /// Number of results it holds.
    pub results: usize,
    pub archive: Archive,
    /// Oldest engine version that can use it (semver).
    pub engine: String,
}

/// A packed archive (`.tar.gz`) and what it must be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Archive {
    /// Path relative to the repository's base (`profiles/fio/fio-1.2.0.tar.gz`).
    pub path: String,
    /// SHA-256 of the archive, 64 lower-case hex digits.
    pub sha256: String,
    /// Size of the archive in bytes.
    pub size: u64,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum IndexError {
    #[error("{file}: the index is {size} bytes, more than the {max} bytes engine reads")]
    TooLarge { file: String, size: u64, max: u64 },
    #[error("{file}:{line}:{col}: {field}: {msg}")]
    Invalid { file: String, line: usize, col: usize, field: String, msg: String, hint: String },
}

impl IndexError {
    pub fn hint(&self) -> &str {
        match self {
            IndexError::TooLarge { .. } => "a repository index lists archives; it should be far smaller",
            IndexError::Invalid { hint, .. } => hint,
        }
    }
}

/// Parses and checks index bytes; `file` names them in errors.
pub fn parse(bytes: &[u8], file: &str) -> Result<Index, IndexError> {
    if bytes.len() as u64 > MAX_INDEX_BYTES {
        return Err(IndexError::TooLarge { file: file.into(), size: bytes.len() as u64, max: MAX_INDEX_BYTES });
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| (e.path().to_string(), e.into_inner()))
        .and_then(|i: Index| de.end().map(|_| i).map_err(|e| ("(end)".to_string(), e)));
    let index: Index = match parsed {
        Ok(i) => i,
        Err((field, inner)) => {
            let msg = inner.to_string();
            let msg = msg.rsplit_once(" at line ").map(|(m, _)| m.to_string()).unwrap_or(msg);
            let hint = if inner.is_eof() {
                "the file ends early: it was cut off (a partial download?); publish or fetch it again"
            } else if msg.contains("recursion limit") {
                "the index nests far deeper than its format allows"
            } else {
                "see schemas/repository-index.schema.json"
            };
            return Err(IndexError::Invalid {
                file: file.into(),
                line: inner.line(),
                col: inner.column(),
                field: if field == "." { "(top level)".into() } else { field },
                msg,
                hint: hint.into(),
            });
        }
    };
    check(&index, bytes, file)?;
    Ok(index)
}

/// Checks what the types cannot say.
fn check(index: &Index, bytes: &[u8], file: &str) -> Result<(), IndexError> {
    let text = String::from_utf8_lossy(bytes);
    let at = Located { text: &text, file };
    if index.format != FORMAT {
        return Err(at.error(
            "format".into(),
            "\"format\"",
            format!("format {} is not one this engine reads (it reads {FORMAT})", index.format),
            "a newer engine wrote this index: upgrade engine",
        ));
    }
    for (i, p) in index.profiles.iter().enumerate() {
        if !crate::profile::validate::is_valid_id(&p.id) {
            return Err(at.error(
                format!("profiles[{i}].id"),
                &p.id,
                format!("`{}` is not a profile id", p.id),
                "ids are lower case letters, digits and `-`",
            ));
        }
        for (j, v) in p.versions.iter().enumerate() {
            let field = format!("profiles[{i}].versions[{j}]");
            at.semver(&field, &v.version, "profile versions look like `1.2.0`")?;
            at.archive(field, &v.archive, &v.engine)?;
        }
    }
    for (i, s) in index.suites.iter().enumerate() {
        if !crate::profile::validate::is_valid_id(&s.id) {
            return Err(at.error(
                format!("suites[{i}].id"),
                &s.id,
                format!("`{}` is not a suite id", s.id),
                "ids are lower case letters, digits and `-`",
            ));
        }
        for (j, v) in s.versions.iter().enumerate() {
            let field = format!("suites[{i}].versions[{j}]");
            at.semver(&field, &v.version, "suite versions look like `1.0.0`")?;
            at.archive(field, &v.archive, &v.engine)?;
        }
    }
    for (i, r) in index.results.iter().enumerate() {
        if crate::store::check_name(&r.name).is_err() {
            return Err(at.error(
                format!("results[{i}].name"),
                &r.name,
                format!("`{}` is not a result name", r.name),
                "result names are one folder name, without `/` or `..`",
            ));
        }
        for (j, v) in r.versions.iter().enumerate() {
            at.archive(format!("results[{i}].versions[{j}]"), &v.archive, &v.engine)?;
        }
    }
    Ok(())
}

/// The index's text and file name: errors point at where a value is.
struct Located<'a> {
    text: &'a str,
    file: &'a str,
}

impl Located<'_> {
    /// An error at the first occurrence of `needle`.
    fn error(&self, field: String, needle: &str, msg: String, hint: &str) -> IndexError {
        let (line, col) = position_of(self.text, needle);
        IndexError::Invalid { file: self.file.into(), line, col, field, msg, hint: hint.into() }
    }

    /// `field.version` is semver.
    fn semver(&self, field: &str, version: &str, hint: &str) -> Result<(), IndexError> {
        if semver::Version::parse(version).is_err() {
            return Err(self.error(
                format!("{field}.version"),
                version,
                format!("`{version}` is not a version (semver)"),
                hint,
            ));
        }
        Ok(())
    }

    /// A version's archive (a SHA-256, a size engine accepts, a path inside
    /// the repository) and the engine version it needs.
    fn archive(&self, field: String, a: &Archive, engine: &str) -> Result<(), IndexError> {
        if a.sha256.len() != 64 || !a.sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(self.error(
                format!("{field}.archive.sha256"),
                &a.sha256,
                format!("`{}` is not a SHA-256 (64 lower-case hex digits)", a.sha256),
                "the publisher's index is damaged; publish it again",
            ));
        }
        if a.size > MAX_ARCHIVE_BYTES {
            return Err(self.error(
                format!("{field}.archive.size"),
                &a.sha256,
                format!("{} bytes is more than the {MAX_ARCHIVE_BYTES} bytes an archive may have", a.size),
                "profiles, suites and results are small; this index is damaged or hostile",
            ));
        }
        if !safe_relative(&a.path) {
            return Err(self.error(
                format!("{field}.archive.path"),
                &a.path,
                format!("`{}` is not a relative path inside the repository", a.path),
                "archive paths are like `profiles/fio/fio-1.2.0.tar.gz`, without `..`",
            ));
        }
        if semver::Version::parse(engine).is_err() {
            return Err(self.error(
                format!("{field}.engine"),
                engine,
                format!("`{engine}` is not a version"),
                "write the oldest engine version that can use it, like `0.1.0`",
            ));
        }
        Ok(())
    }
}

/// Line and column (1-based) of the first occurrence of `needle` in `text`.
fn position_of(text: &str, needle: &str) -> (usize, usize) {
    let Some(at) = (!needle.is_empty()).then(|| text.find(needle)).flatten() else { return (1, 1) };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = at - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, col)
}

/// A relative path of plain components (no `..`, no absolute path, no empty part).
pub fn safe_relative(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.contains('\\')
        && p.split('/').all(|c| !c.is_empty() && c != "." && c != ".." && !c.chars().any(char::is_control))
}

impl Index {
    pub fn profile(&self, id: &str) -> Option<&ProfileEntry> {
        self.profiles.iter().find(|p| p.id == id)
    }
    pub fn suite(&self, id: &str) -> Option<&SuiteEntry> {
        self.suites.iter().find(|s| s.id == id)
    }
    pub fn result(&self, name: &str) -> Option<&ResultEntry> {
        self.results.iter().find(|r| r.name == name)
    }

    /// The bytes engine writes: pretty JSON with a final newline, the same
    /// for the same content.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("an index serializes");
        v.push(b'\n');
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> String {
        r#"{
  "format": 1,
  "profiles": [
    {"id": "fio", "versions": [
      {"version": "1.2.0", "title": "FIO", "test_type": "disk", "executor": "external", "programs": ["fio"],
       "archive": {"path": "profiles/fio/fio-1.2.0.tar.gz",
       "sha256": "0000000000000000000000000000000000000000000000000000000000000000", "size": 10}, "engine": "0.1.0"}
    ]}
  ]
}"#
        .to_string()
    }

    #[test]
    fn a_good_index_parses() {
        let i = parse(good().as_bytes(), "index.json").unwrap();
        assert_eq!(i.profiles[0].versions[0].archive.size, 10);
        assert_eq!(parse(&i.to_bytes(), "x").unwrap(), i);
    }

    #[test]
    fn truncated_wrong_types_deep_and_huge_are_clear_errors() {
        let g = good();
        let e = parse(&g.as_bytes()[..g.len() / 2], "index.json").unwrap_err();
        assert!(e.to_string().contains("EOF"), "{e}");
        assert!(e.hint().contains("cut off"));

        let bad = g.replace("\"size\": 10", "\"size\": \"ten\"");
        let e = parse(bad.as_bytes(), "index.json").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("index.json:"), "{s}");
        assert!(s.contains("profiles[0].versions[0].archive.size"), "{s}");

        // Deep nesting: the typed reader stops at the first level that does
        // not fit, naming the field; it never recurses into the rest.
        let deep = format!("{{\"format\": 1, \"description\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(deep.as_bytes(), "index.json").unwrap_err();
        assert!(e.to_string().contains("description: invalid type: sequence"), "{e}");
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(deep.as_bytes(), "index.json").unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");

        let huge = vec![b' '; (MAX_INDEX_BYTES + 1) as usize];
        assert!(matches!(parse(&huge, "index.json"), Err(IndexError::TooLarge { .. })));

        let bad = g.replace("profiles/fio/", "../../");
        let e = parse(bad.as_bytes(), "index.json").unwrap_err();
        assert!(e.to_string().contains("archive"), "{e}");
        let bad = g.replace("\"0000", "\"ZZ00");
        let e = parse(bad.as_bytes(), "index.json").unwrap_err();
        assert!(e.to_string().contains("sha256"), "{e}");
    }
}
