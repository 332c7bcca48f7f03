//! After Ctrl-C, removal stops early: a test's tree says so (its caller
//! sets it aside), and engine's own folders — a run's staged logs, a result
//! that was never saved — are moved aside at once, so their place is free
//! and engine exits promptly whatever a test planted there. Its own test
//! binary: the interrupt flag is process-wide and is never cleared.

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
fn after_ctrl_c_removal_stops_soon_and_engines_own_folders_are_set_aside() {
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

    let aside = base.path().join("aside");
    let t = Instant::now();
    let r = engine_sys::remove::remove_own(&own, &aside, Instant::now() + Duration::from_secs(60)).unwrap();
    let took = t.elapsed();
    assert!(!own.exists(), "engine's own folder's place is not free after Ctrl-C");
    let engine_sys::remove::Removed::Quarantined(to) = r else { panic!("removed whole after Ctrl-C: {r:?}") };
    assert!(to.starts_with(&aside), "{to:?}");
    assert!(took < Duration::from_secs(2), "took {took:?} after Ctrl-C");

    // A quarantine's clear is work a run may leave for later: after
    // Ctrl-C it stops before its first entry.
    let q = base.path().join("q");
    std::fs::create_dir(&q).unwrap();
    for i in 0..100 {
        std::fs::create_dir(q.join(format!("e{i}"))).unwrap();
    }
    let t = Instant::now();
    let c = engine_sys::remove::clear(&q, Instant::now() + Duration::from_secs(60));
    assert_eq!((c.removed, c.left), (0, 100), "{:?}", t.elapsed());
}
