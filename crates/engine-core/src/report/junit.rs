//! JUnit XML for CI test reporters (GitLab, Jenkins, GitHub): one testcase
//! per result and identifier; a result significantly worse than the
//! baseline by at least the gate's percentage is a `<failure>` with its
//! numbers. The baseline's own results and those without a comparison pass.

use super::svg::esc;
use super::{Exporter, View};
use crate::analysis::gate::worse_by_at_least;
use crate::model::result::ResultFile;
use std::fmt::Write;

pub(crate) struct Junit;

impl Exporter for Junit {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        let a = super::view::analyze(r, view);
        let pct = view.gate_pct();
        let baseline = a.baseline.clone().unwrap_or_default();
        let mut cases = String::new();
        let (mut tests, mut failures) = (0, 0);
        // Reporters key testcases by classname and name: each is unique.
        let mut names = std::collections::HashSet::new();
        for (i, t) in r.results.iter().enumerate() {
            let compared = a.comparisons.iter().find(|(k, _)| *k == i).map(|(_, c)| c.as_slice()).unwrap_or(&[]);
            for e in &t.entries {
                tests += 1;
                let secs: f64 = e.trial_seconds.iter().sum();
                let class = format!("engine.{}", t.profile);
                let mut name = match t.description.is_empty() {
                    true => format!("{} ({})", t.result, e.identifier),
                    false => format!("{} — {} ({})", t.description, t.result, e.identifier),
                };
                if !names.insert((class.clone(), name.clone())) {
                    name = format!("{name} [{}]", t.test);
                    names.insert((class.clone(), name.clone()));
                }
                write!(
                    cases,
                    "    <testcase classname=\"{}\" name=\"{}\" time=\"{secs:.3}\">",
                    esc(&class),
                    esc(&name)
                )
                .unwrap();
                let c = compared.iter().find(|(id, _)| *id == e.identifier).map(|(_, c)| c);
                match c {
                    Some(c) if worse_by_at_least(c, pct) => {
                        failures += 1;
                        let message =
                            format!("{} vs {baseline}: {} ({:+.1} %)", c.verdict, c.ratio_text(), c.change_pct);
                        write!(
                            cases,
                            "\n      <failure type=\"regression\" message=\"{}\">{}: {} {} vs {} {} ({baseline}); the gate fails at {pct} % worse</failure>\n    ",
                            esc(&message),
                            esc(&e.identifier),
                            crate::units::number(e.value),
                            esc(&t.unit),
                            crate::units::number(e.value / c.ratio),
                            esc(&t.unit),
                        )
                        .unwrap();
                    }
                    Some(c) => {
                        write!(
                            cases,
                            "\n      <system-out>{} vs {}: {}</system-out>\n    ",
                            esc(&e.identifier),
                            esc(&baseline),
                            esc(&c.verdict.to_string())
                        )
                        .unwrap();
                    }
                    None => {}
                }
                cases.push_str("</testcase>\n");
            }
        }
        let name = esc(&r.title);
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        writeln!(out, "<testsuites name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">").unwrap();
        writeln!(
            out,
            "  <testsuite name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">"
        )
        .unwrap();
        out.push_str(&cases);
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }
}
