//! What a run reports while it runs: on a pipe a line per test and the
//! whole report once at the end; on a terminal a compact line per result
//! as each test finishes (bars with `--format bars`); on a terminal trial k of n with an ETA; and
//! `--progress json`, one event per line for orchestrators, each checked
//! against schemas/progress.schema.json.

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;

/// Piped: a line per test start and finish on stderr, and on stdout the
/// report `result show` prints — each chart once, after the last test.
#[test]
fn piped_output_has_a_line_per_test_and_the_report_once() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4", "6"]));
    let r = env.bench(&["echo", "--runs", "2", "--save", "p"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("[1/2] echo: Value: V4 ("), "{r:?}");
    assert!(r.stderr.contains("[1/2] echo: Value: V4") && r.stderr.contains("[1/2] finished: 2 trial(s) in "), "{r:?}");
    assert!(r.stderr.contains("[2/2] finished: 2 trial(s) in "), "{r:?}");
    let first = r.stdout.find("Value: V4").unwrap();
    let second = r.stdout.find("Value: V6").unwrap();
    assert!(first < second, "{}", r.stdout);
    assert_eq!(r.stdout.matches("Value: V4").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("SE +/- 0.00, N = 2"), "{}", r.stdout);
    let shown = env.run(&["result", "show", "p"]);
    assert_eq!(r.stdout, shown.stdout, "the piped run prints the report, once");
    // `--format bars` piped: the same report (bars are what it is made of).
    let r = env.bench(&["echo", "--runs", "2", "--save", "q", "--format", "bars"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.matches("Value: V4").count(), 1, "{}", r.stdout);
}

/// On a terminal the progress line says which trial of how many, with an
/// ETA once a trial has been timed, within 80 columns.
#[test]
fn a_terminal_gets_trial_k_of_n_and_an_eta() {
    let env = Env::new();
    env.profile(
        "paced",
        "id: paced\nversion: 1.0.0\ntitle: Paced\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'sleep 0.4; echo value: 1']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let cmdline =
        format!("{} benchmark paced -y --runs 3 --save t --target-dir {}", bin(), env.target.path().display());
    let child = env.cmd(&[]).env("COLUMNS", "80").spawn_script(&cmdline);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("trial 1 of 3"), "{text}");
    assert!(text.contains("trial 3 of 3, ETA 0:00"), "{text}");
    // A test of one result is one compact line (title, value, ±CI, N), no bars.
    assert!(
        regex_lite_strip(&text)
            .lines()
            .any(|l| l.trim_start().starts_with("Paced (") && l.contains(" U ") && l.contains("N=3")),
        "{text}"
    );
    assert!(!text.contains("|==="), "{text}");
    let bars = format!("{} --format bars", cmdline.replace("--save t ", "--save t2 "));
    let out = env.cmd(&[]).env("COLUMNS", "80").spawn_script(&bars).wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("|===") && text.contains("SE +/- 0.00, N = 3"), "{text}");
    // Every drawn line fits in 80 columns (escape sequences aside). Lines
    // drawn together (the progress line, the device line under it) come
    // padded to the width, one after the other, as the terminal wraps them:
    // the progress line is whole within its row of 80.
    let plain = regex_lite_strip(&text);
    let whole = regex::Regex::new(r"trial \d+( of \d+(, ETA \d+:\d\d)?)?").unwrap();
    for line in plain.lines().filter(|l| l.contains("— trial ")) {
        let chars: Vec<char> = line.chars().collect();
        let rows: Vec<String> = chars.chunks(80).map(|c| c.iter().collect()).collect();
        assert!(rows.len() == 1 || chars.len().is_multiple_of(80), "{} columns, not rows of 80: {line}", chars.len());
        let progress = rows.iter().find(|r| r.contains("— trial")).expect("the progress line in one row");
        assert!(whole.is_match(progress), "the progress line is cut: {line}");
    }
}

/// Removes ANSI escape sequences and splits redraws (\r) into lines.
fn regex_lite_strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(if c == '\r' { '\n' } else { c });
    }
    out
}

/// The lines of `--progress json` output, each checked against
/// schemas/progress.schema.json.
fn events(stdout: &str) -> Vec<Value> {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("schemas/progress.schema.json")).unwrap()).unwrap();
    let v = jsonschema::draft7::new(&schema).expect("progress schema compiles");
    stdout
        .lines()
        .map(|l| {
            let e: Value =
                serde_json::from_str(l).unwrap_or_else(|err| panic!("not one JSON object per line: {l}: {err}"));
            let errors: Vec<String> = v.iter_errors(&e).map(|x| x.to_string()).collect();
            assert!(errors.is_empty(), "{l}: {errors:?}");
            e
        })
        .collect()
}

fn kinds(ev: &[Value]) -> Vec<&str> {
    ev.iter().map(|e| e["event"].as_str().unwrap()).collect()
}

#[test]
fn progress_json_is_one_event_per_line_from_start_to_finish() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["7"]));
    env.profile("broken", &counter_profile("broken", "echo nothing here", ""));
    let r = env.bench(&["echo", "broken", "--save", "p", "--identifier", "h1", "--runs", "2", "--progress", "json"]);
    assert_eq!(r.code, 4, "{r:?}");
    let ev = events(&r.stdout);
    let k = kinds(&ev);
    assert_eq!(k.first(), Some(&"run_started"), "{k:?}");
    assert_eq!(k.last(), Some(&"run_finished"), "{k:?}");
    assert_eq!(ev[0]["identifier"], "h1");
    assert_eq!(ev[0]["tests"], 2);
    assert_eq!(ev[0]["engine_version"], env!("CARGO_PKG_VERSION"));
    // echo: started, two trials, done with its value.
    let echo: Vec<&Value> = ev.iter().filter(|e| e["test"].as_str().is_some_and(|t| t.starts_with("echo@"))).collect();
    assert_eq!(
        kinds(&echo.iter().map(|e| (*e).clone()).collect::<Vec<_>>()),
        ["test_started", "trial_done", "trial_done", "test_done"]
    );
    assert_eq!(echo[0]["index"], 1);
    assert_eq!(echo[0]["total"], 2);
    assert_eq!(echo[2]["trial"], 2);
    let done = echo[3];
    assert_eq!(done["status"], "completed");
    assert_eq!(done["trials"], 2);
    assert_eq!(done["results"][0]["value"], 7.0);
    assert_eq!(done["results"][0]["unit"], "Items/s");
    // broken: its test_done says failed, and an error event names its log.
    let failed = ev.iter().find(|e| e["event"] == "test_done" && e["status"] == "failed").expect("failed test_done");
    assert!(failed["reason"].as_str().unwrap().contains("no line of the output matched"), "{failed}");
    let err = ev.iter().find(|e| e["event"] == "error").expect("error event");
    assert!(err["test"].as_str().unwrap().starts_with("broken@"), "{err}");
    assert!(err["log"].as_str().unwrap().starts_with("logs/"), "{err}");
    let fin = ev.last().unwrap();
    assert_eq!(fin["exit_code"], 4);
    assert_eq!((fin["saved"].as_u64(), fin["failed"].as_u64()), (Some(1), Some(1)), "{fin}");
    assert_eq!(fin["path"].as_str().map(PathBuf::from), Some(env.result_path("p")));
    // Human messages stay on standard error.
    assert!(r.stderr.contains("failed broken"), "{r:?}");
}

#[test]
fn progress_json_reports_a_refused_run_as_error_then_run_finished() {
    let env = Env::new();
    let r = env.bench(&["no-such-profile", "--progress", "json"]);
    assert_eq!(r.code, 2, "{r:?}");
    let ev = events(&r.stdout);
    assert_eq!(kinds(&ev), ["error", "run_finished"]);
    assert!(ev[0]["message"].as_str().unwrap().contains("no-such-profile"), "{}", ev[0]);
    assert_eq!(ev[1]["exit_code"], 2);
    // A report format would be mixed into the events: refused.
    let r = env.bench(&["no-such-profile", "--progress", "json", "--format", "csv"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(events(&r.stdout)[0]["message"].as_str().unwrap().contains("--format csv"), "{r:?}");
}
