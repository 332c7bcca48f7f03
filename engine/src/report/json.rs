//! The result file itself, pretty-printed; with `--baseline ID`, each
//! identifier's comparison against it too (`comparisons[]`). Without one the
//! output is the stored file, byte for byte as `result.json` holds it.

use super::{Exporter, View};
use crate::analysis::significance::Verdict;
use crate::model::result::{ComparisonRecord, ResultFile};

pub struct Json;

/// The comparisons of `r` against the baseline of `view`, as records.
pub fn comparisons(r: &ResultFile, view: &View) -> Vec<ComparisonRecord> {
    let a = super::view::analyze(r, view);
    let Some(baseline) = a.baseline.clone() else { return Vec::new() };
    let mut out = Vec::new();
    for (i, cs) in &a.comparisons {
        let t = &r.results[*i];
        for (id, c) in cs {
            out.push(ComparisonRecord {
                test: t.test.clone(),
                result: t.result.clone(),
                identifier: id.clone(),
                baseline: baseline.clone(),
                ratio: c.ratio,
                ratio_ci: c.ratio_ci.map(|(lo, hi)| [lo, hi]),
                change_pct: c.change_pct,
                p_value: c.p_value,
                verdict: match c.verdict {
                    Verdict::Better(_) => "better".into(),
                    Verdict::Worse(_) => "worse".into(),
                    ref v => v.to_string(),
                },
            });
        }
    }
    out
}

impl Exporter for Json {
    fn export(&self, result: &ResultFile, view: &View) -> String {
        let found = if view.baseline.is_some() { comparisons(result, view) } else { Vec::new() };
        let with;
        let result = if found.is_empty() {
            result
        } else {
            with = ResultFile { comparisons: found, ..result.clone() };
            &with
        };
        let mut s = serde_json::to_string_pretty(result).expect("result files serialize");
        s.push('\n');
        s
    }
}
