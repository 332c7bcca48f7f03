//! CSV: the system table, then one row per test with one column per
//! identifier, followed by each identifier's SE, N and raw trials. Every
//! line goes through `sys::text::csv_row`: no text opens as a formula.

use super::{Exporter, View};
use crate::model::result::ResultFile;
use crate::sys::text::csv_row as row;
use crate::units::exact;

pub struct Csv;

impl Exporter for Csv {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        let m = crate::analysis::Matrix::new(r);
        let ids = &m.ids;
        let mut out = row(&["Title".into(), r.title.clone()]);
        out.push('\n');
        let mut head = vec!["System".to_string()];
        head.extend(r.systems.iter().map(|s| s.identifier.clone()));
        out.push_str(&row(&head));
        for line in super::systems::table(r) {
            let mut cells = vec![line.key.clone()];
            cells.extend(line.values.iter().map(|v| v.clone().unwrap_or_default()));
            out.push_str(&row(&cells));
        }
        out.push('\n');
        let mut head: Vec<String> =
            ["Result", "Description", "Unit", "Proportion"].iter().map(|s| s.to_string()).collect();
        head.extend(ids.iter().cloned());
        for id in ids {
            head.extend([format!("{id} SE"), format!("{id} N"), format!("{id} Trials")]);
        }
        out.push_str(&row(&head));
        for (t, es) in r.results.iter().zip(&m.rows) {
            let title = match &t.app_version {
                Some(v) => format!("{} {v}", t.title),
                None => t.title.clone(),
            };
            let mut cells =
                vec![title, t.description.clone(), t.unit.clone(), format!("{:?}", t.proportion).to_uppercase()];
            cells.extend(es.iter().map(|e| e.map(|e| exact(e.value)).unwrap_or_default()));
            for e in es {
                match e {
                    Some(e) => cells.extend([
                        e.se.map(exact).unwrap_or_default(),
                        e.n.to_string(),
                        e.trials.iter().map(|v| exact(*v)).collect::<Vec<_>>().join(":"),
                    ]),
                    None => cells.extend([String::new(), String::new(), String::new()]),
                }
            }
            out.push_str(&row(&cells));
        }
        comparisons(&mut out, r, view);
        out
    }
}

/// Each identifier against the baseline: the ratio of means with its 95 %
/// interval (Fieller), the change, Welch's p and the verdict.
fn comparisons(out: &mut String, r: &ResultFile, view: &View) {
    let records = super::view::comparison_records(r, view);
    let Some(first) = records.first() else { return };
    out.push('\n');
    out.push_str(&row(&["Against".into(), first.baseline.clone()]));
    let head = ["Test", "Result", "Identifier", "Ratio", "Ratio 95% Low", "Ratio 95% High", "Change %", "p", "Verdict"];
    out.push_str(&row(&head.map(String::from)));
    for c in &records {
        let (lo, hi) = c.ratio_ci.map(|[l, h]| (exact(l), exact(h))).unwrap_or_default();
        out.push_str(&row(&[
            c.test.clone(),
            c.result.clone(),
            c.identifier.clone(),
            exact(c.ratio),
            lo,
            hi,
            exact(c.change_pct),
            c.p_value.map(exact).unwrap_or_default(),
            c.verdict.clone(),
        ]));
    }
}
