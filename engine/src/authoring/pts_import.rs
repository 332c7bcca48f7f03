//! `engine profile import-pts DIR`: a PTS test-profile folder
//! (test-definition.xml, results-definition.xml, downloads.xml, install.sh)
//! converted into our profile YAML as far as it goes, with the list of
//! what did not convert. PTS facts used: the XML element names, that the
//! executable (`<Executable>`, else the profile's name) is a wrapper script
//! install.sh writes into the install directory (`~` there), that it writes
//! its output to `$LOG_FILE`, and that arguments are the default arguments,
//! then each option's prefix + value + postfix, then the post arguments.

use std::fmt::Write as _;
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ImportError {
    #[error("{path}: {msg}")]
    Read { path: String, msg: String },
}

/// The converted profile and what did not convert.
pub struct Imported {
    pub id: String,
    pub yaml: String,
    /// Files to put next to profile.yaml (install.sh …): (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    pub not_converted: Vec<String>,
}

fn read_xml(dir: &Path, name: &str) -> Result<Option<String>, ImportError> {
    let p = dir.join(name);
    match std::fs::read_to_string(&p) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ImportError::Read { path: p.display().to_string(), msg: e.to_string() }),
    }
}

fn child_text<'a>(n: roxmltree::Node<'a, 'a>, path: &[&str]) -> Option<String> {
    let mut cur = n;
    for p in path {
        cur = cur.children().find(|c| c.has_tag_name(*p))?;
    }
    cur.text().map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

/// A YAML double-quoted string.
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// `fs-mark-1.0.3` → `fs-mark`.
fn id_of(dir: &Path) -> String {
    let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let base = match name.rsplit_once('-') {
        Some((b, v)) if v.chars().next().is_some_and(|c| c.is_ascii_digit()) => b.to_string(),
        _ => name,
    };
    let id: String =
        base.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    id.trim_matches('-').to_string()
}

/// An option id from a PTS identifier (`block-size` → `block_size`).
fn option_id(s: &str, i: usize) -> String {
    let id: String = s.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let id = id.trim_matches('_').to_string();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) { format!("option{}", i + 1) } else { id }
}

fn known_children(n: roxmltree::Node, known: &[&str], where_: &str, out: &mut Vec<String>) {
    for c in n.children().filter(|c| c.is_element()) {
        let t = c.tag_name().name();
        if !known.contains(&t) {
            let v = c.text().map(str::trim).unwrap_or("");
            out.push(format!("{where_}/{t}{}", if v.is_empty() { String::new() } else { format!(" = {v:?}") }));
        }
    }
}

/// Converts the PTS test-profile folder `dir`.
pub fn import(dir: &Path) -> Result<Imported, ImportError> {
    let mut not = Vec::new();
    let td_text = read_xml(dir, "test-definition.xml")?.ok_or_else(|| ImportError::Read {
        path: dir.join("test-definition.xml").display().to_string(),
        msg: "missing: this is not a PTS test-profile folder".into(),
    })?;
    let bad = |name: &str, e: roxmltree::Error| ImportError::Read {
        path: dir.join(name).display().to_string(),
        msg: format!("not valid XML: {e}"),
    };
    let td = roxmltree::Document::parse(&td_text).map_err(|e| bad("test-definition.xml", e))?;
    let root = td.root_element();
    let info = root.children().find(|c| c.has_tag_name("TestInformation"));
    let prof = root.children().find(|c| c.has_tag_name("TestProfile"));
    let settings = root.children().find(|c| c.has_tag_name("TestSettings"));
    let get = |n: Option<roxmltree::Node>, k: &str| n.and_then(|n| child_text(n, &[k]));
    let id = id_of(dir);
    let version = get(prof, "Version").filter(|v| semver::Version::parse(v).is_ok()).unwrap_or_else(|| {
        not.push("TestProfile/Version: not semver; 1.0.0 used".into());
        "1.0.0".into()
    });
    let title = get(info, "Title").unwrap_or_else(|| id.clone());
    let test_type = match get(prof, "TestType").unwrap_or_default().to_ascii_lowercase().as_str() {
        t @ ("disk" | "processor" | "system" | "memory" | "network" | "graphics") => t.to_string(),
        other => {
            if !other.is_empty() {
                not.push(format!("TestProfile/TestType `{other}`: other used"));
            }
            "other".into()
        }
    };
    if let Some(i) = info {
        known_children(
            i,
            &[
                "Title",
                "AppVersion",
                "Description",
                "ResultScale",
                "Proportion",
                "TimesToRun",
                "Executable",
                "SubTitle",
            ],
            "TestInformation",
            &mut not,
        );
    }
    if let Some(p) = prof {
        known_children(
            p,
            &[
                "Version",
                "TestType",
                "License",
                "ProjectURL",
                "ExternalDependencies",
                "SupportedPlatforms",
                "SoftwareType",
                "Status",
                "Maintainer",
                "RequiresCoreVersionMin",
                "RequiresDisplay",
                "RepositoryURL",
                "EnvironmentSize",
            ],
            "TestProfile",
            &mut not,
        );
    }

    let mut y = String::new();
    let _ = writeln!(y, "# yaml-language-server: $schema=https://engine.invalid/schemas/profile.schema.json");
    let _ = writeln!(y, "# Converted from the PTS test profile {} by `engine profile import-pts`.", dir.display());
    let _ = writeln!(y, "id: {id}\nversion: {version}\ntitle: {}", q(&title));
    if let Some(v) = get(info, "AppVersion") {
        let _ = writeln!(y, "app_version: {}", q(&v));
    }
    if let Some(v) = get(info, "Description") {
        let _ = writeln!(y, "description: {}", q(&v));
    }
    let _ = writeln!(y, "test_type: {test_type}");
    if let Some(v) = get(prof, "ProjectURL") {
        let _ = writeln!(y, "project_url: {}", q(&v));
    }
    if let Some(v) = get(prof, "License") {
        let _ = writeln!(y, "license: {}", q(&v));
    }

    // Options: each entry's value is the option's prefix + value + postfix,
    // as PTS builds the argument string.
    let mut arg_words: Vec<String> = Vec::new();
    let default_args = settings.and_then(|s| child_text(s, &["Default", "Arguments"])).unwrap_or_default();
    let post_args = settings.and_then(|s| child_text(s, &["Default", "PostArguments"])).unwrap_or_default();
    arg_words.extend(default_args.split_whitespace().map(str::to_string));
    let mut opts = String::new();
    let mut used_ids = Vec::new();
    for (i, o) in settings.into_iter().flat_map(|s| s.children().filter(|c| c.has_tag_name("Option"))).enumerate() {
        let name = child_text(o, &["DisplayName"]).unwrap_or_else(|| format!("Option {}", i + 1));
        let mut oid = option_id(&child_text(o, &["Identifier"]).unwrap_or_default(), i);
        while used_ids.contains(&oid) {
            oid.push('_');
        }
        used_ids.push(oid.clone());
        let prefix = child_text(o, &["ArgumentPrefix"]).unwrap_or_default();
        let postfix = child_text(o, &["ArgumentPostfix"]).unwrap_or_default();
        // Prefixes keep their trailing space in PTS (`-s `); text() trimmed it.
        let raw_prefix = o
            .children()
            .find(|c| c.has_tag_name("ArgumentPrefix"))
            .and_then(|c| c.text())
            .unwrap_or(prefix.as_str())
            .to_string();
        let entries: Vec<roxmltree::Node> = o
            .children()
            .filter(|c| c.has_tag_name("Menu"))
            .flat_map(|m| m.children())
            .filter(|c| c.has_tag_name("Entry"))
            .collect();
        if entries.is_empty() {
            not.push(format!("TestSettings/Option `{name}`: a free-form value (no menu); left out"));
            continue;
        }
        let _ = writeln!(opts, "  - id: {oid}\n    name: {}\n    entries:", q(&name));
        for e in entries {
            let label = child_text(e, &["Name"]).unwrap_or_default();
            let value = e.children().find(|c| c.has_tag_name("Value")).and_then(|c| c.text()).unwrap_or("").trim();
            let full = format!("{raw_prefix}{value}{postfix}");
            let label = if label.is_empty() { value.to_string() } else { label };
            let _ = writeln!(opts, "      - {{label: {}, value: {}}}", q(&label), q(full.trim()));
            if child_text(e, &["Message"]).is_some() {
                not.push(format!("Option `{name}` entry `{label}`: Message (a note shown in PTS)"));
            }
        }
        if let Some(d) = child_text(o, &["DefaultEntry"]) {
            not.push(format!("Option `{name}`: DefaultEntry {d} (engine runs every entry in batch mode)"));
        }
        arg_words.push(format!("{{{{@{oid}}}}}"));
    }
    arg_words.extend(post_args.split_whitespace().map(str::to_string));
    if !opts.is_empty() {
        let _ = write!(y, "options:\n{opts}");
    }

    // Install: packages by PTS's generic names (engine uses the same ones),
    // the downloads (verified; PTS's install.sh unpacks them itself), and
    // install.sh run with HOME at the install directory, where it writes
    // the wrapper the test runs.
    let mut install = String::new();
    let deps: Vec<String> = get(prof, "ExternalDependencies")
        .map(|d| d.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    // Only names engine's package catalog knows; the others are listed.
    let catalog = crate::install::packages::Catalog::builtin();
    let (deps, unknown): (Vec<String>, Vec<String>) = deps.into_iter().partition(|d| catalog.get(d).is_some());
    for u in unknown {
        not.push(format!("ExternalDependencies `{u}`: not in packages.yaml (add it there, or to requirements)"));
    }
    if !deps.is_empty() {
        let _ = writeln!(install, "  packages: [{}]", deps.iter().map(|d| q(d)).collect::<Vec<_>>().join(", "));
    }
    if let Some(dl) = read_xml(dir, "downloads.xml")? {
        let doc = roxmltree::Document::parse(&dl).map_err(|e| bad("downloads.xml", e))?;
        let mut items = String::new();
        for p in doc.descendants().filter(|n| n.has_tag_name("Package")) {
            let urls: Vec<String> = child_text(p, &["URL"])
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let file = child_text(p, &["FileName"])
                .or_else(|| urls.first().and_then(|u| u.rsplit('/').next()).map(str::to_string))
                .unwrap_or_default();
            let Some(sha) = child_text(p, &["SHA256"]) else {
                not.push(format!("downloads.xml `{file}`: no SHA256 (engine verifies every download); left out"));
                continue;
            };
            let platform = child_text(p, &["PlatformSpecific"]).unwrap_or_default();
            if !platform.is_empty() && !platform.to_ascii_lowercase().contains("linux") {
                not.push(format!("downloads.xml `{file}`: for {platform} only; left out"));
                continue;
            }
            let _ = writeln!(items, "    - file: {}\n      sha256: {sha}", q(&file));
            if let Some(s) = child_text(p, &["FileSize"]).and_then(|s| s.parse::<u64>().ok()) {
                let _ = writeln!(items, "      size: {s}");
            }
            let _ = writeln!(items, "      urls: [{}]", urls.iter().map(|u| q(u)).collect::<Vec<_>>().join(", "));
            if urls.iter().any(|u| u.starts_with("http://")) {
                let _ =
                    writeln!(items, "      insecure: true   # http:// mirrors; the sha256 still guards the content");
            }
            let _ = writeln!(items, "      extract: false   # install.sh unpacks it");
            if let Some(a) = child_text(p, &["ArchitectureSpecific"]) {
                not.push(format!("downloads.xml `{file}`: ArchitectureSpecific {a} (kept for every architecture)"));
            }
        }
        if !items.is_empty() {
            let _ = write!(install, "  downloads:\n{items}");
        }
    }
    let mut files = Vec::new();
    let has_install = dir.join("install.sh").is_file();
    if has_install {
        let bytes = std::fs::read(dir.join("install.sh")).map_err(|e| ImportError::Read {
            path: dir.join("install.sh").display().to_string(),
            msg: e.to_string(),
        })?;
        files.push(("install.sh".to_string(), bytes));
        let _ = writeln!(install, "  build:\n    - shell: HOME={{{{install_dir}}}} sh {{{{profile_dir}}}}/install.sh");
    }
    if dir.join("install_windows.sh").is_file() {
        not.push("install_windows.sh: Windows only; not needed".into());
    }
    for extra in ["pre.sh", "interim.sh", "post.sh"] {
        if dir.join(extra).is_file() {
            not.push(format!("{extra}: PTS runs it around the test; not converted (write pre_test/post_test steps)"));
        }
    }
    if !install.is_empty() {
        let _ = write!(y, "install:\n{install}");
    }

    // The executor: the wrapper install.sh wrote, with LOG_FILE in the
    // trial's scratch directory, whose content is printed for the parsers.
    let exe = get(info, "Executable").unwrap_or_else(|| id.clone());
    let script = format!(
        "cd {{{{install_dir}}}} && LOG_FILE={{{{scratch_dir}}}}/pts.log HOME={{{{install_dir}}}} ./{exe} \"$@\"; rc=$?; \
         cat {{{{scratch_dir}}}}/pts.log 2>/dev/null; exit $rc"
    );
    let _ = writeln!(
        y,
        "executor:\n  external:\n    program: sh\n    args:\n      - \"-c\"\n      - {}\n      - {exe}",
        q(&script)
    );
    for w in &arg_words {
        let _ = writeln!(y, "      - {}", q(w));
    }
    if !has_install {
        not.push(format!("no install.sh: the wrapper `{exe}` must exist in the install directory"));
    }

    // Results.
    let scale = get(info, "ResultScale").unwrap_or_else(|| "Units".into());
    let prop = get(info, "Proportion").unwrap_or_else(|| "HIB".into());
    let mut results = String::new();
    let mut parsers = String::new();
    if let Some(rd) = read_xml(dir, "results-definition.xml")? {
        let doc = roxmltree::Document::parse(&rd).map_err(|e| bad("results-definition.xml", e))?;
        let rps: Vec<roxmltree::Node> = doc.descendants().filter(|n| n.has_tag_name("ResultsParser")).collect();
        let mut n = 0;
        for (i, p) in rps.iter().enumerate() {
            let Some(template) = p.children().find(|c| c.has_tag_name("OutputTemplate")).and_then(|c| c.text()) else {
                not.push(format!("ResultsParser {}: no OutputTemplate; left out", i + 1));
                continue;
            };
            if !template.contains("#_RESULT_#") {
                not.push(format!(
                    "ResultsParser {}: its OutputTemplate has no #_RESULT_# (named markers such as #_INITIAL_CREATE_#); left out",
                    i + 1
                ));
                continue;
            }
            if let Some(m) = child_text(*p, &["MatchToTestArguments"]) {
                if n > 0 {
                    not.push(format!(
                        "ResultsParser {} (MatchToTestArguments `{m}`): left out; only one parser per result is kept (select per option with `when:`)",
                        i + 1
                    ));
                    continue;
                }
                not.push(format!(
                    "ResultsParser {} (MatchToTestArguments `{m}`): kept for every test, not only those matching",
                    i + 1
                ));
            }
            n += 1;
            let rid = if n == 1 { "result".to_string() } else { format!("result{n}") };
            let unit = child_text(*p, &["ResultScale"]).unwrap_or_else(|| scale.clone());
            let pr = child_text(*p, &["ResultProportion"]).unwrap_or_else(|| prop.clone());
            let pr = if pr.eq_ignore_ascii_case("LIB") { "LIB" } else { "HIB" };
            let _ = writeln!(results, "  - {{id: {rid}, unit: {}, proportion: {pr}}}", q(&unit));
            let _ =
                writeln!(parsers, "  - result: {rid}\n    template: {}", q(template.trim_end_matches(['\r', '\n'])));
            for (tag, key) in [
                ("LineHint", "line_hint"),
                ("LineBeforeHint", "line_before_hint"),
                ("LineAfterHint", "line_after_hint"),
            ] {
                if let Some(v) = child_text(*p, &[tag]) {
                    let _ = writeln!(parsers, "    {key}: {}", q(&v));
                }
            }
            for (tag, key) in [("MultiplyResultBy", "multiply_by"), ("DivideResultBy", "divide_by")] {
                if let Some(v) = child_text(*p, &[tag]) {
                    match v.parse::<f64>() {
                        Ok(x) => {
                            let _ = writeln!(parsers, "    {key}: {x}");
                        }
                        Err(_) => not.push(format!("ResultsParser {}: {tag} `{v}` is not a number", i + 1)),
                    }
                }
            }
            known_children(
                *p,
                &[
                    "OutputTemplate",
                    "LineHint",
                    "LineBeforeHint",
                    "LineAfterHint",
                    "ResultScale",
                    "ResultProportion",
                    "MultiplyResultBy",
                    "DivideResultBy",
                    "MatchToTestArguments",
                ],
                &format!("ResultsParser {}", i + 1),
                &mut not,
            );
        }
        if n == 0 && !rps.is_empty() {
            not.push("no parser converted: the wall time is the result".into());
        }
        if n == 0 && rps.is_empty() {
            let monitors: Vec<String> = doc
                .descendants()
                .filter(|n| n.has_tag_name("Sensor"))
                .filter_map(|n| n.text().map(|t| t.trim().to_string()))
                .collect();
            if monitors.iter().any(|m| m == "sys.time") {
                let _ = writeln!(results, "  - {{id: seconds, unit: {}, proportion: LIB}}", q(&scale));
                let _ = writeln!(parsers, "  - {{result: seconds, wall_time: true}}   # PTS's sys.time monitor");
            } else {
                not.push(format!("results-definition.xml: nothing engine can parse (sensors: {monitors:?})"));
            }
            for m in monitors.iter().filter(|m| *m != "sys.time") {
                not.push(format!("SystemMonitor sensor `{m}`"));
            }
        }
    } else {
        not.push("no results-definition.xml: the wall time is the result".into());
    }
    if results.is_empty() {
        let _ = writeln!(results, "  - {{id: seconds, unit: Seconds, proportion: LIB}}");
        let _ = writeln!(parsers, "  - {{result: seconds, wall_time: true}}");
    }
    let _ = write!(y, "results:\n{results}parsers:\n{parsers}");
    if let Some(t) = get(info, "TimesToRun").and_then(|t| t.parse::<u32>().ok()) {
        let _ = writeln!(y, "trials:\n  times: {}", t.max(2));
    }
    Ok(Imported { id, yaml: y, files, not_converted: not })
}
