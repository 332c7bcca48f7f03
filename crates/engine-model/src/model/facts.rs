//! The facts a result states, each its own type so one cannot be passed
//! where another is meant: which system state (`Identifier`), which series
//! of a monitor (`MetricId`), in what unit (`Unit`) and when (`Timestamp`).
//!
//! Typed at the edges: what a person types is parsed with `FromStr`, which
//! says what is wrong. A file engine reads keeps what it says (a saved
//! result's identifiers are checked by the merge's rules, not re-judged on
//! every load), and engine's own values (a sweep's identifier, a monitor's
//! series) are made with `From`. On disk each is the plain string it was.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::str::FromStr;
use std::time::SystemTime;
use thiserror::Error;

/// A fact that did not parse, with what it should look like.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FactError {
    #[error("the identifier is empty: name the system state, e.g. `--identifier 'vda: BFQ'`")]
    BlankIdentifier,
    #[error("the metric id is empty: name a series, e.g. `read_mb_s`")]
    BlankMetric,
    #[error("`{0}` is not a metric id: use letters, digits and `_` (e.g. `read_mb_s`)")]
    Metric(String),
    #[error("`{0}` is not an RFC 3339 time (e.g. `2026-12-06T19:36:23Z`)")]
    Timestamp(String),
}

/// A string fact: a newtype that reads as a `&str` everywhere one is read.
macro_rules! string_fact {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        // A plain string where it is used: the schemas read as they did.
        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                String::schema_name()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                String::json_schema(generator)
            }
        }

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }

        impl From<&String> for $name {
            fn from(s: &String) -> Self {
                $name(s.clone())
            }
        }

        impl From<$name> for String {
            fn from(s: $name) -> String {
                s.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

string_fact! {
    /// The label of one system state in a result file (`vda: BFQ`,
    /// `ext4-nobarrier`): any text but blank.
    Identifier
}

impl FromStr for Identifier {
    type Err = FactError;
    fn from_str(s: &str) -> Result<Self, FactError> {
        if s.trim().is_empty() {
            return Err(FactError::BlankIdentifier);
        }
        Ok(Identifier(s.to_string()))
    }
}

string_fact! {
    /// One series a monitor records (`read_mb_s`, `cpu_busy_pct`): letters,
    /// digits and `_`.
    MetricId
}

impl FromStr for MetricId {
    type Err = FactError;
    fn from_str(s: &str) -> Result<Self, FactError> {
        if s.is_empty() {
            return Err(FactError::BlankMetric);
        }
        if !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(FactError::Metric(s.to_string()));
        }
        Ok(MetricId(s.to_string()))
    }
}

string_fact! {
    /// The unit a value is in, as shown (`MB/s` = 10^6 B/s, `MiB/s`,
    /// `Seconds`, `Files/s`); exact by the rule of the book's units.
    Unit
}

impl FromStr for Unit {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Unit(s.to_string()))
    }
}

string_fact! {
    /// A moment, as RFC 3339 in UTC (`2026-12-06T19:36:23Z`); read once,
    /// by [`Timestamp::at`], wherever a time is computed with.
    Timestamp
}

impl Timestamp {
    /// Now, to the second.
    pub fn now() -> Self {
        Self::of(SystemTime::now())
    }

    /// `t` to the second.
    pub fn of(t: SystemTime) -> Self {
        Timestamp(humantime::format_rfc3339_seconds(t).to_string())
    }

    /// The moment, if the text is one (a file may hold anything).
    pub fn at(&self) -> Option<SystemTime> {
        humantime::parse_rfc3339(&self.0).ok()
    }
}

impl FromStr for Timestamp {
    type Err = FactError;
    fn from_str(s: &str) -> Result<Self, FactError> {
        humantime::parse_rfc3339(s).map_err(|_| FactError::Timestamp(s.to_string()))?;
        Ok(Timestamp(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn facts_parse_at_the_edge_and_say_what_is_wrong() {
        assert_eq!("vda: BFQ".parse::<Identifier>().unwrap(), "vda: BFQ");
        assert_eq!(" \t".parse::<Identifier>(), Err(FactError::BlankIdentifier));
        assert_eq!("read_mb_s".parse::<MetricId>().unwrap().as_str(), "read_mb_s");
        assert_eq!("read mb/s".parse::<MetricId>(), Err(FactError::Metric("read mb/s".into())));
        assert!("2026-12-06T19:36:23Z".parse::<Timestamp>().is_ok());
        let e = "yesterday".parse::<Timestamp>().unwrap_err();
        assert!(e.to_string().contains("`yesterday` is not an RFC 3339 time"), "{e}");
    }

    #[test]
    fn on_disk_each_is_the_plain_string_and_a_file_keeps_what_it_says() {
        let id: Identifier = serde_json::from_str("\"\"").unwrap();
        assert_eq!(id, "");
        assert_eq!(serde_json::to_string(&Identifier::from("a: b")).unwrap(), "\"a: b\"");
        let t = Timestamp::of(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400));
        assert_eq!(t.as_str(), "1970-01-02T00:00:00Z");
        assert_eq!(t.at(), Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400)));
        assert_eq!(Timestamp::from("not a time").at(), None);
        // Looked up by `&str` in maps keyed by the fact.
        let m: HashMap<Identifier, u32> = [(Identifier::from("x"), 1)].into();
        assert_eq!(m.get("x"), Some(&1));
    }
}
