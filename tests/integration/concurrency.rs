//! Engine processes sharing one ENGINE_HOME: one benchmark at a time (the
//! host lock), two runs saving to one result name, and merges and edits
//! racing a run that saves after every test (the result's own lock).

use crate::common::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_second_benchmark_on_one_home_is_refused_and_the_first_finishes() {
    let env = Env::new();
    env.profile("slow", &counter_profile("slow", "sleep 2; echo value: 3", ""));
    env.profile("echo", &echo_profile("echo", &["1"]));
    let target = env.target.path().to_str().unwrap().to_string();
    let mut first = env
        .cmd(&["benchmark", "-y", "--target-dir", &target, "slow", "--save", "a", "--identifier", "one", "--runs", "1"])
        .args(["--progress", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) until the first run is running its test.
    let mut out = BufReader::new(first.stdout.take().unwrap());
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.contains("\"test_started\"") {
        assert!(Instant::now() < deadline, "the first run did not start: {seen}");
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            panic!("the first run ended early: {seen}");
        }
        seen.push_str(&line);
    }
    let second = env.bench(&["echo", "--save", "b", "--identifier", "two"]);
    assert_eq!(second.code, 1, "{second:?}");
    assert!(
        second.stderr.contains("another engine benchmark is running with this ENGINE_HOME")
            && second.stderr.contains(&format!("pid {}", first.id()))
            && second.stderr.contains("saving to `a` as `one`"),
        "{second:?}"
    );
    assert!(!env.home.path().join("results/b").exists(), "the refused run left nothing");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(first.wait().unwrap().success(), "{seen}{rest}");
    assert_eq!(env.result("a")["results"][0]["entries"][0]["value"], 3.0);
    // The lock went with the process: the next run goes ahead.
    let again = env.bench(&["echo", "--save", "b", "--identifier", "two"]);
    assert_eq!(again.code, 0, "{again:?}");
}

/// Another ENGINE_HOME on the same machine: refused by the machine-wide
/// lock, or run with a warning under `--allow-concurrent`.
#[test]
fn a_benchmark_with_another_home_is_refused_unless_allowed() {
    let (a, b) = (Env::new(), Env::new());
    let machine = tempfile::tempdir().unwrap();
    let lock = machine.path().join("machine.lock");
    let marker = a.target.path().join("started");
    slow_profile(&a, "slow", 3.0, &marker);
    b.profile("echo", &echo_profile("echo", &["1"]));
    let target = a.target.path().to_str().unwrap().to_string();
    let mut first = a
        .cmd(&["benchmark", "-y", "--target-dir", &target, "slow", "--save", "a", "--identifier", "one", "--runs", "1"])
        .env("ENGINE_MACHINE_LOCK", &lock)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&marker);
    let bench = |extra: &[&str]| -> Run {
        let mut args = vec!["benchmark", "-y", "--target-dir", b.target.path().to_str().unwrap()];
        args.extend_from_slice(&["echo", "--save", "b", "--identifier", "two", "--runs", "1"]);
        args.extend_from_slice(extra);
        b.cmd(&args).env("ENGINE_MACHINE_LOCK", &lock).output().unwrap().into()
    };
    let refused = bench(&[]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("another engine benchmark is running on this machine")
            && refused.stderr.contains(&format!("pid {}", first.id()))
            && refused.stderr.contains(&a.home.path().display().to_string())
            && refused.stderr.contains("--allow-concurrent"),
        "{refused:?}"
    );
    assert!(!b.home.path().join("results/b").exists(), "the refused run left nothing");
    let allowed = bench(&["--allow-concurrent"]);
    assert_eq!(allowed.code, 0, "{allowed:?}");
    assert!(allowed.stderr.contains("--allow-concurrent: running anyway"), "{allowed:?}");
    assert!(first.wait().unwrap().success());
    // The lock went with the first process.
    let after = bench(&[]);
    assert_eq!(after.code, 0, "{after:?}");
    assert!(!after.stderr.contains("running anyway"), "{after:?}");
}

/// A profile whose trial takes `secs` and touches `marker` when it starts.
fn slow_profile(env: &Env, id: &str, secs: f64, marker: &Path) {
    env.profile(
        id,
        &format!(
            "id: {id}\nversion: 1.0.0\ntitle: Slow\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [\"-c\", \"touch {}; sleep {secs}; echo value: 1\"]\nresults:\n  - {{id: number, unit: Items, proportion: HIB}}\nparsers:\n  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}\n",
            marker.display()
        ),
    );
}

fn wait_for_file(p: &Path) {
    let t = Instant::now();
    while !p.exists() {
        assert!(t.elapsed() < Duration::from_secs(30), "{} never appeared", p.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Two runs saving to one result name at once: the second is refused before
/// it runs anything, with the reason and what to do; the first saves; run
/// again, the second adds its identifier — nothing is lost. (Edits and merges
/// racing a run meet the result's own lock: the next test.)
#[test]
fn two_runs_saving_to_one_result_name() {
    let env = Env::new();
    let marker = env.target.path().join("started");
    slow_profile(&env, "slow", 1.5, &marker);
    let target = env.target.path().to_str().unwrap().to_string();
    let first = env
        .cmd(&[
            "benchmark",
            "-y",
            "slow",
            "--runs",
            "1",
            "--target-dir",
            &target,
            "--save",
            "same",
            "--identifier",
            "a",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&marker);
    let r = env.bench(&["slow", "--runs", "1", "--save", "same", "--identifier", "b"]);
    assert_eq!(r.code, 1, "{r:?}");
    // One benchmark per ENGINE_HOME (the host lock) refuses it
    // before the result's own lock is reached, naming the result it saves.
    assert!(r.stderr.contains("another engine benchmark is running with this ENGINE_HOME"), "{r:?}");
    assert!(r.stderr.contains("saving to `same` as `a`"), "{r:?}");
    assert!(r.stderr.contains("wait for it to finish"), "{r:?}");
    let first: Run = first.wait_with_output().unwrap().into();
    assert_eq!(first.code, 0, "{first:?}");
    let r = env.bench(&["slow", "--runs", "1", "--save", "same", "--identifier", "b"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("same");
    let ids: Vec<&str> = f["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(f["results"][0]["entries"].as_array().unwrap().len(), 2);
}

/// `result merge` and edits racing a run that saves after every test: a
/// merge that reads the running result gets a whole file (the last save);
/// an edit or a merge into the running name is refused, so the run's save
/// cannot undo it later (no lost update).
#[test]
fn merge_and_edits_racing_a_run() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["1", "2"]));
    let marker = env.target.path().join("started");
    slow_profile(&env, "slow", 0.3, &marker);
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "other"]).code, 0);
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "busy", "--identifier", "a"]).code, 0);
    let target = env.target.path().to_str().unwrap().to_string();
    let run = env
        .cmd(&[
            "benchmark",
            "-y",
            "slow",
            "echo",
            "--runs",
            "3",
            "--target-dir",
            &target,
            "--save",
            "busy",
            "--identifier",
            "b",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&marker);
    let r = env.run(&["result", "rename-identifier", "busy", "a", "z"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("result `busy` is in use by another engine process"), "{r:?}");
    let r = env.run(&["result", "merge", "other", "busy", "--save", "busy"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("in use by another engine process"), "{r:?}");
    // Merges reading the running result while it saves: each sees a whole file.
    let mut merged = 0;
    for i in 0..40 {
        let name = format!("m{i}");
        let r = env.run(&["result", "merge", "busy", "other", "--save", &name]);
        assert_eq!(r.code, 0, "{r:?}");
        let f = env.result(&name);
        assert!(f["systems"].as_array().unwrap().len() >= 2);
        merged += 1;
    }
    let run: Run = run.wait_with_output().unwrap().into();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(merged, 40);
    let f = env.result("busy");
    let ids: Vec<&str> = f["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b"], "the refused rename changed nothing and the run lost nothing");
    assert_eq!(f["results"].as_array().unwrap().len(), 3);
}

/// `--wait`: a second run waits for the first (saying for whom), then runs;
/// the first's result and the second's are both saved.
#[test]
fn wait_runs_after_the_holder_ends() {
    let env = Env::new();
    env.profile("slow", &counter_profile("slow", "sleep 2; echo value: 3", ""));
    env.profile("echo", &echo_profile("echo", &["1"]));
    let target = env.target.path().to_str().unwrap().to_string();
    let mut first = env
        .cmd(&["benchmark", "-y", "--target-dir", &target, "slow", "--save", "a", "--identifier", "one", "--runs", "1"])
        .args(["--progress", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(first.stdout.take().unwrap());
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.contains("\"test_started\"") {
        assert!(Instant::now() < deadline, "the first run did not start: {seen}");
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            panic!("the first run ended early: {seen}");
        }
        seen.push_str(&line);
    }
    let second = env.bench(&["echo", "--save", "b", "--identifier", "two", "--wait"]);
    assert_eq!(second.code, 0, "{second:?}");
    assert!(
        second.stderr.contains("waiting: another engine benchmark is running")
            && second.stderr.contains(&format!("pid {}", first.id())),
        "{second:?}"
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(first.wait().unwrap().success());
    assert_eq!(env.result("a")["results"][0]["entries"][0]["value"], 3.0);
    assert_eq!(env.result("b")["results"][0]["entries"][0]["value"], 1.0);
}
