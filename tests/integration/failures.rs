//! Tests that cannot run or fail: missing programs, a target directory that
//! cannot be used, too little free space, bad result names, unparsable
//! output, failing, timed-out and non-finite trials. Each is a clear message
//! naming its log; nothing is half-written; the other tests still run.

use crate::common::*;
use std::time::{Duration, Instant};

#[test]
fn a_failing_trial_names_its_log_and_the_other_tests_run() {
    let env = Env::new();
    env.profile(
        "flaky",
        &counter_profile("flaky", "if [ $n -ge 2 ]; then echo broken >&2; exit 1; fi; echo value: 5", ""),
    );
    env.profile("echo", &echo_profile("echo", &["4"]));
    let r = env.bench(&["flaky", "echo", "--save", "f"]);
    assert_eq!(r.code, 4, "{r:?}");
    // Said once, at the end (the piped progress line says where).
    assert_eq!(r.stderr.matches("sh exited 1").count(), 1, "{r:?}");
    assert!(r.stderr.contains("] failed after "), "{r:?}");
    let line = r.stderr.lines().find(|l| l.starts_with("failed flaky (")).unwrap_or_else(|| panic!("{r:?}"));
    assert!(line.contains("sh exited 1; see "), "{line}");
    let log = line.rsplit("see ").next().unwrap();
    assert!(log.ends_with("/trial-2.log"), "{log}");
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains("--- stderr ---\nbroken"), "{text}");
    // The failed test left no result; the other one is saved.
    let f = env.result("f");
    let profiles: Vec<&str> = f["results"].as_array().unwrap().iter().map(|x| x["profile"].as_str().unwrap()).collect();
    assert_eq!(profiles, ["echo"]);
}

#[test]
fn unparsable_output_fails_the_trial_with_the_log_path() {
    let env = Env::new();
    env.profile("garbled", &counter_profile("garbled", "echo 'no number here'", ""));
    let r = env.bench(&["garbled", "--save", "g"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("result `number` of trial 1: no line of the output matched"), "{r:?}");
    assert!(r.stderr.contains("/trial-1.log"), "{r:?}");
    // The output the parser read is quoted (its tail), and the failure is said once.
    let all = format!("{}{}", r.stdout, r.stderr);
    assert_eq!(all.matches("    | no number here").count(), 1, "{r:?}");
    assert_eq!(all.matches("no line of the output matched").count(), 1, "{r:?}");
    // The failure is in the result file: status, reason, log.
    let f = env.result("g");
    assert!(f["results"].as_array().unwrap().is_empty());
    let failed = &f["failures"][0];
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["profile"], "garbled");
    assert!(failed["reason"].as_str().unwrap().contains("no line of the output matched"), "{failed}");
    assert_eq!(failed["stderr_tail"], serde_json::json!(["no number here"]), "the stream the parser read");
    let log = env.home.path().join("results/g").join(failed["log"].as_str().unwrap());
    assert!(log.is_file(), "{}", log.display());
}

/// A failed test is in the result file and the final report, with the last
/// lines of the tool's standard error; the exit code is 4.
#[test]
fn a_failed_test_is_recorded_and_reported_with_its_stderr() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    env.profile(
        "boom",
        "id: boom\nversion: 1.0.0\ntitle: Boom\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'echo starting >&2; echo \"boom: disk on fire\" >&2; exit 3']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let r = env.bench(&["echo", "boom", "--runs", "1", "--save", "b"]);
    assert_eq!(r.code, 4, "{r:?}");
    let tail = r.stderr.rsplit("Saved to").nth(1).unwrap_or(&r.stderr).to_string();
    assert!(tail.contains("failed boom ("), "{r:?}");
    assert!(tail.contains("sh exited 3; see "), "{r:?}");
    assert!(tail.contains("    | boom: disk on fire"), "{r:?}");
    let f = env.result("b");
    let failed = &f["failures"][0];
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["stderr_tail"], serde_json::json!(["starting", "boom: disk on fire"]));
    assert!(failed["log"].as_str().unwrap().ends_with("trial-1.log"), "{failed}");
    // `result show` and `list results` show it too.
    let show = env.run(&["result", "show", "b"]);
    assert!(show.stdout.contains("Failed or skipped (1)\n  failed Boom ("), "{}", show.stdout);
    assert!(show.stdout.contains("sh exited 3"), "{}", show.stdout);
    let list = env.run(&["list", "results"]);
    assert!(list.stdout.contains("1 result(s), 1 failed or skipped (boom): "), "{}", list.stdout);
    // A run whose only test failed: the failed test is named, and no empty
    // list of identifiers follows.
    let r = env.bench(&["boom", "--runs", "1", "--save", "only"]);
    assert_eq!(r.code, 4, "{r:?}");
    let list = env.run(&["list", "results"]);
    let line = list.stdout.lines().find(|l| l.starts_with("only ")).unwrap_or_default().to_string();
    assert!(line.contains("1 failed or skipped (boom)") && !line.trim_end().ends_with(':'), "{line}");
    // The HTML page lists it too, and says so at its top.
    let html = env.run(&["result", "show", "b", "--format", "html"]).stdout;
    assert!(html.contains("<h2>Failed or skipped (1)</h2>") && html.contains("sh exited 3"), "{html}");
    assert!(html.contains("1 failed or skipped (listed below)"), "{html}");
    // The next run retries it; when it passes, the failure is gone.
    env.profile(
        "boom",
        "id: boom\nversion: 1.0.0\ntitle: Boom\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'echo value: 2']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let r = env.bench(&["echo", "boom", "--runs", "1", "--save", "b"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(env.result("b").get("failures").is_none());
    assert!(!env.run(&["result", "show", "b"]).stdout.contains("Failed or skipped"));
}

/// Overflow after `multiply_by` fails that trial, naming the parser and the
/// raw text; the result file keeps loading.
#[test]
fn an_overflowing_value_fails_its_trial_and_the_file_still_loads() {
    let env = Env::new();
    env.profile(
        "huge",
        "id: huge\nversion: 1.0.0\ntitle: H\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'echo value: 1e300']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\S+)', multiply_by: 1e10}]\n",
    );
    env.profile("echo", &echo_profile("echo", &["3"]));
    let r = env.bench(&["echo", "huge", "--runs", "2", "--save", "h"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr.contains("result `x` of trial 1: the regex parser read `1e300`, which gives inf after conversion: not a finite number"),
        "{r:?}"
    );
    let show = env.run(&["result", "show", "h"]);
    assert_eq!(show.code, 0, "{show:?}");
    let again = env.bench(&["echo", "--runs", "1", "--save", "h", "--identifier", "second"]);
    assert_eq!(again.code, 0, "appending still works: {again:?}");
}

#[test]
fn a_missing_program_skips_its_tests_with_an_install_hint() {
    let env = Env::new();
    env.profile(
        "needs",
        "id: needs\nversion: 1.0.0\ntitle: Needs\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'echo value: 1']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\nrequirements:\n  programs: [{name: definitely-not-installed-xyz, apt: xyz-tools}]\n",
    );
    env.profile("echo", &echo_profile("echo", &["4"]));
    let r = env.bench(&["needs", "echo", "--save", "m"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr.contains("skipped needs: definitely-not-installed-xyz not found — install it with `apt-get install xyz-tools` or put it on PATH"),
        "{r:?}"
    );
    assert_eq!(env.result("m")["results"].as_array().unwrap().len(), 1);
}

#[test]
fn the_executor_program_counts_as_a_requirement() {
    let env = Env::new();
    env.profile(
        "noprog",
        "id: noprog\nversion: 1.0.0\ntitle: N\ntest_type: other\nexecutor: {external: {program: no-such-benchmark-tool}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, wall_time: true}]\n",
    );
    let r = env.bench(&["noprog", "--save", "np"]);
    assert_eq!(r.code, 4, "{r:?}");
    // No package is invented from the program's name.
    assert!(
        r.stderr.contains("no-such-benchmark-tool not found — install the package that provides it or put it on PATH"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("apt-get install no-such-benchmark-tool"), "{r:?}");
    assert!(!env.result_path("np").exists());
}

#[test]
fn a_target_dir_that_cannot_be_used_stops_before_any_trial() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    let file = env.target.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let bad = file.join("sub");
    let r = env.run(&["benchmark", "-y", "echo", "--save", "t", "--target-dir", bad.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("--target-dir") && r.stderr.contains("cannot be used: Not a directory"), "{r:?}");
    assert!(!env.result_path("t").exists());
    assert!(!env.home.path().join("results/t").exists(), "no empty result folder");

    // A target that does not exist is an error, not created on the root disk.
    let missing = env.target.path().join("not-mounted-yet");
    let r = env.run(&["benchmark", "-y", "echo", "--save", "t", "--target-dir", missing.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("hint: create it first"), "{r:?}");
    assert!(!missing.exists(), "engine must not create it");
}

#[test]
fn too_little_free_space_stops_before_any_trial() {
    let env = Env::new();
    env.profile(
        "huge",
        "id: huge\nversion: 1.0.0\ntitle: H\ntest_type: disk\nexecutor: {external: {program: sh, args: [-c, 'touch ran; echo value: 1']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\nrequirements: {free_space: 900TB}\n",
    );
    let r = env.bench(&["huge", "--save", "h"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("free, but huge needs 818.5 TiB"), "{r:?}");
    assert!(!env.result_path("h").exists());
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "no trial ran");
}

#[test]
fn result_names_with_slashes_or_dots_are_rejected() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    for bad in ["../escape", "a/b", "..", "x..y"] {
        let r = env.bench(&["echo", "--save", bad]);
        assert_eq!(r.code, 2, "{bad}: {r:?}");
        assert!(r.stderr.contains(&format!("result name `{bad}` is not allowed")), "{r:?}");
    }
    assert!(!env.home.path().join("escape").exists());
    assert!(!env.home.path().join("results").exists());
    let r = env.run(&["result", "show", "../etc"]);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn a_timeout_kills_the_trial_and_its_children() {
    let env = Env::new();
    env.profile(
        "slow",
        "id: slow\nversion: 1.0.0\ntitle: S\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [-c, '(sleep 4; touch {{target_dir}}/child-survived) & sleep 30']\n    timeout: 1s\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, wall_time: true}]\n",
    );
    let t0 = Instant::now();
    let r = env.bench(&["slow", "--save", "s"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(10), "took {:?}", t0.elapsed());
    assert!(r.stderr.contains("sh timed out after 1s; its process group was killed; see "), "{r:?}");
    // The child would touch the file 4 s in; once nothing that could is
    // left, the file tells.
    wait_gone(&env.target.path().join("child-survived").display().to_string());
    assert!(!env.target.path().join("child-survived").exists(), "a child outlived the timeout");
}
