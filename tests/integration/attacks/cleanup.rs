//! Cleanup that cannot be wedged (issue 53): what a test leaves behind is
//! removed with a constant number of descriptors, or moved aside into the
//! target's quarantine, and never stops a later run.

use super::{Hostile, script_profile};
use crate::common::*;

/// A trial (confined, from a repository) makes a chain of 22,000 nested
/// directories in its scratch, and a step 22,000 more in the test folder:
/// the run removes both (std's removal, a descriptor per level, failed
/// with EMFILE and left the folder to stop every later run), says nothing
/// is left, and the next run starts and ends cleanly.
#[test]
#[ignore = "needs root"]
fn a_deep_tree_is_removed_and_the_next_run_starts() {
    require_root();
    let env = Env::new();
    let deep = r#"python3 -c 'import os
for i in range(22000):
    os.mkdir("d"); os.chdir("d")
open("f", "w").write("x")
print("deep done")'"#;
    let step = format!("    pre_test:\n      - shell: {:?}\n", deep.replace("deep done", "step done"));
    let h = Hostile::new(&env);
    h.profile("deep", &script_profile("deep", "sh", deep, "", &step));
    assert_eq!(h.add(&env, "evil").code, 0);
    let target = env.target.path();
    for save in ["a", "b"] {
        let r = env.bench(&["evil/deep", "--runs", "2", "--save", save]);
        assert_eq!(r.code, 0, "{save}: {r:?}");
        assert!(!r.stderr.contains("could not remove") && !r.stderr.contains("cannot remove"), "{r:?}");
        let left: Vec<String> = super::listing(target).into_iter().filter(|n| n != ".engine-quarantine").collect();
        assert!(left.is_empty(), "{save}: left in the target: {left:?}");
    }
    let r = env.run(&["recover"]);
    assert_eq!(r.code, 0, "{r:?}");
    // What a quarantine may still hold, level by level (see below).
    engine::sys::remove::remove_path(target, None).unwrap();
}

/// Ctrl-C while engine removes a trial's 30,000-deep chain (seconds of
/// work): engine moves what is left into the target's quarantine and exits
/// 130 within a second; the next run starts.
#[test]
fn ctrl_c_during_cleanup_exits_at_once() {
    use std::time::{Duration, Instant};
    let env = Env::new();
    // The chain, then a file at its top: removal takes the top's files first.
    let deep = r#"python3 -c 'import os
os.mkdir("c"); os.chdir("c")
for i in range(30000):
    os.mkdir("d"); os.chdir("d")
os.chdir("/")
'"#;
    let script = format!("{deep} && touch c/made && sleep 1");
    env.profile("deep", &script_profile("deep", "sh", &script, "", "").replace("timeout: 30s", "timeout: 120s"));
    let child = env
        .cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()])
        .args(["deep", "--runs", "1", "--save", "d"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let made = || {
        std::fs::read_dir(env.target.path())
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().join("trial/c/made").exists())
    };
    wait_for("the chain", made);
    let t0 = Instant::now();
    while made() {
        assert!(t0.elapsed() < Duration::from_secs(60), "the removal never began");
        std::thread::sleep(Duration::from_millis(5));
    }
    let t0 = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r: Run = child.wait_with_output().unwrap().into();
    let took = t0.elapsed();
    eprintln!("Ctrl-C during cleanup: exit {} after {took:?}", r.code);
    assert_eq!(r.code, 130, "{r:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    env.profile("quick", &script_profile("quick", "sh", "true", "", ""));
    let r = env.bench(&["quick", "--runs", "1", "--save", "q"]);
    assert_eq!(r.code, 0, "{r:?}");
    // What the quick run's clearing had not reached when it ended: removed
    // here level by level (the temporary folder's own removal recurses once
    // per level, and 30,000 levels overflow a test thread's stack).
    engine::sys::remove::remove_path(env.target.path(), None).unwrap();
}
