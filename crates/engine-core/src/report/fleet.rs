//! A fleet's report (`analysis::fleet`): past a number of identifiers a
//! result's report shows, per result, the distribution across hosts in each
//! group — count, median, percentiles, a histogram (text) or a box plot
//! (HTML) — then the odd hosts, instead of a bar per host. Every name and
//! value from the file is escaped for where it goes (`sys::text`).

use crate::analysis::fleet::{Distribution, Fleet, Odd, RULE};
use crate::model::result::ResultFile;
use crate::sys::text::{csv_row, one_line, pad, xml as esc};
use crate::units::{exact, number};
use std::fmt::Write;

/// Eight heights of a histogram, lowest first.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `1,203`.
fn count(n: usize) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn words(p: crate::model::profile::Proportion) -> &'static str {
    match p {
        crate::model::profile::Proportion::Hib => "higher is better",
        crate::model::profile::Proportion::Lib => "lower is better",
    }
}

fn sparkline(h: &[u32]) -> String {
    let max = h.iter().copied().max().unwrap_or(0).max(1);
    h.iter().map(|&c| if c == 0 { ' ' } else { BARS[(c as usize * 7 / max as usize).min(7)] }).collect()
}

/// `host-4711: Engine I/O: Random Read - Case 0: 0.61× its group (Samsung SSD 860, 1,203 hosts) [0.58, 0.64], worse`.
pub fn odd_line(f: &ResultFile, o: &Odd) -> String {
    let r = &f.results[o.result];
    let ci = o.interval.map(|(lo, hi)| format!(" [{lo:.2}, {hi:.2}]")).unwrap_or_default();
    format!(
        "{}: {} ({}): {:.2}× its group ({}, {} hosts){ci}, {}",
        one_line(&o.identifier),
        one_line(&r.heading(&r.title)),
        one_line(&r.unit),
        o.ratio,
        one_line(&o.group),
        count(o.group_size),
        if o.worse { "worse" } else { "better" }
    )
}

fn head(out: &mut String, f: &ResultFile, v: &Fleet) {
    let by = v.group_by.as_deref().map(|g| format!(", grouped by {}", one_line(g))).unwrap_or_default();
    writeln!(
        out,
        "{}\nA fleet: {} hosts{by}, {} results; a distribution per result and group instead of a bar per host",
        one_line(&f.title),
        count(v.hosts),
        v.results.len()
    )
    .unwrap();
}

/// The text report of a fleet; `top`: how many odd hosts are listed.
pub fn text(f: &ResultFile, v: &Fleet, top: usize, width: usize) -> String {
    let mut out = String::new();
    head(&mut out, f, v);
    for (ri, dists) in &v.results {
        let r = &f.results[*ri];
        writeln!(out, "\n{} ({}, {})", one_line(&r.heading(&r.title)), one_line(&r.unit), words(r.proportion)).unwrap();
        let gw = dists.iter().map(|d| crate::sys::text::width(&one_line(&d.group))).max().unwrap_or(0).min(width / 3);
        for d in dists {
            writeln!(out, "  {}  {}", pad(&crate::sys::text::fit(&one_line(&d.group), gw), gw), stats(d)).unwrap();
        }
    }
    if let Some((ri, missing)) = v.gaps.first() {
        writeln!(
            out,
            "\nGaps: {} result(s) lack some hosts (first: {}: {missing} hosts have no value)",
            v.gaps.len(),
            one_line(&f.results[*ri].heading(&f.results[*ri].title))
        )
        .unwrap();
    }
    writeln!(out, "\nOdd hosts: {} of {} host-results judged ({RULE})", v.odd.len(), count(v.judged)).unwrap();
    for o in v.odd.iter().take(top) {
        writeln!(out, "  {}", odd_line(f, o)).unwrap();
    }
    if v.odd.len() > top {
        writeln!(
            out,
            "  … {} more (--top N lists more; `engine result odd NAME --format csv` lists all)",
            v.odd.len() - top
        )
        .unwrap();
    }
    out
}

fn stats(d: &Distribution) -> String {
    format!(
        "{:>6} hosts  median {}  p5 {}  p25 {}  p75 {}  p95 {}  min {}  max {}  {}",
        count(d.count),
        number(d.median),
        number(d.p5),
        number(d.p25),
        number(d.p75),
        number(d.p95),
        number(d.min),
        number(d.max),
        sparkline(&d.histogram)
    )
}

/// The odd hosts as CSV, one row each, for tickets.
pub fn odd_csv(f: &ResultFile, v: &Fleet) -> String {
    let mut out = csv_row(&[
        "identifier",
        "test",
        "result",
        "title",
        "description",
        "unit",
        "group",
        "group_hosts",
        "group_median",
        "value",
        "ratio",
        "ratio_low",
        "ratio_high",
        "direction",
        "z",
        "p",
    ]);
    for o in &v.odd {
        let r = &f.results[o.result];
        let (lo, hi) = o.interval.map(|(a, b)| (exact(a), exact(b))).unwrap_or_default();
        out.push_str(&csv_row(&[
            o.identifier.to_string(),
            r.test.clone(),
            r.result.clone(),
            r.title.clone(),
            r.description.clone(),
            r.unit.to_string(),
            o.group.clone(),
            o.group_size.to_string(),
            exact(o.group_median),
            exact(o.value),
            exact(o.ratio),
            lo,
            hi,
            if o.worse { "worse" } else { "better" }.to_string(),
            exact(o.z),
            exact(o.p),
        ]));
    }
    out
}

/// The odd hosts as JSON, with the rule that picked them.
pub fn odd_json(f: &ResultFile, v: &Fleet) -> String {
    let odd: Vec<serde_json::Value> = v
        .odd
        .iter()
        .map(|o| {
            let r = &f.results[o.result];
            serde_json::json!({
                "identifier": o.identifier, "test": r.test, "result": r.result, "title": r.title,
                "description": r.description, "unit": r.unit, "group": o.group, "group_hosts": o.group_size,
                "group_median": o.group_median, "value": o.value, "ratio": o.ratio,
                "ratio_ci": o.interval.map(|(a, b)| [a, b]), "direction": if o.worse { "worse" } else { "better" },
                "z": o.z, "p": o.p,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "hosts": v.hosts, "group_by": v.group_by, "judged": v.judged, "rule": RULE, "odd": odd,
    });
    crate::sys::text::json(&serde_json::to_string_pretty(&doc).expect("JSON")).into_owned() + "\n"
}

/// One box plot: whiskers p5–p95, box p25–p75, the median, min and max as
/// dots, on a scale from `lo` to `hi` across `w` pixels.
fn box_svg(out: &mut String, d: &Distribution, lo: f64, hi: f64, y: f64) {
    let w = 520.0;
    let x = |v: f64| 180.0 + if hi > lo { (v - lo) / (hi - lo) * w } else { w / 2.0 };
    let _ = write!(
        out,
        "<text x=\"0\" y=\"{:.0}\">{} ({})</text>\
         <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.0}\" y2=\"{y:.0}\" stroke=\"#555\"/>\
         <rect x=\"{:.1}\" y=\"{:.0}\" width=\"{:.1}\" height=\"12\" fill=\"#9ec2e6\" stroke=\"#3465a4\"/>\
         <line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.0}\" y2=\"{:.0}\" stroke=\"#000\" stroke-width=\"2\"/>\
         <circle cx=\"{:.1}\" cy=\"{y:.0}\" r=\"2\"/><circle cx=\"{:.1}\" cy=\"{y:.0}\" r=\"2\"/>",
        y + 4.0,
        esc(&crate::sys::text::fit(&d.group, 22)),
        d.count,
        x(d.p5),
        x(d.p95),
        x(d.p25),
        y - 6.0,
        (x(d.p75) - x(d.p25)).max(1.0),
        x(d.median),
        x(d.median),
        y - 7.0,
        y + 7.0,
        x(d.min),
        x(d.max),
    );
}

/// The fleet page's style sheet (inline: the page stands alone offline).
pub(crate) const STYLE: &str = "body{font-family:sans-serif;max-width:60em;margin:auto}svg{font-size:11px}\
     table{border-collapse:collapse}td,th{padding:2px 6px;border-bottom:1px solid #ddd}";

/// The HTML report of a fleet: one offline page, a box plot per result with
/// a row per group, the odd hosts as a table. Its size grows with the
/// results and groups, not with the hosts (the odd hosts aside).
pub(crate) fn html(f: &ResultFile, v: &Fleet, top: usize) -> String {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(h, "<title>{}</title><style>{STYLE}</style></head><body>", esc(&f.title));
    let by = v.group_by.as_deref().map(|g| format!(", grouped by {}", esc(g))).unwrap_or_default();
    let _ = write!(
        h,
        "<h1>{}</h1><p>A fleet: {} hosts{by}, {} results. Boxes: p25–p75 with the median; whiskers p5–p95; dots min and max.</p>",
        esc(&f.title),
        count(v.hosts),
        v.results.len()
    );
    for (ri, dists) in &v.results {
        let r = &f.results[*ri];
        let lo = dists.iter().map(|d| d.min).fold(f64::INFINITY, f64::min);
        let hi = dists.iter().map(|d| d.max).fold(f64::NEG_INFINITY, f64::max);
        let height = 24 * dists.len() + 12;
        let _ = write!(
            h,
            "<h3>{} <small>({}, {}; {} to {})</small></h3><svg width=\"720\" height=\"{height}\">",
            esc(&r.heading(&r.title)),
            esc(&r.unit),
            words(r.proportion),
            number(lo),
            number(hi)
        );
        for (k, d) in dists.iter().enumerate() {
            box_svg(&mut h, d, lo, hi, 14.0 + 24.0 * k as f64);
        }
        h.push_str("</svg>");
    }
    let _ = write!(h, "<h2>Odd hosts ({} of {} host-results)</h2><p>{}</p>", v.odd.len(), v.judged, esc(RULE));
    h.push_str("<table><tr><th>host</th><th>result</th><th>ratio to its group</th><th>group</th></tr>");
    for o in v.odd.iter().take(top) {
        let r = &f.results[o.result];
        let ci = o.interval.map(|(a, b)| format!(" [{a:.2}, {b:.2}]")).unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{:.2}×{ci} {}</td><td>{} ({} hosts)</td></tr>",
            esc(&o.identifier),
            esc(&r.heading(&r.title)),
            o.ratio,
            if o.worse { "worse" } else { "better" },
            esc(&o.group),
            o.group_size
        );
    }
    h.push_str("</table></body></html>\n");
    h
}
