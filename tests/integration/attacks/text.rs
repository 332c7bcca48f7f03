//! Untrusted text is inert wherever it lands (issue 37 item 7, issue 44
//! item 6): a signed repository profile whose title, description, option
//! name and labels, units and failing command's stderr hold OSC and CSI
//! escapes (retitling the window, clearing the screen, faking "all tests
//! passed"), BEL, CR, C1 controls and a bidi override; spreadsheet formulas
//! (`=HYPERLINK(…)`, `+cmd|…`, `@SUM`); HTML (`<img onerror>`, `<script>`)
//! and Markdown table syntax. Every listing, run, report, export and error
//! shows that text with its controls as visible escapes (`\e`, `\x07`), and
//! every file it is exported to opens as data: CSV cells that are no
//! formulas, Markdown without tags, XML that parses. A value of 1e308 is
//! written in scientific notation, never as 309 digits.

use super::Hostile;
use crate::common::{Env, Run, SpawnScript, bin};

/// The hostile profile. Its `ok` entry yields -2.5e20 and 1e308; its
/// `fail` entry writes escapes to stderr and fails.
const EVIL: &str = r#"id: evil
version: 1.0.0
title: "Evil \e]0;pwned\a\e[2J\r\e[32mall tests passed <script>alert(1)</script> | \x9b31m \u202egnp.exe"
description: "=HYPERLINK(\"http://evil.example/\",\"click\") <img src=x onerror=alert(1)> | two\nlines"
test_type: other
options:
  - id: mode
    name: "+cmd|' /C calc'!A0 \e[2J"
    entries:
      - {label: "@SUM(1+1) \e]0;pwned\a <script>alert(2)</script>", value: ok}
      - {label: "-2+3 \e[32mall tests passed\r", value: fail}
executor:
  external:
    program: sh
    args: ["-c", "if [ {{mode}} = fail ]; then printf '\\033]0;pwned\\007\\033[2J\\r\\033[32mall tests passed\\n' >&2; exit 1; fi; echo value: -2.5e20; echo big: 1e308"]
    timeout: 30s
results:
  - {id: x, unit: "=1+1 \e[2J<script>alert(3)</script>|U\r", proportion: HIB, signed: true}
  - {id: big, unit: "@U \e]0;pwned\a", proportion: HIB}
parsers:
  - {result: x, regex: 'value: (?P<value>\S+)'}
  - {result: big, regex: 'big: (?P<value>\S+)'}
"#;

/// An identifier as a shared result could carry it.
const IDENTIFIER: &str = "=cmd|' /C calc'!A0 <img src=x onerror=alert(4)>";

/// What no output may carry raw: ESC (every escape sequence), BEL, CR,
/// NUL, the C1 CSI and OSC, and a bidi override.
const RAW: [char; 7] = ['\x1b', '\x07', '\r', '\0', '\u{9b}', '\u{9d}', '\u{202e}'];

fn assert_inert(what: &str, text: &str) {
    for c in RAW {
        assert!(!text.contains(c), "{what}: a raw {c:?} got out:\n{text}");
    }
    // No 309-digit number either.
    let longest = text.split(|c: char| !c.is_ascii_digit()).map(str::len).max().unwrap_or(0);
    assert!(longest < 20, "{what}: a {longest}-digit number:\n{text}");
}

fn assert_run_inert(what: &str, r: &Run) {
    assert_inert(&format!("{what}: stdout"), &r.stdout);
    assert_inert(&format!("{what}: stderr"), &r.stderr);
}

/// A test's home with the hostile repository added as `hostile`.
fn added() -> (Env, Hostile) {
    let env = Env::new();
    let h = Hostile::new(&env);
    h.profile("evil", EVIL);
    let r = h.add(&env, "hostile");
    assert_eq!(r.code, 0, "{r:?}");
    assert_run_inert("repo add", &r);
    (env, h)
}

/// Runs both entries piped into result `name` (the `fail` one fails).
fn bench(env: &Env, name: &str, identifier: &str, extra: &[&str]) -> Run {
    let mut args = vec!["hostile/evil", "--runs", "1", "--save", name, "--identifier", identifier];
    args.extend_from_slice(extra);
    let r = env.bench(&args);
    assert_eq!(r.code, 4, "one test fails, the other is saved: {r:?}");
    r
}

#[test]
fn listings_and_info_show_hostile_text_escaped() {
    let (env, _h) = added();
    let r = env.run(&["list", "profiles"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_run_inert("list profiles", &r);
    let row = r.stdout.lines().find(|l| l.starts_with("hostile/evil@1.0.0")).expect("the profile is listed");
    assert!(row.contains("\\e]0;pwned\\x07\\e[2J\\r\\e[32mall tests passed"), "{row}");
    assert!(row.contains("\\u{9b}31m \\u{202e}gnp.exe"), "{row}");

    let r = env.run(&["info", "hostile/evil"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_run_inert("info", &r);
    assert!(r.stdout.contains("Evil \\e]0;pwned\\x07\\e[2J\\r\\e[32mall tests passed"), "{r:?}");
    assert!(r.stdout.contains("@SUM(1+1) \\e]0;pwned\\x07"), "{r:?}");
    assert!(r.stdout.contains("-2+3 \\e[32mall tests passed\\r"), "{r:?}");
}

#[test]
fn a_hostile_run_shows_its_text_and_failure_tail_inert() {
    let (env, _h) = added();
    // Piped: a line per test on stderr, the failure's stderr tail, the report on stdout.
    let r = bench(&env, "evil", IDENTIFIER, &[]);
    assert_run_inert("benchmark (piped)", &r);
    assert!(r.stderr.contains("| \\e]0;pwned\\x07\\e[2J\\r\\e[32mall tests passed"), "the failure tail: {r:?}");
    assert!(r.stdout.contains("1.000e308") && r.stdout.contains("-2.500e20"), "{r:?}");

    // On a terminal: the progress line and the compact results; the
    // terminal's own escapes (the progress line's) are engine's, none of the profile's.
    let cmdline = format!(
        "{} benchmark hostile/evil -y --runs 1 --save tty --identifier tty --target-dir {}",
        bin(),
        env.target.path().display()
    );
    let out = env.cmd(&[]).spawn_script(&cmdline).wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for bad in ["\x1b]0;pwned", "\x1b[2J", "\x1b[32mall", "\x07", "\u{9b}", "\u{202e}"] {
        assert!(!text.contains(bad), "{bad:?} reached the terminal:\n{text}");
    }
    assert!(text.contains("\\e]0;pwned\\x07") && text.contains("1.000e308"), "{text}");

    // JSON progress: the same values (serde's escapes), nothing raw.
    let r = bench(&env, "json", "json", &["--progress", "json"]);
    assert_run_inert("benchmark --progress json", &r);
    let events: Vec<serde_json::Value> = r.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(events.iter().any(|e| e.to_string().contains("\\u001b]0;pwned")), "{}", r.stdout);
}

/// Fields of a CSV text (RFC 4180 quoting).
fn csv_cells(text: &str) -> Vec<String> {
    let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' | '\n' if !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells
}

fn assert_no_formulas(what: &str, csv: &str) {
    for cell in csv_cells(csv) {
        let number = cell.split(':').all(|n| n.parse::<f64>().is_ok());
        assert!(
            !cell.starts_with(['=', '+', '@', '\t']) && (!cell.starts_with('-') || number),
            "{what}: the cell {cell:?} opens as a formula:\n{csv}"
        );
    }
}

/// Each Markdown table's rows have as many cells as its header.
fn assert_tables_hold(what: &str, md: &str) {
    let unescaped = |l: &str| {
        l.char_indices()
            .filter(|(i, c)| *c == '|' && l[..*i].chars().rev().take_while(|c| *c == '\\').count() % 2 == 0)
            .count()
    };
    for table in md.split("\n\n") {
        let rows: Vec<&str> = table.lines().filter(|l| l.starts_with('|')).collect();
        if let Some(head) = rows.first() {
            assert!(rows.iter().all(|r| unescaped(r) == unescaped(head)), "{what}: a cell broke its table:\n{table}");
        }
    }
    let lower = md.to_lowercase();
    assert!(!lower.contains("<script") && !lower.contains("<img"), "{what}: markup got through:\n{md}");
}

fn assert_xml(what: &str, xml: &str) {
    roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{what} does not parse: {e}\n{xml}"));
}

/// One report of the hostile results, to a file and to standard output.
fn report(env: &Env, args: &[&str], format: &str) -> String {
    let file = env.target.path().join(format!("report.{format}"));
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", format, "-o", file.to_str().unwrap()]);
    let r = env.run(&all);
    assert_eq!(r.code, 0, "{format}: {r:?}");
    assert_run_inert(format, &r);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_inert(&format!("{format} file"), &text);
    let mut shown = args.to_vec();
    shown.extend(["--format", format]);
    let r = env.run(&shown);
    assert_eq!(r.code, 0, "{format}: {r:?}");
    assert_run_inert(&format!("{format} on stdout"), &r);
    text
}

fn check_reports(env: &Env, args: &[&str]) {
    let what = args.join(" ");
    let text = report(env, args, "text");
    assert!(text.contains("1.000e308") && text.contains("\\e[32mall tests passed"), "{what}: {text}");
    let csv = report(env, args, "csv");
    assert_no_formulas(&what, &csv);
    assert!(csv.contains("'=1+1 \\e[2J<script>"), "{what}: the unit is shown neutralized:\n{csv}");
    assert!(csv_cells(&csv).iter().any(|c| c == "1e308") && csv_cells(&csv).iter().any(|c| c == "-2.5e20"), "{csv}");
    for md in ["markdown", "summary"] {
        assert_tables_hold(&what, &report(env, args, md));
    }
    let json = report(env, args, "json");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    // The same values, serde's escapes and numbers (`1e+308`) included.
    assert!(json.contains("\\u001b]0;pwned\\u0007") && json.contains("\\u009b31m"), "{what}: {json}");
    assert!(v["results"].as_array().unwrap().iter().any(|r| r["entries"][0]["value"] == 1e308), "{what}: {json}");
    for xml in ["pts-xml", "junit", "svg"] {
        let x = report(env, args, xml);
        assert_xml(&format!("{what} {xml}"), &x);
    }
    let pts = report(env, args, "pts-xml");
    assert!(pts.contains("<Value>1e308</Value>") && pts.contains("\\e]0;pwned\\x07"), "{pts}");
    let html = report(env, args, "html").to_lowercase();
    assert!(!html.contains("<img") && !html.contains("<script>alert"), "{what}: markup got into the page");
}

#[test]
fn every_report_and_export_of_a_hostile_result_is_inert() {
    let (env, _h) = added();
    bench(&env, "evil", IDENTIFIER, &[]);
    bench(&env, "other", "other", &[]);
    check_reports(&env, &["result", "show", "evil"]);
    // Two results side by side: identifiers compared, verdicts, the baseline named.
    check_reports(&env, &["result", "compare", "evil", "other"]);

    let r = env.run(&["list", "results"]);
    assert_run_inert("list results", &r);
    let r = env.run(&["result", "history", "evil", "other"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_run_inert("history", &r);
    let r = env.run(&["result", "history", "evil", "other", "--format", "csv"]);
    assert_run_inert("history csv", &r);
    assert_no_formulas("history csv", &r.stdout);

    // An error that quotes what it was given.
    let r = env.run(&["result", "show", "evil", "--baseline", "\x1b]0;pwned\x07"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_run_inert("an error", &r);
    assert!(r.stderr.contains("\\e]0;pwned\\x07"), "{r:?}");
}

/// A fleet merged from hosts' result files that carry hostile text — the
/// identifier, the disk model the hosts are grouped by, the title and unit —
/// shows its distributions and its odd hosts inert in text and HTML, and
/// lists them in CSV cells that are no formulas.
#[test]
fn a_fleets_groups_and_odd_hosts_from_hostile_hosts_are_inert() {
    let env = Env::new();
    let dir = env.target.path().join("hosts");
    let mut names = Vec::new();
    for i in 0..12 {
        let id = format!("{IDENTIFIER} \x1b]0;pwned\x07 {i}");
        let value = if i == 5 { 600.0 } else { 1000.0 + i as f64 };
        let trials = [value - 1.0, value, value + 1.0];
        let f = serde_json::json!({
            "schema_version": 1, "title": "t", "description": "",
            "systems": [{"identifier": id, "hardware": {"Disk": "1000GB =HYPERLINK(\"x\") \u{1b}[2J\u{202e}"},
                         "started": "2026-12-01T10:00:00Z", "engine_version": env!("CARGO_PKG_VERSION")}],
            "results": [{"test": "evil@1[x]", "profile": "evil", "profile_version": "1.0.0", "result": "x",
                         "title": "Evil \u{1b}]0;pwned\u{7}", "description": "@SUM(1+1)", "options": [],
                         "unit": "=1+1 \u{1b}[2J", "proportion": "HIB",
                         "entries": [{"identifier": id, "value": value, "trials": trials, "sd": 1.0,
                                      "se": 1.0 / 3f64.sqrt(), "n": 3, "min": value - 1.0, "max": value + 1.0,
                                      "median": value, "trial_seconds": [1.0, 1.0, 1.0],
                                      "timestamp": "2026-12-01T10:00:00Z"}]}]
        });
        let p = dir.join(format!("h{i}"));
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("result.json"), serde_json::to_vec(&f).unwrap()).unwrap();
        names.push(p.join("result.json").to_str().unwrap().to_string());
    }
    let mut args = vec!["result", "merge", "--save", "fleet"];
    args.extend(names.iter().map(String::as_str));
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    assert_run_inert("merge", &r);
    let grouped = ["--group-by", "disk-model"];
    let show = |extra: &[&str]| {
        let mut a = vec!["result", "show", "fleet"];
        a.extend(grouped);
        a.extend(extra);
        let r = env.run(&a);
        assert_eq!(r.code, 0, "{r:?}");
        r
    };
    let text = show(&[]);
    assert_run_inert("fleet text", &text);
    assert!(text.stdout.contains("A fleet: 12 hosts") && text.stdout.contains("Odd hosts: 1 of 12"), "{}", text.stdout);
    assert!(
        text.stdout.contains("\\e]0;pwned\\x07 5: Evil \\e]0;pwned\\x07"),
        "the odd host, escaped: {}",
        text.stdout
    );
    let html = show(&["--format", "html"]);
    assert_run_inert("fleet html", &html);
    assert!(!html.stdout.contains("<img") && html.stdout.contains("&lt;img"), "{}", html.stdout);
    for format in ["text", "csv", "json"] {
        let mut a = vec!["result", "odd", "fleet", "--format", format];
        a.extend(grouped);
        let r = env.run(&a);
        assert_eq!(r.code, 0, "{r:?}");
        assert_run_inert(&format!("odd {format}"), &r);
        if format == "csv" {
            assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
            assert_no_formulas("odd csv", &r.stdout);
        }
    }
}
