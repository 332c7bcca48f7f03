//! `engine result history` as text (sparklines and change points), CSV in
//! the layout Apache Otava reads, SVG line charts, an HTML page and JSON.

pub mod csv;
pub mod html;
pub mod svg;
pub mod text;

use crate::analysis::history::{History, Series};

/// A history's output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Html,
    Svg,
    Json,
}

impl Format {
    pub const ALL: [(&'static str, Format); 5] = [
        ("text", Format::Text),
        ("csv", Format::Csv),
        ("html", Format::Html),
        ("svg", Format::Svg),
        ("json", Format::Json),
    ];
}

/// `h` in `format`; `width` is the terminal's, for text.
pub fn render(h: &History, format: Format, width: usize) -> String {
    match format {
        Format::Text => text::render(h, width),
        Format::Csv => csv::render(h),
        Format::Html => html::render(h),
        Format::Svg => svg::document(h),
        Format::Json => {
            crate::sys::text::json(&serde_json::to_string_pretty(h).expect("histories serialize")).into_owned() + "\n"
        }
    }
}

/// Series of the same result (test and result id), in order: one chart or
/// heading each, a line per identifier.
pub fn groups(h: &History) -> Vec<Vec<&Series>> {
    let mut out: indexmap::IndexMap<(&str, &str), Vec<&Series>> = indexmap::IndexMap::new();
    for s in &h.series {
        out.entry((s.test.as_str(), s.result.as_str())).or_default().push(s);
    }
    out.into_values().collect()
}

/// `Flexible IO Tester: Random Read`.
pub fn heading(s: &Series) -> String {
    if s.description.is_empty() { s.title.clone() } else { format!("{}: {}", s.title, s.description) }
}

/// A row's label: its saved result, and its identifier when identifiers are points.
pub fn row_label(h: &History, row: usize) -> String {
    let r = &h.rows[row];
    if h.per_identifier { r.result.clone() } else { format!("{} ({})", r.result, r.identifiers.join(", ")) }
}

/// `2026-11-02 16:00` from an RFC 3339 time.
pub fn short_time(t: &str) -> String {
    let t = t.replace('T', " ");
    t.get(..16).map(str::to_string).unwrap_or(t)
}

/// When a row is: its start time, or `kernel=6.18` when rows are ordered by a tag.
pub fn when(h: &History, row: usize) -> String {
    let r = &h.rows[row];
    match &h.by {
        Some(tag) => format!("{tag}={}", r.key),
        None => short_time(&r.time),
    }
}
