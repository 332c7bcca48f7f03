//! Result files: what a run saves (values, statistics, system, per-trial
//! logs) and prints, identifiers appended to one result and a saved result
//! re-run, `--format json`, separate log folders for long identifiers, runs
//! refused or stopped early leaving no folder, `result delete`, and files
//! that are corrupt or hold a value that is not a number.

use crate::common::*;
use serde_json::Value;
use std::process::Stdio;

#[test]
fn fs_mark_and_sqlite_at_tiny_sizes() {
    let env = Env::new();
    // A deep target directory: fs_mark limits its -d path to 40 bytes.
    let deep = env.target.path().join("a-target-directory-with-a-long-name").join("and-another-level");
    std::fs::create_dir_all(&deep).unwrap();
    let r = env.run(&[
        "benchmark",
        "-y",
        "--target-dir",
        deep.to_str().unwrap(),
        "fs-mark",
        "sqlite",
        "--option",
        "test=100 Files, 1MB Size, No Sync/FSync",
        "--option",
        "copies=1 (engine quick: 3 x 100 inserts)",
        "--runs",
        "2",
        "--save",
        "tiny",
        "--identifier",
        "loop: NONE",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("tiny");
    assert_eq!(f["schema_version"], 1);
    assert_eq!(f["systems"][0]["identifier"], "loop: NONE");
    assert!(f["systems"][0]["hardware"]["Processor"].as_str().unwrap().len() > 3);
    assert!(!f["systems"][0]["software"]["Kernel"].as_str().unwrap().is_empty());
    assert_eq!(f["systems"][0]["engine_version"], env!("CARGO_PKG_VERSION"));
    let results = f["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);

    let fm = &results[0];
    assert_eq!(fm["profile"], "fs-mark");
    assert_eq!(fm["title"], "FS-Mark");
    assert_eq!(fm["app_version"], "3.3");
    assert_eq!(fm["description"], "Test: 100 Files, 1MB Size, No Sync/FSync");
    assert_eq!(fm["unit"], "Files/s");
    assert_eq!(fm["proportion"], "HIB");
    let e = &entries(&f, 0)[0];
    assert_eq!(e["identifier"], "loop: NONE");
    assert_eq!(e["n"], 2);
    assert!(e["trials"].as_array().unwrap().iter().all(|v| v.as_f64().unwrap() > 0.0));
    check_entry_stats(e);
    // Logs per trial under the result folder.
    let logs = env.home.path().join("results/tiny").join(e["logs"].as_str().unwrap());
    let log = trial_log_in(&logs, "trial-2");
    assert!(log.starts_with("$ fs_mark -d "), "{log}");
    assert!(log.contains("Files/sec"), "{log}");

    let sq = &results[1];
    assert_eq!(sq["profile"], "sqlite");
    assert_eq!(sq["unit"], "Seconds");
    assert_eq!(sq["proportion"], "LIB");
    assert_eq!(sq["description"], "Threads / Copies: 1 (engine quick: 3 x 100 inserts)");
    let e = &entries(&f, 1)[0];
    check_entry_stats(e);
    let secs: Vec<f64> = e["trial_seconds"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let trials: Vec<f64> = e["trials"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(secs, trials, "a wall-time result is the trial's wall time");

    // The terminal report has the seed's layout with SE and N.
    assert!(
        r.stdout.contains(
            "FS-Mark 3.3\nTest: 100 Files, 1MB Size, No Sync/FSync\nFiles/s > Higher Is Better\nloop: NONE . "
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Seconds < Lower Is Better\nloop: NONE . "), "{}", r.stdout);
    assert!(r.stdout.contains(", N = 2"), "{}", r.stdout);
    // The scratch directories are gone.
    assert_eq!(std::fs::read_dir(&deep).unwrap().count(), 0);
}

#[test]
fn two_identifiers_append_to_one_result_and_a_saved_result_reruns() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["5", "7"]));
    for id in ["A", "B"] {
        let r = env.bench(&["echo", "--save", "cmp", "--identifier", id]);
        assert_eq!(r.code, 0, "{r:?}");
    }
    let f = env.result("cmp");
    let ids: Vec<&str> = f["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    assert_eq!(ids, ["A", "B"]);
    let results = f["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "one result per test, not per run");
    for (i, want) in [5.0, 7.0].iter().enumerate() {
        let es = entries(&f, i);
        assert_eq!(es.len(), 2);
        for e in es {
            assert_eq!(e["value"].as_f64().unwrap(), *want);
            assert_eq!(e["trials"].as_array().unwrap().len(), 3);
            assert_eq!(e["se"].as_f64().unwrap(), 0.0);
        }
    }

    // Re-running the saved result by its name appends a third identifier.
    let r = env.bench(&["cmp", "--identifier", "C"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("cmp");
    assert_eq!(f["systems"].as_array().unwrap().len(), 3);
    assert_eq!(entries(&f, 0).len(), 3);
    assert_eq!(entries(&f, 1)[2]["identifier"], "C");

    // An existing identifier resumes: nothing is run again.
    let r = env.bench(&["cmp", "--identifier", "C"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("2 test(s) already in result `cmp` are kept; running the other 0"), "{r:?}");

    let show = env.run(&["result", "show", "cmp"]);
    assert_eq!(show.code, 0);
    assert!(show.stdout.contains("Echo echo 1\nValue: V5\nItems/s > Higher Is Better\nA . 5.00 |"), "{}", show.stdout);
    assert!(show.stdout.contains("C . 7.00 |"), "{}", show.stdout);
    assert!(show.stdout.contains("SE +/- 0.00, N = 3"), "{}", show.stdout);
    let json = env.run(&["result", "show", "cmp", "--format", "json"]);
    let parsed: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(parsed, env.result("cmp"));
}

#[test]
fn a_suite_runs_its_presets_and_json_format_prints_the_file() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["1", "2", "3"]));
    env.suite("mine", "title: Mine\ntests:\n  - profile: echo\n    options:\n      v: [V1, \"3\"]\n");
    let r = env.bench(&["suite/mine", "--save", "s", "--format", "json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let printed: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(printed, env.result("s"));
    let descs: Vec<&str> =
        printed["results"].as_array().unwrap().iter().map(|x| x["description"].as_str().unwrap()).collect();
    assert_eq!(descs, ["Value: V1", "Value: V3"]);
}

/// Identifiers that share their first 60 characters keep their logs apart.
#[test]
fn long_identifiers_get_separate_log_folders() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    let stem = "WDC WD5000AZRX-00A8LB0 on the second controller: ext4 nobarrier / BFQ";
    let (a, b) = (format!("{stem} low_latency=0"), format!("{stem} low_latency=1"));
    for id in [&a, &b] {
        assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "l", "--identifier", id]).code, 0);
    }
    let f = env.result("l");
    let logs: Vec<&str> =
        f["results"][0]["entries"].as_array().unwrap().iter().map(|e| e["logs"].as_str().unwrap()).collect();
    assert_ne!(logs[0], logs[1]);
    for l in logs {
        assert!(trial_log_in(&env.home.path().join("results/l").join(l), "trial-1").starts_with("$ "));
    }
}

/// Refused runs, and runs stopped before any test finished, leave no result folder.
#[test]
fn a_refused_or_early_stopped_run_leaves_no_folder_and_results_can_be_deleted() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    let r = env.bench(&["echo", "--save", "x", "--set", "queue/scheduler=bfq"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("set the I/O scheduler with `--scheduler bfq`"), "{r:?}");
    let r = env.bench(&["echo", "--save", "x", "--settle", "later"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(!env.home.path().join("results/x").exists());
    // Ctrl-C during the first (and only) test: nothing saved, no folder.
    env.profile("slow", SLOW);
    let child = env
        .cmd(&["benchmark", "-y", "slow", "--save", "y", "--target-dir", env.target.path().to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the folder", || env.home.path().join("results/y").exists());
    wait_for("the trial", || !descendants_mentioning(child.id(), "sleep 2; echo value").is_empty());
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r: Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 130, "{r:?}");
    assert!(!env.home.path().join("results/y").exists(), "{r:?}");
    // result delete
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "z"]).code, 0);
    let r = env.run(&["result", "delete", "z"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!env.home.path().join("results/z").exists());
    let r = env.run(&["result", "delete", "z"]);
    assert_eq!(r.code, 2, "{r:?}");
}

/// A corrupt result file: errors say what to do, exit codes match the book,
/// and the last good version is kept beside it.
#[test]
fn a_corrupt_result_file_is_an_error_with_a_way_back() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "c", "--identifier", "a"]).code, 0);
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "c", "--identifier", "b"]).code, 0);
    let path = env.result_path("c");
    let bak = path.with_extension("json.bak");
    assert!(bak.is_file(), "the version before the last save is kept");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let r = env.run(&["list", "results"]);
    assert_eq!(r.code, 1, "{r:?}");
    let r = env.run(&["benchmark", "-y", "c"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("not a valid result file") && r.stderr.contains("result.json.bak"), "{r:?}");
    let r = env.run(&["benchmark", "-y", "echo", "--save", "c", "--identifier", "d"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("hint: the last good version is kept as"), "{r:?}");
    // The backup is a good file.
    std::fs::copy(&bak, &path).unwrap();
    assert_eq!(env.run(&["result", "show", "c"]).code, 0);
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

/// `--tag KEY=VALUE` labels a run (with `kernel` and `engine` recorded by
/// themselves); `list results --tag` filters; a tag without `=` is usage.
#[test]
fn tags_label_a_run_and_filter_the_list() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["1"]));
    let r = env.bench(&["echo", "--runs", "2", "--save", "t1", "--tag", "commit=abc123", "--tag", "fw=2.1"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.bench(&["echo", "--runs", "2", "--save", "t2", "--tag", "commit=def456"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("t1");
    let tags = &f["systems"][0]["tags"];
    assert_eq!((tags["commit"].as_str(), tags["fw"].as_str()), (Some("abc123"), Some("2.1")), "{f}");
    assert_eq!(tags["engine"], env!("CARGO_PKG_VERSION"));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(tags["kernel"].as_str(), Some(kernel.trim()));
    let r = env.run(&["list", "results", "--tag", "commit=abc123"]);
    assert!(r.stdout.starts_with("t1 ") && !r.stdout.contains("t2 "), "{r:?}");
    let r = env.run(&["list", "results", "--tag", &format!("kernel={}", kernel.trim()), "--tag", "commit=def456"]);
    assert!(r.stdout.starts_with("t2 ") && !r.stdout.contains("t1 "), "{r:?}");
    assert_eq!(env.run(&["list", "results", "--tag", "commit=zzz"]).stdout, "");
    // Shown with the system.
    assert!(env.run(&["result", "show", "t1"]).stdout.contains("commit=abc123, fw=2.1"));
    // Bad input.
    let r = env.bench(&["echo", "--save", "t3", "--tag", "commit"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("`commit` is not KEY=VALUE"), "{r:?}");
    assert!(!env.result_path("t3").exists());
    assert_eq!(env.run(&["list", "profiles", "--tag", "a=b"]).code, 2);
}

/// What a PTS user types (issue 39 item 17): `result list`, a misspelt name
/// gets the nearest one, `result delete` asks on a terminal and `-y` does not.
#[test]
fn result_list_did_you_mean_and_delete_asks() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["5"]));
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "laptop-ssd"]).code, 0);
    let r = env.run(&["result", "list"]);
    assert!(r.stdout.starts_with("laptop-ssd  1 identifier(s), 1 result(s)"), "{r:?}");
    let r = env.run(&["result", "show", "laptop-sdd"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("did you mean `laptop-ssd`?"), "{r:?}");
    // On a terminal: asked, "n" keeps it.
    let cmdline = format!("{} result delete laptop-ssd", bin());
    let mut pty = OnPty::spawn(&mut env.cmd(&[]), &cmdline);
    pty.wait_text("delete result `laptop-ssd` (1 identifier(s), 1 result(s)) and its logs?");
    pty.type_keys(b"n\r");
    let (_, text) = pty.finish();
    assert!(env.result_path("laptop-ssd").is_file(), "deleted without a yes: {text}");
    let r = env.run(&["result", "delete", "laptop-ssd", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!env.result_path("laptop-ssd").exists());
}

/// The report a run prints fits its purpose: a test's results under one
/// heading (each by its name, with its bars), and the long system lists
/// (compiler flags, kernel command line, security notes) cut to a line,
/// whole with `--detail`.
#[test]
fn a_tests_results_share_one_heading_and_long_notes_fold() {
    let env = Env::new();
    env.profile(
        "pair",
        "id: pair\nversion: 1.0.0\ntitle: Pair\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'echo a: 3; echo b: 5']}}\nresults:\n  - {id: first, unit: U, proportion: HIB}\n  - {id: second, unit: V, proportion: LIB}\nparsers:\n  - {result: first, regex: 'a: (?P<value>\\d+)'}\n  - {result: second, regex: 'b: (?P<value>\\d+)'}\n",
    );
    let r = env.bench(&["pair", "--runs", "2", "--save", "p"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.lines().filter(|l| *l == "Pair 1.0" || *l == "Pair").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("\n  first\nU > Higher Is Better\n"), "{}", r.stdout);
    assert!(r.stdout.contains("\n  second\nV < Lower Is Better\n"), "{}", r.stdout);
    let short = env.run(&["result", "show", "p"]).stdout;
    let whole = env.run(&["result", "show", "p", "--detail"]).stdout;
    let width = |t: &str, key: &str| t.lines().find(|l| l.trim_start().starts_with(key)).map(|l| l.chars().count());
    for key in ["Security Notes", "Compiler Notes", "Kernel Notes"] {
        if let (Some(s), Some(w)) = (width(&short, key), width(&whole, key)) {
            assert!(s <= 100, "{key} on one line of the width: {short}");
            if w > 100 {
                assert!(short.contains("--detail` prints them whole"), "{short}");
            }
        }
    }
    assert!(!whole.contains("--detail` prints them whole"), "{whole}");
}
