//! `options:`: the menus a user picks entries from, and their scalar values.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A menu: one entry is chosen per test.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionDef {
    /// Name used in `--option ID=…` and, with `value`, as the placeholder `{{ID}}`.
    pub id: String,
    /// Name shown in descriptions (`Block Size` → `Block Size: 4KB`).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The menu entries.
    pub entries: Vec<Entry>,
    /// Labels of the entries that run in batch mode; empty means every entry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub default: Vec<String>,
}

/// One menu entry: a label for people and named values for the run step.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// What people see (`4KB`, `Random Read`).
    pub label: String,
    /// The value of the placeholder named after the option's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Scalar>,
    /// Further named values: `{rw: randread, direction: read}` fills `{{rw}}` and `{{direction}}`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub values: IndexMap<String, Scalar>,
}

/// A scalar written as a string, number or boolean; kept as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Scalar(pub String);

pub(super) struct ScalarVisitor;

impl serde::de::Visitor<'_> for ScalarVisitor {
    type Value = Scalar;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string, number or boolean")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Asked for a string, the YAML reader hands over the scalar's text as
        // written (`010` stays `010`, `yes` stays `yes`).
        d.deserialize_str(ScalarVisitor)
    }
}

impl Scalar {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl JsonSchema for Scalar {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Scalar".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A string, number or boolean, kept as its text.",
            "type": ["string", "number", "boolean"]
        })
    }
}
