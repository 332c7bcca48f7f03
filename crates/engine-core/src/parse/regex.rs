//! A regular expression with a named capture `value`, and optionally `si`:
//! a decimal SI prefix printed after the number (`3243K c/s`: K = 10^3,
//! M = 10^6, G = 10^9), for tools that shorten large values.

use super::{ParseError, Parser, RawOutput, Reading, parse_number, pick};
use crate::model::profile::Pick;

pub(crate) struct RegexParser {
    re: regex::Regex,
    pick: Pick,
}

impl RegexParser {
    pub(crate) fn new(re: &str, pick: Pick) -> Result<Self, ParseError> {
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
                let si = c.name("si").map_or("", |s| s.as_str());
                let scale = match si {
                    "" => 1.0,
                    "k" | "K" => 1e3,
                    "M" => 1e6,
                    "G" => 1e9,
                    "T" => 1e12,
                    other => return Err(ParseError::NotANumber(format!("{}{other}", m.as_str()))),
                };
                values.push((parse_number(m.as_str())? * scale, format!("{}{si}", m.as_str())));
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

    #[test]
    fn si_prefixes_scale_by_powers_of_ten() {
        let re = RegexParser::new(r"(?P<value>[0-9.]+)(?P<si>[KMG]?) c/s real", Pick::First).unwrap();
        assert_eq!(re.parse(&out("Many salts:\t3243K c/s real")).unwrap().value, 3_243_000.0);
        assert_eq!(re.parse(&out("Raw:\t405 c/s real")).unwrap().value, 405.0);
        assert_eq!(re.parse(&out("Raw:\t1.5M c/s real")).unwrap().value, 1_500_000.0);
        let bad = RegexParser::new(r"(?P<value>[0-9]+)(?P<si>[A-Z]?) c/s", Pick::First).unwrap();
        assert!(matches!(bad.parse(&out("7X c/s")), Err(ParseError::NotANumber(s)) if s == "7X"));
    }
}
