//! The command line: help and version, `list` and `info`, shell completions,
//! `--dry-run`, option errors with did-you-mean, and the entry menus a
//! terminal gets.

use crate::common::*;
use std::time::Duration;

#[test]
fn list_profiles_suites_and_results() {
    let env = Env::new();
    let r = env.run(&["list", "profiles"]);
    assert_eq!(r.code, 0, "{r:?}");
    for id in ["fio@2.2.0", "fio-v1@1.11.5", "fs-mark@1.0.0", "sqlite@2.0.0"] {
        assert!(r.stdout.contains(id), "{r:?}");
    }
    // A profile that builds its tool says so, as `info` does.
    let line = r.stdout.lines().find(|l| l.starts_with("tiobench@")).unwrap();
    assert!(line.contains("needs install"), "{line}");
    assert!(env.run(&["info", "tiobench"]).stdout.contains("Install (not installed;"));
    let r = env.run(&["list", "suites"]);
    assert!(r.stdout.contains("suite/disk ") && r.stdout.contains("suite/disk-quick"), "{r:?}");
    // Tests counted as --dry-run counts them, not the suite's items.
    assert!(r.stdout.contains("Disk (quick) (24 tests; "), "{}", r.stdout);
    let r = env.run(&["list", "results"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
}

#[test]
fn info_shows_options_entries_results_and_requirements() {
    let env = Env::new();
    let r = env.run(&["info", "fio"]);
    assert_eq!(r.code, 0, "{r:?}");
    for want in [
        "Flexible IO Tester 3.33  (fio@2.2.0)",
        "Block Size (block_size):",
        "* 4KB",
        "block_size=4k",
        "bandwidth    MiB/s > Higher Is Better",
        "iops         IOPS > Higher Is Better",
        "Requirements:",
    ] {
        assert!(r.stdout.contains(want), "missing {want:?}: {r:?}");
    }
    let r = env.run(&["info", "fs-mrk"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no profile, suite or saved result named `fs-mrk`"), "{r:?}");
    assert!(r.stderr.contains("hint: did you mean `fs-mark`?"), "{r:?}");
}

#[test]
fn unknown_option_on_the_command_line() {
    let env = Env::new();
    let r = env.bench(&["fio", "--option", "blocksize=4KB"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no profile in this run has an option `blocksize`"), "{r:?}");
    let r = env.bench(&["fio", "--option", "block_size=3KB"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("`3KB` is not an entry of option `block_size` of fio"), "{r:?}");
}

#[test]
fn help_and_version() {
    let env = Env::new();
    let r = env.run(&["--version"]);
    assert_eq!(r.stdout.trim(), format!("engine {}", env!("CARGO_PKG_VERSION")));
    let r = env.run(&["--help"]);
    for cmd in ["benchmark", "run", "list", "info", "validate", "result"] {
        assert!(r.stdout.contains(cmd), "{r:?}");
    }
    let r = env.run(&["benchmark", "--help"]);
    assert!(r.stdout.contains("--option <KEY=A,B>") && r.stdout.contains("--target-dir <DIR>"), "{r:?}");
    assert_eq!(env.run(&["frobnicate"]).code, 2);
}

/// Completions, --dry-run, how many tests a suite expands to, whether tools
/// are installed, placeholders filled in `info`, did-you-mean for options.
#[test]
fn what_users_of_pts_and_hyperfine_expect() {
    let env = Env::new();
    for sh in ["bash", "zsh", "fish"] {
        let r = env.run(&["completions", sh]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.contains("benchmark") && r.stdout.contains("target-dir"), "{sh}");
    }
    let r = env.run(&["benchmark", "suite/disk-quick", "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("where: in ") && r.stdout.contains("\n24 test(s):"), "{}", r.stdout);
    assert!(
        r.stdout.contains("fs-mark: Test: 100 Files, 1MB Size: 3 trial(s) (up to 1000 within a budget of 12s)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("at most: 4m 48s (each test's time budget"), "{}", r.stdout);
    assert!(r.stdout.contains("estimated: "), "{}", r.stdout);
    assert!(!env.home.path().join("results").exists(), "a dry run writes nothing");
    let r = env.run(&["info", "suite/disk"]);
    assert!(r.stdout.starts_with("suite/disk: 23 profile item(s), 63 test(s) in batch mode"), "{}", r.stdout);
    let r = env.run(&["list", "profiles"]);
    assert!(r.stdout.lines().any(|l| l.starts_with("fio@") && l.contains(" ready ")), "{}", r.stdout);
    let r = env.run(&["info", "fs-mark"]);
    assert!(r.stdout.contains("free space: 1100MB (1000 Files, 1MB Size), "), "{}", r.stdout);
    let r = env.run(&["benchmark", "-y", "fs-mark", "--option", "tset=100 Files, 1MB Size"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("did you mean `test`?"), "{r:?}");
}

#[test]
fn on_a_terminal_menus_pick_the_entries() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["5", "7"]));
    // `script` gives engine a pseudo-terminal; Space unticks the first entry,
    // Enter accepts.
    let cmdline = format!("{} benchmark echo --runs 1 --save m --target-dir {}", bin(), env.target.path().display());
    let mut pty = OnPty::spawn(&mut env.cmd(&[]), &cmdline);
    pty.wait_text("Value (space toggles, enter accepts, Esc skips)");
    pty.type_keys(b" \r");
    let (_, text) = pty.finish();
    let f = env.result("m");
    let descs: Vec<&str> =
        f["results"].as_array().unwrap().iter().map(|r| r["description"].as_str().unwrap()).collect();
    assert_eq!(descs, ["Value: V7"], "{text}");
}

/// Enter with nothing ticked asks again instead of running everything.
#[test]
fn an_empty_menu_selection_asks_again() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["5", "7"]));
    let cmdline = format!("{} benchmark echo --runs 1 --save m --target-dir {}", bin(), env.target.path().display());
    let mut pty = OnPty::spawn(&mut env.cmd(&[]), &cmdline);
    pty.wait_text("space toggles");
    // Untick both (space, down, space), Enter: nothing ticked.
    pty.type_keys(b" \x1b[B \r");
    pty.wait_text("nothing is ticked");
    // Asked again (the defaults ticked again): untick the first, Enter.
    pty.wait_text("space toggles");
    pty.type_keys(b" \r");
    let (_, text) = pty.finish();
    let f = env.result("m");
    let descs: Vec<&str> =
        f["results"].as_array().unwrap().iter().map(|r| r["description"].as_str().unwrap()).collect();
    assert_eq!(descs, ["Value: V7"], "{text}");
}

/// `--dry-run` times a test from any earlier run of it in ENGINE_HOME (not
/// only the result it would save to), else from its fixed run time, and
/// says which.
#[test]
fn dry_run_estimates_from_earlier_runs_or_the_run_time() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["1"]));
    env.suite("timed", "title: Timed\nbudget: 5s\ntests:\n  - profile: echo\n");
    let r = env.bench(&["echo", "--dry-run"]);
    assert!(r.stdout.contains("time unknown"), "{}", r.stdout);
    let r = env.run(&["list", "suites"]);
    assert!(r.stdout.contains("Timed (1 tests; time unknown, at most 5s)"), "{}", r.stdout);
    assert_eq!(env.bench(&["echo", "--runs", "3", "--save", "first"]).code, 0);
    // `list suites` and `info` estimate as --dry-run does.
    let r = env.run(&["list", "suites"]);
    assert!(r.stdout.contains("Timed (1 tests; about 1s, at most 5s)"), "{}", r.stdout);
    let r = env.run(&["info", "suite/timed"]);
    assert!(r.stdout.contains("time: about 1s, at most 5s (`engine benchmark suite/timed --dry-run`"), "{}", r.stdout);
    let r = env.bench(&["echo", "--dry-run", "--save", "other"]);
    assert!(r.stdout.contains("as in result `first`"), "{}", r.stdout);
    assert!(r.stdout.contains("estimated: "), "{}", r.stdout);
    // io's run time is fixed by its option: 3 trials of 2 s.
    let r =
        env.bench(&["io", "--dry-run", "-o", "runtime=2 Seconds", "-o", "type=Random Read", "-o", "block_size=4KB"]);
    assert!(r.stdout.contains("~6s from its run time"), "{}", r.stdout);
}

/// A suite never stops at a menu (issue 39 item 6): on a terminal with
/// nobody typing, a suite item whose presets leave an option open takes the
/// profile's defaults and the run finishes.
#[test]
fn on_a_terminal_a_suite_runs_unattended() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["5", "7"]));
    env.suite("open", "title: Open\ntests:\n  - profile: echo\n");
    let cmdline =
        format!("{} benchmark suite/open --runs 1 --save s --target-dir {}", bin(), env.target.path().display());
    let mut child = env.cmd(&[]).spawn_script(&cmdline);
    // Nobody answers: stdin stays open and silent; a run that waits is
    // killed after a minute (and fails).
    let stdin = child.stdin.take().unwrap();
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("space toggles"), "a suite asked: {text}");
    assert!(out.status.success(), "{text}");
    let f = env.result("s");
    assert_eq!(f["results"].as_array().unwrap().len(), 2, "both entries, the defaults: {f}");
}

/// A profile without options is named by its title alone: "Nap", not
/// "Nap: " (issue 39 item 14).
#[test]
fn a_test_without_options_is_named_by_its_title() {
    let env = Env::new();
    env.profile(
        "nap",
        "id: nap\nversion: 1.0.0\ntitle: Nap\ntest_type: other\nexecutor:\n  external:\n    program: sleep\n    args: [\"0.01\"]\nresults: [{id: s, unit: Seconds, proportion: LIB}]\nparsers: [{result: s, wall_time: true}]\n",
    );
    let r = env.bench(&["nap", "--runs", "2", "--save", "n"]);
    assert_eq!(r.code, 0, "{r:?}");
    let md = env.run(&["result", "show", "n", "--format", "markdown"]).stdout;
    assert!(md.contains("| Nap | Seconds (less is better) |"), "{md}");
    assert!(!md.contains("Nap:"), "{md}");
}

/// A PTS user's command names answer with engine's; `result edit` sets a
/// result's title and description, which reports then show.
#[test]
fn pts_names_answer_and_result_edit_sets_the_title() {
    let env = Env::new();
    let r = env.run(&["compare-results"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("Phoronix Test Suite command; in engine: engine result compare A B"), "{r:?}");
    let r = env.run(&["list-available-tests"]);
    assert!(r.stderr.contains("engine list profiles"), "{r:?}");
    env.profile("echo", &echo_profile("echo", &["4"]));
    assert_eq!(env.bench(&["echo", "--runs", "1", "--save", "e"]).code, 0);
    let r = env.run(&["result", "edit", "e", "--title", "Disk study", "--description", "NVMe vs SATA"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("e");
    assert_eq!((f["title"].as_str(), f["description"].as_str()), (Some("Disk study"), Some("NVMe vs SATA")));
    let html = env.run(&["result", "show", "e", "--format", "html"]).stdout;
    assert!(html.contains("Disk study") && html.contains("NVMe vs SATA"), "the page heads with them");
    let r = env.run(&["result", "edit", "e"]);
    assert_ne!(r.code, 0, "{r:?}");
    // `--test GLOB` shows only the matching tests.
    env.profile("other", &echo_profile("other", &["9"]));
    assert_eq!(env.bench(&["other", "--runs", "1", "--save", "e"]).code, 0);
    let all = env.run(&["result", "show", "e", "--format", "csv"]).stdout;
    let one = env.run(&["result", "show", "e", "--format", "csv", "--test", "oth*"]).stdout;
    assert!(all.contains("echo") && all.contains("other"), "{all}");
    assert!(one.contains("other") && !one.lines().any(|l| l.starts_with("echo") || l.contains(",echo,")), "{one}");
    assert_eq!(env.run(&["result", "show", "e", "--test", "nothing*"]).code, 2);
}

/// `--dry-run` times a fixed-time command from its own flags (fio's
/// `--startdelay=5 --ramp_time=5 --runtime=20`: 30 s a trial), not
/// "unknown".
#[test]
fn dry_run_times_fio_from_its_command_line() {
    let env = Env::new();
    let r = env.run(&["benchmark", "fio-v1", "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    let first = r.stdout.lines().find(|l| l.starts_with("  fio-v1: ")).unwrap();
    assert!(first.ends_with("3 trial(s) (up to 1000 within a budget of 1m), ~1m 30s from its run time"), "{first}");
}
