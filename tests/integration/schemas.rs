//! The JSON Schemas are generated from the serde types; the committed copies
//! must be fresh, and every shipped file must satisfy them.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn shipped_yaml() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["test-profiles", "suites"] {
        let mut stack = vec![repo().join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "yaml") {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    assert!(out.len() >= 5, "{out:?}");
    out
}

fn schema(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo().join("schemas").join(name)).unwrap()).unwrap()
}

fn errors(schema: &Value, instance: &Value) -> Vec<String> {
    let v = jsonschema::draft7::new(schema).expect("schema compiles");
    v.iter_errors(instance).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

#[test]
fn committed_schemas_are_fresh() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    for (name, content) in engine::schema::all() {
        let path = repo().join("schemas").join(name);
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old != content {
            if update {
                std::fs::write(&path, &content).unwrap();
            } else {
                stale.push(name);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale schemas {stale:?}: run `UPDATE_SCHEMAS=1 cargo test --test integration schemas` and commit"
    );
}

#[test]
fn schemas_are_draft_07() {
    for name in ["profile.schema.json", "suite.schema.json", "result.schema.json", "progress.schema.json"] {
        assert_eq!(schema(name)["$schema"], "http://json-schema.org/draft-07/schema#", "{name}");
    }
}

#[test]
fn every_shipped_yaml_names_its_schema_and_satisfies_it() {
    for path in shipped_yaml() {
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap_or("");
        let rel = first
            .strip_prefix("# yaml-language-server: $schema=")
            .unwrap_or_else(|| panic!("{} does not start with a yaml-language-server line", path.display()));
        let schema_path = path.parent().unwrap().join(rel);
        assert!(schema_path.is_file(), "{}: {} does not exist", path.display(), schema_path.display());
        let name = Path::new(rel).file_name().unwrap().to_str().unwrap();
        let instance: Value = serde_saphyr::from_str(&text).unwrap();
        let errs = errors(&schema(name), &instance);
        assert!(errs.is_empty(), "{}: {errs:?}", path.display());
    }
}

#[test]
fn a_written_result_file_satisfies_the_result_schema() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["3", "4"]));
    let r = env.bench(&["echo", "--save", "r", "--runs", "1"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("r");
    assert_eq!(f["results"][0]["entries"][0]["sd"], Value::Null, "one trial has no SD");
    let errs = errors(&schema("result.schema.json"), &f);
    assert!(errs.is_empty(), "{errs:?}");
    // And the schema is strict enough to catch a broken file.
    let mut broken = f.clone();
    broken["results"][0]["proportion"] = Value::String("MORE".into());
    assert!(!errors(&schema("result.schema.json"), &broken).is_empty());
}
