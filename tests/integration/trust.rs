//! Numbers a reviewer can trust (issue 8): a clean scratch directory for
//! every trial, the true target, impossible values refused, result files
//! that always load, verdicts on real data.

use crate::common::*;
use crate::loopdev::LoopFs;
use std::process::Command;

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

/// Steps run when the README says: pre_test once, pre_trial and post_trial
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

/// A target on tmpfs is named as such, warned about, and never "unknown".
#[test]
#[ignore = "needs root"]
fn a_target_on_tmpfs_is_named_and_warned_about() {
    crate::loopdev::require_root();
    let env = Env::new();
    let mnt = tempfile::tempdir().unwrap();
    let m = mnt.path().to_str().unwrap();
    assert!(Command::new("mount").args(["-t", "tmpfs", "-o", "size=16m", "tmpfs", m]).status().unwrap().success());
    struct Unmount<'a>(&'a str);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            crate::loopdev::unmount(self.0);
        }
    }
    let _u = Unmount(m);
    env.profile("echo", &echo_profile("echo", &["1"]));
    let r = env.run(&["benchmark", "-y", "echo", "--runs", "1", "--target-dir", m, "--save", "t"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("warning: the target directory") && r.stderr.contains("is on tmpfs (memory, not a disk)"),
        "{r:?}"
    );
    let s = &env.result("t")["systems"][0];
    assert_eq!(s["software"]["File-System"], "tmpfs (memory, not a disk)");
    assert!(s["hardware"]["Disk"].as_str().unwrap().ends_with("(tests ran on tmpfs: memory, not a disk)"), "{s}");
    let notes = s["notes"]["Disk Notes"].as_str().unwrap();
    assert!(notes.starts_with("tmpfs (memory, not a disk) / "), "{notes}");
    assert!(!serde_json::to_string(s).unwrap().contains("\"unknown\""), "{s}");
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

/// A file holding a value that is not a number (null, as serde_json writes
/// NaN) loads, says what it repaired, and keeps the rest.
#[test]
fn a_result_file_with_a_null_value_loads_and_says_so() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["3"]));
    assert_eq!(env.bench(&["echo", "--runs", "3", "--save", "n"]).code, 0);
    let path = env.result_path("n");
    let mut f: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    f["results"][0]["entries"][0]["trials"][1] = serde_json::Value::Null;
    f["results"][0]["entries"][0]["value"] = serde_json::Value::Null;
    std::fs::write(&path, serde_json::to_string_pretty(&f).unwrap()).unwrap();
    let r = env.run(&["result", "show", "n"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("1 trial value(s) were not numbers and were dropped"), "{r:?}");
    assert!(r.stdout.contains("N = 2"), "{}", r.stdout);
}

/// The verdicts on real, different data: a real 10 % change is found at 5
/// trials a side, and noise of the same size is not called a change.
#[test]
fn verdicts_on_real_trials() {
    let env = Env::new();
    let seq = |name: &str, vals: &[f64]| {
        let cases: Vec<String> = vals.iter().enumerate().map(|(i, v)| format!("{}) v={v};;", i + 1)).collect();
        env.profile(name, &counter_profile(name, &format!("case $n in {} esac; echo value: $v", cases.join(" ")), ""));
    };
    seq("base", &[100.0, 101.0, 99.0, 100.5, 99.5]);
    seq("fast", &[110.0, 111.0, 109.5, 110.5, 109.0]);
    seq("same", &[101.0, 99.0, 100.0, 102.0, 98.0]);
    for (p, id) in [("base", "A"), ("fast", "B"), ("same", "C")] {
        // The three profiles are one test by identity only if named alike:
        // run each under the same profile id by saving to one file per pair.
        let r = env.bench(&[p, "--runs", "5", "--save", &format!("v-{p}"), "--identifier", id]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    let merged = |a: &str, b: &str| {
        let mut fa: serde_json::Value = env.result(&format!("v-{a}"));
        let fb: serde_json::Value = env.result(&format!("v-{b}"));
        let e = fb["results"][0]["entries"][0].clone();
        fa["results"][0]["entries"].as_array_mut().unwrap().push(e);
        fa["systems"].as_array_mut().unwrap().push(fb["systems"][0].clone());
        let p = env.target.path().join(format!("{a}-{b}.json"));
        std::fs::write(&p, serde_json::to_string(&fa).unwrap()).unwrap();
        env.run(&["result", "show", p.to_str().unwrap()])
    };
    let r = merged("base", "fast");
    assert!(r.stdout.contains("B  10.0 % higher, p < 0.001"), "{}", r.stdout);
    assert!(r.stdout.contains(": better by 10.0 %"), "{}", r.stdout);
    let r = merged("base", "same");
    assert!(
        r.stdout.contains("C  unchanged, p = 1.000") || r.stdout.contains(": no significant difference"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("better by") && !r.stdout.contains("worse by"), "{}", r.stdout);
}
