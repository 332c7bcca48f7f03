//! `results:` and `parsers:`: what a trial reports and how it is read.

use super::executor::PluginParserDef;
use super::options::Scalar;
use crate::model::facts::Unit;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Higher or lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Proportion {
    /// Higher is better.
    #[serde(rename = "HIB")]
    Hib,
    /// Lower is better.
    #[serde(rename = "LIB")]
    Lib,
}

impl Proportion {
    pub fn phrase(self) -> &'static str {
        match self {
            Proportion::Hib => "> Higher Is Better",
            Proportion::Lib => "< Lower Is Better",
        }
    }
}

/// One value a trial yields.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultDef {
    /// Name parsers refer to (`bandwidth`, `iops`).
    pub id: String,
    /// Exact unit (`MB/s` = 10^6 bytes/s, `MiB/s` = 2^20 bytes/s, `IOPS`, `Seconds`).
    pub unit: Unit,
    /// `HIB` (higher is better) or `LIB` (lower is better).
    pub proportion: Proportion,
    /// Text added to the test description for this result (`Read Latency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Values may be negative (a difference, a temperature). Otherwise a
    /// negative value fails its trial, as does a value that is not finite.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub signed: bool,
}

/// How one result is read from a trial. Exactly one of `regex`, `json_pointer`,
/// `template`, `wall_time`, `rate` or `plugin` is set.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParserDef {
    /// The result (by id) this parser yields.
    pub result: String,
    /// A regular expression with a named capture `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// A JSON pointer into the output (`/jobs/0/read/bw_bytes`); may hold placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_pointer: Option<String>,
    /// A PTS-style sample line with `#_RESULT_#` where the value is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// With `template`: only lines containing this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_hint: Option<String>,
    /// With `template`: only the line right after a line containing this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_before_hint: Option<String>,
    /// With `template`: only the line right before a line containing this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_after_hint: Option<String>,
    /// The trial's wall time in seconds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wall_time: bool,
    /// An amount over the trial's wall time: `{amount: "{{size}}", per:
    /// wall_time}` gives a size per second in the result's byte-rate unit
    /// (`MB/s`, `MiB/s`), a plain number per second otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateDef>,
    /// A parser plugin (WASM) that reads the trial's stdout, stderr and exit
    /// status and returns values by result id; this parser takes the one
    /// named by `result`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginParserDef>,
    /// Which match to use when there are several: `last` (default), `first`, `mean`, `sum`.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub pick: Pick,
    /// Read standard error instead of standard output.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub stream: Stream,
    /// Multiply the value (unit conversion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiply_by: Option<f64>,
    /// Divide the value (unit conversion: bytes/s ÷ 1000000 = MB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divide_by: Option<f64>,
    /// Use this parser only for tests whose values match (`{direction: read}`).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub when: IndexMap<String, Scalar>,
}

/// A rate computed from the trial rather than read from its output.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateDef {
    /// A size (`1GiB`, `{{size}}`) or a count (`2500`); may hold placeholders.
    pub amount: String,
    /// What the amount is divided by.
    pub per: RatePer,
}

/// The time a [`RateDef`] divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RatePer {
    /// The trial's wall time, as `wall_time` reads it.
    WallTime,
}

/// Which of several matches a parser keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    #[default]
    Last,
    First,
    Mean,
    Sum,
}

/// Output stream a parser reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    #[default]
    Stdout,
    Stderr,
}
