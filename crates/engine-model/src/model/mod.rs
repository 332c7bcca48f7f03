//! The types engine reads and writes, and the single source of the JSON
//! Schemas in `schemas/`: profiles and suites (`profile`), result files
//! (`result`) with the system each ran on (`system`), the placeholder
//! grammar of profiles (`template`), positioned diagnostics (`diag`), and
//! the one grammar of names that become paths (`names`).
//! Plain data and the rules that belong to it; no I/O.

pub mod diag;
pub mod facts;
pub mod grant;
pub mod names;
pub mod profile;
pub mod result;
pub mod series;
pub mod system;
pub mod template;
pub mod version;

/// The draft-07 JSON Schema of `T` with `$id` set, as committed in `schemas/`.
pub fn schema_json<T: schemars::JsonSchema>(id: &str) -> String {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    schema.insert("$id".into(), serde_json::Value::String(id.into()));
    let mut s = serde_json::to_string_pretty(&schema).expect("schemas serialize");
    s.push('\n');
    s
}

/// Whether a value is its type's default: such fields are left out when a
/// model value is written (`engine profile import-pts`), as a person would.
pub fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
