//! After Ctrl-C, removal of a test's tree stops early (what is left is set
//! aside), but engine's own folders — a run's staged logs, a result that
//! was never saved — are removed whole: what an interrupted run left there
//! would be taken for the result's. Its own test binary: the interrupt
//! flag is process-wide and is never cleared.

use std::time::{Duration, Instant};

/// A tree that takes well over the 200 ms an interrupted removal gets.
fn tree(root: &std::path::Path) {
    for d in 0..200 {
        let dir = root.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..250 {
            std::fs::write(dir.join(format!("f{f}")), b"").unwrap();
        }
    }
}

#[test]
fn engines_own_folders_go_whole_after_ctrl_c_a_tests_tree_does_not() {
    engine_sys::interrupt::install().unwrap();
    // SAFETY: raise(3) delivers SIGINT to this process, whose handler only
    // sets flags (no child is named).
    assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
    assert!(engine_sys::interrupt::requested());

    let base = tempfile::tempdir().unwrap();
    let (own, tests) = (base.path().join("own"), base.path().join("tests"));
    tree(&own);
    tree(&tests);

    let t = Instant::now();
    let cut = engine_sys::remove::remove_path(&tests, None);
    let took = t.elapsed();
    // The tree must have outlasted the grace for the comparison to mean
    // anything: removal after Ctrl-C stops, and says so.
    assert!(matches!(cut, Err(engine_sys::remove::RemoveError::Deadline)), "{cut:?} after {took:?}");
    assert!(tests.exists());

    engine_sys::remove::remove_own(&own, Instant::now() + Duration::from_secs(60)).unwrap();
    assert!(!own.exists(), "engine's own folder was left after Ctrl-C");
}
