//! Markdown: the system table (one column per identifier), the results table
//! with mean ± SE (N), the overall means, and the verdicts against the
//! baseline. Every text goes through `sys::text::markdown`: no markup or
//! table syntax of a profile's or a result's reaches the renderer.

use super::view::Analysis;
use super::{Exporter, View};
use crate::analysis::Matrix;
use crate::model::result::ResultFile;
use crate::sys::text::markdown as cell;
use crate::units::{decimals_for, fixed};
use std::fmt::Write;

pub struct Markdown;

impl Exporter for Markdown {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        let m = crate::analysis::Matrix::new(r);
        let a = super::view::analyze_matrix(r, &m, view);
        let mut out = format!("# {}\n\n", cell(&r.title));
        if !r.description.is_empty() {
            writeln!(out, "{}\n", cell(&r.description)).unwrap();
        }
        if !r.systems.is_empty() {
            systems(&mut out, r);
        }
        results(&mut out, r, &m);
        if a.ids.len() > 1 {
            comparison(&mut out, r, &a);
        }
        out
    }
}

/// The system table: one column per identifier.
fn systems(out: &mut String, r: &ResultFile) {
    writeln!(out, "## Systems\n").unwrap();
    writeln!(out, "| | {} |", r.systems.iter().map(|s| cell(&s.identifier)).collect::<Vec<_>>().join(" | ")).unwrap();
    writeln!(out, "|---|{}", "---|".repeat(r.systems.len())).unwrap();
    for line in super::systems::table(r) {
        let vals: Vec<String> = line.values.iter().map(|v| cell(v.as_deref().unwrap_or(""))).collect();
        writeln!(out, "| {} | {} |", cell(&line.key), vals.join(" | ")).unwrap();
    }
    out.push('\n');
}

/// The results table: per result, each identifier's mean ± SE (N).
fn results(out: &mut String, r: &ResultFile, m: &Matrix) {
    writeln!(out, "## Results\n").unwrap();
    writeln!(out, "| Result | Unit | {} |", m.ids.iter().map(|i| cell(i)).collect::<Vec<_>>().join(" | ")).unwrap();
    writeln!(out, "|---|---|{}", "---:|".repeat(m.ids.len())).unwrap();
    for (t, row) in r.results.iter().zip(&m.rows) {
        let title = match &t.app_version {
            Some(v) => format!("{} {v}", t.title),
            None => t.title.clone(),
        };
        let dec = decimals_for(t.entries.iter().map(|e| e.value.abs()).fold(0.0, f64::max));
        let vals: Vec<String> = row
            .iter()
            .map(|e| match e {
                Some(e) => match e.se {
                    Some(se) => format!("{} ± {} (N = {})", fixed(e.value, dec), fixed(se, dec.max(2)), e.n),
                    None => format!("{} (N = {})", fixed(e.value, dec), e.n),
                },
                None => "—".into(),
            })
            .collect();
        let arrow = match t.proportion {
            crate::model::profile::Proportion::Hib => "more is better",
            crate::model::profile::Proportion::Lib => "less is better",
        };
        writeln!(out, "| {} | {} ({arrow}) | {} |", cell(&t.heading(&title)), cell(&t.unit), vals.join(" | ")).unwrap();
    }
}

/// The geometric means with wins and losses, and the verdicts against the baseline.
fn comparison(out: &mut String, r: &ResultFile, a: &Analysis) {
    if let Some(g) = &a.geometric {
        writeln!(
            out,
            "\n## Geometric mean\n\nOver the {} tests ({} results) every identifier has, each test weighed once; lower-is-better results inverted.\n",
            a.shared_tests, a.shared
        )
        .unwrap();
        writeln!(out, "| Identifier | Geometric mean | Wins | Losses |\n|---|---:|---:|---:|").unwrap();
        for ((id, v), w) in g.iter().zip(&a.wins) {
            writeln!(out, "| {} | {} | {} | {} |", cell(id), fixed(*v, 4), w.wins, w.losses).unwrap();
        }
    }
    if let Some(b) = &a.baseline
        && !a.comparisons.is_empty()
    {
        writeln!(out, "\n## Against {}\n\n{}.\n", cell(b), super::verdict::RULE).unwrap();
        writeln!(out, "| Result | Identifier | Change | Ratio (95 % CI) | Verdict |\n|---|---|---:|---:|---|").unwrap();
        for (i, cs) in &a.comparisons {
            let t = &r.results[*i];
            for (id, c) in cs {
                writeln!(
                    out,
                    "| {} | {} | {} ({}) | {} | {} |",
                    cell(&t.heading(&t.title)),
                    cell(id),
                    cell(&c.change_text()),
                    cell(&c.stats_text()),
                    cell(&c.ratio_text()),
                    c.verdict
                )
                .unwrap();
            }
        }
    }
}
