//! History as text: per result, a sparkline per line and its change points
//! with the means on either side and their ratio interval. Titles, labels
//! and units one line each, controls as escapes (`sys::text`).

use super::{groups, heading, row_label, short_time, when};
use crate::analysis::history::{History, Series};
use crate::analysis::significance::format_p;
use crate::sys::text::{one_line, pad, terminal, width as text_width};
use crate::units::number;
use std::fmt::Write;

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub(crate) fn render(h: &History, width: usize) -> String {
    let mut o = String::new();
    header(&mut o, h);
    let label_w =
        h.series.iter().filter_map(|s| s.line.as_ref()).map(|l| text_width(&one_line(l))).max().unwrap_or(0).min(30);
    let spark_w = width.saturating_sub(label_w + 6).clamp(20, 120);
    let (mut changes, mut worse, mut short, mut capped) = (0, 0, 0, 0);
    for g in groups(h) {
        let s0 = g[0];
        let more = if s0.proportion == crate::model::profile::Proportion::Hib { "more" } else { "less" };
        writeln!(o, "\n{} ({}, {more} is better)", one_line(&heading(s0)), one_line(&s0.unit)).unwrap();
        for s in g {
            line(&mut o, h, s, label_w, spark_w);
            changes += s.changes.len();
            worse += s.changes.iter().filter(|c| c.verdict.starts_with("worse")).count();
            short += usize::from(!s.analysed);
            capped += usize::from(s.unsearched > 0);
        }
    }
    writeln!(o, "\n{changes} change point(s) in {} series, {worse} of them for the worse", h.series.len()).unwrap();
    if short > 0 {
        writeln!(
            o,
            "{short} series with fewer than {} points: not analysed (no change in fewer can reach p ≤ {})",
            h.min_points, h.alpha
        )
        .unwrap();
    }
    if capped > 0 {
        writeln!(
            o,
            "{capped} series longer than {} points: only their newest {} searched for change points",
            crate::analysis::history::MAX_SEARCHED,
            crate::analysis::history::MAX_SEARCHED
        )
        .unwrap();
    }
    terminal(&o).into_owned()
}

fn header(o: &mut String, h: &History) {
    let (first, last) = (h.rows.first(), h.rows.last());
    let span = match (first, last) {
        (Some(a), Some(b)) if h.by.is_none() => format!(", {} … {}", short_time(&a.time), short_time(&b.time)),
        (Some(a), Some(b)) => format!(", {} … {}", a.key, b.key),
        _ => String::new(),
    };
    let lines = if h.per_identifier { "a line per identifier" } else { "one line, an identifier per point" };
    writeln!(o, "History of {} run(s){span}, ordered by {}; {lines}", h.rows.len(), h.order).unwrap();
    if let Some(g) = &h.group {
        writeln!(o, "Saved results of {} ({})", one_line(&g.describe()), g.results.len()).unwrap();
    }
    writeln!(
        o,
        "Change points: E-Divisive with means, permutation test at p ≤ {} (up to {} permutations), changes of {} % or more",
        h.alpha, h.permutations, h.min_magnitude_pct
    )
    .unwrap();
    for n in &h.notes {
        writeln!(o, "note: {}", one_line(n)).unwrap();
    }
}

fn line(o: &mut String, h: &History, s: &Series, label_w: usize, spark_w: usize) {
    let label = one_line(s.line.as_deref().unwrap_or(""));
    let values = s.values();
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    // A change needs points on both sides: the newest few cannot start one yet.
    let side = h.min_side;
    let pending = values.len().min(side.saturating_sub(1));
    let state = if !s.analysed {
        format!("too few to show a change at p ≤ {} ({} points needed)", h.alpha, h.min_points)
    } else {
        let found = match s.changes.len() {
            0 => "no change points".to_string(),
            n => format!("{n} change point(s)"),
        };
        format!("{found}; the newest {pending} cannot be judged yet ({side} points a side needed)")
    };
    writeln!(o, "  {}  {}", pad(&label, label_w), sparkline(h.rows.len(), s, spark_w)).unwrap();
    let pad = " ".repeat(label_w + 4);
    writeln!(o, "{pad}{} point(s), {} … {}: {state}", values.len(), number(lo), number(hi)).unwrap();
    if !s.outliers.is_empty() {
        let at: Vec<String> = s.outliers.iter().map(|r| format!("#{}", r + 1)).collect();
        writeln!(
            o,
            "{pad}set aside as single outlier(s) in the search (its neighbours' median stood in): {}",
            at.join(", ")
        )
        .unwrap();
    }
    for c in &s.changes {
        writeln!(
            o,
            "{pad}at #{} {} ({}): {} → {} {}, {} ({}): {}",
            c.row + 1,
            one_line(&row_label(h, c.row)),
            one_line(&when(h, c.row)),
            number(c.before),
            number(c.after),
            one_line(&s.unit),
            c.comparison.ratio_text(),
            format_p(c.p),
            c.verdict
        )
        .unwrap();
    }
}

/// The values over the rows in at most `width` characters (a bucket's
/// mean when there are more rows), a space where a row has none.
pub(crate) fn sparkline(rows: usize, s: &Series, width: usize) -> String {
    let cells = rows.min(width).max(1);
    let mut sum = vec![(0.0, 0usize); cells];
    for &(row, v) in &s.points {
        let c = row * cells / rows.max(1);
        sum[c.min(cells - 1)].0 += v;
        sum[c.min(cells - 1)].1 += 1;
    }
    let means: Vec<Option<f64>> = sum.iter().map(|&(t, n)| (n > 0).then(|| t / n as f64)).collect();
    let (lo, hi) = means.iter().flatten().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    means
        .iter()
        .map(|m| match m {
            None => ' ',
            Some(_) if hi <= lo => BLOCKS[3],
            Some(v) => BLOCKS[(((v - lo) / (hi - lo)) * 7.0).round() as usize],
        })
        .collect()
}
