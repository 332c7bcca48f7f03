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

/// CSV (one time axis, as Otava reads it) and SVG (one document) hold one
/// history; several groups of saved results were found.
#[derive(Debug, thiserror::Error)]
#[error("the saved results make {} separate histories; --format {format} holds one", groups.len())]
pub struct SeveralHistories {
    pub format: &'static str,
    /// Each group, described.
    pub groups: Vec<String>,
}

/// `hs` in `format`; `width` is the terminal's, for text. Text, HTML and
/// JSON (`{"histories": […]}`) hold every history in turn.
pub fn render(hs: &[History], format: Format, width: usize) -> Result<String, SeveralHistories> {
    let one = |name| match hs {
        [h] => Ok(h),
        _ => Err(SeveralHistories {
            format: name,
            groups: hs.iter().filter_map(|h| h.group.as_ref().map(|g| g.describe())).collect(),
        }),
    };
    Ok(match format {
        Format::Text => hs.iter().map(|h| text::render(h, width)).collect::<Vec<_>>().join("\n"),
        Format::Csv => csv::render(one("csv")?),
        Format::Html => html::render(hs),
        Format::Svg => svg::document(one("svg")?),
        Format::Json => {
            let doc = serde_json::json!({ "histories": hs });
            crate::sys::text::json(&serde_json::to_string_pretty(&doc).expect("histories serialize")).into_owned()
                + "\n"
        }
    })
}

/// Series of the same result (test and result id), in order: one chart or
/// heading each, a line per identifier.
pub(crate) fn groups(h: &History) -> Vec<Vec<&Series>> {
    let mut out: indexmap::IndexMap<(&str, &str), Vec<&Series>> = indexmap::IndexMap::new();
    for s in &h.series {
        out.entry((s.test.as_str(), s.result.as_str())).or_default().push(s);
    }
    out.into_values().collect()
}

/// `Flexible IO Tester: Random Read`.
pub(crate) fn heading(s: &Series) -> String {
    if s.description.is_empty() { s.title.clone() } else { format!("{}: {}", s.title, s.description) }
}

/// A row's label: its saved result, and its identifier when identifiers are points.
pub(crate) fn row_label(h: &History, row: usize) -> String {
    let r = &h.rows[row];
    if h.per_identifier { r.result.clone() } else { format!("{} ({})", r.result, r.identifiers.join(", ")) }
}

/// `2026-11-02 16:00` from an RFC 3339 time.
pub(crate) fn short_time(t: &str) -> String {
    let t = t.replace('T', " ");
    t.get(..16).map(str::to_string).unwrap_or(t)
}

/// When a row is: its start time, or `kernel=6.18` when rows are ordered by a tag.
pub(crate) fn when(h: &History, row: usize) -> String {
    let r = &h.rows[row];
    match &h.by {
        Some(tag) => format!("{tag}={}", r.key),
        None => short_time(&r.time),
    }
}
