//! Reading a Phoronix Test Suite / OpenBenchmarking `composite.xml` into a
//! result file: systems (Hardware and Software lines, notes), results with
//! their values and raw trials. A result whose work one of engine's tests
//! does (see [`super::matching`] for the rule) gets that test's identity,
//! so `engine benchmark NAME` re-runs it and appends a new identifier to
//! the same row; any other is kept as PTS's own, with the reason.

use super::matching::{Decision, PtsTest, decide};
use crate::catalog::Catalog;
use crate::model::profile::LoadedProfile;
use crate::model::profile::Proportion;
use crate::model::result::{PtsOrigin, ResultEntry, ResultFile, System, TestResult};
use indexmap::IndexMap;
use regex::Regex;
use std::sync::{Arc, LazyLock};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("{file}:{line}:{col}: {msg}")]
pub struct ImportError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

static KEY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r", ([A-Z][A-Za-z0-9 -]*): ").unwrap());

/// `Processor: AMD EPYC (2 Cores), Memory: 24GB` → ordered pairs.
pub(crate) fn parse_line(s: &str) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    let s = s.trim();
    if s.is_empty() {
        return out;
    }
    let mut starts: Vec<(usize, usize)> = Vec::new(); // (key start, value start)
    if let Some(i) = s.find(": ") {
        starts.push((0, i + 2));
    }
    for c in KEY.captures_iter(s) {
        let m = c.get(0).unwrap();
        starts.push((m.start() + 2, m.end()));
    }
    for (n, (k, v)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map(|(k2, _)| k2 - 2).unwrap_or(s.len());
        if *v <= end {
            out.insert(s[*k..*v - 2].to_string(), s[*v..end].to_string());
        }
    }
    out
}

fn child_text<'a>(n: roxmltree::Node<'a, 'a>, name: &str) -> Option<&'a str> {
    n.children().find(|c| c.has_tag_name(name)).and_then(|c| c.text())
}

/// PTS's system JSON notes as engine's notes.
fn notes(json: Option<&str>) -> IndexMap<String, String> {
    let mut n = IndexMap::new();
    let Some(v) = json.and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok()) else { return n };
    let get = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    if let Some(c) = get("compiler-configuration") {
        n.insert("Compiler Notes".into(), c);
    }
    let disk: Vec<String> =
        ["disk-scheduler", "disk-mount-options", "disk-details"].iter().filter_map(|k| get(k)).collect();
    if !disk.is_empty() {
        n.insert("Disk Notes".into(), disk.join(" / "));
    }
    let mut pn = Vec::new();
    if let Some(g) = get("cpu-scaling-governor") {
        pn.push(format!("Scaling Governor: {g}"));
    }
    if let Some(m) = get("cpu-microcode") {
        pn.push(format!("CPU Microcode: {m}"));
    }
    if !pn.is_empty() {
        n.insert("Processor Notes".into(), pn.join(" - "));
    }
    if let Some(k) = get("kernel-extra-details") {
        n.insert("Kernel Notes".into(), k);
    }
    if let Some(p) = get("python") {
        n.insert("Python Notes".into(), p);
    }
    if let Some(s) = get("security") {
        n.insert("Security Notes".into(), s);
    }
    if let Some(e) = get("environment-variables") {
        n.insert("Environment Notes".into(), e);
    }
    n
}

fn num(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// composite.xml files larger than this are refused before they are read.
/// PTS's own exports of a few hundred results are well under 1 MiB.
pub(crate) const MAX_XML_BYTES: u64 = 32 << 20;

/// At most this many XML nodes are parsed (each costs the parser about 60
/// bytes): memory stays bounded even for a file of tiny elements.
pub(crate) const MAX_XML_NODES: u32 = 2_000_000;

/// Reads a composite.xml from disk: refused when over [`MAX_XML_BYTES`] or
/// not UTF-8, with the position of the first bad byte.
pub fn read(path: &std::path::Path) -> Result<String, ImportError> {
    let file = path.display().to_string();
    let bytes = crate::sys::fs::read_capped(path, MAX_XML_BYTES).map_err(|e| ImportError {
        file: file.clone(),
        line: 1,
        col: 1,
        msg: format!("cannot read it: {e}"),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let (line, col) = crate::sys::fs::line_col(bytes, at);
        ImportError {
            file,
            line: line as u32,
            col: col as u32,
            msg: format!("invalid UTF-8 (byte 0x{:02x}); a composite.xml is UTF-8", bytes[at]),
        }
    })
}

/// Reads `text` (the contents of `file`) as a PTS composite.xml.
pub fn import(text: &str, file: &str, catalog: &Catalog) -> Result<ResultFile, ImportError> {
    // Every profile once, not once per <Result> (3,000 results took 13 s).
    let profiles: Vec<Arc<LoadedProfile>> = catalog.all_profiles().into_iter().flatten().map(Arc::new).collect();
    import_with(text, file, &profiles)
}

/// [`import`] against a list of profiles loaded once (the fuzzer's entry).
pub fn import_with(text: &str, file: &str, profiles: &[Arc<LoadedProfile>]) -> Result<ResultFile, ImportError> {
    let opts = roxmltree::ParsingOptions { nodes_limit: MAX_XML_NODES, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(text, opts)
        .map_err(|e| error(file, e.pos(), format!("not well-formed XML: {e}")))?;
    let c = Composite { doc: &doc, file };
    let root = doc.root_element();
    if !root.has_tag_name("PhoronixTestSuite") {
        return Err(c.error_at(
            root,
            format!("expected a <PhoronixTestSuite> result file, found <{}>", root.tag_name().name()),
        ));
    }
    let generated = root.children().find(|n| n.has_tag_name("Generated"));
    let title = generated.and_then(|g| child_text(g, "Title")).unwrap_or("imported").to_string();
    let mut f = ResultFile::new(&title);
    f.description = generated.and_then(|g| child_text(g, "Description")).unwrap_or("").to_string();
    for s in root.children().filter(|n| n.has_tag_name("System")) {
        f.systems.push(c.system(s)?);
    }
    for r in root.children().filter(|n| n.has_tag_name("Result")) {
        let t = c.result(r, &f, profiles)?;
        f.results.push(t);
    }
    if f.systems.is_empty() && f.results.is_empty() {
        return Err(c.error_at(root, "the file has no <System> and no <Result>".into()));
    }
    Ok(f)
}

fn error(file: &str, pos: roxmltree::TextPos, msg: String) -> ImportError {
    ImportError { file: file.to_string(), line: pos.row, col: pos.col, msg }
}

/// A parsed composite.xml and its name, for errors that point into it.
struct Composite<'a, 'input> {
    doc: &'a roxmltree::Document<'input>,
    file: &'a str,
}

impl Composite<'_, '_> {
    /// An error at the start of `node`. Positions are found by scanning the
    /// text from its start: only on error.
    fn error_at(&self, node: roxmltree::Node, msg: String) -> ImportError {
        error(self.file, self.doc.text_pos_at(node.range().start), msg)
    }

    /// A `<System>`: its identifier, Hardware and Software lines, notes.
    fn system(&self, s: roxmltree::Node) -> Result<System, ImportError> {
        let id =
            child_text(s, "Identifier").ok_or_else(|| self.error_at(s, "a <System> has no <Identifier>".into()))?;
        let stamp = child_text(s, "TimeStamp").unwrap_or("").replacen(' ', "T", 1);
        Ok(System {
            identifier: id.into(),
            hardware: parse_line(child_text(s, "Hardware").unwrap_or("")),
            software: parse_line(child_text(s, "Software").unwrap_or("")),
            notes: notes(child_text(s, "JSON")),
            target_dir: None,
            started: stamp.into(),
            finished: None,
            engine_version: format!("Phoronix Test Suite {}", child_text(s, "TestClientVersion").unwrap_or("")),
            details: None,
            tags: Default::default(),
            state: None,
        })
    }

    /// A `<Result>`, matched to engine's test where a profile has it; `f`
    /// holds the systems read so far (the entries' time stamps).
    fn result(
        &self,
        r: roxmltree::Node,
        f: &ResultFile,
        profiles: &[Arc<LoadedProfile>],
    ) -> Result<TestResult, ImportError> {
        let ident = child_text(r, "Identifier").unwrap_or("").to_string();
        let rtitle = child_text(r, "Title").unwrap_or("").to_string();
        let description = child_text(r, "Description").unwrap_or("").to_string();
        let unit = child_text(r, "Scale").unwrap_or("").to_string();
        let arguments = child_text(r, "Arguments").unwrap_or("").to_string();
        let proportion = match child_text(r, "Proportion").unwrap_or("HIB") {
            "LIB" => Proportion::Lib,
            "HIB" => Proportion::Hib,
            other => return Err(self.error_at(r, format!("<Proportion> is `{other}`, not HIB or LIB"))),
        };
        let app_version = child_text(r, "AppVersion").map(str::to_string);
        let pts = PtsTest {
            title: &rtitle,
            app_version: app_version.as_deref().unwrap_or(""),
            description: &description,
            unit: &unit,
            proportion,
        };
        let mut origin = PtsOrigin {
            identifier: ident.clone().into(),
            arguments,
            not_runnable: None,
            unit: None,
            notes: Vec::new(),
        };
        let (test, profile, version, result, options, unit) = match decide(profiles, &pts) {
            Decision::Engine(m) => {
                (origin.unit, origin.notes) = (m.pts_unit.map(Into::into), m.notes);
                let p = &m.test.profile.profile;
                (m.test.key(), p.id.clone(), p.version.clone(), m.result_id, m.test.choices(), m.unit)
            }
            Decision::PtsOwn(why) => {
                origin.not_runnable = Some(why);
                // PTS's own identity: its arguments, else (a result rebuilt
                // from a page has none) its description, so rows stay apart.
                let args = if origin.arguments.is_empty() { &description } else { &origin.arguments };
                (format!("{ident}[{args}]"), ident, String::new(), unit.clone(), Vec::new(), unit)
            }
        };
        let entries = match r.children().find(|n| n.has_tag_name("Data")) {
            Some(data) => self.entries(data, f)?,
            None => Vec::new(),
        };
        Ok(TestResult {
            test,
            profile,
            profile_version: version,
            result,
            title: rtitle,
            app_version,
            description,
            options,
            unit: unit.into(),
            proportion,
            entries,
            pts: Some(origin),
            repository: None,
            about: String::new(),
        })
    }

    /// The `<Entry>` values of a result's `<Data>`, with their raw trials
    /// and run times; PTS leaves failed runs empty, and they are skipped.
    fn entries(&self, data: roxmltree::Node, f: &ResultFile) -> Result<Vec<ResultEntry>, ImportError> {
        let mut entries = Vec::new();
        for e in data.children().filter(|n| n.has_tag_name("Entry")) {
            let id = child_text(e, "Identifier").unwrap_or("").to_string();
            let value_text = child_text(e, "Value").unwrap_or("");
            let Some(value) = num(value_text) else {
                if value_text.trim().is_empty() {
                    continue;
                }
                return Err(self.error_at(e, format!("<Value> `{value_text}` is not a number")));
            };
            let trials: Vec<f64> = child_text(e, "RawString")
                .map(|raw| raw.split(':').filter_map(num).collect())
                .filter(|v: &Vec<f64>| !v.is_empty())
                .unwrap_or_else(|| vec![value]);
            let times: Vec<f64> = child_text(e, "JSON")
                .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
                .and_then(|v| {
                    v.get("test-run-times").and_then(|t| t.as_str()).map(|t| t.split(':').filter_map(num).collect())
                })
                .unwrap_or_default();
            let stamp = f.system(&id).map(|s| s.started.clone()).unwrap_or_default();
            entries.extend(ResultEntry::from_trials(&id, trials, Some(value), times, stamp));
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardware_lines_split_at_keys() {
        let m = parse_line(
            "Processor: AMD EPYC (2 Cores), Memory: 24GB, Disk: 120GB SSD + 20 x 500GB Samsung, Network: Intel I211, Realtek",
        );
        assert_eq!(m["Processor"], "AMD EPYC (2 Cores)");
        assert_eq!(m["Disk"], "120GB SSD + 20 x 500GB Samsung");
        assert_eq!(m["Network"], "Intel I211, Realtek");
    }
}
