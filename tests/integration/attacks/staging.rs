//! A result folder's one writer, attacked (red team of the staging change):
//! option values chosen so two tests' log folders shared a name, and a tree
//! planted where engine stages logs to hold it past the user's Ctrl-C.

use crate::common::{Env, wait_for, walk};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// FNV-1a of `s`, cut to the 32 bits log folders were once named by.
fn fnv32(s: &str) -> u32 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h as u32
}

/// Two option values found by brute force so that the two tests' keys had
/// one 32-bit folder hash: each test gets a folder of its own, its logs
/// hold only its own trials, and each entry names its own series.
#[test]
fn two_tests_never_share_a_logs_folder() {
    let (a, b) = ("x147081", "x713190");
    // The premise: these collided under the old names.
    assert_eq!(fnv32(&format!("a2@1.0[v={a}]")), fnv32(&format!("a2@1.0[v={b}]")));
    let env = Env::new();
    env.profile(
        "a2",
        &format!(
            "id: a2\nversion: 1.0.0\ntitle: A2\ntest_type: other\noptions:\n  - id: v\n    name: V\n    entries:\n      - {{label: first, value: {a}}}\n      - {{label: second, value: {b}}}\nexecutor:\n  external:\n    program: sh\n    args: [\"-c\", \"echo I am {{{{v}}}}; echo value 1.5\"]\nresults: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value (?P<value>[0-9.]+)'}}]\n"
        ),
    );
    let r = env.bench(&["a2", "--runs", "1", "--save", "r2", "--logs", "all"]);
    assert_eq!(r.code, 0, "{r:?}");
    let logs: Vec<_> =
        walk(&env.home.path().join("results/r2/logs")).into_iter().filter(|p| p.ends_with("trials.log")).collect();
    assert_eq!(logs.len(), 2, "one trials.log per test: {logs:?}");
    assert_ne!(logs[0].parent(), logs[1].parent());
    for p in &logs {
        let text = std::fs::read_to_string(p).unwrap();
        let mine = [a, b].iter().filter(|v| text.contains(&format!("I am {v}"))).count();
        assert_eq!(mine, 1, "{} holds another test's trials:\n{text}", p.display());
    }
    let f = env.result("r2");
    let series: Vec<&str> = f["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["entries"].as_array().unwrap())
        .filter_map(|e| e["monitor"].as_str())
        .collect();
    let distinct: std::collections::BTreeSet<_> = series.iter().collect();
    assert_eq!(distinct.len(), series.len(), "two entries name one series: {series:?}");
}

/// An unconfined test plants a large tree in the run's staging folder and
/// waits; Ctrl-C still ends engine at once with 130, the result's folder
/// is left free (what could not be removed at once is set aside), the next
/// run of that result works, and `engine recover` clears what was set aside.
#[test]
fn a_tree_planted_in_staging_does_not_hold_engine_past_ctrl_c() {
    let env = Env::new();
    let staging = env.home.path().join("results/r7/.staging");
    let ready = env.target.path().join("planted");
    // 60,000 files take well over the 200 ms removal gets after Ctrl-C.
    let plant = format!(
        "import os\nd = os.path.join({s:?}, 'planted')\nos.makedirs(d, exist_ok=True)\nfor i in range(60000):\n    open(os.path.join(d, str(i)), 'w').close()\nopen({r:?}, 'w').close()\n",
        s = staging.display().to_string(),
        r = ready.display().to_string()
    );
    std::fs::write(env.target.path().join("plant.py"), plant).unwrap();
    env.profile(
        "a7",
        &format!(
            "id: a7\nversion: 1.0.0\ntitle: A7\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [\"-c\", \"sleep 60; echo value 1\"]\n    pre_test:\n      - shell: python3 {}\nresults: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value (?P<value>[0-9.]+)'}}]\n",
            env.target.path().join("plant.py").display()
        ),
    );
    let target = env.target.path().to_str().unwrap().to_string();
    let args = ["benchmark", "-y", "a7", "--runs", "1", "--save", "r7", "--target-dir", &target];
    let child = env.cmd(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for("the planted tree", || ready.exists());
    let t = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(3), "engine took {took:?} after Ctrl-C");
    assert!(!staging.exists(), "the staging folder is still in the result's folder");
    let q = env.home.path().join("results/.engine-quarantine");
    assert!(q.is_dir(), "what could not go at once is set aside");
    let r = env.run(&["recover"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("removed: 1 folder(s) runs had set aside"), "{r:?}");
    assert!(!q.exists(), "recover left the quarantine: {r:?}");
    // The same result runs again.
    env.profile("echo", &crate::common::echo_profile("echo", &["4"]));
    let r = env.bench(&["echo", "--runs", "1", "--save", "r7"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!staging.exists());
}

/// An unconfined test mounts a file system inside the run's staging folder
/// (so it cannot be removed) and puts a link to a folder outside where the
/// store's quarantine goes: the staging folder is set aside all the same,
/// nothing goes through the link, the result runs again, and `engine
/// recover` names what it cannot remove and why.
#[test]
#[ignore = "needs root"]
fn a_bad_quarantine_and_an_unremovable_staging_folder_never_stop_a_run() {
    let env = Env::new();
    let results = env.home.path().join("results");
    let outside = env.target.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let mnt = results.join("q1/.staging/m");
    let script = format!(
        "mkdir -p {m} && mount -t tmpfs -o size=1m t {m} && echo x > {m}/f && rm -rf {q} && ln -s {o} {q} && echo value 1",
        m = mnt.display(),
        q = results.join(".engine-quarantine").display(),
        o = outside.display()
    );
    env.profile(
        "q1",
        &format!(
            "id: q1\nversion: 1.0.0\ntitle: Q1\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [\"-c\", {script:?}]\nresults: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value (?P<value>[0-9.]+)'}}]\n"
        ),
    );
    let r = env.bench(&["q1", "--runs", "1", "--save", "q1"]);
    // The mount moved with the folder it is in; find it to unmount at the end.
    let mounted = || -> Vec<String> {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
            .filter(|p| p.starts_with(env.home.path().to_str().unwrap()))
            .collect()
    };
    let unmount_all = || {
        for p in mounted() {
            let _ = std::process::Command::new("umount").arg(&p).status();
        }
    };
    let checks = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_eq!(r.code, 0, "{r:?}");
        assert!(!results.join("q1/.staging").exists(), "the staging folder was left in the result");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "something went through the link");
        assert!(!results.join(".engine-quarantine").is_symlink(), "the link is still engine's quarantine");
        // The result runs again.
        env.profile("echo", &crate::common::echo_profile("echo", &["4"]));
        let again = env.bench(&["echo", "--runs", "1", "--save", "q1"]);
        assert_eq!(again.code, 0, "{again:?}");
        // recover names what it cannot remove, and why.
        let rec = env.run(&["recover"]);
        assert!(rec.stderr.contains("left: ") && rec.stderr.contains("busy"), "{rec:?}");
    }));
    unmount_all();
    if let Err(e) = checks {
        std::panic::resume_unwind(e);
    }
    let rec = env.run(&["recover"]);
    assert_eq!(rec.code, 0, "{rec:?}");
    assert!(!rec.stderr.contains("left: "), "{rec:?}");
    assert!(!results.join(".engine-quarantine").exists(), "{rec:?}");
}

/// An identifier renamed takes its logs with it, and one removed takes
/// them away: a later run under the old name starts in a folder of its
/// own, and no two entries share a trial log or a series.
#[test]
fn renamed_and_removed_identifiers_take_their_logs_with_them() {
    let env = Env::new();
    env.profile("echo", &crate::common::echo_profile("echo", &["4"]));
    let run = |id: &str| {
        let r = env.bench(&["echo", "--runs", "1", "--save", "r6", "--identifier", id, "--logs", "all"]);
        assert_eq!(r.code, 0, "{r:?}");
    };
    run("A");
    let r = env.run(&["result", "rename-identifier", "r6", "A", "B"]);
    assert_eq!(r.code, 0, "{r:?}");
    run("A");
    let f = env.result("r6");
    let entries: Vec<&serde_json::Value> =
        f["results"].as_array().unwrap().iter().flat_map(|r| r["entries"].as_array().unwrap()).collect();
    let paths = |key: &str| -> Vec<String> {
        entries.iter().filter_map(|e| e[key].as_str().map(|p| format!("{}={p}", e["identifier"]))).collect()
    };
    for key in ["logs", "monitor"] {
        let ps = paths(key);
        let folders: std::collections::BTreeSet<_> =
            ps.iter().map(|p| p.split('=').nth(1).unwrap().rsplit_once('/').unwrap().0.to_string()).collect();
        assert_eq!(folders.len(), ps.len(), "two entries share a folder: {ps:?}");
        for p in &ps {
            let rel = p.split('=').nth(1).unwrap();
            assert!(env.home.path().join("results/r6").join(rel).exists(), "{p} is missing");
        }
    }
    // Removed: its folder goes; a new identifier of that name starts clean.
    let logs = env.home.path().join("results/r6/logs");
    let before = std::fs::read_dir(&logs).unwrap().count();
    let r = env.run(&["result", "remove-identifier", "r6", "B"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read_dir(&logs).unwrap().count(), before - 1, "B's log folder stayed");
}

/// `result delete` removes level by level and never crosses into a mount
/// planted in the result's folder: what is mounted there is untouched.
#[test]
#[ignore = "needs root"]
fn deleting_a_result_never_empties_what_is_mounted_inside_it() {
    let env = Env::new();
    env.profile("echo", &crate::common::echo_profile("echo", &["4"]));
    let r = env.bench(&["echo", "--runs", "1", "--save", "r4"]);
    assert_eq!(r.code, 0, "{r:?}");
    let victim = env.target.path().join("victim");
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    std::fs::write(victim.join("precious"), b"precious").unwrap();
    let at = env.home.path().join("results/r4/.engine-quarantine/e/b");
    std::fs::create_dir_all(&at).unwrap();
    let bound = std::process::Command::new("mount").arg("--bind").arg(&victim).arg(&at).status().unwrap();
    assert!(bound.success());
    let r = env.run(&["result", "delete", "r4", "-y"]);
    // The mount moved with what was set aside; unmount it wherever it is.
    let home = env.home.path().to_str().unwrap().to_string();
    let mounts: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
        .filter(|p| p.starts_with(&home))
        .collect();
    for m in &mounts {
        let _ = std::process::Command::new("umount").arg(m).status();
    }
    assert_eq!(std::fs::read(victim.join("precious")).unwrap(), b"precious", "{r:?}");
    assert!(victim.join("sub").is_dir(), "{r:?}");
    assert!(!env.result_path("r4").exists(), "the result was not deleted: {r:?}");
}
