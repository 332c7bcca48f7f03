//! How a trial runs: in a fresh scratch directory (or one per test when the
//! profile asks for it) that is removed before the next trial — so fs_mark
//! fits a device sized for one trial — with the steps around it run when the
//! book says.

use crate::common::*;
use crate::loopdev::LoopFs;

/// A trial runs in a fresh directory; the file a trial leaves is gone before the next.
#[test]
fn every_trial_gets_a_fresh_scratch_directory() {
    let env = Env::new();
    // Each trial counts the files it finds, then leaves one behind.
    env.profile(
        "fresh",
        "id: fresh\nversion: 1.0.0\ntitle: F\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'echo value: $(ls | wc -l); touch left-$$; pwd > {{test_dir}}/dir-$$']\nresults: [{id: x, unit: Files, proportion: LIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let r = env.bench(&["fresh", "--runs", "3", "--save", "f"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("f")["results"][0]["entries"][0];
    assert_eq!(e["trials"], serde_json::json!([0.0, 0.0, 0.0]), "no trial sees another's files");
    // per_test shares one directory: the second trial sees the first's file.
    env.profile(
        "shared",
        "id: shared\nversion: 1.0.0\ntitle: S\ntest_type: other\nscratch: per_test\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'echo value: $(ls left-* 2>/dev/null | wc -l); touch left-$$']\nresults: [{id: x, unit: Files, proportion: LIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let r = env.bench(&["shared", "--runs", "3", "--save", "s"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(env.result("s")["results"][0]["entries"][0]["trials"], serde_json::json!([0.0, 1.0, 2.0]));
    // Nothing is left in the target directory.
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0);
}

/// Steps run when the book says: pre_test once, pre_trial and post_trial
/// around every trial (warm-ups included), post_test once, also after a failure.
#[test]
fn steps_run_once_per_test_or_around_every_trial() {
    let env = Env::new();
    let log = env.target.path().join("steps.log");
    let l = log.display();
    env.profile(
        "steps",
        &format!(
            "id: steps\nversion: 1.0.0\ntitle: S\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'echo trial >> {l}; echo value: 1']\n    pre_test: [{{shell: 'echo pre_test >> {l}'}}]\n    pre_trial: [{{shell: 'echo pre_trial >> {l}'}}]\n    post_trial: [{{shell: 'echo post_trial >> {l}'}}]\n    post_test: [{{shell: 'echo post_test >> {l}'}}]\nresults: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value: (?P<value>\\d+)'}}]\n"
        ),
    );
    let r = env.bench(&["steps", "--runs", "2", "--warmup", "1", "--save", "st"]);
    assert_eq!(r.code, 0, "{r:?}");
    let got = std::fs::read_to_string(&log).unwrap();
    let want = "pre_test\n".to_string() + &"pre_trial\ntrial\npost_trial\n".repeat(3) + "post_test\n";
    assert_eq!(got, want);
}

/// fs_mark's "100 Files, 1MB Size" needs 100 MiB: a loop device with room for
/// one trial's files passes every trial, because each trial's files are
/// removed before the next (before, trial 2 failed with "Insufficient free space").
#[test]
#[ignore = "needs root"]
fn fs_mark_on_a_device_sized_for_one_trial() {
    let fs = LoopFs::new(160, "relatime");
    let env = Env::new();
    let r = env.run(&[
        "benchmark",
        "-y",
        "fs-mark",
        "--option",
        "test=100 Files, 1MB Size, No Sync/FSync",
        "--runs",
        "3",
        "--target-dir",
        fs.path(),
        "--save",
        "small",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(env.result("small")["results"][0]["entries"][0]["n"], 3);
}

/// A test that stopped for time wider than ±5 % is named at the end, with
/// the command that re-runs only it into the same result; that command
/// replaces its entry and leaves the settled test alone.
#[test]
fn the_budget_line_names_the_unsettled_and_reruns_only_them() {
    let env = Env::new();
    env.profile(
        "noisy",
        &counter_profile("noisy", "sleep 0.2; case $((n % 2)) in 0) v=50;; *) v=150;; esac; echo value: $v", ""),
    );
    env.profile("echo", &echo_profile("echo", &["4"]));
    let r = env.bench(&["noisy", "echo", "--budget", "1s", "--save", "u"]);
    assert_eq!(r.code, 0, "{r:?}");
    let at = r.stderr.lines().position(|l| l == "unsettled: 1 test(s)").unwrap_or_else(|| panic!("{r:?}"));
    let unsettled = r.stderr.lines().nth(at + 1).unwrap();
    assert!(unsettled.starts_with("  Counter noisy: number ("), "the test and its metric: {unsettled}");
    assert!(!r.stderr.contains("Echo"), "{r:?}");
    let cmd = r.stderr.lines().find(|l| l.starts_with("re-run only these into the same result: ")).unwrap();
    assert!(cmd.contains(": engine benchmark u --only-unsettled --budget "), "{cmd}");
    let stamp = |f: &serde_json::Value, p: &str| {
        let r = f["results"].as_array().unwrap().iter().find(|x| x["profile"] == p).unwrap();
        r["entries"][0]["timestamp"].as_str().unwrap().to_string()
    };
    let before = env.result("u");
    // Timestamps are to the second: wait for the next one to begin.
    let second = |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let now = second(std::time::SystemTime::now());
    wait_for("the next second", || second(std::time::SystemTime::now()) > now);
    let again = env.bench(&["u", "--only-unsettled", "--budget", "1s"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stderr.contains("[1/1]"), "one test ran: {again:?}");
    let after = env.result("u");
    assert_ne!(stamp(&before, "noisy"), stamp(&after, "noisy"), "the unsettled test ran again");
    assert_eq!(stamp(&before, "echo"), stamp(&after, "echo"), "the settled one did not");
    assert_eq!(after["systems"].as_array().unwrap().len(), 1, "into the same identifier");
    // Only for a saved result.
    let r = env.bench(&["echo", "--only-unsettled"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--only-unsettled re-runs tests of a saved result"), "{r:?}");
}

/// A trial's log shows the command as it ran: placeholders filled (an
/// option's value with a space quoted as a shell would), never the
/// template; the exit as a number.
#[test]
fn trial_logs_show_the_command_as_run() {
    let env = Env::new();
    env.profile(
        "shown",
        "id: shown\nversion: 1.0.0\ntitle: S\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: ['-c', 'echo value: 1', '{{test_dir}}', '{{size}}']\noptions:\n  - id: size\n    name: Size\n    entries: [{label: S, value: 'a b'}]\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let r = env.bench(&["shown", "--runs", "1", "--save", "s"]);
    assert_eq!(r.code, 0, "{r:?}");
    let log = walk(&env.result_path("s").parent().unwrap().join("logs"))
        .into_iter()
        .find(|p| p.ends_with("trials.log"))
        .unwrap_or_else(|| panic!("no trials.log"));
    let text = std::fs::read_to_string(log).unwrap();
    let line = text.lines().find(|l| l.starts_with("$ ")).unwrap();
    assert!(!line.contains("{{"), "{line}");
    assert!(line.starts_with("$ sh -c 'echo value: 1' /") && line.ends_with(" 'a b'"), "{line}");
    assert!(text.contains("# exit: 0 after "), "{text}");
}
