//! The terminal report: per result the title and version, the description,
//! the unit and proportion, and a bar per identifier with `SE +/- x, N = n`
//! (the layout of PTS's text results, seed 003).

use super::Exporter;
use super::format::{decimals_for, se_text};
use crate::result::ResultFile;
use std::fmt::Write;

pub struct Text {
    /// Terminal width in columns.
    pub width: usize,
}

impl Exporter for Text {
    fn export(&self, r: &ResultFile) -> String {
        let mut out = String::new();
        writeln!(out, "{}", r.title).unwrap();
        if !r.description.is_empty() {
            writeln!(out, "{}", r.description).unwrap();
        }
        if !r.systems.is_empty() {
            out.push('\n');
            out.push_str(&super::systems::text(r));
        }
        for t in &r.results {
            out.push('\n');
            let title = match &t.app_version {
                Some(v) if !v.is_empty() => format!("{} {v}", t.title),
                _ => t.title.clone(),
            };
            writeln!(out, "\n{title}").unwrap();
            if !t.description.is_empty() {
                writeln!(out, "{}", t.description).unwrap();
            }
            writeln!(out, "{} {}", t.unit, t.proportion.phrase()).unwrap();
            // Rows in identifier order of the file's systems, then any others.
            let mut rows: Vec<(&str, Option<&crate::result::ResultEntry>)> = r
                .systems
                .iter()
                .map(|s| (s.identifier.as_str(), t.entries.iter().find(|e| e.identifier == s.identifier)))
                .collect();
            for e in &t.entries {
                if !rows.iter().any(|(id, _)| *id == e.identifier) {
                    rows.push((&e.identifier, Some(e)));
                }
            }
            rows.retain(|(_, e)| e.is_some() || t.entries.is_empty());
            let name_w = rows.iter().map(|(id, _)| id.chars().count()).max().unwrap_or(0);
            let max = t.entries.iter().map(|e| e.value.abs()).fold(0.0, f64::max);
            let dec = decimals_for(max);
            let vals: Vec<String> = rows
                .iter()
                .map(|(_, e)| e.map(|e| format!("{:.*}", dec, e.value)).unwrap_or_else(|| "n/a".into()))
                .collect();
            let val_w = vals.iter().map(String::len).max().unwrap_or(0);
            let ses: Vec<String> =
                rows.iter().map(|(_, e)| e.map(|e| se_text(e.se, e.n, dec)).unwrap_or_default()).collect();
            let se_w = ses.iter().map(String::len).max().unwrap_or(0);
            // name, space, dots, space, value, " |", bar, "  ", SE
            let fixed = name_w + 2 + 1 + val_w + 2 + 2 + se_w;
            let bar_w = self.width.saturating_sub(fixed).max(10);
            for (((id, e), v), se) in rows.iter().zip(&vals).zip(&ses) {
                let dots = ".".repeat(name_w - id.chars().count() + 1);
                let bar = match e {
                    Some(e) if max > 0.0 => "=".repeat(((e.value.abs() / max) * bar_w as f64).round() as usize),
                    _ => String::new(),
                };
                let pad = " ".repeat(bar_w - bar.len().min(bar_w));
                writeln!(out, "{id} {dots} {v:>val_w$} |{bar}{pad}  {se}").unwrap();
            }
            let warnings: Vec<String> = rows
                .iter()
                .filter_map(|(id, e)| e.and_then(|e| e.warning.as_ref().map(|w| format!("  ! {id}: {w}"))))
                .collect();
            for w in warnings {
                writeln!(out, "{w}").unwrap();
            }
        }
        // Lines end without trailing spaces.
        out.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
    }
}
