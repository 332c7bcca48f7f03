//! The commands that only read: list, info, validate, help, version.

use crate::common::*;

#[test]
fn list_profiles_suites_and_results() {
    let env = Env::new();
    let r = env.run(&["list", "profiles"]);
    assert_eq!(r.code, 0, "{r:?}");
    for id in ["fio@1.0.0", "fs-mark@1.0.0", "sqlite@1.0.0"] {
        assert!(r.stdout.contains(id), "{r:?}");
    }
    let r = env.run(&["list", "suites"]);
    assert!(r.stdout.contains("suite/disk ") && r.stdout.contains("suite/disk-quick"), "{r:?}");
    let r = env.run(&["list", "results"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
}

#[test]
fn user_profiles_come_first_on_the_search_path() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["1"]));
    let r = env.run(&["list", "profiles"]);
    assert!(r.stdout.lines().any(|l| l.starts_with("echo@1.0.0 ") && l.contains(" other ")), "{r:?}");
    // A profile in ENGINE_HOME/test-profiles is found too.
    let dir = env.home.path().join("test-profiles/mine");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("profile.yaml"), echo_profile("mine", &["1"])).unwrap();
    assert!(env.run(&["list", "profiles"]).stdout.contains("mine@1.0.0"));
}

#[test]
fn info_shows_options_entries_results_and_requirements() {
    let env = Env::new();
    let r = env.run(&["info", "fio"]);
    assert_eq!(r.code, 0, "{r:?}");
    for want in [
        "Flexible IO Tester 3.33  (fio@1.0.0)",
        "Block Size (block_size):",
        "* 4KB",
        "block_size=4k",
        "bandwidth    MB/s > Higher Is Better",
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
fn versions_are_matched_by_prefix() {
    let env = Env::new();
    assert_eq!(env.run(&["info", "fio@1.0"]).code, 0);
    let r = env.run(&["info", "fio@2"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no profile `fio` with a version matching `2` (found 1.0.0)"), "{r:?}");
}

#[test]
fn validate_accepts_the_shipped_files() {
    let env = Env::new();
    let repo = repo();
    let r = env.run(&["validate", repo.join("test-profiles").to_str().unwrap(), repo.join("suites").to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    // Every shipped profile and suite (counted on disk, so new ones count too).
    let profiles = std::fs::read_dir(repo.join("test-profiles"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("profile.yaml").is_file())
        .count();
    let suites = std::fs::read_dir(repo.join("suites"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        .count();
    let n = profiles + suites;
    assert!(n >= 13, "{n}");
    assert!(r.stderr.contains(&format!("{n} file(s) checked: {n} valid, 0 invalid")), "{r:?}");
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

#[test]
fn on_a_terminal_menus_pick_the_entries() {
    use std::io::Write;
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["5", "7"]));
    // `script` gives engine a pseudo-terminal; Space unticks the first entry,
    // Enter accepts.
    let cmdline = format!("{} benchmark echo --runs 1 --save m --target-dir {}", bin(), env.target.path().display());
    let mut child = env.cmd(&[]).spawn_script(&cmdline);
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    stdin.write_all(b" \r").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Value (space toggles, enter accepts, Esc skips)"), "{text}");
    let f = env.result("m");
    let descs: Vec<&str> =
        f["results"].as_array().unwrap().iter().map(|r| r["description"].as_str().unwrap()).collect();
    assert_eq!(descs, ["Value: V7"], "{text}");
}
