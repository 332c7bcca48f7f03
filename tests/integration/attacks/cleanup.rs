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
}
