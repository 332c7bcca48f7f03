//! A regular expression with a named capture `value`.

use super::{ParseError, Parser, RawOutput, Reading, parse_number, pick};
use crate::profile::model::Pick;

pub struct RegexParser {
    re: regex::Regex,
    pick: Pick,
}

impl RegexParser {
    pub fn new(re: &str, pick: Pick) -> Result<Self, ParseError> {
        // Multi-line by default: `^` and `$` anchor at lines, as authors expect.
        let re = regex::RegexBuilder::new(re).multi_line(true).build().map_err(|e| ParseError::Build(e.to_string()))?;
        Ok(RegexParser { re, pick })
    }
}

impl Parser for RegexParser {
    fn parse(&self, out: &RawOutput<'_>) -> Result<Reading, ParseError> {
        let mut values = Vec::new();
        for c in self.re.captures_iter(out.stdout) {
            if let Some(m) = c.name("value") {
                values.push((parse_number(m.as_str())?, m.as_str().to_string()));
            }
        }
        pick(values, self.pick)
            .ok_or_else(|| ParseError::NoMatch { stream: "output", what: format!("/{}/", self.re.as_str()) })
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
    fn picks_and_anchors() {
        let text = "iter 1: 10.5\niter 2: 11.5\n";
        let last = RegexParser::new(r"^iter \d+: (?P<value>[\d.]+)$", Pick::Last).unwrap();
        assert_eq!(last.parse(&out(text)).unwrap().value, 11.5);
        let mean = RegexParser::new(r"^iter \d+: (?P<value>[\d.]+)$", Pick::Mean).unwrap();
        assert_eq!(mean.parse(&out(text)).unwrap().value, 11.0);
        assert!(matches!(last.parse(&out("nothing")), Err(ParseError::NoMatch { .. })));
    }
}
