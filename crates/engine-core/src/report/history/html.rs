//! History as one HTML page: the settings, then per result its chart and a
//! table of its change points.

use super::{groups, heading, row_label};
use crate::analysis::history::History;
use crate::analysis::significance::format_p;
use crate::report::html::esc;
use crate::units::number;
use std::fmt::Write;

pub(crate) const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}\
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\
svg.chart{display:block;max-width:100%;height:auto}.better{color:#0a7d25}.worse{color:#b3261e}.desc{color:#555}";

/// One page: each history (a group of related saved results) in turn.
pub(crate) fn render(hs: &[History]) -> String {
    let mut o = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    writeln!(o, "<title>History</title><style>{STYLE}</style></head><body>").unwrap();
    for h in hs {
        body(&mut o, h);
    }
    o.push_str("\n</body></html>\n");
    o
}

fn body(o: &mut String, h: &History) {
    write!(o, "<h1>History of {} run(s)</h1>", h.rows.len()).unwrap();
    if let Some(g) = &h.group {
        write!(o, "<p><b>{}</b> ({} saved results)</p>", esc(&g.describe()), g.results.len()).unwrap();
    }
    write!(
        o,
        "<p class=\"desc\">Ordered by {}; {}. Change points: E-Divisive with means, permutation test at p ≤ {} \
         (up to {} permutations), changes of {} % or more.</p>",
        esc(&h.order),
        if h.per_identifier { "a line per identifier" } else { "one line, an identifier per point" },
        h.alpha,
        h.permutations,
        h.min_magnitude_pct
    )
    .unwrap();
    for n in &h.notes {
        write!(o, "<p class=\"desc\">{}</p>", esc(n)).unwrap();
    }
    for lines in groups(h) {
        write!(o, "\n<section><h2>{}</h2>", esc(&heading(lines[0]))).unwrap();
        o.push_str(&super::svg::inline(h, &lines));
        let changes: Vec<_> = lines.iter().flat_map(|s| s.changes.iter().map(move |c| (s, c))).collect();
        if changes.is_empty() {
            o.push_str("<p class=\"desc\">No change points.</p>");
        } else {
            o.push_str("<table><tr><th>line</th><th>from</th><th>when</th><th>before → after</th><th>ratio [95 % CI]</th><th>p</th><th>verdict</th></tr>");
            for (s, c) in changes {
                let when = super::when(h, c.row);
                let class = if c.verdict.starts_with("worse") {
                    "worse"
                } else if c.verdict.starts_with("better") {
                    "better"
                } else {
                    ""
                };
                write!(
                    o,
                    "<tr><td>{}</td><td>#{} {}</td><td>{}</td><td>{} → {} {}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
                    esc(s.line.as_deref().unwrap_or("")),
                    c.row + 1,
                    esc(&row_label(h, c.row)),
                    esc(&when),
                    number(c.before),
                    number(c.after),
                    esc(&s.unit),
                    esc(&c.comparison.ratio_text()),
                    esc(&format_p(c.p)),
                    esc(&c.verdict)
                )
                .unwrap();
            }
            o.push_str("</table>");
        }
        o.push_str("</section>");
    }
}
