//! A short Markdown summary for a pull-request comment: regressions first
//! (each with its ratio interval), then improvements, then how many results
//! did not change significantly.

use super::{Exporter, View};
use crate::analysis::gate;
use crate::model::result::ResultFile;
use crate::sys::text::markdown as cell;
use std::fmt::Write;

pub struct Summary;

fn line(r: &ResultFile, c: &gate::Change<'_>) -> String {
    let t = &r.results[c.result];
    let k = c.comparison;
    format!(
        "| {} | {} | {} | {} | {:+.1} % |",
        cell(&t.title),
        cell(t.what()),
        cell(c.identifier),
        cell(&k.ratio_text()),
        k.change_pct
    )
}

impl Exporter for Summary {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        let a = super::view::analyze(r, view);
        let pct = view.gate_pct();
        let g = gate::gate(&a.comparisons, pct);
        let baseline = a.baseline.clone().unwrap_or_default();
        let mut out = format!("### {}: against {}\n\n", cell(&r.title), cell(&baseline));
        if a.comparisons.is_empty() {
            out.push_str("Nothing to compare: one identifier.\n");
            return out;
        }
        let head = "| Test | Result | Identifier | Ratio [95 % CI] | Change |\n|---|---|---|---|---|\n";
        if g.regressions.is_empty() {
            writeln!(out, "**No regressions** (significantly worse by {pct} % or more).\n").unwrap();
        } else {
            writeln!(out, "**{} regression(s)** (significantly worse by {pct} % or more):\n", g.regressions.len())
                .unwrap();
            out.push_str(head);
            for c in &g.regressions {
                writeln!(out, "{}", line(r, c)).unwrap();
            }
            out.push('\n');
        }
        if !g.improvements.is_empty() {
            writeln!(out, "{} improvement(s):\n", g.improvements.len()).unwrap();
            out.push_str(head);
            for c in &g.improvements {
                writeln!(out, "{}", line(r, c)).unwrap();
            }
            out.push('\n');
        }
        writeln!(
            out,
            "{} result(s) equivalent within ±{} %, {} undecided.",
            g.equivalent, view.equivalence_pct, g.undecided
        )
        .unwrap();
        out
    }
}
