//! The repository index (`index.json`): every profile, suite and result a
//! repository holds, each with its versions and, per version, the packed
//! archive's path, sha256 and size and the engine version it needs.
//! `schemas/repository-index.schema.json` is generated from these types.
//!
//! Reading one is bounded: at most [`MAX_INDEX_BYTES`], nesting limited by the
//! JSON reader, every field checked (types, hex digests, sizes, relative
//! archive paths without `..`, every id, name and version a name of
//! `model::names`), and an error names the field and position.

use crate::model::names;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Version of the index format this engine reads and writes.
pub const FORMAT: u32 = 1;
/// Largest index accepted (16 MiB: about 40,000 entries).
pub(crate) const MAX_INDEX_BYTES: u64 = 16 << 20;
/// Largest archive an index may list (64 MiB).
pub(crate) const MAX_ARCHIVE_BYTES: u64 = 64 << 20;

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
    /// `1.0.0`, `2.0.0`, … in publishing order (a name, as every version).
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

/// Checks what the types cannot say. Every id, name and version becomes a
/// folder name in the local copy, so each is a name (`model::names`)
/// before anything else is read of it.
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
        at.id(format!("profiles[{i}].id"), &p.id, "profile")?;
        for (j, v) in p.versions.iter().enumerate() {
            let field = format!("profiles[{i}].versions[{j}]");
            at.version(&field, &v.version, Some("profile versions look like `1.2.0`"))?;
            at.archive(field, &v.archive, &v.engine)?;
        }
    }
    for (i, s) in index.suites.iter().enumerate() {
        at.id(format!("suites[{i}].id"), &s.id, "suite")?;
        for (j, v) in s.versions.iter().enumerate() {
            let field = format!("suites[{i}].versions[{j}]");
            at.version(&field, &v.version, Some("suite versions look like `1.0.0`"))?;
            at.archive(field, &v.archive, &v.engine)?;
        }
    }
    for (i, r) in index.results.iter().enumerate() {
        let field = format!("results[{i}].name");
        if let Err(e) = crate::store::check_name(&r.name) {
            let why = match e {
                crate::store::StoreError::BadName(_, why) => why,
                e => e.to_string(),
            };
            let shown = names::shown(&r.name);
            return Err(at.error(field, &r.name, format!("`{shown}` is not a result name: {why}"), NAME_HINT));
        }
        for (j, v) in r.versions.iter().enumerate() {
            let field = format!("results[{i}].versions[{j}]");
            at.version(&field, &v.version, None)?;
            at.archive(field, &v.archive, &v.engine)?;
        }
    }
    Ok(())
}

/// The hint of every refused name.
const NAME_HINT: &str = "names in an index become folder names here: one path component, not `.` or `..`, \
    without `/`, `\\` or control characters, at most 100 bytes; this index is damaged or hostile";

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

    /// A profile or suite id: a name, of the letters ids have.
    fn id(&self, field: String, id: &str, kind: &str) -> Result<(), IndexError> {
        let shown = names::shown(id);
        if let Err(e) = names::check(id) {
            return Err(self.error(field, id, format!("`{shown}` is not a {kind} id: {e}"), NAME_HINT));
        }
        if !crate::profile::validate::is_valid_id(id) {
            let msg = format!("`{shown}` is not a {kind} id");
            return Err(self.error(field, id, msg, "ids are lower case letters, digits, `-` and `_`"));
        }
        Ok(())
    }

    /// `field.version` is a name and, with a `semver` hint, semver.
    fn version(&self, field: &str, version: &str, semver: Option<&str>) -> Result<(), IndexError> {
        if let Err(e) = names::check(version) {
            let msg = format!("`{}` is not a version: {e}", names::shown(version));
            return Err(self.error(format!("{field}.version"), version, msg, NAME_HINT));
        }
        let Some(hint) = semver else { return Ok(()) };
        if semver::Version::parse(version).is_err() {
            return Err(self.error(
                format!("{field}.version"),
                version,
                format!("`{}` is not a version (semver)", names::shown(version)),
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
                format!("`{}` is not a SHA-256 (64 lower-case hex digits)", names::shown(&a.sha256)),
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
                format!("`{}` is not a relative path inside the repository", names::shown(&a.path)),
                "archive paths are like `profiles/fio/fio-1.2.0.tar.gz`, without `..`",
            ));
        }
        if semver::Version::parse(engine).is_err() {
            return Err(self.error(
                format!("{field}.engine"),
                engine,
                format!("`{}` is not a version", names::shown(engine)),
                "write the oldest engine version that can use it, like `0.1.0`",
            ));
        }
        Ok(())
    }
}

/// Line and column (1-based) of the first occurrence of `needle` in
/// `text`: as a JSON string first (so `"1"` is not found in `"format": 1`,
/// and control characters are found as the escapes JSON writes them in).
fn position_of(text: &str, needle: &str) -> (usize, usize) {
    let quoted = serde_json::to_string(needle).unwrap_or_default();
    let found = [quoted.as_str(), needle].into_iter().filter(|n| !n.is_empty()).find_map(|n| text.find(n));
    let Some(at) = found else { return (1, 1) };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = at - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, col)
}

/// A relative path whose every component is a name (`model::names`): no
/// `..`, no absolute path, no empty part.
pub(crate) fn safe_relative(p: &str) -> bool {
    !p.is_empty() && p.split('/').all(|c| names::check(c).is_ok())
}

impl Index {
    pub(crate) fn profile(&self, id: &str) -> Option<&ProfileEntry> {
        self.profiles.iter().find(|p| p.id == id)
    }
    pub(crate) fn suite(&self, id: &str) -> Option<&SuiteEntry> {
        self.suites.iter().find(|s| s.id == id)
    }
    pub(crate) fn result(&self, name: &str) -> Option<&ResultEntry> {
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

    /// An index with one result whose version is `v` (JSON text).
    fn with_result(name: &str, v: &str) -> String {
        good().replacen(
            "\n  ]\n}",
            &format!(
                "\n  ],\n  \"results\": [\n    {{\"name\": {name}, \"versions\": [\n      {{\"version\": \"1.0.0\", \"title\": \"R\", \"identifiers\": [], \"results\": 0,\n       \"archive\": {{\"path\": \"results/r/r-1.tar.gz\", \"sha256\": \"{z}\", \"size\": 1}}, \"engine\": \"0.1.0\"}},\n      {{\"version\": {v}, \"title\": \"R\", \"identifiers\": [], \"results\": 0,\n       \"archive\": {{\"path\": \"results/r/r-2.tar.gz\", \"sha256\": \"{z}\", \"size\": 1}}, \"engine\": \"0.1.0\"}}\n    ]}}\n  ]\n}}",
                z = "0".repeat(64)
            ),
            1,
        )
    }

    #[test]
    fn every_name_is_one_path_component() {
        assert!(parse(with_result("\"r\"", "\"2.0.0\"").as_bytes(), "i").is_ok());
        for (name, v, field, want) in [
            ("\"r\"", "\"x/../../../../var/tmp/bait\"", "results[0].versions[1].version", "contains `/`"),
            ("\"r\"", "\"..\"", "results[0].versions[1].version", "is `..`"),
            ("\"r\"", "\"2\\u001b]0;x\"", "results[0].versions[1].version", "control character U+001B"),
            ("\"r\"", "\"\"", "results[0].versions[1].version", "it is empty"),
            ("\"../r\"", "\"2\"", "results[0].name", "contains `/`"),
            ("\"r\\u0000\"", "\"2\"", "results[0].name", "control character U+0000"),
        ] {
            let text = with_result(name, v);
            let e = parse(text.as_bytes(), "index.json").unwrap_err();
            let s = e.to_string();
            assert!(s.contains(&format!(": {field}: ")) && s.contains(want), "{name} {v}: {s}");
            assert!(!s.contains('\u{1b}') && !s.contains('\0'), "shown escaped: {s:?}");
            assert!(e.hint().contains("one path component"), "{}", e.hint());
        }
        // The position is the value's, found through the escape JSON writes.
        let text = with_result("\"r\"", "\"2\\u001b\"");
        let IndexError::Invalid { line, col, .. } = parse(text.as_bytes(), "i").unwrap_err() else { panic!() };
        let at = text.lines().nth(line - 1).unwrap();
        assert!(at[col - 1..].starts_with("\"2\\u001b\""), "{line}:{col} {at}");

        let g = good();
        for (from, to, field) in [
            ("\"id\": \"fio\"", "\"id\": \"../fio\"", "profiles[0].id"),
            ("\"version\": \"1.2.0\"", "\"version\": \"1.2.0/..\"", "profiles[0].versions[0].version"),
            (
                "\"version\": \"1.2.0\"",
                &format!("\"version\": \"1.2.0-{}\"", "a".repeat(100)),
                "profiles[0].versions[0].version",
            ),
        ] {
            let e = parse(g.replacen(from, to, 1).as_bytes(), "index.json").unwrap_err().to_string();
            assert!(e.contains(&format!(": {field}: ")), "{to}: {e}");
        }
        let suite = g.replacen("\"profiles\"", "\"suites\"", 1).replacen("\"id\": \"fio\"", "\"id\": \"a\\\\b\"", 1);
        let suite = suite.replace(
            ", \"test_type\": \"disk\", \"executor\": \"external\", \"programs\": [\"fio\"]",
            ", \"tests\": 1",
        );
        let e = parse(suite.as_bytes(), "index.json").unwrap_err().to_string();
        assert!(e.contains("suites[0].id: `a\\b` is not a suite id: it contains `\\`"), "{e}");
    }
}
