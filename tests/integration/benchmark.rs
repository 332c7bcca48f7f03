//! Running tests for real and checking what lands in the result file.

use crate::common::*;
use serde_json::Value;

fn entries(r: &Value, result_idx: usize) -> &Vec<Value> {
    r["results"][result_idx]["entries"].as_array().unwrap()
}

fn check_entry_stats(e: &Value) {
    let trials: Vec<f64> = e["trials"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(e["n"].as_u64().unwrap() as usize, trials.len());
    let (mean, sd, se) = stats_of(&trials);
    assert!(close(e["value"].as_f64().unwrap(), mean), "{e}");
    if trials.len() > 1 {
        assert!(close(e["sd"].as_f64().unwrap(), sd), "{e}");
        assert!(close(e["se"].as_f64().unwrap(), se), "{e}");
    }
    let min = trials.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(e["min"].as_f64().unwrap(), min);
}

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
        "inserts=500",
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
    let log = std::fs::read_to_string(logs.join("trial-2.log")).unwrap();
    assert!(log.starts_with("$ fs_mark -d "), "{log}");
    assert!(log.contains("Files/sec"), "{log}");

    let sq = &results[1];
    assert_eq!(sq["profile"], "sqlite");
    assert_eq!(sq["unit"], "Seconds");
    assert_eq!(sq["proportion"], "LIB");
    assert_eq!(sq["description"], "Insertions: 500 - Timed SQLite Insertions");
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
fn trials_are_added_while_the_target_is_within_reach() {
    let env = Env::new();
    // 100, 104, 96: 95 % CI ±9.9 %, and ±5 % is in reach (about 5 trials).
    // Trials 4 and 5 (101, 99) bring it to ±3.7 %.
    let script = "case $n in 1) v=100;; 2) v=104;; 3) v=96;; 4) v=101;; *) v=99;; esac; echo value: $v";
    env.profile("reach", &counter_profile("reach", script, ""));
    let r = env.bench(&["reach", "--save", "n"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("n");
    let e = &entries(&f, 0)[0];
    assert_eq!(e["n"], 5);
    let added: Vec<&str> = e["added_trials"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(added, ["trial 4: 95 % CI ±9.94 % > target ±5 %", "trial 5: 95 % CI ±5.24 % > target ±5 %"]);
    assert!(e["warning"].is_null(), "{e}");
    check_entry_stats(e);

    // --runs forces the count.
    let r = env.bench(&["reach", "--save", "n2", "--runs", "2"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(env.result("n2")["results"][0]["entries"][0]["n"], 2);
}

#[test]
fn noise_beyond_reach_stops_at_once_and_says_why() {
    let env = Env::new();
    // Alternating 10 and 20: ±5 % would take hundreds of trials. The old rule
    // ran to the cap of 12 and still warned; now it stops after the 3
    // scheduled ones and says how many it would take.
    env.profile(
        "noisy",
        &counter_profile("noisy", "if [ $((n % 2)) = 0 ]; then echo value: 20; else echo value: 10; fi", ""),
    );
    let r = env.bench(&["noisy", "--save", "n"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("n");
    let e = &entries(&f, 0)[0];
    assert_eq!(e["n"], 3);
    assert!(e["added_trials"].as_array().unwrap().is_empty());
    let w = e["warning"].as_str().unwrap();
    assert!(w.starts_with("noisy: 95 % CI ±"), "{w}");
    assert!(w.ends_with("more than the cap of 12"), "{w}");
    assert!(r.stdout.contains("! "), "the report shows the warning: {}", r.stdout);
}

#[test]
fn an_outlier_is_reported_not_chased() {
    let env = Env::new();
    // Trial 4 is far off (modified z-score 0.6745 · 400 / 1 = 269.8). The old
    // rule added trials for it up to the cap; more trials cannot make it
    // stop being an outlier, so now it is reported and the test ends.
    let script = "case $n in 2) v=101;; 3) v=99;; 4) v=500;; *) v=100;; esac; echo value: $v";
    env.profile("outl", &counter_profile("outl", script, "trials: {times: 5, max: 7}"));
    let r = env.bench(&["outl", "--save", "o"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("o")["results"][0]["entries"][0];
    assert_eq!(e["n"], 5);
    assert!(e["added_trials"].as_array().unwrap().is_empty());
    let notes: Vec<&str> = e["notes"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(notes, ["trial 4 (500.0) is an outlier (modified z-score 269.8)"]);
    assert!(r.stdout.contains("· "), "the report shows the note: {}", r.stdout);
}

#[test]
fn a_slow_first_trial_is_flagged_as_warm_up_and_warmup_discards_it() {
    let env = Env::new();
    let script = "case $n in 1) v=60;; 2) v=101;; 3) v=99;; *) v=100;; esac; echo value: $v";
    env.profile("warm", &counter_profile("warm", script, ""));
    let r = env.bench(&["warm", "--save", "w"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("w")["results"][0]["entries"][0];
    let notes = e["notes"].as_array().unwrap();
    assert!(notes[0].as_str().unwrap().starts_with("trial 1 (60.00) is far from the rest"), "{notes:?}");
    // --warmup 1 runs it first and keeps it out of the statistics.
    let r = env.bench(&["warm", "--save", "w2", "--warmup", "1"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("w2")["results"][0]["entries"][0];
    assert_eq!(e["warmup_trials"], serde_json::json!([60.0]));
    assert_eq!(e["trials"], serde_json::json!([101.0, 99.0, 100.0]));
    assert!(e.get("notes").is_none(), "{e}");
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

#[test]
fn the_quick_suite_resolves_to_real_profiles() {
    let env = Env::new();
    let r = env.run(&["info", "suite/disk-quick"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("fio@1.0.0") && r.stdout.contains("fs-mark@1.0.0") && r.stdout.contains("sqlite@1.0.0"),
        "{r:?}"
    );
}
