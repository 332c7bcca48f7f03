//! `--format svg`: every bar chart of a result file in one SVG image, stacked
//! vertically, then the geometric-mean chart when there are several
//! identifiers. `--format png` rasterizes the same document.

use super::svg::{self, Chart};
use super::{Exporter, View};
use crate::model::result::ResultFile;

pub struct Svg;

/// The charts of `r` under `view` (normalized when it asks for it).
pub(crate) fn charts(r: &ResultFile, view: &View) -> Vec<Chart> {
    let m = crate::analysis::Matrix::new(r);
    let a = super::view::analyze_matrix(r, &m, view);
    let mut charts: Vec<Chart> = r
        .results
        .iter()
        .zip(&m.rows)
        .map(|(t, row)| svg::result_chart(t, row, &m.ids, view.normalize.as_ref()))
        .collect();
    if a.ids.len() > 1
        && let Some(g) = &a.geometric
    {
        charts.push(svg::geomean_chart(g, &a.ids, a.shared));
    }
    charts
}

/// The SVG document of `r`'s charts.
pub(crate) fn document(r: &ResultFile, view: &View) -> String {
    svg::document(&r.title, &r.description, &charts(r, view))
}

impl Exporter for Svg {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        document(r, view)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::normalize::Reference;
    use crate::model::profile::Proportion;
    use crate::model::result::{ResultEntry, System, TestResult};

    /// Two identifiers, two results (one lower-is-better), the first with trials.
    pub(crate) fn sample(ids: &[&str]) -> ResultFile {
        let mut f = ResultFile::new("Disk <test>");
        f.description = "Two schedulers".into();
        f.systems = ids.iter().map(|i| System { identifier: (*i).into(), ..Default::default() }).collect();
        for (k, (desc, p)) in
            [("Test: 100 Files", Proportion::Hib), ("Test: Latency", Proportion::Lib)].iter().enumerate()
        {
            f.results.push(TestResult {
                test: format!("t{k}"),
                profile: "fs-mark".into(),
                profile_version: "1.0.0".into(),
                result: "r".into(),
                title: "FS-Mark".into(),
                app_version: Some("3.3".into()),
                description: desc.to_string(),
                options: vec![],
                unit: if k == 0 { "Files/s".into() } else { "ms".into() },
                proportion: *p,
                entries: ids
                    .iter()
                    .enumerate()
                    .map(|(j, id)| {
                        let base = 100.0 * (j + 1) as f64 + k as f64;
                        ResultEntry::from_trials(
                            id,
                            vec![base - 10.0, base, base + 10.0],
                            None,
                            vec![],
                            String::new().into(),
                        )
                        .unwrap()
                    })
                    .collect(),
                pts: None,
                repository: None,
                about: String::new(),
            });
        }
        f
    }

    fn bars(svg: &str) -> Vec<(String, String)> {
        // Each bar's identifier (the text before it) and value text (after it).
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        let mut out = Vec::new();
        for rect in doc.descendants().filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some("bar")) {
            let texts: Vec<_> = rect.parent().unwrap().children().filter(|n| n.has_tag_name("text")).collect();
            let after = texts.iter().find(|t| t.range().start > rect.range().start).unwrap();
            let before = texts.iter().rev().find(|t| t.range().start < rect.range().start).unwrap();
            out.push((before.text().unwrap_or("").to_string(), after.text().unwrap_or("").to_string()));
        }
        out
    }

    #[test]
    fn one_bar_per_identifier_per_result_with_se_then_the_geometric_mean() {
        let f = sample(&["A", "B"]);
        let svg = Svg.export(&f, &View::default());
        assert!(
            svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"")
        );
        let b = bars(&svg);
        let want = [
            ("A", "100.00   SE +/- 5.77, N = 3"),
            ("B", "200.00   SE +/- 5.77, N = 3"),
            ("A", "101.00   SE +/- 5.77, N = 3"),
            ("B", "201.00   SE +/- 5.77, N = 3"),
        ];
        assert_eq!(b.len(), 6, "{b:?}");
        for (got, want) in b.iter().zip(want) {
            assert_eq!((got.0.as_str(), got.1.as_str()), want);
        }
        // Geometric mean: A sqrt(100 / 101) = 0.9950, B sqrt(200 / 201) = 0.9975.
        assert_eq!(b[4], ("A".into(), "0.9950".into()));
        assert_eq!(b[5], ("B".into(), "0.9975".into()));
        assert!(svg.contains(">Disk &lt;test&gt;</text>"));
        assert!(svg.contains(">ms, Fewer Is Better</text>") && svg.contains(">FS-Mark 3.3</text>"));
        assert_eq!(svg, Svg.export(&f, &View::default()), "same input, same bytes");
    }

    #[test]
    fn one_identifier_has_no_geometric_mean_and_normalizing_shows_relative_values() {
        let svg = Svg.export(&sample(&["A"]), &View::default());
        assert_eq!(bars(&svg).len(), 2);
        assert!(!svg.contains("geomean-chart"));
        let view = View { normalize: Some(Reference::Baseline("B".into())), ..View::default() };
        let svg = Svg.export(&sample(&["A", "B"]), &view);
        let b = bars(&svg);
        assert_eq!(b[0], ("A".into(), "0.5000".into()));
        assert_eq!(b[1], ("B".into(), "1.00".into()));
        // Lower is better: A (101 ms) is better than B (201 ms).
        assert_eq!(b[2], ("A".into(), "1.99".into()));
        assert!(svg.contains(">Relative to B (Files/s), More Is Better</text>"), "{svg}");
    }
}
