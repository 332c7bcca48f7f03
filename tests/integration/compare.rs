//! Working with saved results: PTS import and export, the report formats
//! (snapshots), side-by-side comparison, charts, the HTML report in a real
//! browser, editing, merging (results fetched from many hosts included),
//! and files that are refused with a position.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> String {
    repo().join("tests/fixtures/pts").join(name).display().to_string()
}

/// An Env with the PTS fixture imported as `loop-fsmark`.
fn imported() -> Env {
    let env = Env::new();
    let r = env.run(&["result", "import", &fixture("loop-fsmark.composite.xml")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("imported `loop-fsmark`: 2 identifiers, 2 results (2 matched"), "{r:?}");
    env
}

#[test]
fn the_pts_fixture_imports_as_pts_exports_show_it() {
    let env = imported();
    let ours = env.result("loop-fsmark");
    let pts: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("loop-fsmark.result-file-to-json.json")).unwrap())
            .unwrap();
    let ids: Vec<&str> =
        ours["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["loop0: NONE", "loop0: BFQ"]);
    assert_eq!(ours["title"], pts["title"]);
    assert_eq!(ours["description"], pts["description"]);
    for p in pts["results"].as_object().unwrap().values() {
        let r = ours["results"].as_array().unwrap().iter().find(|r| r["description"] == p["description"]).unwrap();
        assert_eq!(r["title"], p["title"]);
        assert_eq!(r["app_version"], p["app_version"]);
        assert_eq!(r["unit"], p["scale"]);
        assert_eq!(r["proportion"], p["proportion"]);
        assert_eq!(r["pts"]["identifier"], p["identifier"]);
        assert_eq!(r["pts"]["arguments"], p["arguments"]);
        assert_eq!(r["profile"], "fs-mark", "matched to engine's fs-mark profile");
        for (id, pe) in p["results"].as_object().unwrap() {
            let e = r["entries"].as_array().unwrap().iter().find(|e| e["identifier"] == id.as_str()).unwrap();
            assert_eq!(e["value"], pe["value"], "{id}");
            assert_eq!(e["trials"], pe["raw_values"], "{id}");
            assert_eq!(e["trial_seconds"], pe["test_run_times"], "{id}");
            assert_eq!(e["n"], pe["raw_values"].as_array().unwrap().len());
        }
    }
    // The hardware and software lines as PTS's CSV export has them.
    let csv = std::fs::read_to_string(fixture("loop-fsmark.result-file-to-csv.csv")).unwrap();
    for line in csv.lines().filter(|l| l.matches(',').count() >= 3 && !l.starts_with(' ') && !l.starts_with('"')) {
        let cells: Vec<&str> = line.split(',').collect();
        let key = cells[0];
        let s = &ours["systems"][0];
        let v = s["hardware"].get(key).or_else(|| s["software"].get(key)).unwrap_or_else(|| panic!("{key}"));
        assert_eq!(v, cells[2], "{key}");
    }
    // The PTS values per result, as its CSV export lists them.
    assert!(csv.contains("\"FS-Mark - Test: 100 Files, 1MB Size (Files/s)\",HIB,505.8,575.9"));
    assert_eq!(ours["results"][0]["entries"][1]["value"], 575.9);
}

#[test]
fn an_imported_result_reruns_for_a_new_identifier() {
    let env = imported();
    let r = env.bench(&["loop-fsmark", "--runs", "1", "--identifier", "this machine"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("loop-fsmark");
    assert_eq!(f["systems"].as_array().unwrap().len(), 3);
    for res in f["results"].as_array().unwrap() {
        let ids: Vec<&str> =
            res["entries"].as_array().unwrap().iter().map(|e| e["identifier"].as_str().unwrap()).collect();
        assert_eq!(ids, ["loop0: NONE", "loop0: BFQ", "this machine"], "the new values land in the same rows");
    }
}

#[test]
fn pts_xml_export_reads_back_the_same() {
    let env = imported();
    let out = env.target.path().join("back.xml");
    let r = env.run(&["result", "show", "loop-fsmark", "--format", "pts-xml", "-o", out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    let xml = std::fs::read_to_string(&out).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\"?>\n"));
    assert!(
        xml.contains("<Identifier>local/fs-mark-sys</Identifier>")
            && xml.contains("<RawString>320.9:621.8:574.7</RawString>"),
        "{xml}"
    );
    let r = env.run(&["result", "import", out.to_str().unwrap(), "--save", "again"]);
    assert_eq!(r.code, 0, "{r:?}");
    let (a, b) = (env.result("loop-fsmark"), env.result("again"));
    for (ra, rb) in a["results"].as_array().unwrap().iter().zip(b["results"].as_array().unwrap()) {
        for k in ["test", "description", "unit", "proportion", "pts"] {
            assert_eq!(ra[k], rb[k], "{k}");
        }
        for (ea, eb) in ra["entries"].as_array().unwrap().iter().zip(rb["entries"].as_array().unwrap()) {
            for k in ["identifier", "value", "trials", "trial_seconds"] {
                assert_eq!(ea[k], eb[k], "{k}");
            }
        }
    }
    assert_eq!(a["systems"][0]["hardware"], b["systems"][0]["hardware"]);
    assert_eq!(a["systems"][0]["notes"]["Disk Notes"].as_str().unwrap().split(" / ").next(), Some("MQ-DEADLINE"));
}

#[test]
fn snapshots_of_text_csv_and_markdown() {
    let env = imported();
    for (format, name) in [("text", "report_text"), ("csv", "report_csv"), ("markdown", "report_markdown")] {
        let r = env.run(&["result", "show", "loop-fsmark", "--format", format]);
        assert_eq!(r.code, 0, "{r:?}");
        insta::assert_snapshot!(name, r.stdout);
    }
    let r = env.run(&["result", "show", "loop-fsmark", "--normalize", "--baseline", "loop0: BFQ"]);
    insta::assert_snapshot!("report_text_normalized", r.stdout);
}

#[test]
fn editing_results() {
    let env = imported();
    assert_eq!(env.run(&["result", "rename-identifier", "loop-fsmark", "loop0: NONE", "none"]).code, 0);
    let r = env.run(&["result", "rename-identifier", "loop-fsmark", "gone", "x"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no identifier `gone` in this result"));
    let f = env.result("loop-fsmark");
    assert_eq!(f["results"][1]["entries"][0]["identifier"], "none");

    // Merge with a result that has another test: all tests kept, missing marked.
    env.profile("echo", &echo_profile("echo", &["1"]));
    // An identifier both inputs have: the second input is refused, both named.
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "same", "--identifier", "none"]).code, 0);
    let r = env.run(&["result", "merge", "loop-fsmark", "same", "--save", "refused"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("left out same: identifier `none` is also in loop-fsmark"), "{}", r.stderr);
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "other", "--identifier", "none (other)"]).code, 0);
    let r = env.run(&["result", "merge", "loop-fsmark", "other", "--save", "both"]);
    assert_eq!(r.code, 0, "{r:?}");
    let m = env.result("both");
    let ids: Vec<&str> = m["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["none", "loop0: BFQ", "none (other)"]);
    assert_eq!(m["results"].as_array().unwrap().len(), 3);
    let show = env.run(&["result", "show", "both", "--format", "markdown"]);
    assert!(
        show.stdout.contains("| Echo echo 1: Value: V1 | Items/s (more is better) | — | — | 1.00 (N = 1) |"),
        "{}",
        show.stdout
    );
    let r = env.run(&["result", "merge", "loop-fsmark", "other", "--save", "both"]);
    assert_eq!(r.code, 2, "an existing result is not overwritten: {r:?}");

    assert_eq!(env.run(&["result", "remove-identifier", "both", "none (other)"]).code, 0);
    assert_eq!(env.result("both")["results"].as_array().unwrap().len(), 2, "a result left without values goes");
    assert_eq!(env.run(&["result", "remove-result", "both", "fs-mark: Test: 100 Files, 1MB Size"]).code, 0);
    assert_eq!(env.result("both")["results"].as_array().unwrap().len(), 1);
    let r = env.run(&["result", "remove-result", "both", "nothing"]);
    assert_eq!(r.code, 2);
}

/// Results of `hosts` (folder, identifier) as an orchestrator fetches them:
/// `<dir>/<folder>/result.json`.
fn fetched(env: &Env, dir: &Path, hosts: &[(&str, &str)]) -> Vec<PathBuf> {
    env.profile("echo", &echo_profile("echo", &["5"]));
    hosts
        .iter()
        .map(|(h, id)| {
            let r = env.bench(&["echo", "--save", h, "--identifier", id]);
            assert_eq!(r.code, 0, "{r:?}");
            let p = dir.join(h).join("result.json");
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::copy(env.result_path(h), &p).unwrap();
            p
        })
        .collect()
}

fn edit_json(p: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(p, v.to_string()).unwrap();
}

#[test]
fn merge_leaves_out_invalid_results_by_name_and_merges_the_rest() {
    let env = Env::new();
    let d = tempfile::tempdir().unwrap();
    let files =
        fetched(&env, d.path(), &[("host1", "host1"), ("host2", "host2"), ("host3", "host3"), ("host4", "host4")]);
    // host3's file breaks the schema; host4's comes from another major version.
    edit_json(&files[2], |v| v["systems"][0]["started"] = Value::from(5));
    edit_json(&files[3], |v| v["systems"][0]["engine_version"] = Value::from("9.1.0"));
    let missing = d.path().join("host6/result.json");
    let mut args: Vec<String> = vec!["result".into(), "merge".into()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    args.push(missing.display().to_string());
    args.extend(["--save", "fleet", "--left-out", "host5=unreachable: connection refused"].map(String::from));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();

    // --strict: nothing merged, the first bad file named.
    let mut strict = a.clone();
    strict.push("--strict");
    let r = env.run(&strict);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("host3 is not merged") && r.stderr.contains("/systems/0/started"), "{r:?}");
    assert!(!env.result_path("fleet").exists());

    let r = env.run(&a);
    assert_eq!(r.code, 4, "{r:?}");
    for (host, why) in [
        ("host3", "does not match schemas/result.schema.json: /systems/0/started"),
        ("host4", "written by engine 9.1.0 (identifier `host4`)"),
        ("host6", "cannot read it"),
    ] {
        assert!(
            r.stderr.lines().any(|l| l.starts_with(&format!("left out {host}: ")) && l.contains(why)),
            "{host}: {r:?}"
        );
    }
    let m = env.result("fleet");
    let ids: Vec<&str> = m["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["host1", "host2"]);
    let entries = m["results"][0]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "nothing of host3 or host4 was merged: {m}");
    let left: Vec<&str> = m["left_out"].as_array().unwrap().iter().map(|l| l["source"].as_str().unwrap()).collect();
    assert_eq!(left, ["host5", "host3", "host4", "host6"]);
    // The reports name them.
    let shown = env.run(&["result", "show", "fleet"]);
    assert!(
        shown.stdout.contains("Left out of this result (4):") && shown.stdout.contains("host5: unreachable"),
        "{shown:?}"
    );
    // A second merge under the same name is refused unless --replace.
    assert_eq!(env.run(&a).code, 2);
    let mut replace = a.clone();
    replace.push("--replace");
    assert_eq!(env.run(&replace).code, 4);
    // Bad --left-out.
    let r = env.run(&["result", "merge", files[0].to_str().unwrap(), "--save", "x", "--left-out", "host5"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("expected SOURCE=REASON"), "{r:?}");
}

#[test]
fn merging_sweeps_keeps_host_by_state_identifiers() {
    let env = Env::new();
    let d = tempfile::tempdir().unwrap();
    // A sweep on each host: one result per host, an identifier per state.
    let files = fetched(&env, d.path(), &[("host1", "host1: bfq"), ("host2", "host2: bfq")]);
    for (f, h) in files.iter().zip(["host1", "host2"]) {
        edit_json(f, |v| {
            let mut none = v["systems"][0].clone();
            none["identifier"] = Value::from(format!("{h}: none"));
            v["systems"].as_array_mut().unwrap().push(none);
            let mut e = v["results"][0]["entries"][0].clone();
            e["identifier"] = Value::from(format!("{h}: none"));
            v["results"][0]["entries"].as_array_mut().unwrap().push(e);
        });
    }
    let mut args = vec!["result", "merge"];
    let all: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    args.extend(all.iter().map(String::as_str));
    args.extend(["--save", "sweep"]);
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let m = env.result("sweep");
    let mut ids: Vec<&str> =
        m["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["host1: bfq", "host1: none", "host2: bfq", "host2: none"]);
}

#[test]
fn compare_several_results_side_by_side() {
    let env = imported();
    env.profile("echo", &echo_profile("echo", &["5"]));
    for id in ["A", "B"] {
        assert_eq!(env.bench(&["echo", "--runs", "5", "--save", &format!("r{id}"), "--identifier", id]).code, 0);
    }
    let path = env.result_path("rB");
    let r = env.run(&["result", "compare", "rA", path.to_str().unwrap(), "--baseline", "B"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("rA vs rB\n"), "{}", r.stdout);
    assert!(r.stdout.contains("Against B ("), "{}", r.stdout);
    // Every trial the same on both sides: no "unchanged [1.00, 1.00]", which
    // would claim a precision the tool does not have.
    assert!(r.stdout.contains("A  unchanged (1.00×): cannot tell: at the tool's resolution"), "{}", r.stdout);
    assert!(r.stdout.contains("1 at the tool's resolution (cannot tell)"), "{}", r.stdout);
    assert!(r.stdout.contains("Wins / Losses"), "{}", r.stdout);
    // A unique part of an identifier names it.
    let r = env.run(&["result", "compare", "rA", "rB", "--baseline", "b"]);
    assert!(r.stdout.contains("Against B ("), "{r:?}");
    let r = env.run(&["result", "compare", "rA", "rB", "--baseline", "Z"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no identifier `Z`") && r.stderr.contains("hint: identifiers: A, B"), "{r:?}");
}

#[test]
fn truncated_or_foreign_files_are_refused_with_a_position() {
    let env = Env::new();
    let text = std::fs::read_to_string(fixture("loop-fsmark.composite.xml")).unwrap();
    let cut = env.target.path().join("cut.xml");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let r = env.run(&["result", "import", cut.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains(&format!("{}:", cut.display())) && r.stderr.contains("not well-formed XML"), "{r:?}");
    let foreign = env.target.path().join("foreign.xml");
    std::fs::write(&foreign, "<?xml version=\"1.0\"?>\n<html><body/></html>\n").unwrap();
    let r = env.run(&["result", "import", foreign.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("{}:2:1: expected a <PhoronixTestSuite> result file, found <html>", foreign.display())),
        "{r:?}"
    );
    let json = env.target.path().join("result.json");
    std::fs::write(&json, "{\"schema_version\": 1, \"title\": \"x\",\n  \"systems\": [").unwrap();
    let r = env.run(&["result", "show", json.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!("{}:2:14: not a valid result file: EOF while parsing a list", json.display())),
        "{r:?}"
    );
    assert!(!env.home.path().join("results").exists(), "nothing was written");
}

#[test]
fn chart_images_as_svg_and_png() {
    let env = imported();
    let svg = env.target.path().join("charts.svg");
    let r = env.run(&["result", "show", "loop-fsmark", "--format", "svg", "-o", svg.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    let bars = doc.descendants().filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some("bar")).count();
    assert_eq!(bars, 2 * 2 + 2, "a bar per identifier per result, then the geometric means");
    assert!(text.contains("SE +/- 93.44, N = 3"), "{text}");

    let png = env.target.path().join("charts.png");
    let r = env.run(&["result", "show", "loop-fsmark", "--format", "png", "-o", png.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 900, "width");
    // Standard output that is not a terminal takes the same bytes.
    let out = env.cmd(&["result", "show", "loop-fsmark", "--format", "png"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, bytes);
    // A terminal gets no PNG: `script` (util-linux) runs engine on a pseudo-terminal.
    let line = format!("'{}' result show loop-fsmark --format png", bin());
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("ENGINE_HOME", env.home.path())
        .env("ENGINE_PROFILE_PATH", env.profiles.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("not written to a terminal") && shown.contains("-o FILE"), "{shown}");
    assert!(!shown.contains("PNG"), "{shown}");
}

#[test]
fn the_html_report_renders_in_chromium() {
    let env = imported();
    // A third identifier for the two fs_mark results, and a result only it has.
    assert_eq!(env.bench(&["loop-fsmark", "--runs", "2", "--identifier", "extra"]).code, 0);
    env.profile("echo", &echo_profile("echo", &["5"]));
    assert_eq!(env.bench(&["echo", "--runs", "3", "--save", "loop-fsmark", "--identifier", "extra"]).code, 0);
    let html = env.target.path().join("report.html");
    let r = env.run(&["result", "show", "loop-fsmark", "--format", "html", "-o", html.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        !text.contains("http://") || text.matches("http://").all(|_| text.contains("http://www.w3.org/2000/svg")),
        "no network"
    );
    // The charts are in the page as drawn by the engine: no script needed to read it.
    let page = &text[..text.find("<script").unwrap()];
    assert_eq!(page.matches("class=\"chart result-chart\"").count(), 3, "charts drawn without scripts");
    assert!(page.contains("SE +/- 93.44, N = 3"), "bars carry SE and N without scripts");
    // The page leads with the answer: when, how much, the verdict and the
    // geometric mean come before the first chart.
    let first_chart = page.find("class=\"chart result-chart\"").unwrap();
    let meta = page.find("<p class=\"meta\">Run ").expect("date and duration");
    let verdict = page.find("<section class=\"answer\"><h2>Verdict</h2>").expect("the verdict");
    assert!(meta < first_chart && verdict < first_chart, "the answer before the charts");
    assert!(page.contains("test(s), 3 result(s), 3 identifier(s)"), "the counts");
    assert!(page[verdict..first_chart].contains("Geometric mean of "), "the geometric mean up top");
    // A test's results in one block: the two fs_mark tests and echo, three blocks.
    assert_eq!(page.matches("<div class=\"test\">").count(), 3, "a block per test");
    assert!(!text.contains("https://") && !text.contains("src=\""), "self-contained");
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|c| which(c))
        .expect("chromium is installed (scripts/install-deps.sh)");
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    let results = env.result("loop-fsmark")["results"].as_array().unwrap().len();
    assert_eq!(results, 3);
    assert_eq!(dom.matches("class=\"chart result-chart\"").count(), results, "one chart per result");
    assert_eq!(dom.matches("class=\"chart geomean-chart\"").count(), 1);
    assert!(dom.contains("SE +/- 93.44, N = 3"), "bars carry SE and N");
    assert!(dom.contains("3 of 3 results shown"));
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    // As a reader sees it: a screenshot in a 1,400-px window (kept in the
    // target directory to look at by eye against a seed page).
    let shot = env.target.path().join("report-1400.png");
    let out = std::process::Command::new(chromium)
        .args(["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--window-size=1400,1000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1400, "width");
    if let Ok(keep) = std::env::var("ENGINE_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

fn which(p: &str) -> bool {
    std::process::Command::new("sh").args(["-c", &format!("command -v {p}")]).output().is_ok_and(|o| o.status.success())
}

/// The CI gate: `result compare BASE NEW --fail-on-regression [PCT]` exits 6
/// naming each result significantly worse by at least PCT; improvements
/// and no change never fail; JUnit and the pull-request summary say the same.
#[test]
fn a_regression_fails_the_gate_and_shows_in_junit_and_the_summary() {
    let env = Env::new();
    let level = env.target.path().join("level");
    // Values level, level+1, level+2, level, … per trial.
    env.profile("lvl", &counter_profile("lvl", &format!("echo value: $(( $(cat {}) + n % 3 ))", level.display()), ""));
    let bench = |value: u32, save: &str, id: &str| {
        std::fs::write(&level, value.to_string()).unwrap();
        let r = env.bench(&["lvl", "--runs", "6", "--save", save, "--identifier", id]);
        assert_eq!(r.code, 0, "{r:?}");
    };
    bench(100, "base", "before");
    bench(80, "slower", "after");
    bench(101, "same", "again");
    let r = env.run(&["result", "compare", "base", "slower", "--fail-on-regression"]);
    assert_eq!(r.code, 6, "{r:?}");
    assert!(r.stderr.contains("1 regression(s) against `before` (significantly worse by 1 % or more):"), "{r:?}");
    assert!(r.stderr.contains("Counter lvl: number (after): 0.80") && r.stderr.contains("worse by"), "{r:?}");
    // A threshold beyond the loss passes; an unchanged result passes.
    let r = env.run(&["result", "compare", "base", "slower", "--fail-on-regression", "30"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.run(&["result", "compare", "base", "same", "--fail-on-regression"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("no regressions against `before`"), "{r:?}");
    // An improvement never fails: the other way round.
    let r = env.run(&["result", "compare", "slower", "base", "--fail-on-regression"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("1 improvement(s)"), "{r:?}");
    // Nothing to compare with: usage.
    let r = env.run(&["result", "show", "base", "--fail-on-regression"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("needs a baseline and another identifier"), "{r:?}");
    // The same gate straight after a run: `benchmark --compare-to NAME`.
    std::fs::write(&level, "80").unwrap();
    let r = env.bench(&[
        "lvl",
        "--runs",
        "6",
        "--save",
        "ci",
        "--identifier",
        "pr",
        "--compare-to",
        "base",
        "--fail-on-regression",
    ]);
    assert_eq!(r.code, 6, "{r:?}");
    assert!(r.stderr.contains("1 regression(s) against `before`") && r.stderr.contains("(pr): 0.80"), "{r:?}");
    assert!(env.result_path("ci").is_file(), "the run was saved all the same");
    // Its JUnit report is the gate's comparison: red where the gate fails
    // (issue 39 item 14: it said failures="0" while the run exited 6).
    let r = env.bench(&[
        "lvl",
        "--runs",
        "6",
        "--save",
        "cij",
        "--identifier",
        "pr",
        "--compare-to",
        "base",
        "--fail-on-regression",
        "--format",
        "junit",
    ]);
    assert_eq!(r.code, 6, "{r:?}");
    assert!(r.stdout.contains("failures=\"1\"") && r.stdout.contains("<failure type=\"regression\""), "{r:?}");
    let r = env.bench(&["lvl", "--runs", "3", "--save", "ci2", "--compare-to", "base"]);
    assert_eq!(r.code, 0, "without --fail-on-regression it only reports: {r:?}");
    assert!(r.stderr.contains("regression(s) against `before`"), "{r:?}");
    let r = env.bench(&["lvl", "--save", "ci3", "--compare-to", "nosuch", "--fail-on-regression"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--compare-to: no saved result `nosuch`"), "{r:?}");
    assert!(!env.result_path("ci3").exists(), "refused before it ran");
    let r = env.bench(&["lvl", "--save", "ci4", "--fail-on-regression"]);
    assert_eq!(r.code, 2, "--fail-on-regression without --compare-to: {r:?}");
    // JUnit: a testcase per result and identifier, the regression a failure.
    let r = env.run(&["result", "compare", "base", "slower", "--format", "junit"]);
    assert_eq!(r.code, 0, "{r:?}");
    let doc = roxmltree::Document::parse(&r.stdout).unwrap();
    let root = doc.root_element();
    assert_eq!(
        (root.tag_name().name(), root.attribute("tests"), root.attribute("failures")),
        ("testsuites", Some("2"), Some("1"))
    );
    let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 2);
    assert!(cases.iter().all(|c| c.attribute("classname") == Some("engine.lvl") && c.attribute("time").is_some()));
    let failed: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("failure")).collect();
    assert_eq!(failed.len(), 1);
    assert!(failed[0].parent().unwrap().attribute("name").unwrap().ends_with("(after)"));
    assert!(failed[0].attribute("message").unwrap().contains("vs before: 0.80"), "{}", r.stdout);
    // The summary: regressions first, then the count of the rest.
    let r = env.run(&["result", "compare", "base", "slower", "--format", "summary"]);
    assert!(r.stdout.contains("**1 regression(s)**") && r.stdout.contains("| after | 0.80"), "{}", r.stdout);
    let r = env.run(&["result", "compare", "base", "same", "--format", "summary"]);
    assert!(
        r.stdout.contains("**No regressions**")
            && r.stdout.contains("1 result(s) equivalent within ±2 %, 0 undecided."),
        "{}",
        r.stdout
    );
}

/// Two results of one test without descriptions, on two identifiers: four
/// JUnit testcases, each (classname, name) unique as read by a real JUnit
/// parser (junitparser, from Debian).
#[test]
fn junit_testcases_are_unique_for_a_real_parser() {
    let env = Env::new();
    env.profile(
        "twin",
        "id: twin\nversion: 1.0.0\ntitle: Twin\ntest_type: disk\nexecutor: {external: {program: sh, args: [-c, 'echo iops: 100; echo bw: 400']}}\nresults:\n  - {id: iops, unit: IOPS, proportion: HIB}\n  - {id: bandwidth, unit: MB/s, proportion: HIB}\nparsers:\n  - {result: iops, regex: 'iops: (?P<value>\\d+)'}\n  - {result: bandwidth, regex: 'bw: (?P<value>\\d+)'}\n",
    );
    for id in ["a", "b"] {
        let r = env.bench(&["twin", "--runs", "1", "--save", "t", "--identifier", id]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    let r = env.run(&["result", "show", "t", "--format", "junit"]);
    assert_eq!(r.code, 0, "{r:?}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("junit.xml");
    std::fs::write(&file, &r.stdout).unwrap();
    let script = "import sys, junitparser\nx = junitparser.JUnitXml.fromfile(sys.argv[1])\nfor s in x:\n    for c in s:\n        print(c.classname + '|' + c.name)\n";
    let out = std::process::Command::new("/usr/bin/python3").args(["-c", script]).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let keys: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    let unique: std::collections::HashSet<&String> = keys.iter().collect();
    assert_eq!((keys.len(), unique.len()), (4, 4), "{keys:?}");
}

/// CSV is one tidy table: Python's csv module reads it, every row as wide
/// as the header, one row per identifier × test × metric with the value,
/// SE, N, interval and verdict; `csv-trials` has a row per trial.
#[test]
fn csv_is_one_tidy_table_python_reads() {
    let env = imported();
    let dir = tempfile::tempdir().unwrap();
    let (tidy, long) = (dir.path().join("r.csv"), dir.path().join("t.csv"));
    for (format, path) in [("csv", &tidy), ("csv-trials", &long)] {
        let r = env.run(&["result", "show", "loop-fsmark", "--format", format, "-o", path.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    let f = env.result("loop-fsmark");
    let entries: usize = f["results"].as_array().unwrap().iter().map(|r| r["entries"].as_array().unwrap().len()).sum();
    let trials: usize = f["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["entries"].as_array().unwrap())
        .map(|e| e["trials"].as_array().unwrap().len())
        .sum();
    let script = r#"
import csv, sys
for path in sys.argv[1:]:
    rows = list(csv.reader(open(path, newline="")))
    head, body = rows[0], rows[1:]
    assert all(len(r) == len(head) for r in body), path
    print(len(body), ",".join(head))
    if "verdict" in head:
        v = head.index("verdict")
        print(" ".join(sorted(set(r[v] for r in body))))
        lo, hi, val = head.index("ci_low"), head.index("ci_high"), head.index("value")
        assert all(float(r[lo]) <= float(r[val]) <= float(r[hi]) for r in body if r[lo])
"#;
    let out = Command::new("/usr/bin/python3").arg("-c").arg(script).arg(&tidy).arg(&long).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "{entries} test,profile,title,description,metric,unit,proportion,identifier,value,se,n,setups,ci_low,ci_high,ratio,p,verdict"
        )
    );
    assert!(lines[1].split(' ').any(|v| v == "baseline"), "{text}");
    assert_eq!(lines[2], format!("{trials} test,profile,metric,unit,identifier,trial,setup,value,seconds"));
}
