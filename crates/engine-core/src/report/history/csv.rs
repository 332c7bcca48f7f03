//! History as CSV in the layout Apache Otava reads: a `time` column, the
//! saved result and identifiers and every tag as attribute columns, then
//! one column per metric (a result, per identifier when identifiers are
//! lines), empty where a run has no value. `engine result history
//! --format csv` prints, on standard error, the Otava test definition that
//! reads it.

use crate::analysis::history::{History, Series};
use crate::sys::text::csv_row;
use crate::units::exact;
use indexmap::IndexSet;

/// Column names of the metrics, unique, made of `[a-z0-9._-]` only so any
/// YAML or command line takes them as they are.
pub(crate) fn metric_names(h: &History) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    h.series
        .iter()
        .map(|s| {
            let base = metric_name(s);
            let mut name = base.clone();
            let mut k = 2;
            while !seen.insert(name.clone()) {
                name = format!("{base}-{k}");
                k += 1;
            }
            name
        })
        .collect()
}

fn metric_name(s: &Series) -> String {
    let mut parts = vec![crate::store::slug(&s.profile), crate::store::slug(&s.result)];
    if !s.description.is_empty() {
        parts.push(crate::store::slug(&s.description));
    }
    if let Some(l) = &s.line {
        parts.push(crate::store::slug(l));
    }
    parts.retain(|p| !p.is_empty());
    parts.join(".")
}

/// Tag keys over all rows, in the order first seen.
pub(crate) fn tag_keys(h: &History) -> Vec<String> {
    let keys: IndexSet<&String> = h.rows.iter().flat_map(|r| r.tags.keys()).collect();
    keys.into_iter().cloned().collect()
}

pub(crate) fn render(h: &History) -> String {
    let names = metric_names(h);
    let tags = tag_keys(h);
    let mut header = vec!["time".to_string(), "result".to_string(), "identifiers".to_string()];
    header.extend(tags.iter().cloned());
    header.extend(names.iter().cloned());
    let mut cells: Vec<Vec<String>> = h
        .rows
        .iter()
        .map(|r| {
            let ids: Vec<&str> = r.identifiers.iter().map(|i| i.as_str()).collect();
            let mut row = vec![r.time.to_string(), r.result.clone(), ids.join("; ")];
            row.extend(tags.iter().map(|t| r.tags.get(t).cloned().unwrap_or_default()));
            row.extend(std::iter::repeat_n(String::new(), names.len()));
            row
        })
        .collect();
    let first = 3 + tags.len();
    for (k, s) in h.series.iter().enumerate() {
        for &(row, v) in &s.points {
            cells[row][first + k] = exact(v);
        }
    }
    let mut o = csv_row(&header);
    for row in cells {
        o.push_str(&csv_row(&row));
    }
    o
}

/// The Otava test definition (YAML) that reads `csv_path` as test `name`.
pub fn otava_config(h: &History, name: &str, csv_path: &str) -> String {
    let mut o = format!("tests:\n  {name}:\n    type: csv\n    file: {csv_path:?}\n    time_column: time\n");
    o.push_str("    attributes: [result, identifiers");
    for t in tag_keys(h) {
        o.push_str(&format!(", {t:?}"));
    }
    o.push_str("]\n    metrics:\n");
    for (s, n) in h.series.iter().zip(metric_names(h)) {
        let direction = if s.proportion == crate::model::profile::Proportion::Hib { 1 } else { -1 };
        o.push_str(&format!("      {n}:\n        column: {n}\n        direction: {direction}\n"));
    }
    o
}
