//! History as SVG: a line chart per result, a line per identifier, each
//! change point a dashed rule labelled with its change.

use super::{groups, heading};
use crate::analysis::history::{History, Series};
use crate::report::svg::{PALETTE, WIDTH, esc};
use crate::units::number;
use std::fmt::Write;

const HEIGHT: f64 = 250.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 40.0;

/// Where rows and values go on a chart.
struct Frame {
    rows: usize,
    lo: f64,
    hi: f64,
}

impl Frame {
    fn x(&self, row: f64) -> f64 {
        let w = WIDTH as f64 - LEFT - RIGHT;
        LEFT + if self.rows <= 1 { w / 2.0 } else { row / (self.rows - 1) as f64 * w }
    }

    fn y(&self, v: f64) -> f64 {
        let h = HEIGHT - TOP - BOTTOM;
        TOP + h - if self.hi > self.lo { (v - self.lo) / (self.hi - self.lo) * h } else { h / 2.0 }
    }
}

/// One result's chart, `HEIGHT` high, at the origin.
pub(crate) fn chart(h: &History, lines: &[&Series]) -> String {
    let mut o = String::new();
    let all = lines.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.01);
    let f = Frame { rows: h.rows.len(), lo: lo - pad, hi: hi + pad };
    let s0 = lines[0];
    writeln!(o, "<text x=\"10\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>", esc(&heading(s0))).unwrap();
    let more = if s0.proportion == crate::model::profile::Proportion::Hib { "more" } else { "less" };
    writeln!(o, "<text x=\"10\" y=\"34\" font-size=\"11\" fill=\"#555\">{} ({more} is better)</text>", esc(&s0.unit))
        .unwrap();
    axes(&mut o, h, &f);
    for (k, s) in lines.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let pts: Vec<String> = s.points.iter().map(|&(r, v)| format!("{:.1},{:.1}", f.x(r as f64), f.y(v))).collect();
        writeln!(o, "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>", pts.join(" "))
            .unwrap();
        if s.points.len() <= 120 {
            for &(r, v) in &s.points {
                writeln!(o, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2\" fill=\"{color}\"/>", f.x(r as f64), f.y(v))
                    .unwrap();
            }
        }
        // Each segment's mean between its change points.
        let mut bounds: Vec<usize> = std::iter::once(0).chain(s.changes.iter().map(|c| c.at)).collect();
        bounds.push(s.points.len());
        for w in bounds.windows(2).filter(|w| w[1] > w[0]) {
            let seg = &s.points[w[0]..w[1]];
            let mean = seg.iter().map(|p| p.1).sum::<f64>() / seg.len() as f64;
            let (x1, x2) = (f.x(seg[0].0 as f64), f.x(seg[seg.len() - 1].0 as f64));
            writeln!(
                o,
                "<line class=\"mean\" x1=\"{x1:.1}\" y1=\"{y:.1}\" x2=\"{x2:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" stroke-opacity=\"0.6\" stroke-width=\"3\"/>",
                y = f.y(mean)
            )
            .unwrap();
        }
        for c in &s.changes {
            let x = f.x(c.row as f64 - 0.5);
            let worse = c.verdict.starts_with("worse");
            let mark = if worse { "#b3261e" } else { "#0a7d25" };
            writeln!(
                o,
                "<line class=\"change\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{mark}\" stroke-dasharray=\"4 3\"/>",
                HEIGHT - BOTTOM
            )
            .unwrap();
            writeln!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"{mark}\">{:+.1} %</text>",
                x + 3.0,
                TOP + 10.0 + 12.0 * k as f64,
                c.change_pct
            )
            .unwrap();
        }
    }
    legend(&mut o, lines);
    o
}

fn axes(o: &mut String, h: &History, f: &Frame) {
    let bottom = HEIGHT - BOTTOM;
    writeln!(
        o,
        "<line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"#999\"/>",
        WIDTH as f64 - RIGHT
    )
    .unwrap();
    for k in 0..=3 {
        let v = f.lo + (f.hi - f.lo) * k as f64 / 3.0;
        let y = f.y(v);
        writeln!(
            o,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#eee\"/>",
            WIDTH as f64 - RIGHT
        )
        .unwrap();
        writeln!(
            o,
            "<text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            LEFT - 4.0,
            y + 3.0,
            number(v)
        )
        .unwrap();
    }
    let label = |r: usize| super::when(h, r);
    if let Some(last) = h.rows.len().checked_sub(1) {
        writeln!(o, "<text x=\"{LEFT}\" y=\"{}\" font-size=\"10\">{}</text>", bottom + 14.0, esc(&label(0))).unwrap();
        writeln!(
            o,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            WIDTH as f64 - RIGHT,
            bottom + 14.0,
            esc(&label(last))
        )
        .unwrap();
    }
}

fn legend(o: &mut String, lines: &[&Series]) {
    let mut x = LEFT;
    for (k, s) in lines.iter().enumerate().filter(|(_, s)| s.line.is_some()) {
        let name = s.line.as_deref().unwrap_or_default();
        let color = PALETTE[k % PALETTE.len()];
        writeln!(o, "<rect x=\"{x:.1}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{color}\"/>", HEIGHT - 16.0)
            .unwrap();
        writeln!(o, "<text x=\"{:.1}\" y=\"{}\" font-size=\"11\">{}</text>", x + 14.0, HEIGHT - 7.0, esc(name))
            .unwrap();
        x += 30.0 + 7.0 * name.chars().count() as f64;
    }
}

/// Every result's chart stacked in one document.
pub(crate) fn document(h: &History) -> String {
    let g = groups(h);
    let total = 50.0 + g.len() as f64 * (HEIGHT + 10.0);
    let mut o = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{total}\" viewBox=\"0 0 {WIDTH} {total}\" \
         font-family=\"sans-serif\"><rect width=\"{WIDTH}\" height=\"{total}\" fill=\"#fff\"/>"
    )
    .unwrap();
    writeln!(
        o,
        "<text x=\"10\" y=\"28\" font-size=\"19\" font-weight=\"bold\">History of {} run(s)</text>",
        h.rows.len()
    )
    .unwrap();
    for (k, lines) in g.iter().enumerate() {
        writeln!(o, "<g transform=\"translate(0 {})\">", 50.0 + k as f64 * (HEIGHT + 10.0)).unwrap();
        o.push_str(&chart(h, lines));
        o.push_str("</g>\n");
    }
    o.push_str("</svg>\n");
    o
}

/// One chart as a standalone `<svg>` element, for the HTML page.
pub(crate) fn inline(h: &History, lines: &[&Series]) -> String {
    format!(
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"sans-serif\">{}</svg>",
        chart(h, lines)
    )
}
