//! The manual (README.md and the book under `book/`) keeps working as
//! written: every link and anchor resolves offline and none leaves the
//! repository except to a public URL; every chapter is in SUMMARY.md;
//! every shell example runs (or says why not), every console example
//! prints what it shows, every YAML profile and suite validates; the
//! command and format references are what the code generates; the
//! walkthrough and the exit-code table hold.

use crate::common::*;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// README.md and every Markdown file of the book, relative to the repository.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("README.md")];
    let mut stack = vec![repo().join("book/src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p.strip_prefix(repo()).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

fn read(page: &Path) -> String {
    std::fs::read_to_string(repo().join(page)).unwrap()
}

/// mdBook's anchor of a heading: lower case, spaces to `-`, only
/// alphanumerics, `-` and `_` kept; repeats get `-1`, `-2`.
fn anchors(text: &str) -> BTreeSet<String> {
    let (mut out, mut seen) = (BTreeSet::new(), BTreeMap::<String, usize>::new());
    let mut current: Option<String> = None;
    for ev in Parser::new(text) {
        match ev {
            Event::Start(Tag::Heading { .. }) => current = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(c) = current.as_mut() {
                    c.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let h = current.take().unwrap_or_default();
                let id: String = h
                    .trim()
                    .chars()
                    .filter_map(|c| match c {
                        c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
                        c if c.is_whitespace() => Some('-'),
                        _ => None,
                    })
                    .collect();
                let n = seen.entry(id.clone()).or_default();
                out.insert(if *n == 0 { id.clone() } else { format!("{id}-{n}") });
                *n += 1;
            }
            _ => {}
        }
    }
    out
}

/// The links and images of a page: (destination, is an image).
fn links(text: &str) -> Vec<(String, bool)> {
    Parser::new(text)
        .filter_map(|ev| match ev {
            Event::Start(Tag::Link { dest_url, .. }) => Some((dest_url.to_string(), false)),
            Event::Start(Tag::Image { dest_url, .. }) => Some((dest_url.to_string(), true)),
            _ => None,
        })
        .collect()
}

#[test]
fn every_link_and_anchor_resolves_and_none_leaves_the_repository() {
    let book = repo().join("book/src");
    let mut bad = Vec::new();
    for page in pages() {
        let text = read(&page);
        let here = repo().join(&page);
        let dir = here.parent().unwrap();
        for (dest, _image) in links(&text) {
            if let Some(rest) = dest.strip_prefix("https://").or_else(|| dest.strip_prefix("http://")) {
                // Public: a host name, never this machine or a private one.
                let host = rest.split(['/', ':']).next().unwrap_or("");
                if !host.contains('.') || host.starts_with("127.") || host == "localhost" || host.ends_with(".local") {
                    bad.push(format!("{}: {dest}: not a public URL", page.display()));
                }
                continue;
            }
            if dest.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = dest.split_once('#').unwrap_or((&dest, ""));
            let target = if file.is_empty() { here.clone() } else { dir.join(file) };
            let Ok(target) = target.canonicalize() else {
                bad.push(format!("{}: {dest}: no such file", page.display()));
                continue;
            };
            if !target.starts_with(repo().canonicalize().unwrap()) {
                bad.push(format!("{}: {dest}: leaves the repository", page.display()));
                continue;
            }
            // The built book holds only book/src: a chapter links nothing else.
            if here.starts_with(&book) && !target.starts_with(book.canonicalize().unwrap()) {
                bad.push(format!("{}: {dest}: outside the book (name the file in `code` instead)", page.display()));
                continue;
            }
            if !anchor.is_empty() {
                let theirs = anchors(&std::fs::read_to_string(&target).unwrap_or_default());
                if !theirs.contains(anchor) {
                    bad.push(format!("{}: {dest}: no heading with anchor #{anchor}", page.display()));
                }
            }
        }
        if text.contains("../shared/") {
            bad.push(format!("{}: names ../shared/, which is outside the repository", page.display()));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_chapter_is_in_the_summary_and_the_readme_is_short() {
    let summary = read(Path::new("book/src/SUMMARY.md"));
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(d, _)| d).collect();
    for page in pages() {
        let Ok(rel) = page.strip_prefix("book/src") else { continue };
        let rel = rel.to_str().unwrap();
        if rel != "SUMMARY.md" {
            assert!(listed.contains(rel), "book/src/{rel} is in no chapter of SUMMARY.md");
        }
    }
    for l in &listed {
        assert!(repo().join("book/src").join(l).is_file(), "SUMMARY.md lists {l}, which does not exist");
    }
    let lines = read(Path::new("README.md")).lines().count();
    assert!(lines <= 250, "README.md has {lines} lines; the manual is the book");
}

/// A fenced block: its info string, first line number and text.
struct Block {
    page: PathBuf,
    line: usize,
    lang: String,
    text: String,
}

fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    for page in pages() {
        let text = read(&page);
        let mut open: Option<(usize, String, String)> = None;
        for (ev, range) in Parser::new(&text).into_offset_iter() {
            match ev {
                Event::Start(Tag::CodeBlock(kind)) => {
                    let lang = match kind {
                        CodeBlockKind::Fenced(info) => info.to_string(),
                        CodeBlockKind::Indented => "indented".into(),
                    };
                    open = Some((text[..range.start].lines().count() + 1, lang, String::new()));
                }
                Event::Text(t) => {
                    if let Some((_, _, body)) = open.as_mut() {
                        body.push_str(&t);
                    }
                }
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((line, lang, text)) = open.take() {
                        out.push(Block { page: page.clone(), line, lang, text });
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Why a block is not run, if its first line says so.
fn not_run(b: &Block) -> Option<&str> {
    let first = b.text.lines().next().unwrap_or("");
    first.strip_prefix("# not run: ").or_else(|| first.strip_prefix("# fragment"))
}

/// Every block says what it is: a shell example (run, or `# not run:
/// REASON`), a console session (run against its output), a YAML profile or
/// suite (validated; a part of one starts `# fragment`), or text.
#[test]
fn every_example_runs_or_says_why_not() {
    const KNOWN: [&str; 8] = ["sh", "console", "yaml", "text", "json", "toml", "ini", "rust"];
    let env = Env::new();
    // The walkthrough's profile, for the suites that name it.
    env.profile("dd-write", &walkthrough_profile());
    let mut bad = Vec::new();
    let (mut ran, mut validated, mut skipped) = (0, 0, 0);
    for b in blocks() {
        let at = format!("{}:{}", b.page.display(), b.line);
        let lang = b.lang.split([',', ' ']).next().unwrap_or("");
        if !KNOWN.contains(&lang) {
            bad.push(format!("{at}: a code block must name its kind (one of {KNOWN:?}), not `{}`", b.lang));
            continue;
        }
        if let Some(why) = not_run(&b) {
            if why.trim().is_empty() && lang == "sh" {
                bad.push(format!("{at}: `# not run:` needs its reason"));
            }
            skipped += 1;
            continue;
        }
        match lang {
            "sh" => {
                ran += 1;
                if let Err(e) = run_sh(&env, &b.text) {
                    bad.push(format!("{at}: {e}"));
                }
            }
            "console" => {
                ran += 1;
                if let Err(e) = run_console(&env, &b.text) {
                    bad.push(format!("{at}: {e}"));
                }
            }
            "yaml" => {
                validated += 1;
                if let Err(e) = validate_yaml(&env, &b.text) {
                    bad.push(format!("{at}: {e}"));
                }
            }
            _ => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The rule bites: some examples run and some profiles validate.
    assert!(ran >= 2 && validated >= 3 && skipped >= 5, "ran {ran}, validated {validated}, not run {skipped}");
}

/// Runs a shell example in a home of its own with engine on PATH; it must
/// succeed.
fn run_sh(env: &Env, script: &str) -> Result<(), String> {
    let home = tempfile::tempdir().unwrap();
    let bin_dir = Path::new(bin()).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new("sh")
        .args(["-euc", script])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("PATH", path)
        .env("ENGINE_HOME", env.home.path())
        .env("ENGINE_PROFILE_PATH", env.profiles.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("NO_COLOR", "1")
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("exited {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr)))
    }
}

/// Runs each `$ engine …` line of a console example and compares what it
/// printed with the lines shown under it (`...` stands for any lines).
fn run_console(env: &Env, text: &str) -> Result<(), String> {
    let mut steps: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix("$ ") {
            Some(cmd) => steps.push((cmd.to_string(), Vec::new())),
            None => steps.last_mut().ok_or("a console example starts with `$ `")?.1.push(line.to_string()),
        }
    }
    for (cmd, want) in steps {
        let args: Vec<&str> = cmd.split_whitespace().collect();
        if args.first() != Some(&"engine") {
            return Err(format!("`{cmd}`: a console example runs engine only"));
        }
        let r = env.run(&args[1..]);
        let got = format!("{}{}", r.stdout, r.stderr);
        if !matches(&got.lines().collect::<Vec<_>>(), &want.iter().map(String::as_str).collect::<Vec<_>>()) {
            return Err(format!("`{cmd}` printed:\n{got}\nnot what the example shows:\n{}", want.join("\n")));
        }
    }
    Ok(())
}

/// Lines against a pattern of lines where `...` matches any number of them
/// and `…` inside a line any text.
fn matches(got: &[&str], want: &[&str]) -> bool {
    match (want.first(), got.first()) {
        (None, _) => got.iter().all(|l| l.trim().is_empty()),
        (Some(&"..."), _) => (0..=got.len()).any(|i| matches(&got[i..], &want[1..])),
        (Some(_), None) => false,
        (Some(w), Some(g)) => line_matches(g, w) && matches(&got[1..], &want[1..]),
    }
}

fn line_matches(got: &str, want: &str) -> bool {
    let parts: Vec<&str> = want.split('…').collect();
    let mut rest = got;
    for (i, p) in parts.iter().enumerate() {
        match i {
            0 => match rest.strip_prefix(p) {
                Some(r) => rest = r,
                None => return false,
            },
            _ if i == parts.len() - 1 => return rest.ends_with(p),
            _ => match rest.find(p) {
                Some(k) => rest = &rest[k + p.len()..],
                None => return false,
            },
        }
    }
    rest.is_empty() || parts.len() > 1
}

/// A YAML example: a profile (`id:` and `executor:`) or a suite (`tests:`)
/// that `engine validate` accepts.
fn validate_yaml(env: &Env, text: &str) -> Result<(), String> {
    let is_profile = text.lines().any(|l| l.starts_with("id: ")) && text.contains("executor:");
    let is_suite = text.lines().any(|l| l.starts_with("tests:"));
    let dir = tempfile::tempdir().unwrap();
    let path = if is_profile {
        let id = text.lines().find_map(|l| l.strip_prefix("id: ")).unwrap().trim();
        let d = dir.path().join("test-profiles").join(id);
        std::fs::create_dir_all(&d).unwrap();
        d.join("profile.yaml")
    } else if is_suite {
        std::fs::create_dir_all(dir.path().join("suites")).unwrap();
        dir.path().join("suites/example.yaml")
    } else {
        return Err("neither a profile nor a suite: start it with `# fragment: WHAT` if it is a part of one".into());
    };
    std::fs::write(&path, text).unwrap();
    let r = env.run(&["validate", path.to_str().unwrap()]);
    if r.code == 0 { Ok(()) } else { Err(format!("does not validate: {}", r.stderr)) }
}

/// The generated references are what the code generates now
/// (`UPDATE_BOOK=1` writes them).
#[test]
fn the_references_are_generated_from_the_code() {
    let update = std::env::var_os("UPDATE_BOOK").is_some();
    let r = Env::new().run(&["man", "--markdown", "-"]);
    assert_eq!(r.code, 0, "{r:?}");
    let commands = r.stdout;
    let formats = formats_page();
    for (file, now) in [("book/src/reference/commands.md", commands), ("book/src/reference/formats.md", formats)] {
        let path = repo().join(file);
        if update {
            std::fs::write(&path, &now).unwrap();
            continue;
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == now,
            "{file} is not what the code generates: run `UPDATE_BOOK=1 cargo test --test integration book`"
        );
    }
}

/// The file formats, one section per JSON Schema in `schemas/`: every
/// field with its type and description.
fn formats_page() -> String {
    use std::fmt::Write;
    let mut page = String::from(
        "<!-- Generated from schemas/*.schema.json by tests/integration/book.rs; do not edit. -->\n\n# File formats\n\n\
         Every file engine reads or writes has a JSON Schema in `schemas/` (editors that speak\n\
         yaml-language-server complete and check profiles and suites with them). This page lists\n\
         each format's fields; a field's type links to the section that describes it.\n",
    );
    let mut names: Vec<_> = std::fs::read_dir(repo().join("schemas"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".schema.json"))
        .collect();
    names.sort();
    for name in names {
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(repo().join("schemas").join(&name)).unwrap()).unwrap();
        let kind = name.trim_end_matches(".schema.json");
        let title = s["title"].as_str().unwrap_or(kind);
        let _ = write!(page, "\n## {title}\n\n`schemas/{name}`");
        if let Some(d) = s["description"].as_str() {
            let _ = write!(page, ": {}", one_line(d));
        }
        page.push_str("\n\n");
        fields(&mut page, kind, &s);
        let defs = s.get("definitions").or_else(|| s.get("$defs")).and_then(|d| d.as_object());
        for (def, body) in defs.into_iter().flatten() {
            let _ = write!(page, "\n### {kind}: {def}\n\n");
            if let Some(d) = body["description"].as_str() {
                let _ = writeln!(page, "{}\n", one_line(d));
            }
            fields(&mut page, kind, body);
        }
    }
    page
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// A table of an object's properties, or what the type is.
fn fields(page: &mut String, kind: &str, s: &serde_json::Value) {
    use std::fmt::Write;
    let Some(props) = s["properties"].as_object() else {
        let _ = writeln!(page, "Type: {}\n", type_of(kind, s));
        return;
    };
    let required: BTreeSet<&str> = s["required"].as_array().into_iter().flatten().filter_map(|v| v.as_str()).collect();
    page.push_str("| field | type | description |\n| --- | --- | --- |\n");
    for (k, v) in props {
        let req = if required.contains(k.as_str()) { " (required)" } else { "" };
        let _ = writeln!(
            page,
            "| `{k}`{req} | {} | {} |",
            type_of(kind, v),
            one_line(v["description"].as_str().unwrap_or(""))
        );
    }
}

/// A schema's type in words, with a link to the section of a reference.
fn type_of(kind: &str, s: &serde_json::Value) -> String {
    if let Some(r) = s["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap_or(r);
        let anchor: String = format!("{kind}-{name}")
            .to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        return format!("[{name}](#{anchor})");
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alts) = s[key].as_array() {
            let words: Vec<String> = alts.iter().map(|a| type_of(kind, a)).collect();
            return words.join(" or ");
        }
    }
    if let Some(e) = s["enum"].as_array() {
        return e.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ").replace('|', "\\|");
    }
    if let Some(c) = s.get("const") {
        return format!("`{c}`");
    }
    let t = match &s["type"] {
        serde_json::Value::String(t) => t.clone(),
        serde_json::Value::Array(ts) => ts.iter().filter_map(|t| t.as_str()).collect::<Vec<_>>().join(" or "),
        _ => "any".into(),
    };
    if t.starts_with("array") {
        return format!("array of {}", type_of(kind, &s["items"]));
    }
    if t.starts_with("object")
        && let Some(extra) = s.get("additionalProperties").filter(|v| v.is_object())
    {
        return format!("map of {}", type_of(kind, extra));
    }
    t
}

pub fn walkthrough_profile() -> String {
    let page = read(Path::new("book/src/profiles/first-profile.md"));
    let start = page.find("**2. Write").expect("walkthrough step 2");
    let block = &page[start..];
    let yaml = block.split("```yaml\n").nth(1).unwrap().split("```").next().unwrap();
    yaml.to_string()
}

#[test]
fn the_walkthrough_profile_validates_and_runs() {
    let env = Env::new();
    let path = env.profile("dd-write", &walkthrough_profile());
    let r = env.run(&["validate", path.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.bench(&[
        "dd-write",
        "--option",
        "block_size=1MiB",
        "--runs",
        "2",
        "--save",
        "my-disk",
        "--identifier",
        "laptop: ext4",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("dd Write 9.1\nBlock Size: 1MiB\nSeconds < Lower Is Better\nlaptop: ext4 . "), "{r:?}");

    // The error the walkthrough shows for a misspelt key.
    let bad = walkthrough_profile().replace("    args:", "    argz:");
    let path = env.profile("dd-write", &bad);
    let r = env.run(&["validate", path.to_str().unwrap()]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("profile.yaml:19:5: unknown field `argz`\n  hint: did you mean `args`?"), "{r:?}");
    assert!(
        read(Path::new("book/src/profiles/first-profile.md")).contains("…/profile.yaml:19:5: unknown field `argz`")
    );
}

/// The book's exit-code table lists exactly the codes of
/// `ops::failure::exit`, and `engine --help` names each of them (6 was
/// missing from both once).
#[test]
fn the_exit_codes_are_one_table() {
    let table = read(Path::new("book/src/reference/exit-codes.md"));
    let codes: Vec<i32> =
        table.lines().filter_map(|l| l.strip_prefix("| ")?.split(" |").next()?.trim().parse().ok()).collect();
    let ours: Vec<i32> = engine_ops::exit::TABLE.iter().map(|(c, _)| *c).collect();
    assert_eq!(codes, ours);
    let help = Env::new().run(&["--help"]).stdout;
    for (c, w) in engine_ops::exit::TABLE {
        assert!(help.replace('\n', " ").contains(&format!("{c} {w}")), "--help lacks `{c} {w}`:\n{help}");
    }
}

#[test]
fn a_console_pattern_matches_as_documented() {
    assert!(matches(&["a", "b", "c"], &["a", "...", "c"]));
    assert!(matches(&["x: 1.5 s"], &["x: … s"]));
    assert!(!matches(&["a", "b"], &["a", "c"]));
    assert!(!matches(&["a"], &["a", "b"]));
}
