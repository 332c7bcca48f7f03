//! Reports: a result file → text, one file per format behind [`Exporter`].

pub mod csv;
pub mod format;
pub mod html;
pub mod json;
pub mod markdown;
pub mod pts_xml;
pub mod systems;
pub mod text;
pub mod view;

use crate::result::ResultFile;
pub use view::View;

/// Renders a result file in one format.
pub trait Exporter {
    fn export(&self, result: &ResultFile, view: &View) -> String;
}

/// The exporter for `--format NAME`.
pub fn by_name(name: &str, width: usize) -> Option<Box<dyn Exporter>> {
    match name {
        "text" => Some(Box::new(text::Text { width })),
        "json" => Some(Box::new(json::Json)),
        "csv" => Some(Box::new(csv::Csv)),
        "markdown" => Some(Box::new(markdown::Markdown)),
        "html" => Some(Box::new(html::Html)),
        "pts-xml" => Some(Box::new(pts_xml::PtsXml)),
        _ => None,
    }
}

/// Names accepted by `--format`.
pub const FORMATS: &[&str] = &["text", "json", "csv", "markdown", "html", "pts-xml"];

/// What "noisy" means in reports: relative SD over this percentage.
pub fn noise_rsd() -> f64 {
    crate::analysis::noise::NOISY_RSD
}
