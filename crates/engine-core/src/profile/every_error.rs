//! Every structural problem of a file at once. The typed reader stops at the
//! first one (three typos took three rounds of `engine validate`); when it
//! fails, the file's YAML is also checked against the JSON schema generated
//! from the same types, which reports all unknown keys, missing keys and
//! unknown words where a fixed set is allowed, each placed at its line and
//! column. Types are left to the reader (it reads YAML scalars leniently).

use super::yaml_index::{Path, Seg, YamlIndex};
use crate::model::diag::{Diagnostic, did_you_mean};
use serde_json::Value;
use std::sync::LazyLock;

/// A schema compiled once, with its JSON to look allowed keys up in.
pub(super) struct Schema {
    json: Value,
    validator: jsonschema::Validator,
}

impl Schema {
    fn new(json: Value) -> Schema {
        let validator = jsonschema::draft7::new(&json).expect("generated schemas compile");
        Schema { json, validator }
    }
}

fn compile<T: schemars::JsonSchema>() -> Schema {
    let text = crate::model::schema_json::<T>("https://engine.invalid/schemas/check.json");
    Schema::new(serde_json::from_str(&text).expect("generated schemas parse"))
}

pub(super) static PROFILE: LazyLock<Schema> = LazyLock::new(compile::<crate::model::profile::Profile>);
pub(super) static SUITE: LazyLock<Schema> = LazyLock::new(compile::<crate::model::profile::Suite>);

/// The schema's findings in `text` (empty when it is not YAML at all, or
/// the schema finds nothing), at most `max` of them.
pub(super) fn check(schema: &Schema, text: &str, file: &str, max: usize) -> Vec<Diagnostic> {
    let Ok(value) = serde_saphyr::from_str::<Value>(text) else { return Vec::new() };
    let cx = Found { schema, value: &value, index: YamlIndex::build(text), file };
    let mut out = Vec::new();
    for e in schema.validator.iter_errors(&value).take(max) {
        cx.place(&e, &mut out);
    }
    out.truncate(max);
    out
}

struct Found<'a> {
    schema: &'a Schema,
    value: &'a Value,
    index: YamlIndex,
    file: &'a str,
}

impl Found<'_> {
    fn place(&self, e: &jsonschema::ValidationError<'_>, out: &mut Vec<Diagnostic>) {
        use jsonschema::error::ValidationErrorKind as K;
        let pointer = e.instance_path().to_string();
        let at = path_of(self.value, &pointer);
        match e.kind() {
            K::AdditionalProperties { unexpected } => {
                let allowed = allowed_keys(&self.schema.json, &e.schema_path().to_string());
                for key in unexpected {
                    let mut p = at.clone();
                    p.push(Seg::Key(key.clone()));
                    let hint = match did_you_mean(key, allowed.iter().map(String::as_str)) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("allowed keys here: {}", allowed.join(", ")),
                    };
                    out.push(
                        Diagnostic::new(self.file, self.index.key(&p), format!("unknown field `{key}`"))
                            .with_hint(hint),
                    );
                }
            }
            K::Required { property } => {
                let key = property.as_str().unwrap_or_default();
                out.push(
                    Diagnostic::new(self.file, self.index.value(&at), format!("missing field `{key}`"))
                        .with_hint(format!("add `{key}:` to this mapping")),
                );
            }
            // One of several shapes (`executor: {external: …}` or `{wasm: …}`):
            // the problems of the shape the file means — the one whose
            // mismatches are deepest inside, not at the node itself.
            K::OneOfNotValid { context } | K::AnyOf { context } if const_words(context).is_some() => {
                let allowed = const_words(context).unwrap_or_default();
                self.unknown_word(e, &at, &allowed, out);
            }
            K::OneOfNotValid { context } | K::AnyOf { context } => {
                let shallow = |errs: &Vec<jsonschema::ValidationError<'static>>| {
                    errs.iter().filter(|x| x.instance_path().to_string() == pointer).count()
                };
                if let Some(branch) = context.iter().filter(|b| !b.is_empty()).min_by_key(|b| (shallow(b), b.len()))
                    && shallow(branch) == 0
                {
                    branch.iter().for_each(|x| self.place(x, out));
                } else {
                    // An optional size or duration (`anyOf` it or null, perhaps
                    // inside another such choice) that is neither: its pattern.
                    for x in context.iter().flatten() {
                        if matches!(x.kind(), K::Pattern { .. } | K::AnyOf { .. } | K::OneOfNotValid { .. }) {
                            self.place(x, out);
                        }
                    }
                }
            }
            K::Enum { options } if e.instance().is_string() => {
                let allowed: Vec<String> =
                    options.as_array().into_iter().flatten().filter_map(Value::as_str).map(String::from).collect();
                self.unknown_word(e, &at, &allowed, out);
            }
            // A size or a duration outside the grammar: the grammar's own words.
            K::Pattern { pattern } => {
                let text = e.instance().as_str().unwrap_or_default();
                let err = match pattern.as_str() {
                    p if p == crate::units::SIZE_PATTERN => crate::units::parse_size(text).err(),
                    p if p == crate::units::DURATION_PATTERN => crate::units::parse_duration(text).err(),
                    _ => None,
                };
                if let Some(err) = err {
                    out.push(Diagnostic::new(self.file, self.index.value(&at), err.to_string()).with_hint(err.hint()));
                }
            }
            // Types are left to the reader: YAML scalars it reads leniently
            // (`value: 10` as text, `id: n`, which untyped YAML calls false)
            // would be false alarms here.
            _ => {}
        }
    }
}

impl Found<'_> {
    /// `unknown variant `HIBB``, with the nearest allowed word.
    fn unknown_word(
        &self,
        e: &jsonschema::ValidationError<'_>,
        at: &Path,
        allowed: &[String],
        out: &mut Vec<Diagnostic>,
    ) {
        let word = e.instance().as_str().unwrap_or_default();
        let hint = match did_you_mean(word, allowed.iter().map(String::as_str)) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("allowed values: {}", allowed.join(", ")),
        };
        out.push(Diagnostic::new(self.file, self.index.value(at), format!("unknown variant `{word}`")).with_hint(hint));
    }
}

/// The words a `oneOf` of constants allows (an enum whose variants carry
/// doc comments is one), when every branch is just such a constant.
fn const_words(context: &[Vec<jsonschema::ValidationError<'static>>]) -> Option<Vec<String>> {
    use jsonschema::error::ValidationErrorKind as K;
    let mut words = Vec::new();
    for branch in context {
        match branch.as_slice() {
            [x] if x.instance().is_string() => match x.kind() {
                K::Constant { expected_value } => words.push(expected_value.as_str()?.to_string()),
                _ => return None,
            },
            _ => return None,
        }
    }
    (!words.is_empty()).then_some(words)
}

/// A JSON pointer into `value` as a path into the YAML: numbers are indices
/// where the node is a list.
fn path_of(value: &Value, pointer: &str) -> Path {
    let mut node = Some(value);
    let mut out = Path::new();
    for raw in pointer.split('/').skip(1) {
        let tok = raw.replace("~1", "/").replace("~0", "~");
        match (node, tok.parse::<usize>()) {
            (Some(Value::Array(a)), Ok(i)) => {
                node = a.get(i);
                out.push(Seg::Index(i));
            }
            _ => {
                node = node.and_then(|n| n.get(&tok));
                out.push(Seg::Key(tok));
            }
        }
    }
    out
}

/// The keys the schema object at `keyword` (`…/additionalProperties`) allows.
fn allowed_keys(schema: &Value, keyword: &str) -> Vec<String> {
    let parent = keyword.rsplit_once('/').map_or("", |(p, _)| p);
    let mut node = Some(schema);
    for raw in parent.split('/').skip(1) {
        let tok = raw.replace("~1", "/").replace("~0", "~");
        node = node.and_then(|n| match n {
            Value::Array(a) => tok.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => n.get(&tok),
        });
    }
    let mut keys: Vec<String> = node
        .and_then(|n| n.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_typos_three_findings_each_placed() {
        let text = "id: x\nversion: 1.0.0\ntitel: X\ntest_type: other\nexecutor:\n  external:\n    program: true\n    argz: []\nresults:\n  - {id: v, unit: s, proportion: HIB, sigend: true}\nparsers:\n  - {result: v, wall_time: true}\n";
        let found = check(&PROFILE, text, "p.yaml", 50);
        let said: Vec<String> = found.iter().map(|d| d.to_string()).collect();
        let has = |s: &str| said.iter().any(|d| d.contains(s));
        assert!(has("p.yaml:3:1: unknown field `titel`") && has("did you mean `title`?"), "{said:#?}");
        assert!(has("p.yaml:8:5: unknown field `argz`") && has("did you mean `args`?"), "{said:#?}");
        assert!(has("unknown field `sigend`") && has("did you mean `signed`?"), "{said:#?}");
        assert!(has("missing field `title`"), "{said:#?}");
        assert_eq!(said.len(), 4, "nothing else: {said:#?}");
        // Scalars the reader takes leniently are no findings; a misspelt word is.
        let text = "id: x\nversion: 1.0.0\ntitle: X\ntest_type: dsik\noptions:\n  - id: n\n    name: N\n    entries:\n      - {label: A, value: 10}\nexecutor:\n  external:\n    program: true\nresults:\n  - {id: v, unit: s, proportion: HIB}\nparsers:\n  - {result: v, wall_time: true}\n";
        let said: Vec<String> = check(&PROFILE, text, "p.yaml", 50).iter().map(|d| d.to_string()).collect();
        assert_eq!(said, ["p.yaml:4:12: unknown variant `dsik`\n  hint: did you mean `disk`?"], "{said:#?}");
    }

    #[test]
    fn pointers_become_yaml_paths() {
        let v: Value = serde_json::json!({"a": [{"0": 1}], "b/c": 2});
        assert_eq!(path_of(&v, "/a/0/0"), vec![Seg::Key("a".into()), Seg::Index(0), Seg::Key("0".into())]);
        assert_eq!(path_of(&v, "/b~1c"), vec![Seg::Key("b/c".into())]);
        assert!(path_of(&v, "").is_empty());
    }
}
