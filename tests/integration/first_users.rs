//! What first users hit (issue 9): resume that resumes, results as they
//! finish, failures in the report, no leftovers, safe files as root, and
//! the conveniences users of PTS and hyperfine expect.

use crate::common::*;
use crate::loopdev::{LoopFs, require_root};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(30));
    }
}

fn result_names(env: &Env) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(env.home.path().join("results"))
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

const SLOW: &str = "id: slow\nversion: 1.0.0\ntitle: Slow\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'sleep 2; echo value: 1']\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n";

/// Ctrl-C, then the same plain command again: it continues the same result
/// under the same identifier, and says how to resume with explicit flags.
#[test]
fn a_plain_rerun_of_an_interrupted_run_resumes_it() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    env.profile("slow", SLOW);
    let target = env.target.path().to_str().unwrap().to_string();
    let args = ["benchmark", "-y", "--runs", "1", "--target-dir", &target, "echo", "slow"];
    let child = env.cmd(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for("the first test's result", || result_names(&env).iter().any(|n| env.result_path(n).exists()));
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r: Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 130, "{r:?}");
    let names = result_names(&env);
    assert_eq!(names.len(), 1, "{names:?}");
    let name = &names[0];
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    assert!(
        r.stderr.contains(&format!(
            "--save {name} --identifier {}",
            if host.contains(' ') { format!("'{host}'") } else { host.clone() }
        )),
        "the exact resume command: {r:?}"
    );
    // The same command again resumes: same result, same identifier, only the missing test runs.
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "resuming `{host}`: 1 test(s) already in result `{name}` are kept; running the other 1"
        )),
        "{r:?}"
    );
    assert_eq!(result_names(&env), names, "no new result folder");
    let f = env.result(name);
    assert_eq!(f["systems"].as_array().unwrap().len(), 1, "no `{host} (2)`");
    assert_eq!(f["results"].as_array().unwrap().len(), 2);
    // Once finished, the same command starts a new result.
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(result_names(&env).len(), 2);
}

/// Enter with nothing ticked asks again instead of running everything.
#[test]
fn an_empty_menu_selection_asks_again() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["5", "7"]));
    let cmdline = format!("{} benchmark echo --runs 1 --save m --target-dir {}", bin(), env.target.path().display());
    let mut child = env.cmd(&[]).spawn_script(&cmdline);
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // Untick both (space, down, space), Enter: nothing ticked.
    stdin.write_all(b" \x1b[B \r").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // Asked again (the defaults ticked again): untick the first, Enter.
    stdin.write_all(b" \r").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nothing is ticked"), "{text}");
    let f = env.result("m");
    let descs: Vec<&str> =
        f["results"].as_array().unwrap().iter().map(|r| r["description"].as_str().unwrap()).collect();
    assert_eq!(descs, ["Value: V7"], "{text}");
}

/// Piped: a line per test start and finish on stderr, each result on stdout
/// as it finishes, and a short system block.
#[test]
fn piped_output_has_a_line_per_test_and_results_as_they_finish() {
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
    assert!(r.stdout.contains("SE +/- 0.00, N = 2"), "{}", r.stdout);
    // The run's system block is short; the rest is in system-info and the file.
    assert!(r.stdout.contains("Disk Notes"), "{}", r.stdout);
    for long in ["Compiler Notes", "Command Line", "Security Notes"] {
        assert!(!r.stdout.contains(long), "{long} in: {}", r.stdout);
    }
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
    assert!(tail.contains("failed boom: "), "{r:?}");
    assert!(tail.contains("sh exited 3; see "), "{r:?}");
    assert!(tail.contains("    | boom: disk on fire"), "{r:?}");
    let f = env.result("b");
    let failed = &f["failures"][0];
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["stderr_tail"], serde_json::json!(["starting", "boom: disk on fire"]));
    assert!(failed["log"].as_str().unwrap().ends_with("trial-1.log"), "{failed}");
    // The next run retries it; when it passes, the failure is gone.
    env.profile(
        "boom",
        "id: boom\nversion: 1.0.0\ntitle: Boom\ntest_type: other\nexecutor: {external: {program: sh, args: [-c, 'echo value: 2']}}\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let r = env.bench(&["echo", "boom", "--runs", "1", "--save", "b"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(env.result("b").get("failures").is_none());
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
    std::thread::sleep(Duration::from_millis(300));
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

/// A corrupt result file: errors say what to do, exit codes match the README,
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

/// As root with a user-writable ENGINE_HOME: a symlink planted where engine
/// writes its lock is refused, not followed.
#[test]
fn a_planted_symlink_is_not_followed() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["4"]));
    let victim = env.target.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let dir = env.home.path().join("results/s");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join(".lock")).unwrap();
    let r = env.bench(&["echo", "--runs", "1", "--save", "s"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // A symlinked result folder is refused too.
    std::fs::create_dir_all(env.home.path().join("results")).unwrap();
    std::os::unix::fs::symlink(env.target.path(), env.home.path().join("results/t")).unwrap();
    let r = env.bench(&["echo", "--runs", "1", "--save", "t"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("symbolic link"), "{r:?}");
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
        assert!(env.home.path().join("results/l").join(l).join("trial-1.log").is_file());
    }
}

/// A second Ctrl-C kills the trial's process group at once; the scratch
/// directory is still removed.
#[test]
fn a_second_ctrl_c_kills_the_trial_at_once_and_cleans_up() {
    let env = Env::new();
    env.profile(
        "stubborn",
        "id: stubborn\nversion: 1.0.0\ntitle: S\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'trap \"\" TERM; sleep 37 & wait; wait']\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, wall_time: true}]\n",
    );
    let child = env
        .cmd(&["benchmark", "-y", "stubborn", "--save", "k", "--target-dir", env.target.path().to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleeping = || Command::new("pgrep").args(["-f", "^sleep 37$"]).output().is_ok_and(|o| o.status.success());
    wait_for("the trial", sleeping);
    let t0 = Instant::now();
    for _ in 0..2 {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(100));
    }
    let r: Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 130, "{r:?}");
    assert!(t0.elapsed() < Duration::from_millis(1500), "no grace period after the second: {:?}", t0.elapsed());
    assert!(!sleeping(), "the trial's process group was killed");
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "the scratch directory is gone");
}

/// A profile whose id is not its folder's name is refused where it says so;
/// one that shadows a built-in profile is shown as such.
#[test]
fn ids_match_folders_and_shadowing_is_shown() {
    let env = Env::new();
    let p = env.profile("sqlite", &echo_profile("sqlite", &["1"]));
    let r = env.run(&["list", "profiles"]);
    assert!(r.stdout.contains("(shadows <built-in>/test-profiles/sqlite/profile.yaml)"), "{r:?}");
    let r = env.run(&["info", "sqlite"]);
    assert!(r.stdout.contains("shadows: <built-in>/test-profiles/sqlite/profile.yaml"), "{r:?}");
    std::fs::write(&p, echo_profile("other-name", &["1"])).unwrap();
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stdout.contains("id `other-name` does not match the profile's folder `sqlite`")
            || r.stderr.contains("id `other-name` does not match the profile's folder `sqlite`"),
        "{r:?}"
    );
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
    assert!(r.stdout.starts_with("28 test(s):"), "{}", r.stdout);
    assert!(r.stdout.contains("fs-mark: Test: 100 Files, 1MB Size: 3 trial(s) (up to 12)"), "{}", r.stdout);
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

/// Two sweeps at once: the second is refused while the first changes state.
#[test]
#[ignore = "needs root"]
fn two_sweeps_cannot_overlap() {
    let fs = LoopFs::new(64, "relatime");
    let env = Env::new();
    env.profile("slow", SLOW);
    env.profile("echo", &echo_profile("echo", &["1"]));
    let child = env
        .cmd(&["benchmark", "-y", "slow", "--save", "one", "--target-dir", fs.path(), "--scheduler", "kyber"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sched = format!("/sys/block/{}/queue/scheduler", fs.name());
    wait_for("kyber", || std::fs::read_to_string(&sched).unwrap_or_default().contains("[kyber]"));
    let r = env.run(&["benchmark", "-y", "echo", "--save", "two", "--target-dir", fs.path(), "--scheduler", "bfq"]);
    assert_eq!(r.code, 1, "{r:?}");
    // The host lock (one benchmark per ENGINE_HOME) refuses it before the
    // state lock is reached; either way it names the running sweep.
    assert!(
        r.stderr.contains("another engine benchmark is running with this ENGINE_HOME")
            && r.stderr.contains("--scheduler kyber"),
        "{r:?}"
    );
    assert!(!env.home.path().join("results/two").exists());
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
}

/// A relative, symlinked ENGINE_HOME: the file-system sweep mounts and
/// unmounts the same path, and nothing stays mounted.
#[test]
#[ignore = "needs root"]
fn a_relative_symlinked_engine_home_leaves_nothing_mounted() {
    require_root();
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["1"]));
    let base = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env.home.path(), base.path().join("home-link")).unwrap();
    let r: Run = env
        .cmd(&[
            "benchmark",
            "-y",
            "echo",
            "--runs",
            "1",
            "--save",
            "rel",
            "--device",
            "loop:64M",
            "--filesystem",
            "ext4",
        ])
        .env("ENGINE_HOME", "home-link")
        .current_dir(base.path())
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{r:?}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let home = std::fs::canonicalize(env.home.path()).unwrap();
    assert!(!mounts.contains(home.to_str().unwrap()), "still mounted under {}", home.display());
    assert!(std::fs::read_dir(env.home.path().join("journal")).unwrap().next().is_none());
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    assert!(!String::from_utf8_lossy(&loops.stdout).contains(home.to_str().unwrap()));
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
    // Every drawn line fits in 80 columns (escape sequences aside).
    let plain = regex_lite_strip(&text);
    for line in plain.lines().filter(|l| l.contains("trial ")) {
        assert!(line.chars().count() <= 80, "{} columns: {line}", line.chars().count());
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
