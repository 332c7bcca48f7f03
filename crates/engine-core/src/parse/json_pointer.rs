//! A JSON pointer (RFC 6901) into output that is one JSON document (fio's
//! `--output-format=json`). Text before the first `{` or `[` is skipped, as
//! some tools print a notice first.

use super::{ParseError, Parser, RawOutput, Reading, parse_number};

pub(crate) struct JsonPointer {
    pointer: String,
}

impl JsonPointer {
    pub(crate) fn new(pointer: String) -> Self {
        JsonPointer { pointer }
    }
}

impl Parser for JsonPointer {
    fn parse(&self, out: &RawOutput<'_>) -> Result<Reading, ParseError> {
        let text = out.stdout;
        let start = text.find(['{', '[']).unwrap_or(0);
        let mut de = serde_json::Deserializer::from_str(&text[start..]);
        let doc: serde_json::Value = serde::Deserialize::deserialize(&mut de)
            .map_err(|e| ParseError::NotJson { stream: "output", msg: e.to_string() })?;
        let v = doc.pointer(&self.pointer).ok_or_else(|| ParseError::NoPointer(self.pointer.clone()))?;
        let value = match v {
            serde_json::Value::Number(n) => {
                n.as_f64().ok_or_else(|| ParseError::NotNumeric(self.pointer.clone(), v.to_string()))?
            }
            serde_json::Value::String(s) => parse_number(s)?,
            other => return Err(ParseError::NotNumeric(self.pointer.clone(), other.to_string())),
        };
        Ok(Reading { value, raw: v.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn reads_numbers_and_numeric_strings() {
        let text = "note: something\n{\"jobs\": [{\"read\": {\"iops\": 13003.17, \"s\": \"42\"}}]}\ntrailing";
        let out = RawOutput { stdout: text, stderr: "", wall: Duration::ZERO };
        assert_eq!(JsonPointer::new("/jobs/0/read/iops".into()).parse(&out).unwrap().value, 13003.17);
        assert_eq!(JsonPointer::new("/jobs/0/read/s".into()).parse(&out).unwrap().value, 42.0);
        assert!(matches!(JsonPointer::new("/jobs/1".into()).parse(&out), Err(ParseError::NoPointer(_))));
        assert!(matches!(JsonPointer::new("/jobs/0".into()).parse(&out), Err(ParseError::NotNumeric(..))));
        let bad = RawOutput { stdout: "fio: error", ..out };
        assert!(matches!(JsonPointer::new("/x".into()).parse(&bad), Err(ParseError::NotJson { .. })));
    }
}
