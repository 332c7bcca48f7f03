//! Reports: a result file → text (or an image), one file per format behind
//! [`Exporter`].

pub mod csv;
pub mod fleet;
pub mod format;
pub mod history;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod monitor;
pub(crate) mod monitor_chart;
pub mod png;
pub mod pts_xml;
pub mod summary;
pub mod svg;
pub mod svg_export;
pub mod systems;
pub mod text;
pub mod verdict;
pub mod view;

use crate::model::result::ResultFile;
pub use view::{FleetView, View};

/// The Content-Security-Policy under which engine's HTML pages are served
/// (`engine serve`): nothing from elsewhere, images from the page's own
/// server or inline data, and of inline code only the style sheets and the
/// script engine writes itself, each by its SHA-256 — text a result file
/// holds can never run, even if an escape were missed. `the server's own
/// pages link their sheet from `'self'`.
pub fn content_security_policy() -> String {
    use ct_codecs::{Base64, Encoder};
    use sha2::Digest;
    let hash = |code: &str| {
        let digest = sha2::Sha256::digest(code.as_bytes());
        format!("'sha256-{}'", Base64::encode_to_string(digest).unwrap_or_default())
    };
    let styles: Vec<String> = [html::STYLE, history::html::STYLE, fleet::STYLE].map(hash).to_vec();
    format!(
        "default-src 'none'; img-src 'self' data:; style-src 'self' {}; script-src {}; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        styles.join(" "),
        hash(html::SCRIPT)
    )
}

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

/// A report format (`--format NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    Csv,
    CsvTrials,
    Markdown,
    Html,
    PtsXml,
    Svg,
    Png,
    Junit,
    Summary,
}

impl Format {
    pub const ALL: [Format; 11] = [
        Format::Text,
        Format::Json,
        Format::Csv,
        Format::CsvTrials,
        Format::Markdown,
        Format::Html,
        Format::PtsXml,
        Format::Svg,
        Format::Png,
        Format::Junit,
        Format::Summary,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::CsvTrials => "csv-trials",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::PtsXml => "pts-xml",
            Format::Svg => "svg",
            Format::Png => "png",
            Format::Junit => "junit",
            Format::Summary => "summary",
        }
    }

    /// The format named `name`.
    #[cfg(test)]
    pub(crate) fn by_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Its exporter; `width` is the terminal's, for text.
    pub fn exporter(self, width: usize) -> Box<dyn Exporter> {
        match self {
            Format::Text => Box::new(text::Text { width }),
            Format::Json => Box::new(json::Json),
            Format::Csv => Box::new(csv::Csv),
            Format::CsvTrials => Box::new(csv::CsvTrials),
            Format::Markdown => Box::new(markdown::Markdown),
            Format::Html => Box::new(html::Html),
            Format::PtsXml => Box::new(pts_xml::PtsXml),
            Format::Svg => Box::new(svg_export::Svg),
            Format::Png => Box::new(png::Png),
            Format::Junit => Box::new(junit::Junit),
            Format::Summary => Box::new(summary::Summary),
        }
    }
}

/// What "noisy" means in reports: relative SD over this percentage.
pub(crate) fn noise_rsd() -> f64 {
    crate::analysis::noise::NOISY_RSD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_an_exporter_and_only_png_is_binary() {
        for f in Format::ALL {
            assert_eq!(f.exporter(80).binary(), f == Format::Png, "{}", f.name());
            assert_eq!(Format::by_name(f.name()), Some(f));
        }
    }
}
