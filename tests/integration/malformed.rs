//! The malformed-profile corpus: each file in tests/fixtures/bad-profiles
//! starts with `# expect: LINE:COL: MESSAGE`; `engine validate` must print
//! exactly that position and message, a hint under it, exit 3 and not panic.

use crate::common::*;

#[test]
fn every_bad_profile_is_reported_at_its_line_and_column() {
    let env = Env::new();
    let dir = repo().join("tests/fixtures/bad-profiles");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(files.len() >= 25, "the corpus has {} files", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let expect = text.lines().next().unwrap().strip_prefix("# expect: ").expect("first line is `# expect: …`");
        let shown = f.to_str().unwrap();
        let r = env.run(&["validate", shown]);
        let want = format!("{shown}:{expect}");
        let lines: Vec<&str> = r.stderr.lines().collect();
        let found = lines.iter().position(|l| *l == want);
        let ok = r.code == 3
            && !r.stderr.contains("panicked")
            && found.is_some_and(|i| lines.get(i + 1).is_some_and(|h| h.starts_with("  hint: ")));
        if !ok {
            failures.push(format!("{}\n  want: {want}\n  got (exit {}):\n{}", f.display(), r.code, r.stderr));
        }
    }
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), files.len(), failures.join("\n"));
}

#[test]
fn a_broken_suite_points_into_the_suite_file() {
    let env = Env::new();
    let suite = env.suite(
        "broken",
        "title: B\ntests:\n  - profile: fio\n    options:\n      block_size: [4KB, 3KB]\n  - profile: nosuch\n",
    );
    let r = env.run(&["validate", suite.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains(&format!("{}:6:14: no profile named `nosuch`", suite.display())), "{r:?}");
    let r = env.bench(&["suite/broken"]);
    assert_eq!(r.code, 3, "{r:?}");
    let suite =
        env.suite("broken2", "title: B\ntests:\n  - profile: fio\n    options:\n      block_size: [4KB, 3KB]\n");
    let r = env.bench(&["suite/broken2"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stderr.contains(&format!("{}:5:19: `3KB` is not an entry of option `block_size` of fio", suite.display())),
        "{r:?}"
    );
    assert!(r.stderr.contains("hint: "), "{r:?}");
}

#[test]
fn a_profile_given_by_path_is_checked_before_anything_runs() {
    let env = Env::new();
    let p = repo().join("tests/fixtures/bad-profiles/placeholder-without-option.yaml");
    let r = env.bench(&[p.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains(":15:13: placeholder `{{count}}` has no option value of that name"), "{r:?}");
    assert!(!env.home.path().join("results").exists());
}
