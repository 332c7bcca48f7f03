//! `--format png`: the SVG image of `--format svg` rasterized by resvg with
//! the system's fonts — no browser needed.

use super::{ExportError, Exporter, View};
use crate::model::result::ResultFile;
use resvg::{tiny_skia, usvg};

pub struct Png;

/// Largest image drawn, in pixels (4 bytes each while drawing): a result
/// with hundreds of tests is better read as SVG.
const MAX_PIXELS: u64 = 60_000_000;

/// Families tried for the charts' `sans-serif`, before any font there is.
const SANS: &[&str] = &["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial", "Helvetica", "FreeSans"];

impl Exporter for Png {
    /// The SVG the image is drawn from: a PNG is not text (see `export_bytes`).
    fn export(&self, r: &ResultFile, view: &View) -> String {
        super::svg_export::document(r, view)
    }

    fn export_bytes(&self, r: &ResultFile, view: &View) -> Result<Vec<u8>, ExportError> {
        render(&self.export(r, view))
    }

    fn binary(&self) -> bool {
        true
    }
}

/// The font database: the system's fonts, with `sans-serif` (and the default
/// family) mapped to one that exists — fontdb's defaults (Arial, Times New
/// Roman) are often missing on Linux, and text without a font is not drawn.
fn fonts() -> Result<(usvg::fontdb::Database, String), ExportError> {
    let mut db = usvg::fontdb::Database::new();
    db.load_system_fonts();
    let has = |name: &str| db.faces().any(|f| f.families.iter().any(|(n, _)| n == name));
    let family = SANS
        .iter()
        .find(|f| has(f))
        .map(|f| f.to_string())
        .or_else(|| db.faces().find_map(|f| f.families.first().map(|(n, _)| n.clone())))
        .ok_or(ExportError::NoFonts)?;
    db.set_sans_serif_family(family.clone());
    db.set_serif_family(family.clone());
    Ok((db, family))
}

/// PNG bytes of an SVG document, at its own size, on white.
pub(crate) fn render(svg: &str) -> Result<Vec<u8>, ExportError> {
    let (db, family) = fonts()?;
    let opt = usvg::Options { font_family: family, fontdb: std::sync::Arc::new(db), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| ExportError::Draw(e.to_string()))?;
    let size = tree.size().to_int_size();
    let (width, height) = (size.width(), size.height());
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ExportError::TooLarge { width, height });
    }
    let mut pixmap = tiny_skia::Pixmap::new(width, height).ok_or(ExportError::TooLarge { width, height })?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| ExportError::Draw(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg_export::tests::sample;

    #[test]
    fn a_png_of_the_charts_at_the_charts_width() {
        let f = sample(&["A", "B"]);
        let png = Png.export_bytes(&f, &View::default()).expect("fonts are installed (scripts/install-deps.sh)");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
        // IHDR: width and height, big-endian, after the signature and chunk header.
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert_eq!(width, crate::report::svg::WIDTH);
        let img = tiny_skia::Pixmap::decode_png(&png).unwrap();
        let colored = |c: tiny_skia::PremultipliedColorU8| (c.red(), c.green(), c.blue()) != (255, 255, 255);
        // The first bar (A, palette blue #3465a4) is drawn ...
        let blue = img.pixels().iter().filter(|c| (c.red(), c.green(), c.blue()) == (0x34, 0x65, 0xa4)).count();
        assert!(blue > 1000, "{blue} blue pixels");
        // ... and so is text: the identifiers end left of the bars of the first
        // chart (below the document's 60 px and the chart's 70 px headings).
        let labels = (130..178).flat_map(|y| (200..236).map(move |x| (x, y)));
        assert!(labels.filter_map(|(x, y)| img.pixel(x, y)).any(colored), "identifier labels drawn");
        assert_eq!(png, Png.export_bytes(&f, &View::default()).unwrap(), "same input, same bytes");
    }

    #[test]
    fn too_large_an_image_is_refused() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"100000\"/>";
        assert!(matches!(render(svg), Err(ExportError::TooLarge { width: 900, height: 100000 })));
    }
}
