//! Suite files: profiles (and suites) with presets.

use super::options::{Scalar, ScalarVisitor};
use crate::units::Duration;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A suite: a list of tests (profiles with option presets) and other suites.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub title: String,
    /// Version of the suite (semver), for repositories (`NAME/suite/disk@1.2`); 1.0.0 when absent.
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub description: String,
    /// Time each test's trials may take (`5s`), over the profiles' own
    /// budgets; `--budget` overrides it. The outermost suite that sets one wins.
    #[serde(default)]
    pub budget: Option<Duration>,
    /// How often the monitors sample during each test's trials (`250ms`;
    /// 100ms to 10s), over the profiles' own; `--monitor-interval`
    /// overrides it. The outermost suite that sets one wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor_interval: Option<Duration>,
    /// Set-ups of each test (the book, "Set-ups"), over the profiles' own;
    /// `--setups` overrides it. The outermost suite that sets one wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setups: Option<u32>,
    pub tests: Vec<SuiteItem>,
}

/// One suite item: exactly one of `profile` or `suite`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteItem {
    /// A profile reference (`fio`, `fio@1.0`).
    #[serde(default)]
    pub profile: Option<String>,
    /// Another suite (`disk-quick`).
    #[serde(default)]
    pub suite: Option<String>,
    /// Entries to run, by option id and entry label or value.
    #[serde(default)]
    pub options: IndexMap<String, OneOrMany>,
    /// Run where its requirements are met (its program installed, root when
    /// it needs root) and skip it quietly elsewhere: the run still succeeds.
    #[serde(default)]
    pub optional: bool,
}

/// One entry or a list of entries.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(Scalar),
    Many(Vec<Scalar>),
}

impl OneOrMany {
    pub fn items(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(Scalar::as_str).collect(),
        }
    }
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an entry or a list of entries")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_str(v).map(OneOrMany::One)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_u64(v).map(OneOrMany::One)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_i64(v).map(OneOrMany::One)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_f64(v).map(OneOrMany::One)
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_bool(v).map(OneOrMany::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut items = Vec::new();
                while let Some(s) = seq.next_element::<Scalar>()? {
                    items.push(s);
                }
                Ok(OneOrMany::Many(items))
            }
        }
        d.deserialize_any(V)
    }
}
