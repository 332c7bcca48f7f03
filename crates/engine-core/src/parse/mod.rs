//! Parsers: a trial's raw output → one value per result. One file per kind;
//! the runner sees only [`Parser`].

pub(crate) mod fio_log;
mod json_pointer;
mod number;
mod plugin;
mod rate;
mod regex;
mod template;
mod wall_time;

use crate::model::profile::{LoadedProfile, ParserDef, Pick, ResultDef, Stream};
use crate::plugin::cache::Cache;
use std::time::Duration;
use thiserror::Error;

pub use number::parse_number;

/// What one trial produced.
#[derive(Debug, Clone, Copy)]
pub struct RawOutput<'a> {
    pub stdout: &'a str,
    pub stderr: &'a str,
    pub wall: Duration,
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ParseError {
    #[error("no line of the {stream} matched {what}")]
    NoMatch { stream: &'static str, what: String },
    #[error("`{0}` is not a number")]
    NotANumber(String),
    #[error("the {stream} is not JSON: {msg}")]
    NotJson { stream: &'static str, msg: String },
    #[error("JSON pointer `{0}` points at nothing")]
    NoPointer(String),
    #[error("JSON pointer `{0}` points at {1}, not a number")]
    NotNumeric(String, String),
    #[error("{0}")]
    Build(String),
    // Values through `units::exact`: an absurd one (1e308) is not printed as 309 digits.
    #[error("the {kind} parser read `{raw}`, which gives {} after conversion: not a finite number", crate::units::exact(*.value))]
    NotFinite { kind: &'static str, raw: String, value: f64 },
    #[error("the {kind} parser read `{raw}`, which gives {}: a negative value where none can be", crate::units::exact(*.value))]
    Negative { kind: &'static str, raw: String, value: f64 },
    #[error("parser plugin {plugin}: {message}")]
    Plugin { plugin: String, message: String },
}

/// A value read from the output, and the text it came from (for messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub value: f64,
    pub raw: String,
}

/// Reads one value from a trial's output.
pub trait Parser: Send + Sync {
    fn parse(&self, out: &RawOutput<'_>) -> Result<Reading, ParseError>;
}

/// A parser built from a profile's definition for one test: kind, stream,
/// and unit conversion.
pub struct Configured {
    inner: Box<dyn Parser>,
    kind: &'static str,
    stream: Stream,
    multiply_by: f64,
    divide_by: f64,
    /// Negative values are allowed.
    signed: bool,
}

/// Where a plugin parser comes from: the profile's folder, and the cache of
/// compiled plugins.
#[derive(Clone, Copy)]
pub struct Plugins<'a> {
    pub profile: &'a LoadedProfile,
    pub cache: &'a Cache,
}

impl Configured {
    /// Builds the parser of `def` for `result` (its unit, whether it may be
    /// negative); `fill` renders placeholders (JSON pointers and rate amounts
    /// may hold them); `plugins` is where a plugin parser is found (none:
    /// plugin parsers cannot be built).
    pub fn build(
        def: &ParserDef,
        fill: &dyn Fn(&str) -> Result<String, crate::model::template::TemplateError>,
        result: &ResultDef,
        plugins: Option<Plugins<'_>>,
    ) -> Result<Self, ParseError> {
        let (kind, inner): (&'static str, Box<dyn Parser>) = if let Some(re) = &def.regex {
            ("regex", Box::new(regex::RegexParser::new(re, def.pick)?))
        } else if let Some(ptr) = &def.json_pointer {
            (
                "json_pointer",
                Box::new(json_pointer::JsonPointer::new(fill(ptr).map_err(|e| ParseError::Build(e.to_string()))?)),
            )
        } else if let Some(t) = &def.template {
            (
                "template",
                Box::new(template::TemplateParser::new(
                    t,
                    def.line_hint.clone(),
                    def.line_before_hint.clone(),
                    def.line_after_hint.clone(),
                    def.pick,
                )?),
            )
        } else if def.wall_time {
            ("wall_time", Box::new(wall_time::WallTime))
        } else if let Some(r) = &def.rate {
            let amount = fill(&r.amount).map_err(|e| ParseError::Build(format!("rate amount: {e}")))?;
            ("rate", Box::new(rate::Rate::new(&amount, &result.unit)?))
        } else if let Some(pl) = &def.plugin {
            // Named relative to the profile's folder, as the executor's plugin.
            let fail = |message: String| ParseError::Plugin { plugin: pl.path.clone(), message };
            let Some(plugins) = plugins else {
                return Err(fail("plugin parsers need the profile's folder".into()));
            };
            let path = crate::plugin::file::plugin_path(plugins.profile, &pl.path).map_err(|e| fail(e.to_string()))?;
            let mut config = Vec::new();
            for (k, v) in &pl.config {
                config
                    .push((k.clone(), fill(v.as_str()).map_err(|e| ParseError::Build(format!("config `{k}`: {e}")))?));
            }
            let limits = crate::plugin::file::limits(&pl.limits);
            let value = pl.value.as_deref().unwrap_or(&def.result);
            ("plugin", Box::new(plugin::PluginParser::new(&path, &pl.path, value, config, limits, plugins.cache)?))
        } else {
            return Err(ParseError::Build("parser has no kind".into()));
        };
        Ok(Configured {
            inner,
            kind,
            stream: def.stream,
            multiply_by: def.multiply_by.unwrap_or(1.0),
            divide_by: def.divide_by.unwrap_or(1.0),
            signed: result.signed,
        })
    }

    /// The stream the parser reads.
    pub(crate) fn stream(&self) -> Stream {
        self.stream
    }

    /// The parser kind (`regex`, `json_pointer` …), for messages.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    pub fn parse(&self, out: &RawOutput<'_>) -> Result<f64, ParseError> {
        let view = match self.stream {
            Stream::Stdout => *out,
            // Kinds read `stdout`; point it at stderr when asked.
            Stream::Stderr => RawOutput { stdout: out.stderr, ..*out },
        };
        let r = self.inner.parse(&view)?;
        // Multiply, then divide: 53261003 / 1e6 is exactly 53.261003, while
        // 53261003 × 1e-6 is not.
        let value = r.value * self.multiply_by / self.divide_by;
        // A value that is not a number would be stored as null and make the
        // result file unreadable; a negative rate or time is a parsing mistake.
        if !value.is_finite() {
            return Err(ParseError::NotFinite { kind: self.kind, raw: r.raw, value });
        }
        if value < 0.0 && !self.signed {
            return Err(ParseError::Negative { kind: self.kind, raw: r.raw, value });
        }
        Ok(value)
    }
}

/// Combines several matches (value and text) as `pick` says.
fn pick(values: Vec<(f64, String)>, pick: Pick) -> Option<Reading> {
    let one = |(value, raw): &(f64, String)| Reading { value: *value, raw: raw.clone() };
    let all = || values.iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>().join(" + ");
    Some(match pick {
        Pick::First => one(values.first()?),
        Pick::Last => one(values.last()?),
        Pick::Sum if values.is_empty() => return None,
        Pick::Sum => Reading { value: values.iter().map(|v| v.0).sum(), raw: all() },
        Pick::Mean if values.is_empty() => return None,
        Pick::Mean => Reading { value: values.iter().map(|v| v.0).sum::<f64>() / values.len() as f64, raw: all() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ParserDef {
        ParserDef { result: "r".into(), ..Default::default() }
    }
    fn no_fill(s: &str) -> Result<String, crate::model::template::TemplateError> {
        Ok(s.to_string())
    }
    fn res(signed: bool) -> ResultDef {
        ResultDef {
            id: "r".into(),
            unit: "MB/s".into(),
            proportion: crate::model::profile::Proportion::Hib,
            description: None,
            signed,
        }
    }

    #[test]
    fn unit_conversion_is_exact() {
        let d = ParserDef { json_pointer: Some("/bw_bytes".into()), divide_by: Some(1e6), ..def() };
        let p = Configured::build(&d, &no_fill, &res(false), None).unwrap();
        let out = RawOutput { stdout: r#"{"bw_bytes": 53261003}"#, stderr: "", wall: Duration::ZERO };
        assert_eq!(p.parse(&out).unwrap(), 53.261003);
    }

    #[test]
    fn overflow_and_negative_values_fail_with_the_raw_text() {
        let out = RawOutput { stdout: "v: 1e300\nv: 1e300\nv: -3\n", stderr: "", wall: Duration::ZERO };
        let d = ParserDef { regex: Some(r"v: (?P<value>1e300)".into()), multiply_by: Some(1e10), ..def() };
        let e = Configured::build(&d, &no_fill, &res(false), None).unwrap().parse(&out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the regex parser read `1e300`, which gives inf after conversion: not a finite number"
        );
        let d =
            ParserDef { regex: Some(r"v: (?P<value>1e300)".into()), pick: Pick::Sum, multiply_by: Some(1e8), ..def() };
        let e = Configured::build(&d, &no_fill, &res(false), None).unwrap().parse(&out).unwrap_err();
        assert!(e.to_string().starts_with("the regex parser read `1e300 + 1e300`, which gives inf"), "{e}");
        let d = ParserDef { regex: Some(r"v: (?P<value>-3)".into()), ..def() };
        let e = Configured::build(&d, &no_fill, &res(false), None).unwrap().parse(&out).unwrap_err();
        assert_eq!(e.to_string(), "the regex parser read `-3`, which gives -3: a negative value where none can be");
        assert_eq!(Configured::build(&d, &no_fill, &res(true), None).unwrap().parse(&out).unwrap(), -3.0);
    }

    #[test]
    fn stderr_stream() {
        let d = ParserDef { regex: Some(r"took (?P<value>\d+)".into()), stream: Stream::Stderr, ..def() };
        let p = Configured::build(&d, &no_fill, &res(false), None).unwrap();
        let out = RawOutput { stdout: "took 1", stderr: "took 2", wall: Duration::ZERO };
        assert_eq!(p.parse(&out).unwrap(), 2.0);
    }
}
