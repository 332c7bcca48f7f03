//! The terminal report: per result the title and version, the description,
//! the unit and proportion, and a bar per identifier with `SE +/- x, N = n`
//! (the layout of PTS's text results, seed 003); then, with several
//! identifiers, the overall means, wins and losses, notable results, and
//! which differences against the baseline are significant. Titles, labels
//! and units are written as one line each and every control character as
//! a visible escape (`sys::text`): a result file may come from anyone.

use super::format::se_text;
use super::view::{Analysis, analyze_matrix};
use super::{Exporter, View};
use crate::analysis::normalize;
use crate::model::facts::Identifier;
use crate::model::result::{BoundBy, ResultFile, TestResult};
use crate::sys::text::{one_line, pad, pad_left, terminal, width as text_width};
use crate::units::{decimals_for, fixed};
use std::fmt::Write;

pub struct Text {
    /// Terminal width in columns.
    pub width: usize,
}

/// One bar: label, value (if any), SE text.
struct Bar<'a> {
    label: &'a str,
    value: Option<f64>,
    se: String,
}

/// Bars scaled to the largest value and the width, labels padded with dots.
fn bars(out: &mut String, rows: &[Bar<'_>], width: usize, decimals: usize) {
    let labels: Vec<_> = rows.iter().map(|r| one_line(r.label)).collect();
    let name_w = labels.iter().map(|l| text_width(l)).max().unwrap_or(0);
    let max = rows.iter().filter_map(|r| r.value).map(f64::abs).fold(0.0, f64::max);
    let vals: Vec<String> =
        rows.iter().map(|r| r.value.map(|v| fixed(v, decimals)).unwrap_or_else(|| "n/a".into())).collect();
    let val_w = vals.iter().map(String::len).max().unwrap_or(0);
    let se_w = rows.iter().map(|r| r.se.len()).max().unwrap_or(0);
    // name, space, dots, space, value, " |", bar, "  ", SE
    let bar_w = width.saturating_sub(name_w + 2 + 1 + val_w + 2 + 2 + se_w).max(10);
    for ((r, v), label) in rows.iter().zip(&vals).zip(&labels) {
        let dots = ".".repeat(name_w - text_width(label) + 1);
        let bar = match r.value {
            Some(x) if max > 0.0 => "=".repeat(((x.abs() / max) * bar_w as f64).round() as usize),
            _ => String::new(),
        };
        let pad = " ".repeat(bar_w - bar.len().min(bar_w));
        writeln!(out, "{label} {dots} {v:>val_w$} |{bar}{pad}  {}", r.se).unwrap();
    }
}

/// The blocks of the results `range` of `r` (one test's, or every test's),
/// a test's results under one heading: its title and description once, then
/// each result by its name (`Read Latency`) with its bars.
fn test_groups(
    out: &mut String,
    r: &ResultFile,
    m: &crate::analysis::Matrix<'_>,
    keep: &dyn Fn(&TestResult) -> bool,
    view: &View,
    width: usize,
) {
    let mut i = 0;
    while i < r.results.len() {
        let test = &r.results[i].test;
        let end = (i..r.results.len()).find(|&j| r.results[j].test != *test).unwrap_or(r.results.len());
        let group: Vec<usize> = (i..end).filter(|&k| keep(&r.results[k])).collect();
        i = end;
        let Some(&first) = group.first() else { continue };
        let desc = group.iter().map(|&k| r.results[k].description.as_str()).min_by_key(|d| d.len()).unwrap_or("");
        let t = &r.results[first];
        let title = match &t.app_version {
            Some(v) if !v.is_empty() => format!("{} {v}", t.title),
            _ => t.title.clone(),
        };
        writeln!(out, "\n\n{}", one_line(&title)).unwrap();
        if !desc.is_empty() {
            writeln!(out, "{}", one_line(desc)).unwrap();
        }
        for &k in &group {
            if group.len() > 1 {
                writeln!(out, "\n  {}", one_line(&super::verdict::result_name(&r.results[k], desc))).unwrap();
            }
            result_block(out, &r.results[k], &m.rows[k], &m.ids, view, width);
        }
    }
}

/// One result's unit and bars (or values relative to a reference), and the
/// marks of its entries.
fn result_block(
    out: &mut String,
    t: &TestResult,
    row: &[Option<&crate::model::result::ResultEntry>],
    ids: &[Identifier],
    view: &View,
    width: usize,
) {
    let present: Vec<(&Identifier, &crate::model::result::ResultEntry)> =
        ids.iter().zip(row).filter_map(|(id, e)| e.map(|e| (id, e))).collect();
    match &view.normalize {
        Some(reference) => {
            let what = match reference {
                normalize::Reference::Lowest => "the lowest".to_string(),
                normalize::Reference::Baseline(b) => b.clone(),
            };
            writeln!(out, "Relative to {} (from {}) > Higher Is Better", one_line(&what), one_line(&t.unit)).unwrap();
            let n = normalize::normalize(t, row, ids, reference);
            let n: Vec<(Identifier, Option<f64>)> =
                n.into_iter().filter(|(id, _)| present.iter().any(|(p, _)| *p == id)).collect();
            let rows: Vec<Bar> = n.iter().map(|(id, v)| Bar { label: id, value: *v, se: String::new() }).collect();
            bars(out, &rows, width, 3);
        }
        None => {
            writeln!(out, "{} {}", one_line(&t.unit), t.proportion.phrase()).unwrap();
            let entries: Vec<&crate::model::result::ResultEntry> = present.iter().map(|(_, e)| *e).collect();
            let max = entries.iter().map(|e| e.value.abs()).fold(0.0, f64::max);
            let dec = decimals_for(max);
            let rows: Vec<Bar> = entries
                .iter()
                .map(|e| Bar {
                    label: &e.identifier,
                    value: Some(e.value),
                    se: se_text(e.se, super::format::count(e), dec),
                })
                .collect();
            bars(out, &rows, width, dec);
            for e in &entries {
                let id = one_line(&e.identifier);
                let marked = e.warning.iter().chain(&e.served_from_memory).map(|w| ('!', w.clone()));
                let noted = bound_line(e).into_iter().chain(e.notes.iter().cloned()).map(|n| ('·', n));
                for (mark, text) in marked.chain(noted) {
                    mark_lines(out, mark, &format!("{id}: {}", one_line(&text)), width);
                }
            }
        }
    }
    imported_lines(out, t);
}

/// `  ! text`, wrapped at `width` under its first word (a note never runs
/// past the bars it explains).
fn mark_lines(out: &mut String, mark: char, text: &str, width: usize) {
    for (i, l) in super::svg::wrap(text, width.saturating_sub(4).max(20), usize::MAX).iter().enumerate() {
        let lead = if i == 0 { mark } else { ' ' };
        writeln!(out, "  {lead} {l}").unwrap();
    }
}

/// What import recorded of a PTS result: why it is PTS's own, and what
/// lining it up with engine's test took (a unit relabelled …).
fn imported_lines(out: &mut String, t: &TestResult) {
    let Some(p) = &t.pts else { return };
    if let Some(why) = &p.not_runnable {
        writeln!(out, "  ! not runnable here: {}", one_line(why)).unwrap();
    }
    for n in &p.notes {
        writeln!(out, "  · imported from PTS: {}", one_line(n)).unwrap();
    }
}

fn analysis_block(out: &mut String, f: &ResultFile, a: &Analysis, width: usize) {
    if let Some(g) = &a.geometric {
        writeln!(
            out,
            "\n\nGeometric Mean Of {} Tests ({} Results) Every Identifier Has (each test weighed once, lower-is-better results inverted)",
            a.shared_tests, a.shared
        )
        .unwrap();
        writeln!(out, "> Higher Is Better").unwrap();
        let max = g.iter().map(|(_, v)| *v).fold(0.0, f64::max);
        let rows: Vec<Bar> = g.iter().map(|(id, v)| Bar { label: id, value: Some(*v), se: String::new() }).collect();
        bars(out, &rows, width, decimals_for(max).max(3));
    }
    if let Some((unit, h)) = &a.harmonic {
        let unit = one_line(unit);
        writeln!(
            out,
            "\nHarmonic Mean: {}",
            h.iter().map(|(id, v)| format!("{} {} {unit}", one_line(id), fixed(*v, 4))).collect::<Vec<_>>().join(", ")
        )
        .unwrap();
    }
    writeln!(out, "\nWins / Losses (only where the best or worst differs significantly from the next)").unwrap();
    let w = a.wins.iter().map(|t| text_width(&one_line(&t.identifier))).max().unwrap_or(0);
    for t in &a.wins {
        writeln!(
            out,
            "  {}  {}, {}",
            pad(&one_line(&t.identifier), w),
            count(t.wins, "win", "wins"),
            count(t.losses, "loss", "losses")
        )
        .unwrap();
    }
    if !a.notable.is_empty() {
        writeln!(out, "\nNotable Results (significant differences first, then the largest spread between identifiers)")
            .unwrap();
        for (i, s) in &a.notable {
            let r = &f.results[*i];
            writeln!(out, "  {}x  {}", fixed(*s, 2), what_line(r)).unwrap();
        }
    }
    let own = f.results.iter().filter(|r| r.not_runnable().is_some()).count();
    if own > 0 {
        writeln!(
            out,
            "\n{own} result(s) kept as PTS's own (not runnable here: no faithful profile): compared only among the identifiers PTS measured, never with one engine ran"
        )
        .unwrap();
    }
    if let Some(b) = &a.baseline
        && !a.comparisons.is_empty()
    {
        writeln!(
            out,
            "\nAgainst {} (ratio of means [95 % interval]; Welch's t-test at 5 %; a change counts when the whole interval is beyond the noise threshold and, across the tests compared, by Benjamini–Hochberg at 5 %)",
            one_line(b)
        )
        .unwrap();
        for (i, cs) in &a.comparisons {
            writeln!(out, "  {}", what_line(&f.results[*i])).unwrap();
            let w = cs.iter().map(|(id, _)| text_width(&one_line(id))).max().unwrap_or(0);
            for (id, c) in cs {
                writeln!(out, "    {}  {}", pad(&one_line(id), w), one_line(&c.describe())).unwrap();
            }
        }
        verdict_block(out, f, a, b);
    }
}

/// `1 loss`, `2 losses`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `Title: description (unit)`, one line.
fn what_line(r: &TestResult) -> String {
    format!("{} ({})", one_line(&r.heading(&r.title)), one_line(&r.unit))
}

/// One line per identifier against the baseline: which tests got
/// significantly worse or better, and how many did not.
fn verdict_block(out: &mut String, f: &ResultFile, a: &Analysis, baseline: &str) {
    writeln!(out, "\nVerdict (a change counts when its whole 95 % interval is beyond the noise threshold)").unwrap();
    for (id, parts) in super::verdict::lines(f, a, baseline) {
        writeln!(out, "  {} vs {}: {}", one_line(&id), one_line(baseline), parts.join(", ")).unwrap();
    }
    paired_table(out, f, a, baseline);
}

/// An interleaved sweep's comparisons, a row each: what, against the
/// baseline, the ratio with its paired 95 % interval, the verdict, and the
/// rounds it is paired over (at most 40 rows; the rest counted).
fn paired_table(out: &mut String, f: &ResultFile, a: &Analysis, baseline: &str) {
    const MOST: usize = 40;
    let rows: Vec<[String; 4]> = a
        .comparisons
        .iter()
        .flat_map(|(i, cs)| cs.iter().map(move |(id, c)| (*i, id, c)))
        .filter_map(|(i, id, c)| {
            let n = c.paired?;
            let t = &f.results[i];
            let what = format!("{} · {}", one_line(&t.heading(&t.title)), one_line(id));
            Some([what, c.ratio_text(), c.verdict.to_string(), format!("{n} rounds")])
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    writeln!(out, "\nPaired over rounds (per-round ratio to {}, its 95 % interval, the verdict)", one_line(baseline))
        .unwrap();
    let w: Vec<usize> = (0..4).map(|k| rows.iter().take(MOST).map(|r| text_width(&r[k])).max().unwrap_or(0)).collect();
    let w0 = w[0].min(60);
    for r in rows.iter().take(MOST) {
        let what = super::svg::cut_middle(&r[0], w0);
        writeln!(out, "  {}  {}  {}  {}", pad(&what, w0), pad(&r[1], w[1]), pad(&r[2], w[2]), r[3]).unwrap();
    }
    if rows.len() > MOST {
        writeln!(out, "  … {} more: `engine result show NAME --format csv` has every one", rows.len() - MOST).unwrap();
    }
}

/// The result blocks of one test (every result id it yielded), with the
/// bars of every identifier: what a run prints as soon as the test finishes.
pub fn test_blocks(r: &ResultFile, test: &str, width: usize) -> String {
    let m = crate::analysis::Matrix::new(r);
    let view = View::default();
    let mut out = String::new();
    test_groups(&mut out, r, &m, &|t| t.test == test, &view, width);
    finish(out.trim_start_matches('\n'))
}

/// The report's lines without trailing spaces, and any control character
/// a field still held (a failure's reason, an analysis text) as an escape.
fn finish(out: &str) -> String {
    terminal(&(out.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n")).into_owned()
}

/// One test's results for `identifier`, a line each — what a run prints on
/// a terminal as the test finishes (the bars are `--format bars`):
///
/// ```text
/// Block I/O 1.0: Type: Random Read - Block Size: 4KB (vm)
///   bandwidth     439.99 MB/s   ±6.09 %   N=5   ! budget spent
/// ```
pub fn compact(r: &ResultFile, test: &str, identifier: &str, width: usize) -> String {
    let rows: Vec<(&TestResult, &crate::model::result::ResultEntry)> = r
        .results
        .iter()
        .filter(|t| t.test == test)
        .filter_map(|t| t.entries.iter().find(|e| e.identifier == identifier).map(|e| (t, e)))
        .collect();
    let Some((first, _)) = rows.first() else { return String::new() };
    // The test's own description: the shortest (other results add their name to it).
    let desc = rows.iter().map(|(t, _)| t.description.as_str()).min_by_key(|d| d.len()).unwrap_or("");
    let title = super::svg::result_title(first);
    let head = one_line(&if desc.is_empty() { title } else { format!("{title}: {desc}") }).into_owned();
    let identifier = one_line(identifier);
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|(t, e)| {
            // A ±0 at the tool's resolution is no precision: said as what it is.
            let limited = e.notes.iter().any(|n| n.starts_with(crate::stats::shape::RESOLUTION_LIMITED));
            let ci = match crate::stats::adaptive::ci_half_pct(&e.units()) {
                _ if limited => "±? (resolution)".into(),
                Some(h) => format!("±{} %", crate::units::number(h)),
                None => "±?".into(),
            };
            [
                one_line(&super::verdict::result_name(t, desc)).into_owned(),
                format!("{} {}", crate::units::number(e.value), one_line(&t.unit)),
                ci,
                match e.setup_count() {
                    1 => format!("N={}", e.n),
                    k => format!("N={} in {k} set-ups", e.n),
                },
                marks(e),
            ]
        })
        .collect();
    let width = width.max(40);
    let mut out = String::new();
    // A test of one result is one line: heading and value.
    if let [c] = cells.as_slice() {
        let tail = format!("  {}  {}  {}  {}", c[1], c[2], c[3], c[4]);
        let room = width.saturating_sub(text_width(tail.trim_end()) + identifier.len() + 3).max(20);
        writeln!(out, "{} ({identifier}){}", super::svg::cut_middle(&head, room), tail.trim_end()).unwrap();
    } else {
        writeln!(out, "{} ({identifier})", super::svg::cut_middle(&head, width.saturating_sub(identifier.len() + 3)))
            .unwrap();
        let mut w: Vec<usize> = (0..5).map(|i| cells.iter().map(|c| text_width(&c[i])).max().unwrap_or(0)).collect();
        // The names give way first, so the marks stay whole.
        let rest = 2 + w[1] + 2 + w[2] + 2 + w[3] + 2 + w[4];
        w[0] = w[0].min(width.saturating_sub(rest + 2).max(12));
        for c in &cells {
            let line = format!(
                "  {}  {}  {}  {}  {}",
                pad(&super::svg::cut_middle(&c[0], w[0]), w[0]),
                pad_left(&c[1], w[1]),
                pad_left(&c[2], w[2]),
                pad(&c[3], w[3]),
                c[4],
            );
            writeln!(out, "{}", crate::sys::text::fit(line.trim_end(), width)).unwrap();
        }
    }
    // Under the table, once a test, what bounded it and what memory served:
    // what every result shares (the marks name the rest, which `engine
    // result show` explains).
    let shared = |e: &crate::model::result::ResultEntry| -> Vec<String> {
        e.served_from_memory.iter().cloned().chain(bound_line(e)).map(|w| one_line(&w).into_owned()).collect()
    };
    // A test of one result has its marks on its one line: enough there.
    let first = if rows.len() > 1 { shared(rows[0].1) } else { Vec::new() };
    for note in first.iter().filter(|n| rows.iter().all(|(_, e)| shared(e).contains(n))) {
        writeln!(out, "{}", super::svg::cut_middle(&format!("    {note}"), width)).unwrap();
    }
    terminal(&out).into_owned()
}

/// `bound by device: vda busy 98 % …`; memory is said by its own line.
pub(crate) fn bound_line(e: &crate::model::result::ResultEntry) -> Option<String> {
    e.bound.as_ref().filter(|b| b.by != BoundBy::Memory).map(|b| format!("bound by {}: {}", b.by.name(), b.evidence))
}

/// The short marks of an entry: why its trials stopped short of the
/// target, and what its values or its device showed.
fn marks(e: &crate::model::result::ResultEntry) -> String {
    use crate::stats::adaptive::Stop;
    let mut m: Vec<&str> = Vec::new();
    match e.stopped {
        Some(Stop::Budget) => m.push("budget spent"),
        Some(Stop::Projection) => m.push("noisy"),
        Some(Stop::Drift) => m.push("drift"),
        Some(Stop::Groups) => m.push("two groups"),
        Some(Stop::Cap) => m.push("cap"),
        _ if e.warning.is_some() => m.push("wide"),
        _ => {}
    }
    if e.served_from_memory.is_some() {
        m.push("served from memory");
    }
    match e.bound.as_ref().map(|b| b.by) {
        Some(BoundBy::Device) => m.push("device-bound"),
        Some(BoundBy::Cpu) => m.push("cpu-bound"),
        Some(BoundBy::Contention) => m.push("contention"),
        Some(BoundBy::Mixed) => m.push("device+cpu"),
        Some(BoundBy::Memory) | None => {}
    }
    let limited = e.notes.iter().any(|n| n.starts_with(crate::stats::shape::RESOLUTION_LIMITED));
    if limited {
        m.push("resolution-limited");
    }
    if e.notes.len() > usize::from(limited) {
        m.push("notes");
    }
    if m.is_empty() { String::new() } else { format!("! {}", m.join(", ")) }
}

/// Only the comparison across identifiers (means, wins, notable results,
/// verdicts): what a run prints at its end, after the per-test results.
pub fn analysis_only(r: &ResultFile, view: &View, width: usize) -> String {
    let m = crate::analysis::Matrix::new(r);
    let a = analyze_matrix(r, &m, view);
    let mut out = String::new();
    if a.ids.len() > 1 && !r.results.is_empty() {
        analysis_block(&mut out, r, &a, width);
    }
    finish(out.trim_start_matches('\n'))
}

impl Exporter for Text {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        if let Some(fleet) = view.fleet_of(r) {
            return finish(&super::fleet::text(r, &fleet, view.fleet.top, self.width));
        }
        let mut out = String::new();
        writeln!(out, "{}", one_line(&r.title)).unwrap();
        if !r.description.is_empty() {
            writeln!(out, "{}", one_line(&r.description)).unwrap();
        }
        if !r.left_out.is_empty() {
            writeln!(out, "\nLeft out of this result ({}):", r.left_out.len()).unwrap();
            for l in &r.left_out {
                writeln!(out, "  {}: {}", one_line(&l.source), one_line(&l.reason)).unwrap();
            }
        }
        if !r.systems.is_empty() {
            out.push('\n');
            out.push_str(&super::systems::text(r, (!view.detail).then_some(self.width)));
        }
        let m = crate::analysis::Matrix::new(r);
        let a = analyze_matrix(r, &m, view);
        test_groups(&mut out, r, &m, &|_| true, view, self.width);
        if a.ids.len() > 1 && !r.results.is_empty() {
            analysis_block(&mut out, r, &a, self.width);
        }
        if !r.failures.is_empty() {
            // What has no value, and why: until the same test passes.
            writeln!(out, "\n\nFailed or skipped ({})", r.failures.len()).unwrap();
            for f in &r.failures {
                let what =
                    if f.description.is_empty() { String::new() } else { format!(": {}", one_line(&f.description)) };
                writeln!(
                    out,
                    "  {} {}{what} ({}): {}",
                    f.status,
                    one_line(&f.title),
                    one_line(&f.identifier),
                    f.reason
                )
                .unwrap();
                if let Some(l) = &f.log {
                    writeln!(out, "    log: {}", one_line(l)).unwrap();
                }
                // The command's own words, a line each: a CR or an escape in them is shown, not acted on.
                for tail in &f.stderr_tail {
                    writeln!(out, "    | {}", one_line(tail)).unwrap();
                }
            }
        }
        finish(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::ResultEntry;
    use crate::stats::adaptive::Stop;

    fn result(name: &str, unit: &str, description: &str, stopped: Stop) -> TestResult {
        let mut e =
            ResultEntry::from_trials("vm", vec![100.0, 102.0, 98.0], None, vec![], String::new().into()).unwrap();
        e.stopped = Some(stopped);
        let mut t: TestResult = serde_json::from_value(serde_json::json!({
            "test": "io@1[x]", "profile": "io", "profile_version": "1.0.0", "result": name,
            "title": "Block I/O", "app_version": null, "description": description, "options": [],
            "unit": unit, "proportion": "HIB", "entries": []
        }))
        .unwrap();
        t.entries.push(e);
        t
    }

    #[test]
    fn a_compact_line_per_result() {
        let mut f = ResultFile::default();
        f.results.push(result("bandwidth", "MB/s", "Type: Read", Stop::Budget));
        f.results.push(result("iops", "IOPS", "Type: Read - IOPS", Stop::Target));
        let c = compact(&f, "io@1[x]", "vm", 100);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines[0], "Block I/O: Type: Read (vm)");
        assert_eq!(lines[1], "  bandwidth  100.00 MB/s  ±4.97 %  N=3  ! budget spent");
        // By its name in the test, not its id.
        assert_eq!(lines[2], "  IOPS       100.00 IOPS  ±4.97 %  N=3");
        assert_eq!(compact(&f, "io@1[x]", "other", 100), "");
        // What bounded the test is said once under it; a result's own
        // warning is its mark (`engine result show` explains it).
        f.results[0].entries[0].warning = Some("noisy: the interval would need 40 trials".into());
        for r in &mut f.results {
            r.entries[0].bound =
                Some(crate::model::result::Bound { by: BoundBy::Device, evidence: "vda busy 85 %".into() });
        }
        let c = compact(&f, "io@1[x]", "vm", 100);
        assert_eq!(c.matches("vda busy 85 %").count(), 1, "{c}");
        assert!(c.contains("\n    bound by device: vda busy 85 %\n") && !c.contains("40 trials"), "{c}");
        // One result: one line.
        let mut one = f.clone();
        one.results.truncate(1);
        let c = compact(&one, "io@1[x]", "vm", 100);
        assert!(
            c.lines().next().unwrap().starts_with("Block I/O: Type: Read (vm)  100.00 MB/s  ±4.97 %  N=3  !"),
            "{c}"
        );
        // A long title is cut in the middle: its last option stays.
        f.results.iter_mut().for_each(|r| r.description = format!("{} - Block Size: 2MB", "Direct: Yes - ".repeat(9)));
        let head = compact(&f, "io@1[x]", "vm", 60).lines().next().unwrap().to_string();
        assert!(head.contains('…') && head.ends_with("Block Size: 2MB (vm)"), "{head}");
    }
}
