//! Bar charts drawn by the engine as SVG: the HTML report inlines them (so it
//! reads without scripts, in mail clients and in print), and `--format
//! svg|png` stacks them into one image. The layout is the one the HTML
//! report's script redraws for its toggles; same input, same bytes.

use super::format::bar_text;
use crate::analysis::normalize::{self, Reference};
use crate::model::facts::Identifier;
use crate::model::profile::Proportion;
use crate::model::result::{ResultEntry, TestResult};
use crate::units::number;
use std::borrow::Cow;
use std::fmt::Write;

/// Width of every chart, in pixels.
pub(crate) const WIDTH: u32 = 900;
const ROW_H: f64 = 24.0;
/// Identifiers, right-aligned left of the bars.
const LABEL_W: f64 = 240.0;
/// Room right of the longest bar for its value and SE.
const TEXT_W: f64 = 230.0;
const BAR_W: f64 = WIDTH as f64 - LABEL_W - TEXT_W;
/// Identifiers longer than this are cut with "…" (in full in a tooltip):
/// about what fits in `LABEL_W` at 12 px.
const LABEL_CHARS: usize = 34;
/// The same for header lines, at 15 px (title) and 12 px (the others).
const TITLE_CHARS: usize = 90;
const LINE_CHARS: usize = 125;

/// Bar colors by the identifier's position in the result file.
pub(crate) const PALETTE: [&str; 8] =
    ["#3465a4", "#f57900", "#4e9a06", "#cc0000", "#75507b", "#c4a000", "#06989a", "#8f5902"];

/// One bar: an identifier and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    /// `None`: drawn as "no value".
    pub value: Option<f64>,
    /// Drawn as an error bar of ± SE around the value.
    pub se: Option<f64>,
    /// Printed after the bar: the value and `SE +/- x, N = n`.
    pub text: String,
    pub color: &'static str,
}

/// One horizontal bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Second class of the `<svg>` (after `chart`), for styles and tests.
    pub class: &'static str,
    pub title: String,
    pub description: String,
    /// The unit line: `Files/s, More Is Better`.
    pub unit: String,
    pub bars: Vec<Bar>,
}

use crate::sys::text::XmlLine as Esc;
pub use crate::sys::text::xml_line as esc;

/// `s`, cut to `max` characters with "…" when longer.
pub(super) fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.chars().count() > max { s.chars().take(max - 1).chain(['…']).collect() } else { Cow::Borrowed(s) }
}

/// `s`, cut to `max` characters in the middle when longer: a test's title
/// and its last options (what differs between tests: the block size) stay.
pub(super) fn cut_middle(s: &str, max: usize) -> Cow<'_, str> {
    let n = s.chars().count();
    if n <= max || max < 3 {
        return Cow::Borrowed(s);
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    s.chars().take(head).chain(['…']).chain(s.chars().skip(n - tail)).collect()
}

/// `s` in lines of at most `max` characters, broken at spaces (a word
/// longer than a line is cut), at most `lines` of them (the last cut with
/// "…" when more would follow): chart subtitles wrap instead of losing their
/// end ("… File Size: 32 MiB - Ru…").
pub(super) fn wrap(s: &str, max: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split(' ').filter(|w| !w.is_empty()) {
        let (n, w) = (line.chars().count(), word.chars().count());
        if n > 0 && n + 1 + w > max {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    let more = out.len() > lines;
    out.truncate(lines);
    for l in &mut out {
        *l = cut(l, max).into_owned();
    }
    if more && let Some(last) = out.last_mut() {
        let kept: String = last.chars().take(max - 1).collect();
        *last = format!("{kept}…");
    }
    out
}

/// Subtitle lines a chart header shows at most.
const DESCRIPTION_LINES: usize = 4;

/// The description of `c` as its header draws it.
fn description_lines(c: &Chart) -> Vec<String> {
    if c.description.is_empty() { Vec::new() } else { wrap(&c.description, LINE_CHARS, DESCRIPTION_LINES) }
}

/// A coordinate: at most two decimals, no trailing zeros (the shortest form
/// of the double nearest to a number of hundredths is those digits).
struct Px(f64);

impl std::fmt::Display for Px {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = (self.0 * 100.0).round() / 100.0;
        if r == 0.0 { f.write_str("0") } else { write!(f, "{r}") }
    }
}

#[cfg(test)]
fn px(x: f64) -> String {
    Px(x).to_string()
}

/// The title of a result as reports show it: with the program's version.
pub(crate) fn result_title(t: &TestResult) -> String {
    match &t.app_version {
        Some(v) if !v.is_empty() => format!("{} {v}", t.title),
        _ => t.title.clone(),
    }
}

/// The unit line of a result as measured.
pub(crate) fn unit_line(unit: &str, p: Proportion) -> String {
    match p {
        Proportion::Hib => format!("{unit}, More Is Better"),
        Proportion::Lib => format!("{unit}, Fewer Is Better"),
    }
}

/// The color of an identifier: by its position in the result file.
fn color(ids: &[Identifier], id: &str) -> &'static str {
    PALETTE[ids.iter().position(|x| x == id).unwrap_or(0) % PALETTE.len()]
}

/// The chart of one result: a bar per identifier that has a value (`row` is
/// aligned with `ids`), or its values relative to `reference` (above 1 is
/// better, as `--normalize` shows them).
pub(crate) fn result_chart(
    t: &TestResult,
    row: &[Option<&ResultEntry>],
    ids: &[Identifier],
    reference: Option<&Reference>,
) -> Chart {
    // (position, identifier, entry): the position picks the color.
    let present = ids.iter().zip(row).enumerate().filter_map(|(i, (id, e))| e.map(|e| (i, id, e)));
    let (unit, bars) = match reference {
        None => (
            unit_line(&t.unit, t.proportion),
            present
                .map(|(i, id, e)| Bar {
                    label: id.clone().into(),
                    value: Some(e.value),
                    se: e.se,
                    text: bar_text(e.value, e.se, super::format::count(e)),
                    color: PALETTE[i % PALETTE.len()],
                })
                .collect(),
        ),
        Some(reference) => {
            let what = match reference {
                Reference::Lowest => "the lowest",
                Reference::Baseline(b) => b.as_str(),
            };
            // Aligned with `ids`, as `row` is.
            let rel = normalize::normalize(t, row, ids, reference);
            let bars = present
                .map(|(i, id, _)| {
                    let v = rel.get(i).and_then(|(_, v)| *v);
                    Bar {
                        label: id.clone().into(),
                        value: v,
                        se: None,
                        text: v.map(number).unwrap_or_default(),
                        color: PALETTE[i % PALETTE.len()],
                    }
                })
                .collect();
            (format!("Relative to {what} ({}), More Is Better", t.unit), bars)
        }
    };
    Chart { class: "result-chart", title: result_title(t), description: t.description.clone(), unit, bars }
}

/// The chart of the geometric means over the `shared` results every
/// identifier has.
pub(crate) fn geomean_chart(means: &[(Identifier, f64)], ids: &[Identifier], shared: usize) -> Chart {
    Chart {
        class: "geomean-chart",
        title: "Geometric Mean".into(),
        description: format!("Of the {shared} results every identifier has; lower-is-better results inverted"),
        unit: "Geometric mean, More Is Better".into(),
        bars: means
            .iter()
            .map(|(id, v)| Bar {
                label: id.clone().into(),
                value: Some(*v),
                se: None,
                text: number(*v),
                color: color(ids, id),
            })
            .collect(),
    }
}

/// Where the bars start below the top of a chart with its header.
fn header_height(c: &Chart) -> f64 {
    52.0 + 18.0 * description_lines(c).len() as f64
}

/// Height in pixels of [`chart`]'s drawing of `c`.
pub(crate) fn chart_height(c: &Chart) -> f64 {
    header_height(c) + c.bars.len() as f64 * ROW_H + 4.0
}

/// The chart with its title, description and unit line, as one `<svg>`
/// element of [`WIDTH`] × [`chart_height`].
#[cfg(test)]
pub(crate) fn chart(c: &Chart) -> String {
    draw(c, true)
}

/// Only the bars, for a page that prints the title, description and unit
/// line itself (the HTML report).
pub(crate) fn bars(c: &Chart) -> String {
    draw(c, false)
}

fn draw(c: &Chart, header: bool) -> String {
    let mut o = String::with_capacity(512 + c.bars.len() * 320);
    write_chart(&mut o, c, header);
    o
}

/// The title, the description (wrapped) and the unit line.
fn write_header(o: &mut String, c: &Chart) {
    write!(
        o,
        "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>",
        Esc(&cut(&c.title, TITLE_CHARS))
    )
    .unwrap();
    let mut y = 20;
    let mut lines = description_lines(c);
    lines.push(cut(&c.unit, LINE_CHARS).into_owned());
    for line in lines.iter().filter(|l| !l.is_empty()) {
        y += 18;
        write!(o, "<text x=\"10\" y=\"{y}\" fill=\"#555\">{}</text>", Esc(line)).unwrap();
    }
}

/// Appends the chart's `<svg>` to `o`. Text is 12 px unless said otherwise.
pub(crate) fn write_chart(o: &mut String, c: &Chart, header: bool) {
    let top = if header { header_height(c) } else { 4.0 };
    let h = Px(top + c.bars.len() as f64 * ROW_H + 4.0);
    write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart {}\" width=\"{WIDTH}\" height=\"{h}\" \
         viewBox=\"0 0 {WIDTH} {h}\" role=\"img\" font-family=\"sans-serif\" font-size=\"12\">",
        c.class
    )
    .unwrap();
    write!(o, "<title>{}</title>", Esc(if header { &c.title } else { &c.unit })).unwrap();
    if header {
        write_header(o, c);
    }
    // Scaled to the longest bar with its error bar; a result without a
    // positive value still shows its labels, with 1 px bars.
    let max = c.bars.iter().filter_map(|b| b.value.map(|v| v + b.se.unwrap_or(0.0))).fold(0.0, f64::max);
    let scale = |x: f64| if max > 0.0 { x / max * BAR_W } else { 0.0 };
    for (i, b) in c.bars.iter().enumerate() {
        let y = top + i as f64 * ROW_H;
        let label = cut(&b.label, LABEL_CHARS);
        write!(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">", Px(LABEL_W - 6.0), Px(y + 15.0)).unwrap();
        if label != b.label.as_str() {
            write!(o, "<title>{}</title>", Esc(&b.label)).unwrap();
        }
        write!(o, "{}</text>", Esc(&label)).unwrap();
        let Some(v) = b.value.filter(|v| v.is_finite()) else {
            write!(o, "<text x=\"{}\" y=\"{}\" fill=\"#777\">no value</text>", Px(LABEL_W + 4.0), Px(y + 15.0))
                .unwrap();
            continue;
        };
        let w = scale(v).max(1.0);
        write!(
            o,
            "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
            Px(LABEL_W),
            Px(y + 3.0),
            Px(w),
            Px(ROW_H - 8.0),
            b.color
        )
        .unwrap();
        let mut end = w;
        if let Some(se) = b.se.filter(|s| *s > 0.0 && s.is_finite() && max > 0.0) {
            // ± SE: a line across the bar's end with a tick at each side.
            let (x1, x2, ym) =
                (Px(LABEL_W + scale(v - se).max(0.0)), Px(LABEL_W + scale(v + se)), y + ROW_H / 2.0 - 1.0);
            let (m, a, b) = (Px(ym), Px(ym - 4.0), Px(ym + 4.0));
            write!(
                o,
                "<path class=\"se\" d=\"M{x1} {m}H{x2}M{x1} {a}V{b}M{x2} {a}V{b}\" stroke=\"#000\" stroke-width=\"1.2\"/>"
            )
            .unwrap();
            end = end.max(scale(v + se));
        }
        // Spaces kept: three between the value and the SE, as in the text report.
        write!(
            o,
            "<text x=\"{}\" y=\"{}\" xml:space=\"preserve\">{}</text>",
            Px(LABEL_W + end + 6.0),
            Px(y + 15.0),
            Esc(&b.text)
        )
        .unwrap();
    }
    o.push_str("</svg>");
}

/// Charts stacked into one SVG document on a white background, under a
/// heading: what `--format svg` writes and `--format png` rasterizes.
pub(crate) fn document(title: &str, description: &str, charts: &[Chart]) -> String {
    let head = if description.is_empty() { 40.0 } else { 60.0 };
    let height = head + charts.iter().map(|c| chart_height(c) + 16.0).sum::<f64>();
    let h = Px(height);
    let mut o = String::with_capacity(1024 + charts.iter().map(|c| 512 + c.bars.len() * 320).sum::<usize>());
    o.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{h}\" viewBox=\"0 0 {WIDTH} {h}\" \
         font-family=\"sans-serif\">\n<rect class=\"background\" width=\"{WIDTH}\" height=\"{h}\" fill=\"#fff\"/>\n"
    )
    .unwrap();
    writeln!(o, "<text x=\"10\" y=\"28\" font-size=\"19\" font-weight=\"bold\">{}</text>", Esc(&cut(title, 75)))
        .unwrap();
    if !description.is_empty() {
        writeln!(
            o,
            "<text x=\"10\" y=\"48\" font-size=\"12\" fill=\"#555\">{}</text>",
            Esc(&cut(description, LINE_CHARS))
        )
        .unwrap();
    }
    let mut y = head;
    for c in charts {
        write!(o, "<g transform=\"translate(0 {})\">", Px(y)).unwrap();
        write_chart(&mut o, c, true);
        o.push_str("</g>\n");
        y += chart_height(c) + 16.0;
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, value: Option<f64>, se: Option<f64>, n: usize) -> Bar {
        Bar {
            label: label.into(),
            value,
            se,
            text: value.map(|v| bar_text(v, se, n)).unwrap_or_default(),
            color: PALETTE[0],
        }
    }

    fn sample() -> Chart {
        Chart {
            class: "result-chart",
            title: "FS-Mark 3.3".into(),
            description: "Test: 100 Files, 1MB Size".into(),
            unit: "Files/s, More Is Better".into(),
            bars: vec![bar("loop0: NONE", Some(505.8), Some(93.4412), 3), bar("loop0: BFQ", Some(575.9), None, 1)],
        }
    }

    #[test]
    fn a_chart_is_xml_with_a_bar_per_identifier_and_its_se() {
        let svg = chart(&sample());
        let doc = roxmltree::Document::parse(&svg).expect("well-formed");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(root.attribute("width"), Some("900"));
        assert_eq!(root.attribute("height"), Some(px(chart_height(&sample())).as_str()));
        let rects: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("rect")).collect();
        assert_eq!(rects.len(), 2);
        // Widths scale to the largest value plus its SE (505.8 + 93.4412) on 430 px.
        assert_eq!(rects[0].attribute("width"), Some("362.95"));
        assert_eq!(rects[1].attribute("width"), Some("413.25"));
        let texts: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).collect();
        assert_eq!(
            texts,
            [
                "FS-Mark 3.3",
                "Test: 100 Files, 1MB Size",
                "Files/s, More Is Better",
                "loop0: NONE",
                "505.80   SE +/- 93.44, N = 3",
                "loop0: BFQ",
                "575.90   N = 1",
            ]
        );
        let se: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("path")).collect();
        assert_eq!(se.len(), 1, "one error bar");
        // 505.8 ± 93.4412 on 599.2412 for 430 px, 12 px below the row's top (70).
        assert_eq!(se[0].attribute("d"), Some("M535.9 81H670M535.9 77V85M670 77V85"));
        assert_eq!(svg, chart(&sample()), "deterministic");
    }

    #[test]
    fn the_bars_alone_have_no_header() {
        let svg = bars(&sample());
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let texts: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).collect();
        assert_eq!(texts[0], "loop0: NONE");
        assert_eq!(doc.root_element().attribute("height"), Some("56"));
        assert_eq!(
            doc.descendants().find(|n| n.has_tag_name("title")).and_then(|n| n.text()),
            Some("Files/s, More Is Better")
        );
    }

    #[test]
    fn every_text_is_escaped_and_long_labels_cut() {
        let mut c = sample();
        c.title = "a < b & \"c\"\u{1}".into();
        c.bars[0].label = "<!--<script>x</script>".into();
        c.bars[1].label = "x".repeat(50);
        let svg = chart(&c);
        assert!(svg.contains("&lt;!--&lt;script&gt;x&lt;/script&gt;"), "{svg}");
        assert!(!svg.contains("<!--") && !svg.contains("<script"));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.children().filter(|c| c.is_text()).filter_map(|c| c.text()).collect())
            .collect();
        assert_eq!(texts[0], "a < b & \"c\"\\x01");
        assert_eq!(texts[3], "<!--<script>x</script>");
        assert_eq!(texts[5], format!("{}…", "x".repeat(33)));
        // The cut label keeps its full text as a tooltip.
        assert!(doc.descendants().any(|n| n.has_tag_name("title") && n.text() == Some(&"x".repeat(50))));
    }

    #[test]
    fn long_subtitles_wrap_and_the_chart_grows_for_them() {
        let mut c = sample();
        let short = chart_height(&c);
        c.description = (1..=10).map(|i| format!("Option {i}: Value {i}")).collect::<Vec<_>>().join(" - ");
        assert!(c.description.chars().count() > LINE_CHARS);
        let svg = chart(&c);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let grey: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("fill") == Some("#555"))
            .map(|n| n.text().unwrap_or_default().to_string())
            .collect();
        assert_eq!(grey.len(), 3, "two description lines and the unit: {grey:?}");
        assert_eq!(format!("{} {}", grey[0], grey[1]), c.description, "nothing lost");
        assert!(grey.iter().all(|l| l.chars().count() <= LINE_CHARS && !l.contains('…')));
        assert_eq!(chart_height(&c), short + 18.0);
        assert_eq!(doc.root_element().attribute("height"), Some(px(chart_height(&c)).as_str()));
        // Beyond four lines the last is cut, and a word longer than a line too.
        assert_eq!(wrap(&"a ".repeat(400), 10, 4).len(), 4);
        assert!(wrap(&"a ".repeat(400), 10, 4)[3].ends_with('…'));
        assert_eq!(wrap(&"x".repeat(30), 10, 4), vec![format!("{}…", "x".repeat(9))]);
        assert_eq!(wrap("", 10, 4), vec![String::new()]);
    }

    #[test]
    fn missing_and_non_positive_values() {
        let mut c = sample();
        c.bars = vec![bar("a", None, None, 0), bar("b", Some(0.0), None, 1), bar("c", Some(-2.0), Some(0.5), 2)];
        let svg = chart(&c);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert!(svg.contains(">no value</text>"));
        let widths: Vec<&str> =
            doc.descendants().filter(|n| n.has_tag_name("rect")).filter_map(|n| n.attribute("width")).collect();
        assert_eq!(widths, ["1", "1"], "no scale without a positive value: 1 px bars");
        assert!(svg.contains(">-2.00   SE +/- 0.5000, N = 2</text>"), "{svg}");
    }

    #[test]
    fn a_document_stacks_the_charts() {
        let g = geomean_chart(&[("A".into(), 13.5721), ("B".into(), 2.0)], &["A".into(), "B".into()], 3);
        let svg = document("Title & co", "", &[sample(), g.clone()]);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let h = 40.0 + chart_height(&sample()) + 16.0 + chart_height(&g) + 16.0;
        assert_eq!(doc.root_element().attribute("height"), Some(px(h).as_str()));
        assert_eq!(
            doc.descendants().filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some("bar")).count(),
            4
        );
        assert!(svg.contains(">13.57</text>") && svg.contains(">2.00</text>"));
        assert_eq!(g.bars[1].color, PALETTE[1]);
    }

    #[test]
    fn coordinates() {
        assert_eq!(px(1.0), "1");
        assert_eq!(px(1.5), "1.5");
        assert_eq!(px(1.234), "1.23");
        assert_eq!(px(-0.001), "0");
        assert_eq!(px(100.0), "100");
    }
}
