//! A self-contained HTML report: the system table, one horizontal bar chart
//! per result as inline SVG with SE and N, the verdicts against the baseline,
//! the geometric-mean chart, wins and losses, and the viewer's toggles
//! (normalize, hide noisy results, sort). The charts and verdicts are in the
//! page as the engine drew them (svg.rs), so it reads with scripting off, in
//! mail clients and in print; the page's script only redraws them, from the
//! data embedded as JSON, when a toggle changes — all offline.

use super::noise_rsd;
use super::svg;
use super::{Exporter, View};
use crate::analysis::significance::Verdict;
use crate::model::facts::Identifier;
use crate::model::facts::Timestamp;
use crate::model::result::{ResultFile, TestResult};
use std::fmt::Write;

pub struct Html;

/// Text for HTML: markup escaped, and controls (which XML forbids and a
/// terminal would act on, should the page be read there) as visible escapes.
pub(crate) use crate::sys::text::xml as esc;

/// Appends JSON for a `<script>` element: no `<`, `>` or `&` at all (JSON
/// has them only inside strings, where `\\u003c` means the same), so no
/// identifier can close the element or open a comment that confuses the parser.
fn push_script_json(h: &mut String, json: &str) {
    let mut rest = json;
    while let Some(i) = rest.find(['<', '>', '&']) {
        h.push_str(&rest[..i]);
        h.push_str(match rest.as_bytes()[i] {
            b'<' => "\\u003c",
            b'>' => "\\u003e",
            _ => "\\u0026",
        });
        rest = &rest[i + 1..];
    }
    h.push_str(rest);
}

pub(crate) const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1500px}
h1{margin-bottom:.2em} .desc{color:#555}
table{border-collapse:collapse;margin:1em 0;font-size:13px} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
table.systems{table-layout:fixed;width:100%;font-size:12px} table.systems th:first-child{width:9em}
table.systems td div{max-height:12em;overflow:auto;overflow-wrap:anywhere}
details.changes-list{margin:.5em 0}
tr.changed td{background:#fff6d6} .controls{position:sticky;top:0;background:#f4f6f8;padding:.6em 1em;border:1px solid #dde;margin:1em 0}
.controls[hidden]{display:none} .bound{font-size:12px;color:#555} .monitor{margin:.5em 0 1.5em} .monitor figure{margin:.3em 0} .monitor figure[hidden],.monitor label[hidden]{display:none} .monitor figcaption{font-size:12px;color:#555} .controls label{margin-right:1.5em} section.result{margin:1.5em 0} section.result h3{margin:.2em 0}
.unit{color:#555;font-size:13px} svg.chart{display:block;margin:.3em 0;max-width:100%;height:auto} .better{color:#0a7d25} .worse{color:#b3261e} .none{color:#555}
.changes{color:#7a5b00;font-size:13px} p.about{color:#444;margin:.3em 0} td.num{text-align:right;font-variant-numeric:tabular-nums} table.overview td:first-child{max-width:60em}
.meta{color:#555;margin:.2em 0 1em} section.answer{background:#f7f9fb;border:1px solid #dde;padding:.6em 1.2em;margin:1em 0}
section.answer li{margin:.25em 0} div.test{border-top:2px solid #dde;margin:1.5em 0;padding-top:.3em} details.warnings{color:#7a5b00;font-size:13px} table.failures td:last-child{overflow-wrap:anywhere}
@media print{.controls{display:none} section.result{break-inside:avoid} table.systems td div{max-height:none}}
"#;

/// Redraws the charts for the toggles, in place of the engine's drawing of
/// the default view the page starts with; `chart` draws what `svg::bars`
/// does. Headings and verdicts stay as the engine wrote them.
pub(crate) const SCRIPT: &str = r#"
(function(){
const D = JSON.parse(document.getElementById('data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const colors = ['#3465a4','#f57900','#4e9a06','#cc0000','#75507b','#c4a000','#06989a','#8f5902'];
function el(tag, attrs, text){ const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; }
function fmt(v){ if (v === null || v === undefined) return 'n/a'; const a = Math.abs(v); return a < 1 ? v.toFixed(4) : a < 1000 ? v.toFixed(2) : a < 10000 ? v.toFixed(1) : v.toFixed(0); }
function cut(s, max){ const a = Array.from(s); return a.length > max ? a.slice(0, max - 1).join('') + '\u2026' : s; }
function chart(svgClass, rows, unitLabel){
  const W = 900, rowH = 24, labelW = 240, textW = 230, barW = W - labelW - textW, top = 4, H = top + rows.length * rowH + 4;
  const svg = el('svg', {class: 'chart ' + svgClass, width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'font-family': 'sans-serif', 'font-size': 12});
  svg.appendChild(el('title', {}, unitLabel));
  const has = r => r.value !== null && r.value !== undefined && isFinite(r.value);
  const max = rows.reduce((m, r) => has(r) ? Math.max(m, r.value + (r.se || 0)) : m, 0);
  const scale = x => max > 0 ? x / max * barW : 0;
  rows.forEach((r, i) => {
    const y = top + i * rowH, label = cut(r.id, 34);
    const t = el('text', {x: labelW - 6, y: y + 15, 'text-anchor': 'end'});
    if (label !== r.id) t.appendChild(el('title', {}, r.id));
    t.appendChild(document.createTextNode(label));
    svg.appendChild(t);
    if (!has(r)) { svg.appendChild(el('text', {x: labelW + 4, y: y + 15, fill: '#777'}, 'no value')); return; }
    const w = Math.max(1, scale(r.value));
    svg.appendChild(el('rect', {class: 'bar', x: labelW, y: y + 3, width: w, height: rowH - 8, fill: colors[r.i % colors.length]}));
    let end = w;
    if (r.se > 0 && max > 0) {
      const x1 = labelW + Math.max(0, scale(r.value - r.se)), x2 = labelW + scale(r.value + r.se), ym = y + rowH / 2 - 1;
      const d = 'M' + x1 + ' ' + ym + 'H' + x2 + 'M' + x1 + ' ' + (ym - 4) + 'V' + (ym + 4) + 'M' + x2 + ' ' + (ym - 4) + 'V' + (ym + 4);
      svg.appendChild(el('path', {class: 'se', d: d, stroke: '#000', 'stroke-width': 1.2}));
      end = Math.max(end, scale(r.value + r.se));
    }
    const v = el('text', {x: labelW + end + 6, y: y + 15}, r.text);
    v.setAttributeNS('http://www.w3.org/XML/1998/namespace', 'xml:space', 'preserve');
    svg.appendChild(v);
  });
  return svg;
}
function render(){
  const norm = document.getElementById('normalize').value;
  const hide = document.getElementById('hide-noisy').checked;
  const sort = document.getElementById('sort').value;
  const sections = document.querySelectorAll('#results section.result');
  let shown = 0;
  D.results.forEach((res, k) => {
    const sec = sections[k];
    sec.hidden = hide && res.noisy;
    if (sec.hidden) return;
    shown++;
    let rows = res.entries.map(e => ({id: D.ids[e.i], i: e.i, value: e.value, se: e.se, text: e.text}));
    let unit = res.unit_line;
    if (norm !== 'none') {
      const vals = rows.filter(r => r.value > 0).map(r => r.value);
      const ref = norm === 'baseline' ? (rows.find(r => r.id === D.baseline) || {}).value : (res.hib ? Math.min(...vals) : Math.max(...vals));
      rows = rows.map(r => { const v = (r.value > 0 && ref > 0) ? (res.hib ? r.value / ref : ref / r.value) : null; return {id: r.id, i: r.i, value: v, se: null, text: v === null ? '' : fmt(v)}; });
      unit = 'Relative to ' + (norm === 'baseline' ? D.baseline : 'the lowest') + ' (' + res.unit + '), More Is Better';
    }
    if (sort === 'value') rows.sort((a, b) => (b.value || 0) - (a.value || 0));
    sec.querySelector('.unit').textContent = unit;
    sec.querySelector('svg.chart').replaceWith(chart('result-chart', rows, unit));
  });
  document.getElementById('shown').textContent = shown + ' of ' + D.results.length + ' results shown';
  const g = document.getElementById('geomean');
  if (g && D.geomean) {
    const rows = D.geomean.map(x => ({id: D.ids[x.i], i: x.i, value: x.value, se: null, text: x.text}));
    if (sort === 'value') rows.sort((a, b) => b.value - a.value);
    g.querySelector('svg.chart').replaceWith(chart('geomean-chart', rows, 'Geometric mean, More Is Better'));
  }
}
const ids = ['normalize', 'hide-noisy', 'sort'];
ids.forEach(id => document.getElementById(id).addEventListener('change', render));
document.querySelector('.controls').hidden = false;
// Monitor charts: the menu shows one metric's chart at a time.
// `#metric=NAME` in the address opens every test's monitors on that metric.
const wanted = new URLSearchParams(location.hash.slice(1)).get('metric');
document.querySelectorAll('.monitor select.metric').forEach(sel => {
  sel.closest('label').hidden = false;
  sel.addEventListener('change', () => sel.closest('.monitor').querySelectorAll('figure').forEach(f => { f.hidden = f.dataset.metric !== sel.value; }));
  if (wanted && [...sel.options].some(o => o.value === wanted)) {
    sel.value = wanted;
    sel.dispatchEvent(new Event('change'));
    sel.closest('.monitor').open = true;
  }
});
// Settings a browser restored on reload are not the drawn default view.
if (document.getElementById('normalize').value !== 'none' || document.getElementById('hide-noisy').checked || document.getElementById('sort').value !== 'identifier') render();
})();
"#;

/// What the script redraws from: per result the values, not the words the
/// page already holds. Identifiers by their index in `ids`.
#[derive(serde::Serialize)]
struct Bar {
    i: usize,
    value: f64,
    se: Option<f64>,
    /// The value and SE as the engine's chart prints them.
    text: String,
}

#[derive(serde::Serialize)]
struct Chart<'a> {
    unit: &'a str,
    unit_line: String,
    hib: bool,
    entries: Vec<Bar>,
    noisy: bool,
}

#[derive(serde::Serialize)]
struct Mean {
    i: usize,
    value: f64,
    text: String,
}

#[derive(serde::Serialize)]
struct Data<'a> {
    ids: &'a [Identifier],
    baseline: Option<&'a str>,
    results: Vec<Chart<'a>>,
    geomean: Option<Vec<Mean>>,
}

/// A verdict line: identifier, what changed, and its class (`better`, ...).
struct Said<'a> {
    id: &'a str,
    text: String,
    kind: &'static str,
}

/// One result as the page shows it before any toggle: heading, unit line,
/// the engine's chart, the verdicts. Written in place: a comparison of a
/// thousand identifiers makes a page of tens of megabytes.
fn section(
    h: &mut String,
    (k, t): (usize, &TestResult),
    drawn: &svg::Chart,
    verdicts: &[Said<'_>],
    baseline: Option<&str>,
) {
    write!(h, "<section class=\"result\" id=\"r{k}\"><h3>{}</h3>", esc(&heading(t))).unwrap();
    write!(h, "<div class=\"unit\">{}</div>", esc(&drawn.unit)).unwrap();
    svg::write_chart(h, drawn, false);
    if !verdicts.is_empty() {
        let baseline = esc(baseline.unwrap_or(""));
        h.push_str("<div class=\"verdicts\">");
        for v in verdicts {
            write!(h, "<div class=\"{}\">{} vs {baseline}: {}</div>", v.kind, esc(v.id), esc(&v.text)).unwrap();
        }
        h.push_str("</div>");
    }
    h.push_str("</section>");
}

/// `Flexible IO Tester 3.33 — IOPS — Type: Random Read - Block Size: 4KB`:
/// the test, the metric, the options, as a heading names them.
fn heading(t: &TestResult) -> String {
    let options: Vec<String> = t.options.iter().map(|o| format!("{}: {}", o.name, o.entry)).collect();
    let options = options.join(" - ");
    // What the profile adds to the description for this result names the
    // metric (`Read Latency`); else the result's id does.
    let extra = t.description.strip_prefix(options.as_str()).map(|r| r.trim_start_matches(" - ").trim());
    let metric = match extra {
        Some(x) if !x.is_empty() => x.to_string(),
        _ => metric_name(&t.result, &t.unit),
    };
    let mut parts = vec![svg::result_title(t), metric];
    match extra {
        Some(_) if !options.is_empty() => parts.push(options),
        Some(_) => {}
        // A description not made of the options (an import): as it is.
        None if !t.description.is_empty() => parts.push(t.description.clone()),
        None => {}
    }
    parts.join(" — ")
}

/// `iops` with unit `IOPS` → `IOPS`; `read_bandwidth` → `Read Bandwidth`.
fn metric_name(id: &str, unit: &str) -> String {
    if id.eq_ignore_ascii_case(unit) {
        return unit.to_string();
    }
    id.split(['_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            match w.len() <= 4
                && w.chars().all(|c| c.is_ascii_alphabetic())
                && ["iops", "io", "cpu", "tps", "ops", "qps", "mb", "rss", "qd"].contains(&w)
            {
                true => w.to_ascii_uppercase(),
                false => {
                    let mut c = w.chars();
                    c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
                }
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A note: its class (`bound`, `warning`), the identifier, the text.
type Note<'a> = (&'static str, &'a str, String);

/// A test's notes under its results, each said once: what bounded a
/// number and why it may not mean what it seems (it did not reach the
/// device, the trials stopped short of the target), naming the results a
/// note is about when it is not all of them.
fn notes(h: &mut String, results: &[(usize, &TestResult)]) {
    // (class, identifier, text) → the results it is said of, in order.
    let mut said: Vec<(Note<'_>, Vec<usize>)> = Vec::new();
    for (k, t) in results {
        for e in &t.entries {
            let bound = super::text::bound_line(e).map(|b| ("bound", b));
            let warned = e.served_from_memory.iter().chain(&e.warning).map(|w| ("warning", w.clone()));
            for (class, text) in bound.into_iter().chain(warned) {
                let key = (class, e.identifier.as_str(), text);
                match said.iter_mut().find(|(s, _)| *s == key) {
                    Some((_, ks)) => ks.push(*k),
                    None => said.push((key, vec![*k])),
                }
            }
        }
    }
    if said.is_empty() {
        return;
    }
    let (bounds, warnings): (Vec<_>, Vec<_>) = said.into_iter().partition(|((c, _, _), _)| *c == "bound");
    let of = |ks: &[usize]| -> String {
        if ks.len() == results.len() {
            return String::new();
        }
        let named: Vec<String> = ks
            .iter()
            .filter_map(|k| results.iter().find(|(i, _)| i == k))
            .map(|(k, t)| format!("<a href=\"#r{k}\">{}</a>", esc(&metric_name(&t.result, &t.unit))))
            .collect();
        format!(" ({})", named.join(", "))
    };
    h.push_str("<div class=\"notes\">");
    for ((_, id, text), ks) in &bounds {
        write!(h, "<div class=\"bound\"><b>{}</b>{}: {}</div>", esc(id), of(ks), esc(text)).unwrap();
    }
    if !warnings.is_empty() {
        write!(h, "<details class=\"warnings\"><summary>{} warning(s)</summary><ul>", warnings.len()).unwrap();
        for ((_, id, text), ks) in &warnings {
            write!(h, "<li><b>{}</b>{}: {}</li>", esc(id), of(ks), esc(text)).unwrap();
        }
        h.push_str("</ul></details>");
    }
    h.push_str("</div>");
}

impl Exporter for Html {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        if let Some(fleet) = view.fleet_of(r) {
            return super::fleet::html(r, &fleet, view.fleet.top);
        }
        let m = crate::analysis::Matrix::new(r);
        let a = super::view::analyze_matrix(r, &m, view);
        let verdicts = verdicts(r, &a);
        let results = charts(r, &m);
        // The geometric mean compares identifiers: none with only one.
        let geomean = a.geometric.as_deref().filter(|_| a.ids.len() > 1);
        // About what a bar and its data take, so the page is rarely copied.
        let mut h = String::with_capacity(64 * 1024 + r.results.len() * a.ids.len() * 700);
        head(&mut h, r);
        // The answer first: when and how long, then what changed.
        meta(&mut h, r);
        if a.ids.len() > 1 {
            answer(&mut h, r, &a, geomean);
        }
        if !r.systems.is_empty() {
            runs(&mut h, r);
            systems(&mut h, r);
        }
        overview(&mut h, r, &m);
        controls(&mut h, r.results.len());
        h.push_str("<div id=\"results\">");
        // A test's results (bandwidth, IOPS, latencies) in one block: what
        // the test is once above them, their notes once below.
        let mut block: Vec<(usize, &TestResult)> = Vec::new();
        for (k, ((t, row), said)) in r.results.iter().zip(&m.rows).zip(&verdicts).enumerate() {
            if block.first().is_some_and(|(_, f)| f.test != t.test) {
                close_block(&mut h, &block, &m.ids, view);
                block.clear();
            }
            if block.is_empty() {
                h.push_str("<div class=\"test\">");
                if !t.about.is_empty() {
                    write!(h, "<p class=\"about\">{}</p>", esc(&t.about)).unwrap();
                }
            }
            block.push((k, t));
            section(&mut h, (k, t), &svg::result_chart(t, row, &m.ids, None), said, a.baseline.as_deref());
        }
        if !block.is_empty() {
            close_block(&mut h, &block, &m.ids, view);
        }
        h.push_str("</div>");
        failures(&mut h, r);
        if a.ids.len() > 1 {
            comparison(&mut h, r, &a, view, geomean);
        }
        let data = Data {
            ids: &a.ids,
            baseline: a.baseline.as_deref(),
            results,
            geomean: geomean.map(|g| {
                g.iter()
                    .map(|(id, v)| Mean { i: m.index(id).unwrap_or(0), value: *v, text: crate::units::number(*v) })
                    .collect()
            }),
        };
        push_data(&mut h, data);
        h.push_str(&format!("<script>{SCRIPT}</script>\n</body></html>\n"));
        h
    }
}

/// The end of a test's block: its notes, then its monitors.
fn close_block(h: &mut String, block: &[(usize, &TestResult)], ids: &[Identifier], view: &View) {
    notes(h, block);
    if let Some((_, t)) = block.first() {
        super::monitor_chart::write_block(h, &t.test, ids, &view.monitors);
    }
    h.push_str("</div>");
}

/// The runs, a row per identifier: when it ran, how long, how many tests.
fn runs(h: &mut String, r: &ResultFile) {
    h.push_str("<h2>Runs</h2><table class=\"runs\"><tr><th>Identifier</th><th>Date</th><th>Duration</th><th>Tests</th><th>Results</th></tr>");
    for s in &r.systems {
        let start = s.started.at();
        let when = start.map(|t| {
            let w = humantime::format_rfc3339_seconds(t).to_string();
            format!("{} UTC", w.trim_end_matches('Z').replacen('T', " ", 1).chars().take(16).collect::<String>())
        });
        let took = start.zip(s.finished.as_ref().and_then(Timestamp::at)).and_then(|(a, b)| b.duration_since(a).ok());
        let mine = r.results.iter().filter(|t| t.entries.iter().any(|e| e.identifier == s.identifier));
        let tests: std::collections::HashSet<&str> = mine.clone().map(|t| t.test.as_str()).collect();
        write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.identifier),
            esc(when.as_deref().unwrap_or("")),
            took.map(crate::stats::adaptive::seconds).unwrap_or_default(),
            tests.len(),
            mine.count()
        )
        .unwrap();
    }
    h.push_str("</table>");
}

/// Every result in a table that jumps to its chart, with each identifier's
/// value (as PTS's result overview): up to 12 identifiers; past that the
/// names alone, the charts say the rest.
fn overview(h: &mut String, r: &ResultFile, m: &crate::analysis::Matrix) {
    const MOST: usize = 12;
    let shown = if m.ids.len() <= MOST { m.ids.as_slice() } else { &[] };
    write!(h, "<h2>Results overview</h2><table class=\"overview\"><tr><th>Result</th><th>Unit</th>").unwrap();
    for id in shown {
        write!(h, "<th>{}</th>", esc(id)).unwrap();
    }
    h.push_str("</tr>");
    for (k, (t, row)) in r.results.iter().zip(&m.rows).enumerate() {
        write!(
            h,
            "<tr><td><a href=\"#r{k}\">{}</a></td><td>{}</td>",
            esc(&heading(t)),
            esc(&svg::unit_line(&t.unit, t.proportion))
        )
        .unwrap();
        for e in row.iter().take(shown.len()) {
            let v = e.map(|e| crate::units::number(e.value)).unwrap_or_default();
            write!(h, "<td class=\"num\">{}</td>", esc(&v)).unwrap();
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

/// Per result, the verdict lines against the baseline.
fn verdicts<'a>(r: &ResultFile, a: &'a super::view::Analysis) -> Vec<Vec<Said<'a>>> {
    let mut verdicts: Vec<Vec<Said>> = (0..r.results.len()).map(|_| Vec::new()).collect();
    for (i, cs) in &a.comparisons {
        verdicts[*i] = cs
            .iter()
            .map(|(id, c)| Said {
                id,
                text: c.describe(),
                kind: match c.verdict {
                    Verdict::Better(_) => "better",
                    Verdict::Worse(_) => "worse",
                    _ => "none",
                },
            })
            .collect();
    }
    verdicts
}

/// Per result, the values the script redraws its chart from.
fn charts<'a>(r: &'a ResultFile, m: &crate::analysis::Matrix) -> Vec<Chart<'a>> {
    r.results
        .iter()
        .zip(&m.rows)
        .map(|(t, row)| Chart {
            unit: &t.unit,
            unit_line: svg::unit_line(&t.unit, t.proportion),
            hib: t.proportion == crate::model::profile::Proportion::Hib,
            entries: row
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.map(|e| (i, e)))
                .map(|(i, e)| Bar {
                    i,
                    value: e.value,
                    se: e.se,
                    text: super::format::bar_text(e.value, e.se, super::format::count(e)),
                })
                .collect(),
            noisy: t.entries.iter().any(|e| crate::analysis::noise::is_noisy(e, noise_rsd())),
        })
        .collect()
}

/// The page's head, its title and description, and what was left out.
fn head(h: &mut String, r: &ResultFile) {
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    h.push_str(&format!("<title>{}</title><style>{STYLE}</style></head><body>\n", esc(&r.title)));
    h.push_str(&format!("<h1>{}</h1>", esc(&r.title)));
    if !r.description.is_empty() {
        h.push_str(&format!("<p class=\"desc\">{}</p>", esc(&r.description)));
    }
    if !r.left_out.is_empty() {
        h.push_str("<h2>Left out</h2><ul class=\"left-out\">");
        for l in &r.left_out {
            h.push_str(&format!("<li><b>{}</b>: {}</li>", esc(&l.source), esc(&l.reason)));
        }
        h.push_str("</ul>");
    }
}

/// `Run 2026-12-02 10:14 UTC, 12 min 5 s; 14 tests, 31 results, 3 identifiers`.
fn meta(h: &mut String, r: &ResultFile) {
    let start = r.systems.iter().filter_map(|s| s.started.at()).min();
    let end = r.systems.iter().filter_map(|s| s.finished.as_ref().and_then(Timestamp::at)).max();
    let mut parts = Vec::new();
    if let Some(t) = start {
        let when = humantime::format_rfc3339_seconds(t).to_string();
        let when = when.trim_end_matches('Z').replacen('T', " ", 1);
        let took = end.and_then(|e| e.duration_since(t).ok());
        let took = took.map(|d| format!(", {}", crate::stats::adaptive::seconds(d))).unwrap_or_default();
        parts.push(format!("Run {} UTC{took}", &when[..when.len().min(16)]));
    }
    let tests: std::collections::HashSet<&str> = r.results.iter().map(|t| t.test.as_str()).collect();
    parts.push(format!("{} test(s), {} result(s), {} identifier(s)", tests.len(), r.results.len(), r.systems.len()));
    if !r.failures.is_empty() {
        parts.push(format!("{} failed or skipped (listed below)", r.failures.len()));
    }
    h.push_str(&format!("<p class=\"meta\">{}</p>", esc(&parts.join("; "))));
}

/// The one-screen answer: each identifier's verdict against the baseline
/// and the geometric means, before any chart.
fn answer(h: &mut String, r: &ResultFile, a: &super::view::Analysis, geomean: Option<&[(Identifier, f64)]>) {
    let Some(b) = &a.baseline else { return };
    h.push_str("<section class=\"answer\"><h2>Verdict</h2><ul>");
    for (id, parts) in super::verdict::lines(r, a, b) {
        h.push_str(&format!("<li><b>{}</b> vs {}: {}</li>", esc(&id), esc(b), esc(&parts.join(", "))));
    }
    h.push_str("</ul>");
    h.push_str(&format!("<p class=\"meta\">{}</p>", esc(super::verdict::RULE)));
    if let Some(g) = geomean
        && let Some((_, base)) = g.iter().find(|(id, _)| id == b)
    {
        let each: Vec<String> = g
            .iter()
            .map(|(id, v)| {
                let vs = if id == b { String::new() } else { format!(" ({:+.1} %)", (v / base - 1.0) * 100.0) };
                format!("{} {}{vs}", esc(id), crate::units::number(*v))
            })
            .collect();
        h.push_str(&format!(
            "<p>Geometric mean of {} test(s), higher is better: {}</p>",
            a.shared_tests,
            each.join("; ")
        ));
    }
    h.push_str("</section>");
}

/// What has no value, and why: failed and skipped tests, a row each.
fn failures(h: &mut String, r: &ResultFile) {
    if r.failures.is_empty() {
        return;
    }
    h.push_str(&format!(
        "<h2>Failed or skipped ({})</h2><table class=\"failures\"><tr><th></th><th>Test</th><th>Identifier</th><th>Why</th></tr>",
        r.failures.len()
    ));
    for f in &r.failures {
        let what = if f.description.is_empty() { f.title.clone() } else { format!("{}: {}", f.title, f.description) };
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&f.status.to_string()),
            esc(&what),
            esc(&f.identifier),
            esc(&f.reason)
        ));
    }
    h.push_str("</table>");
}

/// The system table: one column per identifier; rows that differ are
/// marked, and the changes between identifiers listed.
fn systems(h: &mut String, r: &ResultFile) {
    h.push_str("<h2>Systems</h2><table class=\"systems\"><tr><th></th>");
    for s in &r.systems {
        h.push_str(&format!("<th>{}</th>", esc(&s.identifier)));
    }
    h.push_str("</tr>");
    for row in super::systems::table(r) {
        h.push_str(&format!("<tr{}><th>{}</th>", if row.uniform() { "" } else { " class=\"changed\"" }, esc(&row.key)));
        for v in &row.values {
            h.push_str(&format!("<td><div>{}</div></td>", esc(v.as_deref().unwrap_or(""))));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    let changes: Vec<(String, Vec<String>)> =
        super::systems::changes(r).into_iter().filter(|(_, l)| !l.is_empty()).collect();
    if !changes.is_empty() {
        let n: usize = changes.iter().map(|(_, l)| l.len()).sum();
        h.push_str(&format!("<details class=\"changes-list\"><summary>{n} change(s) between identifiers</summary>"));
        for (id, lines) in changes {
            for l in lines {
                h.push_str(&format!("<div class=\"changes\">{}: {}</div>", esc(&id), esc(&l)));
            }
        }
        h.push_str("</details>");
    }
}

/// The toggles, for `n` results; they need the script, so hidden until it runs.
fn controls(h: &mut String, n: usize) {
    h.push_str(&format!(
        "<div class=\"controls\" hidden><label>Normalize <select id=\"normalize\"><option value=\"none\">no</option>\
         <option value=\"lowest\">to the lowest</option><option value=\"baseline\">to the baseline</option></select></label>\
         <label><input type=\"checkbox\" id=\"hide-noisy\"> Hide noisy results (relative SD over 6 %)</label>\
         <label>Sort bars <select id=\"sort\"><option value=\"identifier\">by identifier</option>\
         <option value=\"value\">by value</option></select></label> <span id=\"shown\">{n} of {n} results shown</span></div>",
    ));
}

/// What compares identifiers: the baseline, the geometric mean, wins and
/// losses, the notable results.
fn comparison(
    h: &mut String,
    r: &ResultFile,
    a: &super::view::Analysis,
    view: &View,
    geomean: Option<&[(Identifier, f64)]>,
) {
    if let Some(b) = &a.baseline {
        h.push_str(&format!(
            "<p class=\"desc\">Baseline: {}. Verdicts: Welch's t-test at 5 %, changes under {} % do not count.</p>",
            esc(b),
            view.noise_pct
        ));
    }
    h.push_str(&format!("<h2>Geometric mean</h2><p class=\"desc\">Of the {} tests ({} results) every identifier has, each test weighed once; lower-is-better results inverted.</p><div id=\"geomean\">", a.shared_tests, a.shared));
    if let Some(g) = geomean {
        h.push_str(&svg::bars(&svg::geomean_chart(g, &a.ids, a.shared)));
    }
    h.push_str("</div>");
    h.push_str(
        "<h2>Wins and losses</h2><table class=\"wins\"><tr><th>Identifier</th><th>Wins</th><th>Losses</th></tr>",
    );
    for t in &a.wins {
        h.push_str(&format!("<tr><td>{}</td><td>{}</td><td>{}</td></tr>", esc(&t.identifier), t.wins, t.losses));
    }
    h.push_str("</table>");
    if !a.notable.is_empty() {
        h.push_str("<h2>Notable results</h2><table><tr><th>Spread</th><th>Result</th></tr>");
        for (i, s) in &a.notable {
            let t = &r.results[*i];
            h.push_str(&format!(
                "<tr><td>{}x</td><td>{}: {} ({})</td></tr>",
                crate::units::fixed(*s, 2),
                esc(&t.title),
                esc(&t.description),
                esc(&t.unit)
            ));
        }
        h.push_str("</table>");
    }
}

/// The data block the script redraws from.
fn push_data(h: &mut String, data: Data) {
    let json = serde_json::to_string(&data).expect("report data serializes");
    // Freed before the page grows by the JSON: large comparisons are large.
    drop(data);
    h.push_str("<script type=\"application/json\" id=\"data\">");
    push_script_json(h, &crate::sys::text::json(&json));
    h.push_str("</script>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg_export::tests::sample;

    /// The page before its scripts: what a reader without scripting sees.
    fn static_part(html: &str) -> &str {
        &html[..html.find("<script").expect("the data block")]
    }

    /// The text of the JSON data block, up to the first `</script>`.
    fn data_block(html: &str) -> &str {
        let open = "<script type=\"application/json\" id=\"data\">";
        let start = html.find(open).expect("data block") + open.len();
        &html[start..start + html[start..].find("</script>").unwrap()]
    }

    #[test]
    fn charts_and_verdicts_are_in_the_page_without_scripts() {
        let f = sample(&["A", "B"]);
        let html = Html.export(&f, &View::default());
        let page = static_part(&html);
        assert_eq!(page.matches("<svg ").count(), 3);
        assert_eq!(page.matches("class=\"chart result-chart\"").count(), 2, "one chart per result");
        assert_eq!(page.matches("class=\"chart geomean-chart\"").count(), 1);
        assert!(page.contains(">100.00   SE +/- 5.77, N = 3</text>"), "bars carry SE and N");
        assert!(page.contains("<div class=\"unit\">ms, Fewer Is Better</div>"));
        assert!(page.contains("<span id=\"shown\">2 of 2 results shown</span>"));
        assert_eq!(page.matches("<div class=\"worse\">B vs A: ").count(), 1, "{page}");
        assert_eq!(page.matches("<div class=\"better\">B vs A: ").count(), 1, "{page}");
        // Every chart is well-formed XML on its own, one bar per identifier.
        for svg in page.split("<svg ").skip(1) {
            let svg = format!("<svg {}</svg>", svg.split("</svg>").next().unwrap());
            let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
            assert_eq!(doc.descendants().filter(|n| n.has_tag_name("rect")).count(), 2);
        }
        // The data the toggles redraw from carries the same texts.
        let data: serde_json::Value = serde_json::from_str(data_block(&html)).unwrap();
        assert_eq!(data["results"][0]["entries"][0]["text"], "100.00   SE +/- 5.77, N = 3");
        assert_eq!(data["geomean"][1]["text"], "0.9975");
        assert_eq!(html, Html.export(&f, &View::default()), "same input, same bytes");
    }

    /// What a PTS user expects of the page: the runs, an overview that
    /// jumps to each chart, the test described once, headings that name the
    /// metric, a note its results share said once.
    #[test]
    fn runs_overview_descriptions_headings_and_notes_once() {
        use crate::model::result::OptionChoice;
        let mut f = sample(&["A", "B"]);
        f.systems[0].started = "2026-12-04T10:14:00Z".into();
        f.systems[0].finished = Some("2026-12-04T10:26:05Z".into());
        for (k, t) in f.results.iter_mut().enumerate() {
            t.test = "io@1[x]".into();
            t.title = "Block I/O".into();
            t.app_version = Some("1.0".into());
            t.result = ["iops", "read_latency"][k].into();
            t.unit = ["IOPS", "ms"][k].into();
            t.options = vec![OptionChoice {
                option: "type".into(),
                name: "Type".into(),
                entry: "Random Read".into(),
                values: Default::default(),
            }];
            t.description = "Type: Random Read".into();
            t.about = "Reads and writes files in the target directory.".into();
            t.entries[1].warning = Some("budget spent: 95 % CI ±7 %".into());
        }
        let html = Html.export(&f, &View::default());
        let page = static_part(&html);
        assert!(
            page.contains("<h2>Runs</h2>")
                && page.contains("<td>A</td><td>2026-12-04 10:14 UTC</td><td>12 min 5 s</td><td>1</td><td>2</td>"),
            "{page}"
        );
        assert!(page.contains("<h2>Results overview</h2>"), "{page}");
        assert!(page.contains("<a href=\"#r0\">Block I/O 1.0 — IOPS — Type: Random Read</a>"), "{page}");
        assert!(page.contains("<a href=\"#r1\">Block I/O 1.0 — Read Latency — Type: Random Read</a>"), "{page}");
        assert!(
            page.contains(
                "<section class=\"result\" id=\"r1\"><h3>Block I/O 1.0 — Read Latency — Type: Random Read</h3>"
            )
        );
        assert_eq!(page.matches("Reads and writes files in the target directory.").count(), 1, "described once");
        assert_eq!(page.matches("budget spent: 95 % CI ±7 %").count(), 1, "a shared note said once");
    }

    #[test]
    fn one_identifier_has_no_geometric_mean() {
        let html = Html.export(&sample(&["A"]), &View::default());
        assert!(!html.contains("id=\"geomean\"") && !html.contains("geomean-chart\""));
        let data: serde_json::Value = serde_json::from_str(data_block(&html)).unwrap();
        assert!(data["geomean"].is_null());
    }

    #[test]
    fn an_identifier_cannot_break_out_of_the_data_block() {
        let evil = "<!--<script>x</script>";
        let f = sample(&["A", evil]);
        let html = Html.export(&f, &View::default());
        let block = data_block(&html);
        assert!(!block.contains('<') && !block.contains('>'), "{block}");
        assert!(!block.contains("<!--") && !block.contains("</script>"));
        let data: serde_json::Value = serde_json::from_str(block).unwrap();
        assert_eq!(data["ids"][1], evil, "the identifier survives the escaping");
        assert_eq!(data["results"][0]["entries"][1]["i"], 1);
        // Outside the data: two script elements and no comment anywhere.
        assert_eq!(html.matches("<script").count(), 2);
        assert_eq!(html.matches("</script>").count(), 2);
        assert!(!html.contains("<!--"));
        // The charts show it, escaped: two results and the geometric mean, as
        // do the two verdicts, the system table, the wins, and the lead (its
        // verdict and its geometric mean), the runs table and the overview's column.
        let page = static_part(&html);
        let shown = "&lt;!--&lt;script&gt;x&lt;/script&gt;";
        assert_eq!(page.matches(&format!(">{shown}</text>")).count(), 3, "{page}");
        assert_eq!(page.matches(shown).count(), 3 + 2 + 1 + 1 + 2 + 2, "{page}");
    }
}
