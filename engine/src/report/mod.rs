//! Reports: a result file → text (or an image), one file per format behind
//! [`Exporter`].

pub mod csv;
pub mod format;
pub mod html;
pub mod json;
pub mod markdown;
pub mod png;
pub mod pts_xml;
pub mod svg;
pub mod svg_export;
pub mod systems;
pub mod text;
pub mod view;

use crate::result::ResultFile;
pub use view::View;

/// Renders a result file in one format.
pub trait Exporter {
    fn export(&self, result: &ResultFile, view: &View) -> String;

    /// The bytes of the report's file: its text, unless the format is binary.
    fn export_bytes(&self, result: &ResultFile, view: &View) -> Result<Vec<u8>, ExportError> {
        Ok(self.export(result, view).into_bytes())
    }

    /// Whether the bytes are not text, and so not for a terminal.
    fn binary(&self) -> bool {
        false
    }
}

/// Why a report could not be drawn (only images can fail).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no fonts found to draw the charts' text (Debian: apt-get install fonts-dejavu-core)")]
    NoFonts,
    #[error("the charts would be a {width} × {height} pixel image, too large to draw; use --format svg")]
    TooLarge { width: u32, height: u32 },
    #[error("cannot draw the charts: {0}")]
    Draw(String),
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
        "svg" => Some(Box::new(svg_export::Svg)),
        "png" => Some(Box::new(png::Png)),
        _ => None,
    }
}

/// Names accepted by `--format`.
pub const FORMATS: &[&str] = &["text", "json", "csv", "markdown", "html", "pts-xml", "svg", "png"];

/// The formats that are text: what may be printed after a run.
pub const TEXT_FORMATS: &[&str] = &["text", "json", "csv", "markdown", "html", "pts-xml", "svg"];

/// What "noisy" means in reports: relative SD over this percentage.
pub fn noise_rsd() -> f64 {
    crate::analysis::noise::NOISY_RSD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_an_exporter_and_only_png_is_binary() {
        for f in FORMATS {
            let e = by_name(f, 80).unwrap_or_else(|| panic!("{f}"));
            assert_eq!(e.binary(), *f == "png", "{f}");
            assert_eq!(TEXT_FORMATS.contains(f), !e.binary(), "{f}");
        }
    }
}
