//! PTS fidelity (issue 43): for each seed test engine claims under PTS's
//! label, the command engine would run (its `--dry-run` lines) is the one
//! PTS's test-definition and install.sh produce, and engine's parser reads
//! the number PTS's parser reads from the real tool's output. One file per
//! profile group; the PTS side is read from `tests/fixtures/pts-profiles/`
//! (PTS's folders as it ships them, copied from `../shared/fixtures/`).

use crate::common::{Env, repo};
use std::path::PathBuf;

mod builds;
mod files;
mod storage;

/// A PTS test-profile folder of the fixtures (`fio-2.2.0`).
pub fn pts_profile(name: &str) -> PathBuf {
    repo().join("tests/fixtures/pts-profiles").join(name)
}

/// A file of a PTS fixture profile, as text.
pub fn pts_file(profile: &str, file: &str) -> String {
    let p = pts_profile(profile).join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// What `engine benchmark REFERENCE --dry-run` says each test runs: per
/// test, its label and its command lines (`trial: fio …`, `pre_test: …`,
/// `server NAME: …`, `workload io …`), directories as `$TEST_DIR`,
/// `$SCRATCH_DIR` and `$TARGET_DIR`.
pub fn engine_commands(env: &Env, reference: &str, options: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut args = vec!["benchmark", reference, "--dry-run", "-y"];
    for o in options {
        args.extend(["-o", o]);
    }
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in r.stdout.lines() {
        if let Some(cmd) = line.strip_prefix("    ") {
            out.last_mut().expect("a test before its commands").1.push(cmd.to_string());
        } else if let Some(test) = line.strip_prefix("  ") {
            let label = test.rsplit_once(": ").map(|(l, _)| l).unwrap_or(test);
            // `label: N trial(s) …`: the label is everything before the last `: N trial`.
            let label = test.find(" trial(s)").and_then(|i| test[..i].rfind(": ")).map(|i| &test[..i]).unwrap_or(label);
            out.push((label.to_string(), Vec::new()));
        }
    }
    out
}
