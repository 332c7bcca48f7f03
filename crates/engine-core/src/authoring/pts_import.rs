//! `engine profile import-pts DIR`: a PTS test-profile folder
//! (test-definition.xml, results-definition.xml, downloads.xml, install.sh)
//! converted into our profile YAML as far as it goes, with the list of
//! what did not convert. PTS facts used: the XML element names, that the
//! executable (`<Executable>`, else the profile's name) is a wrapper script
//! install.sh writes into the install directory (`~` there), that it writes
//! its output to `$LOG_FILE`, and that arguments are the default arguments,
//! then each option's prefix + value + postfix, then the post arguments.

use crate::model::profile::{
    BuildStep, Download, Entry, ExecutorDef, ExternalExecutor, Install, OptionDef, PackageItem, ParserDef, Profile,
    Proportion, ResultDef, SandboxDef, Scalar, TestType, Trials,
};
use roxmltree::{Document, Node};
use std::path::Path;
use thiserror::Error;

use crate::install::packages::Catalog as Packages;

#[derive(Debug, Error)]
pub enum ImportError {
    #[error("{path}: {msg}")]
    Read { path: String, msg: String },
    /// The folder's name gives no profile id (the id names the folder written).
    #[error("{path}: `{id}` (from the folder's name) is not a profile id")]
    BadId { path: String, id: String },
}

/// Files to put next to profile.yaml: (name, bytes).
type Files = Vec<(String, Vec<u8>)>;

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

/// The `results:` and `parsers:` of the profile.
#[derive(Default)]
struct Measured {
    results: Vec<ResultDef>,
    parsers: Vec<ParserDef>,
}

/// A result `id` in `unit`.
fn result(id: &str, unit: String, proportion: Proportion) -> ResultDef {
    ResultDef { id: id.into(), unit: unit.into(), proportion, description: None, signed: false }
}

/// The wall time as the result `seconds`.
fn wall_time() -> ParserDef {
    ParserDef { result: "seconds".into(), wall_time: true, ..ParserDef::default() }
}

/// The sections of test-definition.xml the importer reads.
#[derive(Clone, Copy)]
struct Definition<'a> {
    info: Option<Node<'a, 'a>>,
    prof: Option<Node<'a, 'a>>,
    settings: Option<Node<'a, 'a>>,
}

impl<'a> Definition<'a> {
    fn of(doc: &'a Document<'a>) -> Definition<'a> {
        let root = doc.root_element();
        let section = |name: &str| root.children().find(|c| c.has_tag_name(name));
        Definition { info: section("TestInformation"), prof: section("TestProfile"), settings: section("TestSettings") }
    }

    /// The text of `<TestInformation>/<key>`.
    fn info(&self, key: &str) -> Option<String> {
        self.info.and_then(|n| child_text(n, &[key]))
    }

    /// The text of `<TestProfile>/<key>`.
    fn prof(&self, key: &str) -> Option<String> {
        self.prof.and_then(|n| child_text(n, &[key]))
    }
}

const KNOWN_INFORMATION: &[&str] =
    &["Title", "AppVersion", "Description", "ResultScale", "Proportion", "TimesToRun", "Executable", "SubTitle"];

const KNOWN_PROFILE: &[&str] = &[
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
];

const KNOWN_PARSER: &[&str] = &[
    "OutputTemplate",
    "LineHint",
    "LineBeforeHint",
    "LineAfterHint",
    "ResultScale",
    "ResultProportion",
    "MultiplyResultBy",
    "DivideResultBy",
    "MatchToTestArguments",
];

/// The YAML's first line: its schema, for editors.
const SCHEMA_LINE: &str = "# yaml-language-server: $schema=https://engine.invalid/schemas/profile.schema.json";

/// Converts the PTS test-profile folder `dir`; `packages` are the generic
/// package names engine knows (PTS uses the same ones).
pub fn import(dir: &Path, packages: &Packages) -> Result<Imported, ImportError> {
    let td_text = read_xml(dir, "test-definition.xml")?.ok_or_else(|| ImportError::Read {
        path: dir.join("test-definition.xml").display().to_string(),
        msg: "missing: this is not a PTS test-profile folder".into(),
    })?;
    let mut im = Importer { dir, packages, not: Vec::new(), notes: Vec::new() };
    let td = im.parse("test-definition.xml", &td_text)?;
    let def = Definition::of(&td);
    let id = id_of(dir);
    if !crate::profile::validate::is_valid_id(&id) {
        return Err(ImportError::BadId { path: dir.display().to_string(), id: crate::model::names::shown(&id) });
    }
    let version = im.version(&def);
    let test_type = im.test_type(&def);
    im.unknown_elements(&def);
    let (options, args) = im.options(def.settings);
    let (install, files) = im.install(&def)?;
    let executor = im.executor(&def, &id, args, !files.is_empty());
    let measured = im.results(&def)?;
    let times = def.info("TimesToRun").and_then(|t| t.parse::<u32>().ok());
    let profile = Profile {
        title: def.info("Title").unwrap_or_else(|| id.clone()),
        id: id.clone(),
        version,
        app_version: def.info("AppVersion").map(Scalar),
        description: def.info("Description").unwrap_or_default(),
        test_type,
        project_url: def.prof("ProjectURL"),
        license: def.prof("License"),
        options,
        executor,
        results: measured.results,
        parsers: measured.parsers,
        trials: times.map(|t| Trials { times: t.max(2), ..Trials::default() }).unwrap_or_default(),
        scratch: Default::default(),
        requirements: Default::default(),
        hygiene: Default::default(),
        relevant_env: Vec::new(),
        install,
        // Always: a converted profile's shell steps were written for PTS by
        // someone else, and run confined (the book, "Sandbox").
        sandbox: Some(SandboxDef::On(true)),
        // It stays a shared profile, which cannot give itself more than the
        // sandbox's defaults.
        imported_from: Some(format!("pts/{id}")),
    };
    let yaml = im.to_yaml(&profile)?;
    Ok(Imported { id, yaml, files, not_converted: im.not })
}

/// One folder's conversion under way.
struct Importer<'a> {
    dir: &'a Path,
    packages: &'a Packages,
    /// What did not convert, in the order it was met.
    not: Vec<String>,
    /// Comment lines for the YAML's header: what its values mean where the
    /// YAML alone does not say.
    notes: Vec<String>,
}

impl Importer<'_> {
    /// Parses `text`, the folder's file `name`.
    fn parse<'t>(&self, name: &str, text: &'t str) -> Result<Document<'t>, ImportError> {
        Document::parse(text).map_err(|e| ImportError::Read {
            path: self.dir.join(name).display().to_string(),
            msg: format!("not valid XML: {e}"),
        })
    }

    /// The header comments, then the profile as YAML.
    fn to_yaml(&self, profile: &Profile) -> Result<String, ImportError> {
        let mut options = serde_saphyr::SerializerOptions::default();
        // Lists indented under their key, as in hand-written profiles.
        options.compact_list_indent = false;
        let body = serde_saphyr::to_string_with_options(profile, options).map_err(|e| ImportError::Read {
            path: self.dir.display().to_string(),
            msg: format!("cannot write the profile YAML: {e}"),
        })?;
        let mut y = format!(
            "{SCHEMA_LINE}\n# Converted from the PTS test profile {} by `engine profile import-pts`.\n",
            self.dir.display()
        );
        for n in &self.notes {
            y.push_str(&format!("# {n}\n"));
        }
        y.push_str(&body);
        Ok(y)
    }

    /// `<Version>` when it is semver, else 1.0.0.
    fn version(&mut self, def: &Definition) -> String {
        def.prof("Version").filter(|v| semver::Version::parse(v).is_ok()).unwrap_or_else(|| {
            self.not.push("TestProfile/Version: not semver; 1.0.0 used".into());
            "1.0.0".into()
        })
    }

    /// `<TestType>` when engine has it, else `other`.
    fn test_type(&mut self, def: &Definition) -> TestType {
        match def.prof("TestType").unwrap_or_default().to_ascii_lowercase().as_str() {
            "disk" => TestType::Disk,
            "processor" => TestType::Processor,
            "system" => TestType::System,
            "memory" => TestType::Memory,
            "network" => TestType::Network,
            "graphics" => TestType::Graphics,
            other => {
                if !other.is_empty() {
                    self.not.push(format!("TestProfile/TestType `{other}`: other used"));
                }
                TestType::Other
            }
        }
    }

    /// Lists the elements of `<TestInformation>` and `<TestProfile>` the importer does not read.
    fn unknown_elements(&mut self, def: &Definition) {
        if let Some(i) = def.info {
            known_children(i, KNOWN_INFORMATION, "TestInformation", &mut self.not);
        }
        if let Some(p) = def.prof {
            known_children(p, KNOWN_PROFILE, "TestProfile", &mut self.not);
        }
    }

    /// The options with a menu, and the executor's arguments: PTS's default
    /// arguments, each option's value, then the post arguments.
    fn options(&mut self, settings: Option<Node>) -> (Vec<OptionDef>, Vec<String>) {
        let words = |path: &[&str]| {
            let s = settings.and_then(|s| child_text(s, path)).unwrap_or_default();
            s.split_whitespace().map(str::to_string).collect::<Vec<_>>()
        };
        let mut args = words(&["Default", "Arguments"]);
        let mut options = Vec::new();
        let mut used_ids = Vec::new();
        for (i, o) in settings.into_iter().flat_map(|s| s.children().filter(|c| c.has_tag_name("Option"))).enumerate() {
            if let Some(option) = self.option(o, i, &mut used_ids) {
                args.push(format!("{{{{@{}}}}}", option.id));
                options.push(option);
            }
        }
        args.extend(words(&["Default", "PostArguments"]));
        (options, args)
    }

    /// One `<Option>`: each menu entry's value is the option's prefix +
    /// value + postfix, as PTS builds the argument string. `None` for an
    /// option without a menu.
    fn option(&mut self, o: Node, i: usize, used_ids: &mut Vec<String>) -> Option<OptionDef> {
        let name = child_text(o, &["DisplayName"]).unwrap_or_else(|| format!("Option {}", i + 1));
        let mut id = option_id(&child_text(o, &["Identifier"]).unwrap_or_default(), i);
        while used_ids.contains(&id) {
            id.push('_');
        }
        used_ids.push(id.clone());
        let prefix = child_text(o, &["ArgumentPrefix"]).unwrap_or_default();
        let postfix = child_text(o, &["ArgumentPostfix"]).unwrap_or_default();
        // Prefixes keep their trailing space in PTS (`-s `); text() trimmed it.
        let raw_prefix = o
            .children()
            .find(|c| c.has_tag_name("ArgumentPrefix"))
            .and_then(|c| c.text())
            .unwrap_or(prefix.as_str())
            .to_string();
        let menu: Vec<Node> = o
            .children()
            .filter(|c| c.has_tag_name("Menu"))
            .flat_map(|m| m.children())
            .filter(|c| c.has_tag_name("Entry"))
            .collect();
        if menu.is_empty() {
            self.not.push(format!("TestSettings/Option `{name}`: a free-form value (no menu); left out"));
            return None;
        }
        let mut entries = Vec::new();
        for e in menu {
            let label = child_text(e, &["Name"]).unwrap_or_default();
            let value = e.children().find(|c| c.has_tag_name("Value")).and_then(|c| c.text()).unwrap_or("").trim();
            let full = format!("{raw_prefix}{value}{postfix}");
            let label = if label.is_empty() { value.to_string() } else { label };
            if child_text(e, &["Message"]).is_some() {
                self.not.push(format!("Option `{name}` entry `{label}`: Message (a note shown in PTS)"));
            }
            entries.push(Entry { label, value: Some(Scalar(full.trim().to_string())), values: Default::default() });
        }
        if let Some(d) = child_text(o, &["DefaultEntry"]) {
            self.not.push(format!("Option `{name}`: DefaultEntry {d} (engine runs every entry in batch mode)"));
        }
        Some(OptionDef { id, name, description: None, entries, default: Vec::new() })
    }

    /// `install:` — packages by PTS's generic names (engine uses the same
    /// ones), the downloads (verified; PTS's install.sh unpacks them itself),
    /// and install.sh run with HOME at the install directory, where it writes
    /// the wrapper the test runs. Also the files to put next to profile.yaml.
    fn install(&mut self, def: &Definition) -> Result<(Option<Install>, Files), ImportError> {
        let packages = self.packages(def.prof("ExternalDependencies"));
        let downloads = self.downloads()?;
        let (build, files) = self.install_script()?;
        if self.dir.join("install_windows.sh").is_file() {
            self.not.push("install_windows.sh: Windows only; not needed".into());
        }
        for extra in ["pre.sh", "interim.sh", "post.sh"] {
            if self.dir.join(extra).is_file() {
                self.not.push(format!(
                    "{extra}: PTS runs it around the test; not converted (write pre_test/post_test steps)"
                ));
            }
        }
        let install = Install { packages, downloads, build };
        let empty = install.packages.is_empty() && install.downloads.is_empty() && install.build.is_empty();
        Ok(((!empty).then_some(install), files))
    }

    /// The `<ExternalDependencies>` engine's package catalog knows; the
    /// others are listed as not converted.
    fn packages(&mut self, deps: Option<String>) -> Vec<PackageItem> {
        let deps: Vec<String> = deps
            .map(|d| d.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default();
        let (known, unknown): (Vec<String>, Vec<String>) =
            deps.into_iter().partition(|d| self.packages.get(d).is_some());
        for u in unknown {
            self.not
                .push(format!("ExternalDependencies `{u}`: not in packages.yaml (add it there, or to requirements)"));
        }
        known.into_iter().map(PackageItem::Name).collect()
    }

    /// The downloads.xml packages engine can verify, for Linux.
    fn downloads(&mut self) -> Result<Vec<Download>, ImportError> {
        let Some(xml) = read_xml(self.dir, "downloads.xml")? else { return Ok(Vec::new()) };
        let doc = self.parse("downloads.xml", &xml)?;
        let downloads: Vec<Download> =
            doc.descendants().filter(|n| n.has_tag_name("Package")).filter_map(|p| self.download(p)).collect();
        if !downloads.is_empty() {
            self.notes.push("The downloads have `extract: false`: install.sh unpacks them.".into());
        }
        if downloads.iter().any(|d| d.insecure) {
            self.notes.push(
                "`insecure: true` marks a download with an http:// mirror; the sha256 still guards the content.".into(),
            );
        }
        Ok(downloads)
    }

    /// One `<Package>`; `None` when it has no SHA256 or is for another OS.
    fn download(&mut self, p: Node) -> Option<Download> {
        let urls: Vec<String> = child_text(p, &["URL"])
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let file = child_text(p, &["FileName"])
            .or_else(|| urls.first().and_then(|u| u.rsplit('/').next()).map(str::to_string))
            .unwrap_or_default();
        // The name becomes a file in the install folder.
        if let Err(e) = crate::model::names::check(&file) {
            self.not.push(format!(
                "downloads.xml `{}`: not a file name ({e}); left out",
                crate::model::names::shown(&file)
            ));
            return None;
        }
        let Some(sha256) = child_text(p, &["SHA256"]) else {
            self.not.push(format!("downloads.xml `{file}`: no SHA256 (engine verifies every download); left out"));
            return None;
        };
        let platform = child_text(p, &["PlatformSpecific"]).unwrap_or_default();
        if !platform.is_empty() && !platform.to_ascii_lowercase().contains("linux") {
            self.not.push(format!("downloads.xml `{file}`: for {platform} only; left out"));
            return None;
        }
        if let Some(a) = child_text(p, &["ArchitectureSpecific"]) {
            self.not.push(format!("downloads.xml `{file}`: ArchitectureSpecific {a} (kept for every architecture)"));
        }
        Some(Download {
            file,
            sha256: Some(sha256),
            size: child_text(p, &["FileSize"]).and_then(|s| s.parse::<u64>().ok()),
            // The sha256 still guards the content of an http:// mirror.
            insecure: urls.iter().any(|u| u.starts_with("http://")),
            urls,
            platform: None,
            // PTS's install.sh unpacks the downloads itself.
            extract: Some(false),
            when: Default::default(),
        })
    }

    /// install.sh as the build step, and its bytes to copy; nothing without one.
    fn install_script(&self) -> Result<(Vec<BuildStep>, Files), ImportError> {
        let path = self.dir.join("install.sh");
        if !path.is_file() {
            return Ok((Vec::new(), Vec::new()));
        }
        let bytes = std::fs::read(&path)
            .map_err(|e| ImportError::Read { path: path.display().to_string(), msg: e.to_string() })?;
        let step = BuildStep {
            shell: Some("HOME={{install_dir}} sh {{profile_dir}}/install.sh".into()),
            program: None,
            args: Vec::new(),
            timeout: None,
            when: Default::default(),
        };
        Ok((vec![step], vec![("install.sh".to_string(), bytes)]))
    }

    /// The executor: the wrapper install.sh wrote, with LOG_FILE in the
    /// trial's scratch directory, whose content is printed for the parsers.
    fn executor(&mut self, def: &Definition, id: &str, args: Vec<String>, has_install: bool) -> ExecutorDef {
        let exe = def.info("Executable").unwrap_or_else(|| id.to_string());
        let script = format!(
            "cd {{{{install_dir}}}} && LOG_FILE={{{{scratch_dir}}}}/pts.log HOME={{{{install_dir}}}} ./{exe} \"$@\"; rc=$?; \
             cat {{{{scratch_dir}}}}/pts.log 2>/dev/null; exit $rc"
        );
        if !has_install {
            self.not.push(format!("no install.sh: the wrapper `{exe}` must exist in the install directory"));
        }
        let mut all = vec!["-c".to_string(), script, exe];
        all.extend(args);
        ExecutorDef::External(ExternalExecutor {
            program: "sh".into(),
            args: all,
            env: Default::default(),
            stdin: None,
            timeout: None,
            interval_logs: None,
            pre_test: Vec::new(),
            pre_trial: Vec::new(),
            post_trial: Vec::new(),
            post_test: Vec::new(),
        })
    }

    /// The results and their parsers from results-definition.xml; the wall
    /// time when none converts.
    fn results(&mut self, def: &Definition) -> Result<Measured, ImportError> {
        let scale = def.info("ResultScale").unwrap_or_else(|| "Units".into());
        let prop = def.info("Proportion").unwrap_or_else(|| "HIB".into());
        let mut m = Measured::default();
        match read_xml(self.dir, "results-definition.xml")? {
            Some(rd) => {
                let doc = self.parse("results-definition.xml", &rd)?;
                self.parsers(&doc, &scale, &prop, &mut m);
            }
            None => self.not.push("no results-definition.xml: the wall time is the result".into()),
        }
        if m.results.is_empty() {
            m.results.push(result("seconds", "Seconds".into(), Proportion::Lib));
            m.parsers.push(wall_time());
        }
        Ok(m)
    }

    /// A result and a template parser per `<ResultsParser>` that converts;
    /// PTS's sys.time monitor when the file has no parser.
    fn parsers(&mut self, doc: &Document, scale: &str, prop: &str, m: &mut Measured) {
        let rps: Vec<Node> = doc.descendants().filter(|n| n.has_tag_name("ResultsParser")).collect();
        for (i, p) in rps.iter().enumerate() {
            if let Some((result, parser)) = self.parser(*p, i, m.results.len() + 1, scale, prop) {
                m.results.push(result);
                m.parsers.push(parser);
            }
        }
        if m.results.is_empty() && !rps.is_empty() {
            self.not.push("no parser converted: the wall time is the result".into());
        }
        if m.results.is_empty() && rps.is_empty() {
            self.monitors(doc, scale, m);
        }
    }

    /// The `i`-th `<ResultsParser>` as result number `n`; `None` when it
    /// does not convert (no `#_RESULT_#`, or a second MatchToTestArguments).
    fn parser(&mut self, p: Node, i: usize, n: usize, scale: &str, prop: &str) -> Option<(ResultDef, ParserDef)> {
        let Some(template) = p.children().find(|c| c.has_tag_name("OutputTemplate")).and_then(|c| c.text()) else {
            self.not.push(format!("ResultsParser {}: no OutputTemplate; left out", i + 1));
            return None;
        };
        if !template.contains("#_RESULT_#") {
            self.not.push(format!(
                "ResultsParser {}: its OutputTemplate has no #_RESULT_# (named markers such as #_INITIAL_CREATE_#); left out",
                i + 1
            ));
            return None;
        }
        if let Some(m) = child_text(p, &["MatchToTestArguments"]) {
            if n > 1 {
                self.not.push(format!(
                    "ResultsParser {} (MatchToTestArguments `{m}`): left out; only one parser per result is kept (select per option with `when:`)",
                    i + 1
                ));
                return None;
            }
            self.not.push(format!(
                "ResultsParser {} (MatchToTestArguments `{m}`): kept for every test, not only those matching",
                i + 1
            ));
        }
        let id = if n == 1 { "result".to_string() } else { format!("result{n}") };
        let unit = child_text(p, &["ResultScale"]).unwrap_or_else(|| scale.to_string());
        // PTS's loose spellings (`MB/sec`, `Ops/sec`) as engine writes them;
        // an ambiguous one (bits or bytes?) is kept for the author to settle.
        let unit = crate::units::loose_unit(&unit).filter(|e| !e.contains(" or ")).unwrap_or(unit);
        let pr = child_text(p, &["ResultProportion"]).unwrap_or_else(|| prop.to_string());
        let proportion = if pr.eq_ignore_ascii_case("LIB") { Proportion::Lib } else { Proportion::Hib };
        let hint = |tag: &str| child_text(p, &[tag]);
        let parser = ParserDef {
            result: id.clone(),
            template: Some(template.trim_end_matches(['\r', '\n']).to_string()),
            line_hint: hint("LineHint"),
            line_before_hint: hint("LineBeforeHint"),
            line_after_hint: hint("LineAfterHint"),
            multiply_by: self.factor(p, i, "MultiplyResultBy"),
            divide_by: self.factor(p, i, "DivideResultBy"),
            ..ParserDef::default()
        };
        known_children(p, KNOWN_PARSER, &format!("ResultsParser {}", i + 1), &mut self.not);
        Some((result(&id, unit, proportion), parser))
    }

    /// A parser's `<MultiplyResultBy>` or `<DivideResultBy>`, when it is a number.
    fn factor(&mut self, p: Node, i: usize, tag: &str) -> Option<f64> {
        let v = child_text(p, &[tag])?;
        match v.parse::<f64>() {
            Ok(x) => Some(x),
            Err(_) => {
                self.not.push(format!("ResultsParser {}: {tag} `{v}` is not a number", i + 1));
                None
            }
        }
    }

    /// A results-definition.xml without parsers: PTS's sys.time monitor is
    /// the wall time; other sensors do not convert.
    fn monitors(&mut self, doc: &Document, scale: &str, m: &mut Measured) {
        let monitors: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("Sensor"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect();
        if monitors.iter().any(|s| s == "sys.time") {
            m.results.push(result("seconds", scale.to_string(), Proportion::Lib));
            m.parsers.push(wall_time());
            self.notes.push("The result `seconds` is the wall time, as PTS's sys.time monitor measures it.".into());
        } else {
            self.not.push(format!("results-definition.xml: nothing engine can parse (sensors: {monitors:?})"));
        }
        for s in monitors.iter().filter(|s| *s != "sys.time") {
            self.not.push(format!("SystemMonitor sensor `{s}`"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::{ExecutorDef, Origin, Proportion};
    use crate::profile::load::profile_from_str;

    fn load(imp: &Imported) -> crate::model::profile::Profile {
        profile_from_str(&imp.yaml, "profile.yaml", Origin::Builtin, &Packages::builtin())
            .unwrap_or_else(|e| panic!("{e:?}\n{}", imp.yaml))
            .profile
    }

    #[test]
    fn a_real_pts_profile_loads_as_converted() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/pts-profiles/fs-mark-1.0.3");
        let imp = import(&dir, &Packages::builtin()).unwrap();
        assert_eq!(imp.id, "fs-mark");
        assert!(imp.yaml.starts_with(SCHEMA_LINE), "{}", imp.yaml);
        assert!(imp.yaml.contains("line_before_hint: Files/sec"), "{}", imp.yaml);
        assert!(imp.yaml.contains("# `insecure: true`"), "{}", imp.yaml);
        assert_eq!(imp.files.len(), 1);
        let p = load(&imp);
        assert_eq!((p.version.as_str(), p.title.as_str(), p.trials.times), ("1.0.3", "FS-Mark", 3));
        assert_eq!(p.options[0].entries.len(), 4);
        assert_eq!(p.options[0].entries[0].value.as_ref().unwrap().as_str(), "-L 20 -s 1048576 -n 1000");
        let d = &p.install.as_ref().unwrap().downloads[0];
        assert!(d.insecure && d.extract == Some(false) && d.size == Some(15322));
        let ExecutorDef::External(x) = &p.executor else { panic!("{:?}", p.executor) };
        assert_eq!(x.args[2..], ["fs-mark", "-d", "scratch", "{{@test}}"]);
        assert_eq!(p.parsers[0].line_before_hint.as_deref(), Some("Files/sec"));
    }

    /// Text that YAML would misread unquoted (`: `, `#`, quotes, a
    /// leading `-`, numbers) comes back as it was.
    #[test]
    fn awkward_text_survives_the_yaml() {
        let d = tempfile::tempdir().unwrap();
        let title = r#"Say "hi": it's #1 - or 'not'"#;
        std::fs::write(
            d.path().join("test-definition.xml"),
            format!(
                "<PhoronixTestSuite><TestInformation><Title>{}</Title><AppVersion>1.10</AppVersion>\
                 <ResultScale>MB/s</ResultScale><Proportion>LIB</Proportion><TimesToRun>1</TimesToRun></TestInformation>\
                 <TestProfile><Version>2.0</Version><TestType>Bogus</TestType></TestProfile>\
                 <TestSettings><Default><Arguments>-x: #y</Arguments></Default><Option><DisplayName>Mode</DisplayName>\
                 <Identifier>1mode</Identifier><ArgumentPrefix>--m=</ArgumentPrefix><Menu><Entry><Name>yes</Name>\
                 <Value>- 1</Value></Entry></Menu></Option></TestSettings></PhoronixTestSuite>",
                title.replace('"', "&quot;")
            ),
        )
        .unwrap();
        std::fs::write(
            d.path().join("results-definition.xml"),
            "<PhoronixTestSuite><ResultsParser><OutputTemplate>avg: #_RESULT_# # \"x\"\n</OutputTemplate>\
             <MultiplyResultBy>0.001</MultiplyResultBy><DivideResultBy>x</DivideResultBy></ResultsParser></PhoronixTestSuite>",
        )
        .unwrap();
        std::fs::write(d.path().join("install.sh"), "#!/bin/sh\n").unwrap();
        let imp = import(d.path(), &Packages::builtin()).unwrap();
        let p = load(&imp);
        assert_eq!(p.title, title);
        assert_eq!(p.app_version.as_ref().map(|v| v.as_str()), Some("1.10"));
        assert_eq!(p.version, "1.0.0");
        assert_eq!(p.trials.times, 2, "at least two trials");
        assert_eq!(p.options[0].id, "option1");
        assert_eq!(
            (p.options[0].entries[0].label.as_str(), p.options[0].entries[0].value.as_ref().unwrap().as_str()),
            ("yes", "--m=- 1")
        );
        let ExecutorDef::External(x) = &p.executor else { panic!("{:?}", p.executor) };
        assert_eq!(x.args[3..], ["-x:", "#y", "{{@option1}}"]);
        assert_eq!(p.results[0].unit, "MB/s");
        assert_eq!(p.results[0].proportion, Proportion::Lib);
        assert_eq!(p.parsers[0].template.as_deref(), Some("avg: #_RESULT_# # \"x\""));
        assert_eq!((p.parsers[0].multiply_by, p.parsers[0].divide_by), (Some(0.001), None));
        for n in ["TestProfile/Version: not semver", "TestType `bogus`", "DivideResultBy `x` is not a number"] {
            assert!(imp.not_converted.iter().any(|m| m.contains(n)), "{n}: {:?}", imp.not_converted);
        }
    }

    /// Without parsers, PTS's sys.time monitor is the wall time; the header says so.
    #[test]
    fn the_sys_time_monitor_is_the_wall_time() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("test-definition.xml"),
            "<PhoronixTestSuite><TestInformation><Title>T</Title></TestInformation></PhoronixTestSuite>",
        )
        .unwrap();
        std::fs::write(
            d.path().join("results-definition.xml"),
            "<PhoronixTestSuite><SystemMonitor><Sensor>sys.time</Sensor></SystemMonitor></PhoronixTestSuite>",
        )
        .unwrap();
        std::fs::write(d.path().join("install.sh"), "#!/bin/sh\n").unwrap();
        let imp = import(d.path(), &Packages::builtin()).unwrap();
        assert!(imp.yaml.contains("# The result `seconds` is the wall time"), "{}", imp.yaml);
        let p = load(&imp);
        assert_eq!((p.results[0].id.as_str(), p.results[0].unit.as_str()), ("seconds", "Units"));
        assert!(p.parsers[0].wall_time);
        assert_eq!(p.install.as_ref().map(|i| (i.downloads.len(), i.build.len())), Some((0, 1)));
    }

    /// The folder's name and downloads.xml's file names become paths: a
    /// folder that gives no id is refused, a file name that is not a name
    /// is left out (and said so).
    #[test]
    fn names_that_would_be_paths_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let td = "<PhoronixTestSuite><TestInformation><Title>T</Title></TestInformation></PhoronixTestSuite>";
        let bad = root.path().join("--1.0");
        std::fs::create_dir(&bad).unwrap();
        std::fs::write(bad.join("test-definition.xml"), td).unwrap();
        let e = import(&bad, &Packages::builtin()).err().expect("refused").to_string();
        assert!(e.contains("is not a profile id"), "{e}");

        let d = root.path().join("dl-1.0");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("test-definition.xml"), td).unwrap();
        let sha = "0".repeat(64);
        std::fs::write(
            d.join("downloads.xml"),
            format!(
                "<PhoronixTestSuite><Downloads><Package><URL>https://x.invalid/a.tgz</URL>\
                 <FileName>../../../etc/cron.d/x</FileName><SHA256>{sha}</SHA256></Package>\
                 <Package><URL>https://x.invalid/ok.tgz</URL><SHA256>{sha}</SHA256></Package></Downloads></PhoronixTestSuite>"
            ),
        )
        .unwrap();
        let imp = import(&d, &Packages::builtin()).unwrap();
        assert_eq!(imp.id, "dl");
        assert!(imp.yaml.contains("ok.tgz") && !imp.yaml.contains("cron.d"), "{}", imp.yaml);
        assert!(
            imp.not_converted.iter().any(|m| m.contains("not a file name (it contains `/`")),
            "{:?}",
            imp.not_converted
        );
    }
}
