//! A self-contained HTML report: the system table, one horizontal bar chart
//! per result as inline SVG with SE and N, the geometric-mean chart, wins and
//! losses, the verdicts against the baseline, and the viewer's toggles
//! (normalize, hide noisy results, sort) — all working offline: the data is
//! embedded as JSON and drawn by the page's own script.

use super::noise_rsd;
use super::{Exporter, View};
use crate::analysis::significance::Verdict;
use crate::result::ResultFile;

pub struct Html;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
h1{margin-bottom:.2em} .desc{color:#555}
table{border-collapse:collapse;margin:1em 0;font-size:13px} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
table.systems{table-layout:fixed;width:100%;font-size:12px} table.systems th:first-child{width:9em}
table.systems td div{max-height:4.2em;overflow:auto;overflow-wrap:anywhere}
details.changes-list{margin:.5em 0}
tr.changed td{background:#fff6d6} .controls{position:sticky;top:0;background:#f4f6f8;padding:.6em 1em;border:1px solid #dde;margin:1em 0}
.controls label{margin-right:1.5em} section.result{margin:1.5em 0} section.result h3{margin:.2em 0}
.unit{color:#555;font-size:13px} svg.chart{display:block;margin:.3em 0} .better{color:#0a7d25} .worse{color:#b3261e} .none{color:#555}
.changes{color:#7a5b00;font-size:13px}
"#;

const SCRIPT: &str = r#"
(function(){
const D = JSON.parse(document.getElementById('data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const colors = ['#3465a4','#f57900','#4e9a06','#cc0000','#75507b','#c4a000','#06989a','#8f5902'];
function el(tag, attrs, text){ const e = document.createElementNS(NS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; }
function fmt(v){ if (v === null || v === undefined) return 'n/a'; const a = Math.abs(v); return a < 1 ? v.toFixed(4) : a < 1000 ? v.toFixed(2) : a < 10000 ? v.toFixed(1) : v.toFixed(0); }
function chart(svgClass, rows, unitLabel){
  const W = 900, rowH = 24, labelW = 240, textW = 230, barW = W - labelW - textW;
  const svg = el('svg', {class: 'chart ' + svgClass, width: W, height: rows.length * rowH + 8, viewBox: '0 0 ' + W + ' ' + (rows.length * rowH + 8), role: 'img'});
  svg.appendChild(el('title', {}, unitLabel));
  const max = Math.max(0, ...rows.map(r => (r.value || 0) + (r.se || 0)));
  rows.forEach((r, i) => {
    const y = 4 + i * rowH;
    svg.appendChild(el('text', {x: labelW - 6, y: y + 15, 'text-anchor': 'end', 'font-size': 12}, r.id));
    if (r.value !== null && r.value !== undefined && max > 0) {
      const w = Math.max(1, r.value / max * barW);
      svg.appendChild(el('rect', {x: labelW, y: y + 3, width: w, height: rowH - 8, fill: colors[D.ids.indexOf(r.id) % colors.length]}));
      if (r.se) {
        const x1 = labelW + (r.value - r.se) / max * barW, x2 = labelW + (r.value + r.se) / max * barW, ym = y + rowH / 2 - 1;
        svg.appendChild(el('line', {x1: x1, x2: x2, y1: ym, y2: ym, stroke: '#000', 'stroke-width': 1.2}));
        svg.appendChild(el('line', {x1: x1, x2: x1, y1: ym - 4, y2: ym + 4, stroke: '#000'}));
        svg.appendChild(el('line', {x1: x2, x2: x2, y1: ym - 4, y2: ym + 4, stroke: '#000'}));
      }
      const end = Math.max(w, r.se ? (r.value + r.se) / max * barW : 0);
      svg.appendChild(el('text', {x: labelW + end + 6, y: y + 15, 'font-size': 12}, fmt(r.value) + (r.note ? '   ' + r.note : '')));
    } else {
      svg.appendChild(el('text', {x: labelW + 4, y: y + 15, 'font-size': 12, fill: '#777'}, 'no value'));
    }
  });
  return svg;
}
function render(){
  const norm = document.getElementById('normalize').value;
  const hide = document.getElementById('hide-noisy').checked;
  const sort = document.getElementById('sort').value;
  const box = document.getElementById('results');
  box.textContent = '';
  let shown = 0;
  D.results.forEach(res => {
    if (hide && res.noisy) return;
    shown++;
    const sec = document.createElement('section'); sec.className = 'result';
    const h = document.createElement('h3'); h.textContent = res.title; sec.appendChild(h);
    if (res.description) { const p = document.createElement('div'); p.className = 'desc'; p.textContent = res.description; sec.appendChild(p); }
    let rows = res.entries.map(e => ({id: e.id, value: e.value, se: e.se, note: e.se !== null ? 'SE +/- ' + fmt(e.se) + ', N = ' + e.n : 'N = ' + e.n}));
    let unit = res.unit + (res.hib ? ', More Is Better' : ', Fewer Is Better');
    if (norm !== 'none') {
      const vals = rows.filter(r => r.value > 0).map(r => r.value);
      const ref = norm === 'baseline' ? (rows.find(r => r.id === D.baseline) || {}).value : (res.hib ? Math.min(...vals) : Math.max(...vals));
      rows = rows.map(r => ({id: r.id, value: (r.value > 0 && ref > 0) ? (res.hib ? r.value / ref : ref / r.value) : null, se: null, note: ''}));
      unit = 'Relative performance (' + res.unit + '), More Is Better';
    }
    if (sort === 'value') rows.sort((a, b) => (b.value || 0) - (a.value || 0));
    const u = document.createElement('div'); u.className = 'unit'; u.textContent = unit; sec.appendChild(u);
    sec.appendChild(chart('result-chart', rows, unit));
    if (res.verdicts.length) {
      const v = document.createElement('div');
      res.verdicts.forEach(x => { const s = document.createElement('div'); s.className = x.kind; s.textContent = x.id + ' vs ' + D.baseline + ': ' + x.text; v.appendChild(s); });
      sec.appendChild(v);
    }
    box.appendChild(sec);
  });
  document.getElementById('shown').textContent = shown + ' of ' + D.results.length + ' results shown';
  const g = document.getElementById('geomean');
  g.textContent = '';
  if (D.geomean) {
    let rows = D.geomean.map(([id, v]) => ({id: id, value: v, se: null, note: ''}));
    if (sort === 'value') rows.sort((a, b) => b.value - a.value);
    g.appendChild(chart('geomean-chart', rows, 'Geometric mean, More Is Better'));
  }
}
['normalize', 'hide-noisy', 'sort'].forEach(id => document.getElementById(id).addEventListener('change', render));
render();
})();
"#;

#[derive(serde::Serialize)]
struct Bar<'a> {
    id: &'a str,
    value: f64,
    se: Option<f64>,
    n: usize,
}

#[derive(serde::Serialize)]
struct Said<'a> {
    id: &'a str,
    text: String,
    kind: &'static str,
}

#[derive(serde::Serialize)]
struct Chart<'a> {
    title: String,
    description: &'a str,
    unit: &'a str,
    hib: bool,
    entries: Vec<Bar<'a>>,
    noisy: bool,
    verdicts: Vec<Said<'a>>,
}

#[derive(serde::Serialize)]
struct Data<'a> {
    title: &'a str,
    ids: &'a [String],
    baseline: Option<&'a str>,
    results: Vec<Chart<'a>>,
    geomean: Option<&'a [(String, f64)]>,
    shared: usize,
}

impl Exporter for Html {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        let m = crate::analysis::Matrix::new(r);
        let a = super::view::analyze_matrix(r, &m, view);
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
        let results: Vec<Chart> = r
            .results
            .iter()
            .zip(&m.rows)
            .zip(verdicts)
            .map(|((t, row), verdicts)| Chart {
                title: match &t.app_version {
                    Some(v) => format!("{} {v}", t.title),
                    None => t.title.clone(),
                },
                description: &t.description,
                unit: &t.unit,
                hib: t.proportion == crate::profile::model::Proportion::Hib,
                entries: row
                    .iter()
                    .flatten()
                    .map(|e| Bar { id: &e.identifier, value: e.value, se: e.se, n: e.n })
                    .collect(),
                noisy: t.entries.iter().any(|e| crate::analysis::noise::is_noisy(e, noise_rsd())),
                verdicts,
            })
            .collect();
        let data = Data {
            title: &r.title,
            ids: &a.ids,
            baseline: a.baseline.as_deref(),
            results,
            geomean: a.geometric.as_deref(),
            shared: a.shared,
        };
        // `</` inside a script element would end it.
        let data = serde_json::to_string(&data).expect("report data serializes").replace("</", "<\\/");

        let mut h = String::with_capacity(64 * 1024 + data.len());
        h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
        h.push_str(&format!("<title>{}</title><style>{STYLE}</style></head><body>\n", esc(&r.title)));
        h.push_str(&format!("<h1>{}</h1>", esc(&r.title)));
        if !r.description.is_empty() {
            h.push_str(&format!("<p class=\"desc\">{}</p>", esc(&r.description)));
        }
        // System table: one column per identifier; rows that differ are marked.
        if !r.systems.is_empty() {
            h.push_str("<h2>Systems</h2><table class=\"systems\"><tr><th></th>");
            for s in &r.systems {
                h.push_str(&format!("<th>{}</th>", esc(&s.identifier)));
            }
            h.push_str("</tr>");
            for row in super::systems::table(r) {
                h.push_str(&format!(
                    "<tr{}><th>{}</th>",
                    if row.uniform() { "" } else { " class=\"changed\"" },
                    esc(&row.key)
                ));
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
                h.push_str(&format!(
                    "<details class=\"changes-list\"><summary>{n} change(s) between identifiers</summary>"
                ));
                for (id, lines) in changes {
                    for l in lines {
                        h.push_str(&format!("<div class=\"changes\">{}: {}</div>", esc(&id), esc(&l)));
                    }
                }
                h.push_str("</details>");
            }
        }
        h.push_str(
            "<div class=\"controls\"><label>Normalize <select id=\"normalize\"><option value=\"none\">no</option>\
             <option value=\"lowest\">to the lowest</option><option value=\"baseline\">to the baseline</option></select></label>\
             <label><input type=\"checkbox\" id=\"hide-noisy\"> Hide noisy results (relative SD over 6 %)</label>\
             <label>Sort bars <select id=\"sort\"><option value=\"identifier\">by identifier</option>\
             <option value=\"value\">by value</option></select></label> <span id=\"shown\"></span></div>",
        );
        h.push_str("<div id=\"results\"></div>");
        if a.ids.len() > 1 {
            if let Some(b) = &a.baseline {
                h.push_str(&format!("<p class=\"desc\">Baseline: {}. Verdicts: Welch's t-test at 5 %, changes under {} % do not count.</p>", esc(b), view.noise_pct));
            }
            h.push_str(&format!("<h2>Geometric mean</h2><p class=\"desc\">Of the {} results every identifier has; lower-is-better results inverted.</p><div id=\"geomean\"></div>", a.shared));
            h.push_str("<h2>Wins and losses</h2><table class=\"wins\"><tr><th>Identifier</th><th>Wins</th><th>Losses</th></tr>");
            for t in &a.wins {
                h.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&t.identifier),
                    t.wins,
                    t.losses
                ));
            }
            h.push_str("</table>");
            if !a.notable.is_empty() {
                h.push_str("<h2>Notable results</h2><table><tr><th>Spread</th><th>Result</th></tr>");
                for (i, s) in &a.notable {
                    let t = &r.results[*i];
                    h.push_str(&format!(
                        "<tr><td>{s:.2}x</td><td>{}: {} ({})</td></tr>",
                        esc(&t.title),
                        esc(&t.description),
                        esc(&t.unit)
                    ));
                }
                h.push_str("</table>");
            }
        } else {
            h.push_str("<div id=\"geomean\"></div>");
        }
        h.push_str(&format!("<script type=\"application/json\" id=\"data\">{data}</script>"));
        h.push_str(&format!("<script>{SCRIPT}</script>\n</body></html>\n"));
        h
    }
}
