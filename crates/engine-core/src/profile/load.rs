//! YAML text → typed model → semantic checks, with every problem reported as
//! `file:line:col: what` plus a hint. Nothing here panics on bad input.

use super::every_error;
use super::validate;
use super::yaml_index::YamlIndex;
use crate::model::diag::{Diagnostic, Diagnostics, Pos, did_you_mean};
use crate::model::profile::{LoadedProfile, Origin, Profile, Suite};
use crate::path;
use regex::Regex;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use thiserror::Error;

pub use crate::install::packages::Catalog as Packages;

/// Why a profile or suite file could not be loaded.
#[derive(Debug, Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Invalid(Diagnostics),
}

/// A suite that loaded; its items are checked when they are resolved.
#[derive(Debug)]
pub struct LoadedSuite {
    pub id: String,
    pub suite: Suite,
    pub display: String,
    pub index: YamlIndex,
    /// The profile repository it came from: its items name that repository's profiles first.
    pub source: Option<crate::model::profile::RepositoryRef>,
}

static AT_LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" at line \d+, column \d+$").unwrap());
static UNKNOWN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^unknown (field|variant) `([^`]*)`, expected (?:one of )?(.*)$").unwrap());
static MISSING: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^missing field `([^`]*)`").unwrap());

/// Turns a deserializer error into a diagnostic with a hint.
fn serde_diag(file: &str, e: &serde_saphyr::Error, text: &str) -> Diagnostic {
    let raw = e.without_snippet().to_string();
    let msg = AT_LINE.replace(raw.trim(), "").to_string();
    let mut pos = e.location().map(|l| Pos::new(l.line() as usize, l.column() as usize)).unwrap_or(Pos::new(1, 1));
    if msg.starts_with("missing field") {
        // The reader notices at the end of the mapping; the mapping's start is
        // where the key belongs.
        if let Some(start) = YamlIndex::build(text).enclosing_mapping(pos) {
            pos = start;
        }
    }
    let (msg, hint) = if let Some(c) = UNKNOWN.captures(&msg) {
        let (kind, word) = (&c[1], &c[2]);
        let expected: Vec<&str> = c[3].split(", ").map(|s| s.trim_matches('`')).collect();
        let hint = match did_you_mean(word, expected.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => {
                format!("allowed {}: {}", if kind == "field" { "keys here" } else { "values" }, expected.join(", "))
            }
        };
        (format!("unknown {kind} `{word}`"), hint)
    } else if let Some(c) = MISSING.captures(&msg) {
        (msg.clone(), format!("add `{}:` to this mapping", &c[1]))
    } else if msg.starts_with("unexpected end of input") {
        (
            "file is empty".to_string(),
            "a profile starts with `id:`, `version:`, `title:`; see the book, \"Your first profile\" (book/src/profiles/first-profile.md)"
                .to_string(),
        )
    } else if msg.starts_with("duplicate mapping key") {
        let key = msg.trim_start_matches("duplicate mapping key: ").split(',').next().unwrap_or("").to_string();
        (format!("duplicate key `{key}`"), "each key may appear once in a mapping; remove one".to_string())
    } else if msg.starts_with("invalid u32") || msg.starts_with("invalid u64") {
        (format!("{msg}: expected a whole number"), "write a number without quotes, like `3`".to_string())
    } else if msg.starts_with("invalid f64") {
        (format!("{msg}: expected a number"), "write a number without quotes, like `1.5`".to_string())
    } else if let Some(hint) = unit_hint(&msg) {
        (msg.clone(), hint.to_string())
    } else if msg.contains("tabs disallowed") {
        (msg.clone(), "indent with spaces; YAML does not allow tabs for indentation".to_string())
    } else if msg.contains("':' indicator") || msg.contains("unclosed") {
        (msg.clone(), "look for an unclosed `[`, `{` or quote above, or quote a value that contains `: `".to_string())
    } else if msg.contains("expected mapping") {
        (msg.clone(), "this place needs `key: value` lines".to_string())
    } else if msg.contains("expected sequence") {
        (msg.clone(), "this place needs a list: `- item` lines or `[a, b]`".to_string())
    } else if msg.contains("expected string") || msg.contains("expected a string") {
        (msg.clone(), "this place needs a single value; quote it if it contains `:` or `#`".to_string())
    } else {
        (
            msg.clone(),
            "see schemas/profile.schema.json or the book, \"Profile format\" (book/src/profiles/format.md)".to_string(),
        )
    };
    Diagnostic::new(file, pos, msg).with_hint(hint)
}

/// The hint for a size or duration the reader refused (its message is the
/// unit grammar's own).
fn unit_hint(msg: &str) -> Option<&'static str> {
    use crate::units::UnitError as U;
    let e = if msg.contains("is not a size") {
        U::Size(String::new())
    } else if msg.contains("is not a duration") {
        U::Duration(String::new())
    } else if msg.contains("longer than engine allows") {
        U::DurationTooLong(String::new())
    } else {
        return None;
    };
    Some(e.hint())
}

/// Diagnostics one file reports at most.
const MAX_DIAGNOSTICS: usize = 50;

/// The typed model of `text`; when it does not read, every structural
/// problem the schema finds too (the reader stops at its first), each once.
fn deserialize<T: DeserializeOwned>(text: &str, file: &str, schema: &every_error::Schema) -> Result<T, Diagnostics> {
    serde_saphyr::from_str::<T>(text).map_err(|e| {
        let first = serde_diag(file, &e, text);
        let mut all = vec![first.clone()];
        for d in every_error::check(schema, text, file, MAX_DIAGNOSTICS) {
            // The reader's own words win where both place a problem.
            let at = |x: &Diagnostic| (x.line, x.col);
            let known = all.iter().any(|x| at(x) == at(&d) || x.message == d.message);
            if !known {
                all.push(d);
            }
        }
        Diagnostics(all).sorted()
    })
}

/// Parses and checks one profile file's text; `packages` are the generic
/// package names it may use.
pub fn profile_from_str(
    text: &str,
    display: &str,
    origin: Origin,
    packages: &Packages,
) -> Result<LoadedProfile, Diagnostics> {
    let profile: Profile = deserialize(text, display, &every_error::PROFILE)?;
    let index = YamlIndex::build(text);
    let mut diags = validate::check_profile(&profile, display, &index, packages);
    let lp = LoadedProfile { profile, display: display.to_string(), origin, source: None };
    // Plugin files are named relative to the profile's folder.
    if let Some(dir) = lp.dir() {
        diags.extend(validate::check_plugin_files(&lp.profile, dir, display, &index));
    }
    let profile = &lp.profile;
    // References name a profile by its folder: an id that says otherwise
    // would make `engine info X` and the result file disagree.
    if let Some(folder) = display
        .strip_suffix("/profile.yaml")
        .and_then(|d| std::path::Path::new(d).file_name())
        .map(|f| f.to_string_lossy().to_string())
        && folder != profile.id
    {
        diags.push(
            Diagnostic::new(
                display,
                index.value(&path!["id"]),
                format!("id `{}` does not match the profile's folder `{folder}`", profile.id),
            )
            .with_hint(format!("set `id: {folder}`, or rename the folder to `{}`", profile.id)),
        );
    }
    if !diags.is_empty() {
        return Err(diags.sorted());
    }
    Ok(lp)
}

/// Parses one suite file's text; `id` is its file stem (`disk` for `suites/disk.yaml`).
pub fn suite_from_str(text: &str, id: &str, display: &str) -> Result<LoadedSuite, Diagnostics> {
    let suite: Suite = deserialize(text, display, &every_error::SUITE)?;
    let index = YamlIndex::build(text);
    let mut diags = Diagnostics::default();
    if suite.tests.is_empty() {
        diags.push(
            Diagnostic::new(display, index.value(&path!["tests"]), "suite lists no tests")
                .with_hint("add `- profile: fio` items"),
        );
    }
    for (i, item) in suite.tests.iter().enumerate() {
        match (&item.profile, &item.suite) {
            (Some(_), Some(_)) => diags.push(
                Diagnostic::new(
                    display,
                    index.key(&path!["tests", i, "suite"]),
                    "item sets both `profile` and `suite`",
                )
                .with_hint("split it into two items"),
            ),
            (None, None) => diags.push(
                Diagnostic::new(display, index.value(&path!["tests", i]), "item has neither `profile` nor `suite`")
                    .with_hint("write `- profile: fio` or `- suite: disk-quick`"),
            ),
            (None, Some(_)) if !item.options.is_empty() => diags.push(
                Diagnostic::new(
                    display,
                    index.key(&path!["tests", i, "options"]),
                    "`options` only applies to a `profile` item",
                )
                .with_hint("presets of an included suite are set in that suite"),
            ),
            _ => {}
        }
    }
    if !diags.is_empty() {
        return Err(diags.sorted());
    }
    if let Some(v) = &suite.version
        && semver::Version::parse(v).is_err()
    {
        diags.push(
            Diagnostic::new(display, index.value(&path!["version"]), format!("`{v}` is not a version"))
                .with_hint("write a semver version such as `1.0.0`"),
        );
        return Err(diags.sorted());
    }
    Ok(LoadedSuite { id: id.to_string(), suite, display: display.to_string(), index, source: None })
}

/// Loads a profile from a path: a `profile.yaml`, or a folder holding one.
pub fn profile_from_path(path: &Path, packages: &Packages) -> Result<LoadedProfile, LoadError> {
    let file = if path.is_dir() { path.join("profile.yaml") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&file).map_err(|source| LoadError::Io { path: file.clone(), source })?;
    // `{{profile_dir}}` is filled from this: absolute, so a script beside
    // the profile is found from the trial's directory too.
    let origin = Origin::File(std::path::absolute(&file).unwrap_or_else(|_| file.clone()));
    profile_from_str(&text, &file.display().to_string(), origin, packages).map_err(LoadError::Invalid)
}

/// Loads a suite from a path.
pub fn suite_from_path(path: &Path) -> Result<LoadedSuite, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io { path: path.to_path_buf(), source })?;
    let id = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
    suite_from_str(&text, &id, &path.display().to_string()).map_err(LoadError::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
id: demo
version: 1.0.0
title: Demo
test_type: other
options:
  - id: n
    name: Count
    entries:
      - {label: Small, value: 10}
      - {label: Large, value: 1000}
executor:
  external:
    program: seq
    args: ["{{n}}"]
results:
  - {id: last, unit: Items, proportion: HIB}
parsers:
  - {result: last, regex: '(?P<value>\d+)\s*$'}
"#;

    #[test]
    fn a_good_profile_loads() {
        let p = profile_from_str(GOOD, "demo.yaml", Origin::Builtin, &Packages::builtin()).unwrap();
        assert_eq!(p.profile.options[0].entries[1].value.as_ref().unwrap().as_str(), "1000");
        assert_eq!(p.reference(), "demo@1.0.0");
    }

    #[test]
    fn unknown_key_gets_a_suggestion() {
        let bad = GOOD.replace("    args:", "    argz:");
        let d = profile_from_str(&bad, "demo.yaml", Origin::Builtin, &Packages::builtin()).unwrap_err();
        assert_eq!(d.0.len(), 1, "{d}");
        let d = &d.0[0];
        assert_eq!((d.line, d.col), (15, 5));
        assert_eq!(d.message, "unknown field `argz`");
        assert_eq!(d.hint.as_deref(), Some("did you mean `args`?"));
    }

    #[test]
    fn placeholder_without_option() {
        let bad = GOOD.replace("{{n}}", "{{m}}");
        let d = profile_from_str(&bad, "demo.yaml", Origin::Builtin, &Packages::builtin()).unwrap_err();
        assert_eq!(d.0[0].message, "placeholder `{{m}}` has no option value of that name");
        assert_eq!((d.0[0].line, d.0[0].col), (15, 13));
    }
}

#[cfg(test)]
mod robustness {
    use super::*;

    /// Every one-character deletion and a few substitutions of a real
    /// profile: loading must return a profile or diagnostics, never panic.
    #[test]
    fn mutated_profiles_never_panic() {
        let text = include_str!("../../../../test-profiles/fio/profile.yaml");
        let chars: Vec<char> = text.chars().collect();
        let mut errors = 0;
        for i in (0..chars.len()).step_by(11) {
            for replacement in [None, Some(':'), Some('['), Some('\t'), Some('&'), Some('*')] {
                let mut m = chars.clone();
                match replacement {
                    None => {
                        m.remove(i);
                    }
                    Some(c) => m[i] = c,
                }
                let s: String = m.into_iter().collect();
                if let Err(d) = profile_from_str(&s, "m.yaml", Origin::Builtin, &Packages::builtin()) {
                    errors += 1;
                    assert!(!d.is_empty());
                    for x in d.iter() {
                        assert!(x.line >= 1 && x.hint.is_some(), "{x}");
                    }
                }
            }
        }
        assert!(errors > 50, "mutations are mostly errors: {errors}");
    }
}
