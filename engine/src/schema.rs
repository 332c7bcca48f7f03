//! JSON Schemas (draft-07, what yaml-language-server reads) generated from the
//! serde types; the committed copies in `schemas/` are checked against these.

use schemars::generate::SchemaSettings;

fn generate<T: schemars::JsonSchema>(id: &str) -> String {
    let generator = SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    schema.insert("$id".into(), serde_json::Value::String(id.into()));
    let mut s = serde_json::to_string_pretty(&schema).expect("schemas serialize");
    s.push('\n');
    s
}

const RESULT_ID: &str = "https://engine.invalid/schemas/result.schema.json";

/// The result file's schema: the content of `schemas/result.schema.json`
/// (a test keeps the committed file equal to it).
pub fn result() -> serde_json::Value {
    serde_json::from_str(&generate::<crate::result::ResultFile>(RESULT_ID)).expect("schemas parse")
}

/// `(file name, content)` of every schema in `schemas/`.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        (
            "profile.schema.json",
            generate::<crate::profile::model::Profile>("https://engine.invalid/schemas/profile.schema.json"),
        ),
        (
            "suite.schema.json",
            generate::<crate::profile::model::Suite>("https://engine.invalid/schemas/suite.schema.json"),
        ),
        ("result.schema.json", generate::<crate::result::ResultFile>(RESULT_ID)),
        (
            "progress.schema.json",
            generate::<crate::events::EventLine>("https://engine.invalid/schemas/progress.schema.json"),
        ),
        (
            "repository-index.schema.json",
            generate::<crate::repo::index::Index>("https://engine.invalid/schemas/repository-index.schema.json"),
        ),
    ]
}
