//! Semantic checks on a profile that deserialized: names that must exist,
//! labels that must be unique, parsers that must name a result.

use super::yaml_index::{Path, YamlIndex};
use crate::model::diag::{Diagnostic, Diagnostics, did_you_mean};
use crate::model::profile::{
    BuiltinExecutor, ExecutorDef, ExternalExecutor, OptionDef, ParserDef, PluginLimits, Profile, ReadyDef, Scalar,
    Step, WasmExecutor,
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

mod install;

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
            Err(e) => self.at_value(path, e.to_string(), Some("see README.md, \"Placeholders\"".into())),
        }
    }
}

fn list(names: &BTreeSet<String>) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// The value names an option binds (its id when entries use `value:`, plus
/// the keys of `values:`), from its first entry.
pub fn option_value_names(o: &OptionDef) -> BTreeSet<String> {
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
pub fn check_profile(
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
    if let Some(d) = &p.hygiene.settle
        && let Err(e) = units::parse_duration(d)
    {
        c.at_value(path!["hygiene", "settle"], e.to_string(), Some(units_hint(&e)));
    }
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

/// Options: unique ids, unique labels, consistent value names. Returns the
/// placeholder names the profile knows: the built-ins and the options' values.
fn check_options(c: &mut Checker, p: &Profile) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = BUILTIN_VARS.iter().map(|s| s.to_string()).collect();
    let mut option_ids = HashSet::new();
    // Which option sets each value name.
    let mut owner: HashMap<String, String> = HashMap::new();
    for (i, o) in p.options.iter().enumerate() {
        if !template::valid_name(&o.id) {
            c.at_value(
                path!["options", i, "id"],
                format!("option id `{}` is not a valid name", o.id),
                Some("use letters, digits, `_` and `-`, starting with a letter".into()),
            );
        }
        if !option_ids.insert(o.id.as_str()) {
            c.at_value(
                path!["options", i, "id"],
                format!("duplicate option id `{}`", o.id),
                Some("each option needs its own id".into()),
            );
            continue;
        }
        if o.entries.is_empty() {
            c.at_value(
                path!["options", i, "entries"],
                format!("option `{}` has no entries", o.id),
                Some("add at least one `- label: …` entry".into()),
            );
        }
        let names = option_value_names(o);
        check_entries(c, i, o, &names);
        check_defaults(c, i, o);
        for n in names {
            if BUILTIN_VARS.contains(&n.as_str()) {
                c.at_value(
                    path!["options", i, "id"],
                    format!("value name `{n}` hides the built-in placeholder of that name"),
                    Some("rename the option or value".into()),
                );
            } else if let Some(prev) = owner.insert(n.clone(), o.id.clone()) {
                c.at_value(
                    path!["options", i, "id"],
                    format!("value name `{n}` is set by both option `{prev}` and option `{}`", o.id),
                    Some("each placeholder must come from one option".into()),
                );
            }
            known.insert(n);
        }
    }
    known
}

/// The entries of option `i`: labels set and unique, value names valid and
/// the same as the first entry's (`names`).
fn check_entries(c: &mut Checker, i: usize, o: &OptionDef, names: &BTreeSet<String>) {
    let mut labels = HashSet::new();
    for (j, e) in o.entries.iter().enumerate() {
        if e.label.trim().is_empty() {
            c.at_value(
                path!["options", i, "entries", j, "label"],
                "entry label is empty",
                Some("give the entry the text people should see, like `4KB`".into()),
            );
        }
        if !labels.insert(e.label.to_lowercase()) {
            c.at_value(
                path!["options", i, "entries", j, "label"],
                format!("duplicate entry label `{}` in option `{}`", e.label, o.id),
                Some("labels pick entries on the command line, so each must be unique (case does not count)".into()),
            );
        }
        let mut mine = BTreeSet::new();
        if e.value.is_some() {
            mine.insert(o.id.clone());
        }
        mine.extend(e.values.keys().cloned());
        for k in e.values.keys() {
            if !template::valid_name(k) {
                c.at_key(
                    path!["options", i, "entries", j, "values", k.as_str()],
                    format!("value name `{k}` is not a valid placeholder name"),
                    Some("names use letters, digits, `_` and `-`, starting with a letter or `_`".into()),
                );
            }
        }
        if j > 0 && mine != *names {
            c.at_value(
                path!["options", i, "entries", j],
                value_names_differ(&e.label, names, &mine),
                Some("every entry of an option must set the same named values".into()),
            );
        }
    }
}

/// What an entry (`label`, setting `mine`) lacks or adds against the first entry's `names`.
fn value_names_differ(label: &str, names: &BTreeSet<String>, mine: &BTreeSet<String>) -> String {
    let ticked = |v: Vec<&String>| v.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
    let missing: Vec<_> = names.difference(mine).collect();
    if !missing.is_empty() {
        format!("entry `{label}` has no value for {}", ticked(missing))
    } else {
        format!("entry `{label}` sets {} that the first entry does not", ticked(mine.difference(names).collect()))
    }
}

/// Each `default:` of option `i` names one of its entries.
fn check_defaults(c: &mut Checker, i: usize, o: &OptionDef) {
    for (k, d) in o.default.iter().enumerate() {
        if !o.entries.iter().any(|e| e.label.eq_ignore_ascii_case(d)) {
            let hint = did_you_mean(d, o.entries.iter().map(|e| e.label.as_str()))
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| {
                    format!(
                        "entries are: {}",
                        o.entries.iter().map(|e| format!("`{}`", e.label)).collect::<Vec<_>>().join(", ")
                    )
                });
            c.at_value(
                path!["options", i, "default", k],
                format!("default `{d}` is not an entry of option `{}`", o.id),
                Some(hint),
            );
        }
    }
}

/// Results declared, with unique ids and a unit; every parser; every result
/// parsed (unless the executor returns values itself).
fn check_results(c: &mut Checker, p: &Profile, known: &BTreeSet<String>) {
    let mut result_ids = HashSet::new();
    if p.results.is_empty() {
        c.at_value(
            path!["results"],
            "no results declared",
            Some("declare what a trial yields: `- {id: bandwidth, unit: MB/s, proportion: HIB}`".into()),
        );
    }
    for (i, r) in p.results.iter().enumerate() {
        if !result_ids.insert(r.id.as_str()) {
            c.at_value(
                path!["results", i, "id"],
                format!("duplicate result id `{}`", r.id),
                Some("each result needs its own id".into()),
            );
        }
        if r.unit.trim().is_empty() {
            c.at_value(
                path!["results", i, "unit"],
                "unit is empty",
                Some("state the exact unit: `MB/s` (10^6 B/s), `MiB/s` (2^20 B/s), `IOPS`, `Seconds`".into()),
            );
        } else if let Some(exact) = units::loose_unit(&r.unit) {
            c.at_value(
                path!["results", i, "unit"],
                format!("unit `{}` is not an exact spelling", r.unit),
                Some(format!("write `{exact}`: MB/s = 10^6 B/s, MiB/s = 2^20 B/s")),
            );
        }
    }
    let mut parsed = HashSet::new();
    for (i, pd) in p.parsers.iter().enumerate() {
        check_parser(c, i, pd, p, known);
        parsed.insert(pd.result.as_str());
    }
    for (i, r) in p.results.iter().enumerate() {
        if !parsed.contains(r.id.as_str()) && !p.executor.returns_values() {
            c.at_value(
                path!["results", i, "id"],
                format!("result `{}` has no parser", r.id),
                Some(format!("add a parser with `result: {}`", r.id)),
            );
        }
    }
}

/// `trials:`: at least one, `max` and `min` around `times`, a positive `target_ci`.
fn check_trials(c: &mut Checker, p: &Profile) {
    let t = &p.trials;
    if t.times == 0 {
        c.at_value(
            path!["trials", "times"],
            "times must be at least 1",
            Some("3 is the usual number of scheduled trials".into()),
        );
    }
    if let Some(max) = t.max
        && max < t.times
    {
        c.at_value(
            path!["trials", "max"],
            format!("max ({max}) is below times ({})", t.times),
            Some("max caps the count of trials whatever the budget; it must be at least `times`".into()),
        );
    }
    if let Some(min) = t.min
        && (min == 0 || min > t.times)
    {
        c.at_value(
            path!["trials", "min"],
            format!("min ({min}) must be between 1 and times ({})", t.times),
            Some("min is the fewest trials a spent budget may leave".into()),
        );
    }
    if let Some(b) = &t.budget {
        match crate::units::parse_duration(b) {
            Ok(d) if d.is_zero() => c.at_value(
                path!["trials", "budget"],
                "budget must be longer than zero",
                Some("the time the trials may take, such as `30s` or `10 min`".into()),
            ),
            Ok(_) => {}
            Err(e) => c.at_value(path!["trials", "budget"], e.to_string(), Some(units_hint(&e))),
        }
    }
    if !(t.target_ci.is_finite() && t.target_ci > 0.0) {
        c.at_value(
            path!["trials", "target_ci"],
            "target_ci must be a positive percentage",
            Some("5 means trials are added while the 95 % CI of the mean is wider than ±5 % of it".into()),
        );
    }
}

/// `requirements:`: a free space that is a size (per test, when it uses
/// option values), program names and their folders, absolute file paths.
fn check_requirements(c: &mut Checker, p: &Profile, known: &BTreeSet<String>) {
    if let Some(rt) = &p.trials.run_time {
        check_run_time(c, p, rt, known);
    }
    if let Some(fs) = &p.requirements.free_space {
        check_free_space(c, p, fs, known);
    }
    for (i, pr) in p.requirements.programs.iter().enumerate() {
        if pr.name.trim().is_empty() || pr.name.contains('/') {
            c.at_value(
                path!["requirements", "programs", i, "name"],
                format!("`{}` is not a program name", pr.name),
                Some("name the program as found on PATH, like `fio`".into()),
            );
        }
        if let Some(pkg) = &pr.package {
            install::check_package_name(c, path!["requirements", "programs", i, "package"], pkg);
        }
        for (j, d) in pr.dirs.iter().enumerate() {
            if !d.starts_with('/') || d.split('/').any(|part| part == "..") {
                c.at_value(
                    path!["requirements", "programs", i, "dirs", j],
                    format!("`{d}` is not an absolute directory"),
                    Some("write where the package installs the program: `/usr/lib/postgresql/*/bin`".into()),
                );
            }
        }
    }
    for (i, f) in p.requirements.files.iter().enumerate() {
        if !f.path.starts_with('/') {
            c.at_value(
                path!["requirements", "files", i, "path"],
                format!("`{}` is not an absolute path", f.path),
                Some("name the file where its package installs it: `/usr/src/linux-source-6.1.tar.xz`".into()),
            );
        }
    }
}

/// `trials.run_time`: seconds every test's values fill it with.
fn check_run_time(c: &mut Checker, p: &Profile, rt: &str, known: &BTreeSet<String>) {
    c.text(path!["trials", "run_time"], rt, known);
    for combo in value_combos(p) {
        if let Ok(s) = template::render(rt, |n| combo.get(n).map(String::as_str), false)
            && let Err(e) = units::parse_seconds_expr(&s)
        {
            c.at_value(
                path!["trials", "run_time"],
                e.to_string(),
                Some("durations and numbers of seconds joined by `*` and `+`: `{{iterations}} * {{frequency}}`".into()),
            );
            break;
        }
    }
}

/// `requirements.free_space`: a size, or placeholders every entry fills with one.
fn check_free_space(c: &mut Checker, p: &Profile, fs: &str, known: &BTreeSet<String>) {
    if template::names(fs).is_ok_and(|n| !n.is_empty()) {
        // Per-test sizes come from the entries: check each test's value.
        c.text(path!["requirements", "free_space"], fs, known);
        for combo in value_combos(p) {
            if let Ok(s) = template::render(fs, |n| combo.get(n).map(String::as_str), false)
                && let Err(e) = units::parse_size_expr(&s)
            {
                c.at_value(
                    path!["requirements", "free_space"],
                    e.to_string(),
                    Some("the entries' values must fill it with a size such as `1GiB`, or sizes and numbers joined by `*` and `+` (`{{threads}} * {{size}} + 64MiB`)".into()),
                );
                break;
            }
        }
    } else if let Err(e) = units::parse_size_expr(fs) {
        c.at_value(path!["requirements", "free_space"], e.to_string(), Some(units_hint(&e)));
    }
}

/// Parser `i`: it names a declared result, reads one way, and each of its
/// settings is valid for that way.
fn check_parser(c: &mut Checker, i: usize, pd: &ParserDef, p: &Profile, known: &BTreeSet<String>) {
    if !p.results.iter().any(|r| r.id == pd.result) {
        let hint = match did_you_mean(&pd.result, p.results.iter().map(|r| r.id.as_str())) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "declared results: {}",
                p.results.iter().map(|r| format!("`{}`", r.id)).collect::<Vec<_>>().join(", ")
            ),
        };
        c.at_value(
            path!["parsers", i, "result"],
            format!("parser names no declared result: `{}`", pd.result),
            Some(hint),
        );
    }
    check_parser_kind(c, i, pd);
    if let Some(re) = &pd.regex {
        check_regex(c, i, re);
    }
    if let Some(ptr) = &pd.json_pointer {
        c.text(path!["parsers", i, "json_pointer"], ptr, known);
        if !ptr.is_empty() && !ptr.starts_with('/') {
            c.at_value(
                path!["parsers", i, "json_pointer"],
                format!("JSON pointer `{ptr}` must start with `/`"),
                Some(format!("write `/{}`", ptr.replace('.', "/"))),
            );
        }
    }
    if let Some(t) = &pd.template
        && !t.contains("#_RESULT_#")
    {
        c.at_value(
            path!["parsers", i, "template"],
            "template has no `#_RESULT_#` marker",
            Some("copy a sample output line and put `#_RESULT_#` where the value is".into()),
        );
    }
    if let Some(r) = &pd.rate {
        c.text(path!["parsers", i, "rate", "amount"], &r.amount, known);
        let unit = p.results.iter().find(|x| x.id == pd.result).map(|x| x.unit.as_str());
        check_rate_amount(c, i, &r.amount, unit);
    }
    if let Some(pl) = &pd.plugin {
        c.plugin_path(path!["parsers", i, "plugin", "path"], &pl.path);
        for (k, v) in &pl.config {
            c.text(path!["parsers", i, "plugin", "config", k.as_str()], v.as_str(), known);
        }
        c.plugin_limits(path!["parsers", i, "plugin", "limits"], &pl.limits);
    }
    check_parser_modifiers(c, i, pd);
    check_when(c, path!["parsers", i, "when"], &pd.when, p, known);
}

/// A parser sets exactly one of its kinds (`regex`, `template` …).
fn check_parser_kind(c: &mut Checker, i: usize, pd: &ParserDef) {
    let kinds: Vec<&str> = [
        pd.regex.as_ref().map(|_| "regex"),
        pd.json_pointer.as_ref().map(|_| "json_pointer"),
        pd.template.as_ref().map(|_| "template"),
        pd.wall_time.then_some("wall_time"),
        pd.rate.as_ref().map(|_| "rate"),
        pd.plugin.as_ref().map(|_| "plugin"),
    ]
    .into_iter()
    .flatten()
    .collect();
    match kinds.len() {
        0 => c.at_value(
            path!["parsers", i],
            "parser has no kind",
            Some("set one of `regex`, `json_pointer`, `template`, `wall_time: true`, `rate` or `plugin`".into()),
        ),
        1 => {}
        _ => c.at_key(
            path!["parsers", i, kinds[1]],
            format!("parser sets both `{}` and `{}`", kinds[0], kinds[1]),
            Some("a parser reads one way; split it into two parsers".into()),
        ),
    }
}

/// A literal rate amount is a positive number or a size, and a size goes
/// with a byte-rate unit (one from placeholders is checked when it is filled).
fn check_rate_amount(c: &mut Checker, i: usize, amount: &str, unit: Option<&str>) {
    if amount.contains("{{") || amount.trim().parse::<f64>().is_ok_and(|n| n.is_finite() && n > 0.0) {
        return;
    }
    let at = path!["parsers", i, "rate", "amount"];
    match units::parse_size(amount) {
        Err(e) => c.at_value(at, e.to_string(), Some("a size (`1GiB`, `{{size}}`) or a count (`2500`)".into())),
        Ok(_) if unit.is_some_and(|u| units::byte_rate(u).is_none()) => c.at_value(
            at,
            format!("`{amount}` is a size, but the result's unit `{}` is not a byte rate", unit.unwrap_or_default()),
            Some("give the result a byte-rate unit (MB/s = 10^6 B/s, MiB/s = 2^20 B/s)".into()),
        ),
        Ok(_) => {}
    }
}

/// A parser's regex compiles and captures `value`.
fn check_regex(c: &mut Checker, i: usize, re: &str) {
    match Regex::new(re) {
        Err(e) => {
            let first = e.to_string().lines().last().unwrap_or("").trim().to_string();
            c.at_value(
                path!["parsers", i, "regex"],
                format!("regex does not compile: {}", first.trim_start_matches("error: ")),
                Some("the syntax is that of Rust's regex crate (https://docs.rs/regex); in YAML, single quotes keep backslashes as written".into()),
            )
        }
        Ok(r) if !r.capture_names().flatten().any(|n| n == "value") => c.at_value(
            path!["parsers", i, "regex"],
            "regex has no named capture `value`",
            Some("wrap the number in `(?P<value>…)`, e.g. `Files/sec:\\s+(?P<value>[0-9.]+)`".into()),
        ),
        Ok(_) => {}
    }
}

/// Line hints only on a template parser; `multiply_by` and `divide_by` non-zero numbers.
fn check_parser_modifiers(c: &mut Checker, i: usize, pd: &ParserDef) {
    for hint_key in ["line_hint", "line_before_hint", "line_after_hint"] {
        let set = match hint_key {
            "line_hint" => pd.line_hint.is_some(),
            "line_before_hint" => pd.line_before_hint.is_some(),
            _ => pd.line_after_hint.is_some(),
        };
        if set && pd.template.is_none() {
            c.at_key(
                path!["parsers", i, hint_key],
                format!("`{hint_key}` only applies to a `template` parser"),
                Some("remove it, or add a `template:` line".into()),
            );
        }
    }
    for (key, v) in [("multiply_by", pd.multiply_by), ("divide_by", pd.divide_by)] {
        if let Some(v) = v
            && (!v.is_finite() || v == 0.0)
        {
            c.at_value(
                path!["parsers", i, key],
                format!("{key} must be a non-zero number"),
                Some("1000000 turns bytes/s into MB/s (10^6); 1048576 into MiB/s (2^20)".into()),
            );
        }
    }
}

/// Checks a `when:` map: every key an option value, every value one an entry sets.
fn check_when(c: &mut Checker, at: Path, when: &IndexMap<String, Scalar>, p: &Profile, known: &BTreeSet<String>) {
    for (k, v) in when {
        let mut here = at.clone();
        here.push(k.as_str().into());
        let values: Vec<&str> = p
            .options
            .iter()
            .flat_map(|o| o.entries.iter().map(move |e| (o, e)))
            .flat_map(|(o, e)| e.values.get(k).into_iter().chain(e.value.as_ref().filter(|_| &o.id == k)))
            .map(|s| s.as_str())
            .collect();
        if !known.contains(k) || BUILTIN_VARS.contains(&k.as_str()) {
            let names: BTreeSet<String> =
                known.iter().filter(|n| !BUILTIN_VARS.contains(&n.as_str())).cloned().collect();
            c.at_key(
                here,
                format!("`when` names `{k}`, which no option sets"),
                Some(format!("option values are: {}", list(&names))),
            );
        } else if !values.contains(&v.as_str()) {
            c.at_value(
                here,
                format!("no entry sets `{k}` to `{v}`"),
                Some("compare with the entries' `values:`".into()),
            );
        }
    }
}

/// Path of `rest` inside the `server:` of step `i` of the `list` steps.
fn server_path(list: &str, i: usize, rest: &[&str]) -> Path {
    let mut p = path!["executor", "external", list, i, "server"];
    p.extend(rest.iter().map(|r| (*r).into()));
    p
}

/// A `server:` step (`list` step `i`): no keys of its own beside `server`,
/// not after the trial, a unique name, a program, a ready condition, a stop
/// signal and timeout engine knows, and only the test's files to remove.
fn check_server(
    c: &mut Checker,
    list: &str,
    i: usize,
    s: &Step,
    known: &BTreeSet<String>,
    names: &mut HashSet<String>,
) {
    let Some(d) = &s.server else { return };
    check_server_step(c, list, i, s);
    let at = |rest: &[&str]| server_path(list, i, rest);
    if !is_valid_id(&d.name) {
        c.at_value(
            at(&["name"]),
            format!("server name `{}` is not valid", d.name),
            Some("use lower-case letters, digits, `-` and `_` (`postgres`)".into()),
        );
    } else if !names.insert(d.name.clone()) {
        c.at_value(
            at(&["name"]),
            format!("two servers are named `{}`", d.name),
            Some("each server needs its own name (it names its log)".into()),
        );
    }
    if d.program.trim().is_empty() {
        c.at_value(at(&["program"]), "server program is empty", Some("name the program, like `postgres`".into()));
    }
    c.text(at(&["program"]), &d.program, known);
    for (j, a) in d.args.iter().enumerate() {
        let mut p = at(&["args"]);
        p.push(j.into());
        c.arg(p, a, known);
    }
    for (k, v) in &d.env {
        c.text(at(&["env", k.as_str()]), v, known);
    }
    check_ready(c, list, i, &d.ready, known);
    if let Some(sig) = &d.stop_signal
        && crate::sys::proc::signal_by_name(sig).is_none()
    {
        c.at_value(
            at(&["stop_signal"]),
            format!("unknown signal `{sig}`"),
            Some("use TERM, INT, QUIT, HUP, WINCH, USR1 or USR2".into()),
        );
    }
    if let Some(t) = &d.stop_timeout
        && let Err(e) = units::parse_duration(t)
    {
        c.at_value(at(&["stop_timeout"]), e.to_string(), Some(units_hint(&e)));
    }
    check_server_remove(c, list, i, &d.remove, known);
}

/// The step around a server says nothing of its own, and is not in a
/// list that runs after the trial.
fn check_server_step(c: &mut Checker, list: &str, i: usize, s: &Step) {
    for (key, set) in [("program", s.program.is_some()), ("shell", s.shell.is_some()), ("args", !s.args.is_empty())] {
        if set {
            c.at_key(
                path!["executor", "external", list, i, key],
                format!("a `server` step has no `{key}`: the server's own `program` and `args` say what runs"),
                Some("move it into `server:`".into()),
            );
        }
    }
    if list == "post_trial" || list == "post_test" {
        c.at_key(
            path!["executor", "external", list, i, "server"],
            format!("a server cannot start in `{list}`: nothing would run while it does"),
            Some("start it in `pre_test` (it runs for the whole test) or `pre_trial` (for one trial)".into()),
        );
    }
}

/// A server's `ready:` names a condition, each one valid.
fn check_ready(c: &mut Checker, list: &str, i: usize, r: &ReadyDef, known: &BTreeSet<String>) {
    let at = |rest: &[&str]| server_path(list, i, rest);
    if r.socket.is_none() && r.tcp.is_none() && r.command.is_empty() {
        c.at_value(
            at(&["ready"]),
            "`ready` names no condition",
            Some(
                "say when the server is ready: `socket: PATH`, `tcp: \"{{free_port}}\"` or `command: [prog, args…]`"
                    .into(),
            ),
        );
    }
    if let Some(sock) = &r.socket {
        c.text(at(&["ready", "socket"]), sock, known);
    }
    if let Some(t) = &r.tcp {
        c.text(at(&["ready", "tcp"]), t, known);
        if template::names(t).is_ok_and(|n| n.is_empty())
            && t.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()).is_none()
        {
            c.at_value(
                at(&["ready", "tcp"]),
                format!("`{t}` is not a TCP port"),
                Some("write a port (`8080`) or `\"{{free_port}}\"`".into()),
            );
        }
    }
    for (j, a) in r.command.iter().enumerate() {
        let mut p = at(&["ready", "command"]);
        p.push(j.into());
        c.arg(p, a, known);
    }
}

/// A server's `remove:` paths lie inside the test's directory.
fn check_server_remove(c: &mut Checker, list: &str, i: usize, remove: &[String], known: &BTreeSet<String>) {
    for (j, r) in remove.iter().enumerate() {
        let mut p = server_path(list, i, &["remove"]);
        p.push(j.into());
        c.text(p.clone(), r, known);
        let inside = ["{{test_dir}}/", "{{scratch_dir}}/"].iter().any(|pre| r.starts_with(pre) && r.len() > pre.len());
        if !inside || r.split('/').any(|part| part == "..") {
            c.at_value(
                p,
                format!("`remove` path `{r}` is not inside the test's directory"),
                Some("engine (and `engine recover`, as root) deletes these: start them with `{{test_dir}}/` or `{{scratch_dir}}/`".into()),
            );
        }
    }
}

fn check_steps(c: &mut Checker, list: &str, steps: &[Step], known: &BTreeSet<String>, servers: &mut HashSet<String>) {
    for (i, s) in steps.iter().enumerate() {
        if s.server.is_some() {
            check_server(c, list, i, s, known, servers);
            continue;
        }
        match (&s.program, &s.shell) {
            (Some(_), Some(_)) => c.at_key(
                path!["executor", "external", list, i, "shell"],
                "step sets both `program` and `shell`",
                Some("use one of them".into()),
            ),
            (None, None) => c.at_value(
                path!["executor", "external", list, i],
                "step has neither `program`, `shell` nor `server`",
                Some("write `- shell: \"…\"`, `- program: …` or `- server: {…}`".into()),
            ),
            (None, Some(sh)) => {
                c.text(path!["executor", "external", list, i, "shell"], sh, known);
                for name in quoted_placeholders(sh) {
                    c.at_value(
                        path!["executor", "external", list, i, "shell"],
                        format!("`{{{{{name}}}}}` is inside quotes in a shell step: engine quotes placeholder values for the shell, and the extra quotes undo that"),
                        Some(format!("write {{{{{name}}}}} without quotes around it")),
                    );
                }
                if !s.args.is_empty() {
                    c.at_key(
                        path!["executor", "external", list, i, "args"],
                        "`args` only applies to a `program` step",
                        Some("put the arguments in the shell line, or use `program:`".into()),
                    );
                }
            }
            (Some(pr), None) => {
                c.text(path!["executor", "external", list, i, "program"], pr, known);
                for (j, a) in s.args.iter().enumerate() {
                    c.arg(path!["executor", "external", list, i, "args", j], a, known);
                }
            }
        }
        if let Some(t) = &s.timeout
            && let Err(e) = units::parse_duration(t)
        {
            c.at_value(path!["executor", "external", list, i, "timeout"], e.to_string(), Some(units_hint(&e)));
        }
    }
}

/// Placeholders written inside the author's own single or double quotes in
/// a shell line (`rm -rf '{{target_dir}}'`): the value, quoted by engine,
/// would end up unquoted between the two pairs of quotes.
pub fn quoted_placeholders(sh: &str) -> Vec<String> {
    let b = sh.as_bytes();
    let (mut i, mut single, mut double) = (0, false, false);
    let mut out = Vec::new();
    while i < b.len() {
        match b[i] {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'{' if b.get(i + 1) == Some(&b'{') && (single || double) => {
                if let Some(end) = sh[i + 2..].find("}}") {
                    out.push(sh[i + 2..i + 2 + end].trim().trim_start_matches('@').to_string());
                    i += end + 3;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn check_builtin(c: &mut Checker, b: &BuiltinExecutor, p: &Profile, known: &BTreeSet<String>) {
    let Some(w) = crate::workloads::find(&b.workload) else {
        let names = crate::workloads::names();
        let hint = match crate::model::diag::did_you_mean(&b.workload, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("built-in workloads: {}", names.join(", ")),
        };
        c.at_value(
            path!["executor", "builtin", "workload"],
            format!("no built-in workload `{}`", b.workload),
            Some(hint),
        );
        return;
    };
    for (k, v) in &b.config {
        if !w.keys.contains(&k.as_str()) {
            let hint = match crate::model::diag::did_you_mean(k, w.keys.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("`{}` reads: {}", w.name, w.keys.join(", ")),
            };
            c.at_key(
                path!["executor", "builtin", "config", k.as_str()],
                format!("workload `{}` has no config key `{k}`", w.name),
                Some(hint),
            );
        }
        c.text(path!["executor", "builtin", "config", k.as_str()], v.as_str(), known);
    }
    for (i, r) in p.results.iter().enumerate() {
        if !w.results.contains(&r.id.as_str()) && !p.parsers.iter().any(|d| d.result == r.id) {
            c.at_value(
                path!["results", i, "id"],
                format!("workload `{}` returns no result `{}`", w.name, r.id),
                Some(format!("it returns: {}", w.results.join(", "))),
            );
        }
    }
    if let Some(t) = &b.timeout
        && let Err(e) = units::parse_duration(t)
    {
        c.at_value(path!["executor", "builtin", "timeout"], e.to_string(), Some(units_hint(&e)));
    }
}

fn check_wasm(c: &mut Checker, w: &WasmExecutor, known: &BTreeSet<String>) {
    c.plugin_path(path!["executor", "wasm", "plugin"], &w.plugin);
    for (k, v) in &w.config {
        c.text(path!["executor", "wasm", "config", k.as_str()], v.as_str(), known);
    }
    for (k, v) in &w.env {
        c.text(path!["executor", "wasm", "env", k.as_str()], v, known);
    }
    c.plugin_limits(path!["executor", "wasm", "limits"], &w.limits);
}

impl Checker<'_> {
    /// A plugin path must name a file inside the profile's folder: relative,
    /// and never climbing with `..` (symlinks are checked on disk, see
    /// [`check_plugin_files`]).
    fn plugin_path(&mut self, at: Path, rel: &str) {
        let hint = "put the `.wasm` file in the profile's folder and name it relative to it, like `plugin.wasm`";
        if rel.trim().is_empty() {
            self.at_value(at, "plugin path is empty", Some(hint.into()));
        } else if rel.starts_with('/') {
            self.at_value(
                at,
                format!("plugin path `{rel}` is absolute; it must be inside the profile's folder"),
                Some(hint.into()),
            );
        } else if std::path::Path::new(rel).components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            self.at_value(
                at,
                format!("plugin path `{rel}` climbs out of the profile's folder with `..`"),
                Some(hint.into()),
            );
        } else if template::names(rel).is_ok_and(|n| !n.is_empty()) {
            self.at_value(
                at,
                format!("plugin path `{rel}` holds a placeholder"),
                Some("name one file; put choices in `config:`".into()),
            );
        }
    }

    fn plugin_limits(&mut self, at: Path, l: &PluginLimits) {
        if let Some(m) = &l.memory
            && let Err(e) = units::parse_size(m)
        {
            let mut at = at.clone();
            at.push("memory".into());
            self.at_value(at, e.to_string(), Some(units_hint(&e)));
        }
        if let Some(t) = &l.time
            && let Err(e) = units::parse_duration(t)
        {
            let mut at = at;
            at.push("time".into());
            self.at_value(at, e.to_string(), Some(units_hint(&e)));
        }
    }
}

/// On-disk checks of the plugin files a profile in folder `dir` names.
pub fn check_plugin_files(p: &Profile, dir: &std::path::Path, file: &str, index: &YamlIndex) -> Diagnostics {
    let packages = crate::install::packages::Catalog::default();
    let mut c = Checker { file, index, packages: &packages, out: Diagnostics::default() };
    let mut paths: Vec<(Path, &str)> = Vec::new();
    if let ExecutorDef::Wasm(w) = &p.executor {
        paths.push((path!["executor", "wasm", "plugin"], &w.plugin));
    }
    for (i, pd) in p.parsers.iter().enumerate() {
        if let Some(pl) = &pd.plugin {
            paths.push((path!["parsers", i, "plugin", "path"], &pl.path));
        }
    }
    for (at, rel) in paths {
        // Lexical problems were reported by `check_profile`.
        if rel.trim().is_empty()
            || rel.starts_with('/')
            || rel.contains("..")
            || template::names(rel).is_ok_and(|n| !n.is_empty())
        {
            continue;
        }
        if let Err(e) = crate::plugin::file::plugin_file(dir, rel) {
            let hint = match e {
                crate::plugin::file::PluginFileError::Missing(_) => format!(
                    "build the plugin (`engine plugin build`) and copy its `.wasm` to {}",
                    dir.join(rel).display()
                ),
                crate::plugin::file::PluginFileError::Directory(_) => "name the `.wasm` file itself".to_string(),
                crate::plugin::file::PluginFileError::Escapes(_) => {
                    "copy the `.wasm` file into the profile's folder instead of linking to it".to_string()
                }
            };
            c.at_value(at, e.to_string(), Some(hint));
        }
    }
    c.out
}

fn check_external(c: &mut Checker, x: &ExternalExecutor, known: &BTreeSet<String>) {
    if x.program.trim().is_empty() {
        c.at_value(
            path!["executor", "external", "program"],
            "program is empty",
            Some("name the program to run, like `fio`".into()),
        );
    }
    c.text(path!["executor", "external", "program"], &x.program, known);
    for (i, a) in x.args.iter().enumerate() {
        c.arg(path!["executor", "external", "args", i], a, known);
    }
    for (k, v) in &x.env {
        c.text(path!["executor", "external", "env", k.as_str()], v, known);
    }
    if let Some(s) = &x.stdin {
        c.text(path!["executor", "external", "stdin"], s, known);
    }
    if let Some(t) = &x.timeout
        && let Err(e) = units::parse_duration(t)
    {
        c.at_value(path!["executor", "external", "timeout"], e.to_string(), Some(units_hint(&e)));
    }
    let mut servers = HashSet::new();
    check_steps(c, "pre_test", &x.pre_test, known, &mut servers);
    check_steps(c, "pre_trial", &x.pre_trial, known, &mut servers);
    check_steps(c, "post_trial", &x.post_trial, known, &mut servers);
    check_steps(c, "post_test", &x.post_test, known, &mut servers);
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

fn units_hint(e: &units::UnitError) -> String {
    match e {
        units::UnitError::Size(_) => "kB, MB, GB, TB are powers of 10; KiB, MiB, GiB, TiB powers of 2".into(),
        units::UnitError::Duration(_) => "units: ms, s, m, h (`1h 30m`)".into(),
        units::UnitError::DurationTooLong(_) => "time limits go up to 366 days; split a longer job into tests".into(),
    }
}

#[cfg(test)]
mod quoting_tests {
    use super::quoted_placeholders;

    #[test]
    fn placeholders_inside_quotes_are_found() {
        assert_eq!(quoted_placeholders("rm -rf '{{target_dir}}'/x"), ["target_dir"]);
        assert_eq!(quoted_placeholders("echo \"n={{files}}\" {{ok}}"), ["files"]);
        assert!(quoted_placeholders("rm -rf {{target_dir}}/x && echo 'done'").is_empty());
        assert!(quoted_placeholders("echo \\'{{x}}").is_empty(), "an escaped quote opens nothing");
        assert!(quoted_placeholders("awk -v n={{inserts}} 'BEGIN { print n }'").is_empty());
    }
}
