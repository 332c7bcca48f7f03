//! PTS-style parsing for authors who port PTS profiles: a sample output line
//! with `#_RESULT_#` where the value is, optionally narrowed by hints. The
//! value is the token at the marker's position on the matching line.

use super::{ParseError, Parser, RawOutput, Reading, parse_number, pick};
use crate::model::profile::Pick;

pub(crate) struct TemplateParser {
    tokens: Vec<String>,
    index: usize,
    before: String,
    after: String,
    line_hint: Option<String>,
    line_before_hint: Option<String>,
    line_after_hint: Option<String>,
    pick: Pick,
}

impl TemplateParser {
    pub(crate) fn new(
        template: &str,
        line_hint: Option<String>,
        line_before_hint: Option<String>,
        line_after_hint: Option<String>,
        pick: Pick,
    ) -> Result<Self, ParseError> {
        let tokens: Vec<String> = template.split_whitespace().map(str::to_string).collect();
        let index = tokens
            .iter()
            .position(|t| t.contains("#_RESULT_#"))
            .ok_or_else(|| ParseError::Build("template has no #_RESULT_#".into()))?;
        let (before, after) = tokens[index].split_once("#_RESULT_#").unwrap();
        Ok(TemplateParser {
            before: before.to_string(),
            after: after.to_string(),
            tokens,
            index,
            line_hint,
            line_before_hint,
            line_after_hint,
            pick,
        })
    }

    /// Without hints a line matches when it has as many tokens as the template
    /// and agrees with it on every token that holds no digit (labels, units).
    fn shape_matches(&self, line: &str) -> bool {
        let toks: Vec<&str> = line.split_whitespace().collect();
        toks.len() == self.tokens.len()
            && self
                .tokens
                .iter()
                .zip(&toks)
                .enumerate()
                .all(|(i, (t, l))| i == self.index || t.chars().any(|c| c.is_ascii_digit()) || t == l)
    }

    fn value_of(&self, line: &str) -> Result<(f64, String), ParseError> {
        let tok =
            line.split_whitespace().nth(self.index).ok_or_else(|| ParseError::NotANumber(line.trim().to_string()))?;
        let tok = tok.strip_prefix(self.before.as_str()).unwrap_or(tok);
        let tok = tok.strip_suffix(self.after.as_str()).unwrap_or(tok);
        let tok = tok.trim_end_matches([',', ';']);
        Ok((parse_number(tok)?, tok.to_string()))
    }
}

impl Parser for TemplateParser {
    fn parse(&self, out: &RawOutput<'_>) -> Result<Reading, ParseError> {
        let lines: Vec<&str> = out.stdout.lines().collect();
        let hinted = self.line_hint.is_some() || self.line_before_hint.is_some() || self.line_after_hint.is_some();
        let mut values = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let ok = if hinted {
                self.line_hint.as_ref().is_none_or(|h| line.contains(h.as_str()))
                    && self.line_before_hint.as_ref().is_none_or(|h| i > 0 && lines[i - 1].contains(h.as_str()))
                    && self
                        .line_after_hint
                        .as_ref()
                        .is_none_or(|h| lines.get(i + 1).is_some_and(|n| n.contains(h.as_str())))
            } else {
                self.shape_matches(line)
            };
            if ok {
                values.push(self.value_of(line)?);
            }
        }
        pick(values, self.pick).ok_or_else(|| ParseError::NoMatch {
            stream: "output",
            what: format!("the template `{}`", self.tokens.join(" ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn out(s: &str) -> RawOutput<'_> {
        RawOutput { stdout: s, stderr: "", wall: Duration::ZERO }
    }

    #[test]
    fn line_hint_and_affixes() {
        let p = TemplateParser::new("Throughput: #_RESULT_#MB/s", Some("Throughput".into()), None, None, Pick::Last)
            .unwrap();
        assert_eq!(p.parse(&out("x\nThroughput: 12.5MB/s\n")).unwrap().value, 12.5);
    }

    #[test]
    fn line_before_hint_takes_the_next_line() {
        let text = "FSUse%        Count         Size    Files/sec     App Overhead\n    68           20      1048576        667.1              196\n";
        let p = TemplateParser::new("1 2 3 #_RESULT_# 5", None, Some("FSUse%".into()), None, Pick::Last).unwrap();
        assert_eq!(p.parse(&out(text)).unwrap().value, 667.1);
    }

    #[test]
    fn shape_match_without_hints() {
        let text = "Operation  Count\nTotal ops: 1500 in 2.0 s\nOther ops: 7 in 2.0 s\n";
        let p = TemplateParser::new("Total ops: #_RESULT_# in 1.0 s", None, None, None, Pick::Last).unwrap();
        assert_eq!(p.parse(&out(text)).unwrap().value, 1500.0);
        assert!(p.parse(&out("nothing here")).is_err());
    }
}
