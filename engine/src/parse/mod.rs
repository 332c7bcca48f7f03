//! Parsers: a trial's raw output → one value per result. One file per kind;
//! the runner sees only [`Parser`].

mod json_pointer;
mod number;
mod regex;
mod template;
mod wall_time;

use crate::profile::model::{ParserDef, Pick, Stream};
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
}

/// Reads one value from a trial's output.
pub trait Parser: Send + Sync {
    fn parse(&self, out: &RawOutput<'_>) -> Result<f64, ParseError>;
}

/// A parser built from a profile's definition for one test: kind, stream,
/// and unit conversion.
pub struct Configured {
    inner: Box<dyn Parser>,
    stream: Stream,
    multiply_by: f64,
    divide_by: f64,
}

impl Configured {
    /// Builds the parser of `def`; `fill` renders placeholders (JSON pointers may hold them).
    pub fn build(def: &ParserDef, fill: &dyn Fn(&str) -> Result<String, String>) -> Result<Self, ParseError> {
        let inner: Box<dyn Parser> = if let Some(re) = &def.regex {
            Box::new(regex::RegexParser::new(re, def.pick)?)
        } else if let Some(ptr) = &def.json_pointer {
            Box::new(json_pointer::JsonPointer::new(fill(ptr).map_err(ParseError::Build)?))
        } else if let Some(t) = &def.template {
            Box::new(template::TemplateParser::new(
                t,
                def.line_hint.clone(),
                def.line_before_hint.clone(),
                def.line_after_hint.clone(),
                def.pick,
            )?)
        } else if def.wall_time {
            Box::new(wall_time::WallTime)
        } else {
            return Err(ParseError::Build("parser has no kind".into()));
        };
        Ok(Configured {
            inner,
            stream: def.stream,
            multiply_by: def.multiply_by.unwrap_or(1.0),
            divide_by: def.divide_by.unwrap_or(1.0),
        })
    }

    pub fn parse(&self, out: &RawOutput<'_>) -> Result<f64, ParseError> {
        let view = match self.stream {
            Stream::Stdout => *out,
            // Kinds read `stdout`; point it at stderr when asked.
            Stream::Stderr => RawOutput { stdout: out.stderr, ..*out },
        };
        let v = self.inner.parse(&view)?;
        // Multiply, then divide: 53261003 / 1e6 is exactly 53.261003, while
        // 53261003 × 1e-6 is not.
        Ok(v * self.multiply_by / self.divide_by)
    }
}

/// Combines several matches as `pick` says.
fn pick(values: Vec<f64>, pick: Pick) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(match pick {
        Pick::First => values[0],
        Pick::Last => values[values.len() - 1],
        Pick::Sum => values.iter().sum(),
        Pick::Mean => values.iter().sum::<f64>() / values.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ParserDef {
        ParserDef { result: "r".into(), ..Default::default() }
    }
    fn no_fill(s: &str) -> Result<String, String> {
        Ok(s.to_string())
    }

    #[test]
    fn unit_conversion_is_exact() {
        let d = ParserDef { json_pointer: Some("/bw_bytes".into()), divide_by: Some(1e6), ..def() };
        let p = Configured::build(&d, &no_fill).unwrap();
        let out = RawOutput { stdout: r#"{"bw_bytes": 53261003}"#, stderr: "", wall: Duration::ZERO };
        assert_eq!(p.parse(&out).unwrap(), 53.261003);
    }

    #[test]
    fn stderr_stream() {
        let d = ParserDef { regex: Some(r"took (?P<value>\d+)".into()), stream: Stream::Stderr, ..def() };
        let p = Configured::build(&d, &no_fill).unwrap();
        let out = RawOutput { stdout: "took 1", stderr: "took 2", wall: Duration::ZERO };
        assert_eq!(p.parse(&out).unwrap(), 2.0);
    }
}
