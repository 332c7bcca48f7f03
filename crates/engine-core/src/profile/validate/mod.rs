//! Semantic checks on a profile that deserialized: names that must exist,
//! labels that must be unique, parsers that must name a result. The
//! checker and the walk over a profile are here; each area's checks are in
//! a file of their own.

use super::yaml_index::{Path, YamlIndex};
use crate::model::diag::{Diagnostic, Diagnostics, did_you_mean};
use crate::model::profile::{
    BuiltinExecutor, ExecutorDef, ExternalExecutor, OptionDef, ParserDef, Profile, ReadyDef, Scalar, Step, WasmExecutor,
};
use crate::model::template::{self, TemplateError};
use crate::path;
use crate::units;
use indexmap::IndexMap;
use regex::Regex;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Placeholders every test has, whatever its options.
pub const BUILTIN_VARS: &[&str] =
    &["scratch_dir", "test_dir", "target_dir", "profile_dir", "num_cpus", "free_port", "install_dir"];

mod executors;
mod install;
mod options;
mod parsers;
mod requirements;
mod results;
mod servers;

pub use executors::check_plugin_files;
use executors::{check_builtin, check_external, check_wasm};
use options::check_options;
use parsers::{check_parser, check_when};
use requirements::check_requirements;
use results::{check_results, check_trials};
use servers::check_steps;
pub use servers::quoted_placeholders;

struct Checker<'a> {
    file: &'a str,
    index: &'a YamlIndex,
    /// Generic package names profiles may use.
    packages: &'a crate::install::packages::Catalog,
    out: Diagnostics,
}

impl Checker<'_> {
    // Every diagnostic should carry a hint (the robustness test checks it).
    fn at_value(&mut self, path: Path, msg: impl Into<String>, hint: Option<String>) {
        let mut d = Diagnostic::new(self.file, self.index.value(&path), msg);
        d.hint = hint;
        self.out.push(d);
    }
    fn at_key(&mut self, path: Path, msg: impl Into<String>, hint: Option<String>) {
        let mut d = Diagnostic::new(self.file, self.index.key(&path), msg);
        d.hint = hint;
        self.out.push(d);
    }

    /// Checks an argument: placeholders known, `{{@name}}` only as a whole argument.
    fn arg(&mut self, path: Path, s: &str, known: &BTreeSet<String>) {
        self.template(path.clone(), s, known);
        if template::has_splice(s) && template::whole_splice(s).is_none() {
            self.at_value(
                path,
                "`{{@name}}` must be the whole argument",
                Some("put it in its own list item: `- \"{{@name}}\"`".into()),
            );
        }
    }

    /// Checks a string where `{{@name}}` is not allowed.
    fn text(&mut self, path: Path, s: &str, known: &BTreeSet<String>) {
        self.template(path.clone(), s, known);
        if template::has_splice(s) {
            self.at_value(
                path,
                "`{{@name}}` is only allowed as a whole argument in `args`",
                Some("use `{{name}}` here".into()),
            );
        }
    }

    /// Checks the placeholders of one template string against `known`.
    fn template(&mut self, path: Path, s: &str, known: &BTreeSet<String>) {
        match template::parse(s) {
            Ok(pieces) => {
                for piece in pieces {
                    let (n, offset) = match piece {
                        template::Piece::Var(n, o) | template::Piece::Splice(n, o) => (n, o),
                        template::Piece::Text(_) => continue,
                    };
                    if !known.contains(n) {
                        let hint = match did_you_mean(n, known.iter().map(String::as_str)) {
                            Some(c) => format!("did you mean `{{{{{c}}}}}`? Known names: {}", list(known)),
                            None => format!(
                                "placeholders name an option id (with `value:`), a key of an entry's `values:`, or a built-in; known: {}",
                                list(known)
                            ),
                        };
                        let at = self.index.value_at(&path, offset);
                        let msg = format!("placeholder `{{{{{n}}}}}` has no option value of that name");
                        self.out.push(Diagnostic::new(self.file, at, msg).with_hint(hint));
                    }
                }
            }
            Err(TemplateError::Unclosed(offset)) => {
                let at = self.index.value_at(&path, offset);
                self.out.push(
                    Diagnostic::new(self.file, at, "`{{` is never closed").with_hint("close the placeholder with `}}`"),
                );
            }
            Err(TemplateError::BadName { name, offset }) => {
                let at = self.index.value_at(&path, offset);
                let d = Diagnostic::new(self.file, at, format!("placeholder `{{{{{name}}}}}` is not a valid name"));
                self.out.push(d.with_hint("names use letters, digits, `_` and `-`, starting with a letter or `_`"));
            }
            Err(e) => self.at_value(
                path,
                e.to_string(),
                Some("see the book, \"Profile format\": placeholders (book/src/profiles/format.md)".into()),
            ),
        }
    }
}

fn list(names: &BTreeSet<String>) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// The value names an option binds (its id when entries use `value:`, plus
/// the keys of `values:`), from its first entry.
pub(crate) fn option_value_names(o: &OptionDef) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    if let Some(e) = o.entries.first() {
        if e.value.is_some() {
            names.insert(o.id.clone());
        }
        names.extend(e.values.keys().cloned());
    }
    names
}

/// A profile or suite id: a name (`model::names`) of lower-case letters,
/// digits, `-` and `_`, starting with a letter or digit.
pub fn is_valid_id(id: &str) -> bool {
    let mut c = id.chars();
    crate::model::names::check(id).is_ok()
        && matches!(c.next(), Some(ch) if ch.is_ascii_lowercase() || ch.is_ascii_digit())
        && c.all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-' || ch == '_')
}

/// All semantic problems of `p`.
pub(crate) fn check_profile(
    p: &Profile,
    file: &str,
    index: &YamlIndex,
    packages: &crate::install::packages::Catalog,
) -> Diagnostics {
    let mut c = Checker { file, index, packages, out: Diagnostics::default() };
    check_header(&mut c, p);
    let known = check_options(&mut c, p);
    check_results(&mut c, p, &known);
    match &p.executor {
        ExecutorDef::External(x) => check_external(&mut c, x, &known),
        ExecutorDef::Builtin(b) => check_builtin(&mut c, b, p, &known),
        ExecutorDef::Wasm(w) => check_wasm(&mut c, w, &known),
    }
    check_trials(&mut c, p);
    check_requirements(&mut c, p, &known);
    install::check(&mut c, p, &known);
    c.out
}

/// `id`, `version` and `title`.
fn check_header(c: &mut Checker, p: &Profile) {
    if !is_valid_id(&p.id) {
        c.at_value(
            path!["id"],
            format!("profile id `{}` is not valid", crate::model::names::shown(&p.id)),
            Some("use up to 100 lower-case letters, digits, `-` and `_` (`fs-mark`)".into()),
        );
    }
    // `installed/<id>@<version>/` is named after it.
    if let Err(e) = crate::model::names::check(&p.version) {
        c.at_value(
            path!["version"],
            format!("version `{}` cannot name a folder: {e}", crate::model::names::shown(&p.version)),
            Some("write three numbers, like `1.0.0`".into()),
        );
    } else if let Err(e) = semver::Version::parse(&p.version) {
        c.at_value(
            path!["version"],
            format!("version `{}` is not semver: {e}", p.version),
            Some("write three numbers, like `1.0.0`".into()),
        );
    }
    if p.title.trim().is_empty() {
        c.at_value(
            path!["title"],
            "title is empty",
            Some("name the test as it should appear above its results".into()),
        );
    }
}

/// The named values of each option's entries, one map per entry (enough to
/// check a string that uses one option's values at a time).
fn value_combos(p: &Profile) -> Vec<std::collections::HashMap<String, String>> {
    let mut out = Vec::new();
    for o in &p.options {
        for e in &o.entries {
            let mut m = std::collections::HashMap::new();
            if let Some(v) = &e.value {
                m.insert(o.id.clone(), v.0.clone());
            }
            for (k, v) in &e.values {
                m.insert(k.clone(), v.0.clone());
            }
            out.push(m);
        }
    }
    out
}
