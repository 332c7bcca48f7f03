//! Reports: a result file → bytes, one file per format behind [`Exporter`].

pub mod format;
pub mod json;
pub mod systems;
pub mod text;

use crate::result::ResultFile;

/// Renders a result file in one format.
pub trait Exporter {
    fn export(&self, result: &ResultFile) -> String;
}

/// The exporter for `--format NAME`.
pub fn by_name(name: &str, width: usize) -> Option<Box<dyn Exporter>> {
    match name {
        "text" => Some(Box::new(text::Text { width })),
        "json" => Some(Box::new(json::Json)),
        _ => None,
    }
}

/// Names accepted by `--format`.
pub const FORMATS: &[&str] = &["text", "json"];
