//! Finding and checking profiles and suites: the search path (user profiles
//! first, shadowed built-ins shown, ids that must match their folders),
//! versions matched by prefix, and validation that points at the line and
//! column — the shipped files, the malformed-profile corpus, broken suites,
//! and a profile given by path, checked before anything runs.

use crate::common::*;

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

#[test]
fn versions_are_matched_by_prefix() {
    let env = Env::new();
    assert_eq!(env.run(&["info", "fio@2.2"]).code, 0);
    let r = env.run(&["info", "fio@1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no profile `fio` with a version matching `1` (found 2.2.0)"), "{r:?}");
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

/// The malformed-profile corpus: each file in tests/fixtures/bad-profiles
/// starts with `# expect: LINE:COL: MESSAGE`; `engine validate` must print
/// exactly that position and message, a hint under it, exit 3 and not panic.
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

/// Three typos, one round: `validate` reports every structural problem.
#[test]
fn validate_reports_every_error_in_a_file() {
    let env = Env::new();
    let p = env.profile(
        "typos",
        "id: typos\nversion: 1.0.0\ntitel: T\ntest_type: other\nexecutor:\n  external:\n    program: echo\n    argz: [\"1\"]\nresults:\n  - {id: v, unit: s, proportion: HIB, sigend: false}\nparsers:\n  - {result: v, wall_time: true}\n",
    );
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    let shown = p.display().to_string();
    for want in [
        format!("{shown}:3:1: unknown field `titel`"),
        format!("{shown}:8:5: unknown field `argz`"),
        format!("{shown}:10:39: unknown field `sigend`"),
    ] {
        assert!(r.stderr.lines().any(|l| l == want), "{want}\n{}", r.stderr);
    }
    assert!(r.stderr.contains("did you mean `title`?") && r.stderr.contains("did you mean `args`?"), "{r:?}");
    assert_eq!(r.stderr.matches("unknown field `titel`").count(), 1, "each once: {}", r.stderr);
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

/// `validate` reports every error at once (issue 39 item 18): a word out of
/// a fixed set inside a flow mapping (`proportion: HIBB`) was the one missed.
#[test]
fn validate_reports_every_error_of_a_profile() {
    let env = Env::new();
    let path = env.profile(
        "v18",
        "id: v18\nversion: 1.0.0\ntitle: V\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    argz: [\"-c\", \"echo value: 1\"]\nresults: [{id: x, unit: U, proportion: HIBB}]\nparsers: [{result: x, regx: 'value: (?P<value>\\d+)'}]\n",
    );
    let r = env.run(&["validate", path.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    for e in ["8:5: unknown field `argz`", "9:40: unknown variant `HIBB`", "10:23: unknown field `regx`"] {
        assert!(r.stderr.contains(e), "missing `{e}`: {r:?}");
    }
    assert!(r.stderr.contains("did you mean `HIB`?"), "{r:?}");
}

/// `{{profile_dir}}` is absolute even when the profile is named by a
/// relative path: a helper script beside it runs from the trial's directory.
#[test]
fn profile_dir_is_absolute_for_a_relative_path() {
    let env = Env::new();
    let p = env.profile(
        "helper",
        "id: helper\nversion: 1.0.0\ntitle: Helper\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [\"{{profile_dir}}/run.sh\"]\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n",
    );
    let dir = p.parent().unwrap();
    std::fs::write(dir.join("run.sh"), "echo value: 5\n").unwrap();
    let r: Run = env
        .cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()])
        .args(["test-profiles/helper/profile.yaml", "--runs", "1", "--save", "h"])
        .current_dir(env.profiles.path())
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(env.result("h")["results"][0]["entries"][0]["trials"], serde_json::json!([5.0]));
}

/// One spelling per rate: `IOPS/sec` and `ops/sec` are refused at their
/// field with the exact spelling, as `MB/sec` is.
#[test]
fn rate_units_have_one_spelling() {
    let env = Env::new();
    for (unit, want) in [("IOPS/sec", "`IOPS`"), ("ops/sec", "`ops/s`"), ("MB/sec", "`MB/s`")] {
        let p = env.profile(
            "rate",
            &format!("id: rate\nversion: 1.0.0\ntitle: Rate\ntest_type: other\nexecutor: {{external: {{program: 'true'}}}}\nresults: [{{id: x, unit: {unit}, proportion: HIB}}]\nparsers: [{{result: x, wall_time: true}}]\n"),
        );
        let r = env.run(&["validate", p.to_str().unwrap()]);
        assert_eq!(r.code, 3, "{unit}: {r:?}");
        let text = format!("{}{}", r.stdout, r.stderr);
        assert!(text.contains("profile.yaml:6:") && text.contains(want), "{unit}: {text}");
    }
}

/// Two different profile files with one id and version, given by path:
/// refused, naming both — never one of them dropped in silence. The same
/// file twice runs once.
#[test]
fn two_different_profiles_of_one_name_are_refused_not_dropped() {
    let env = Env::new();
    let dir = env.target.path();
    for (d, title) in [("a", "Echo dupe"), ("b", "Another dupe")] {
        let p = dir.join(d).join("dupe");
        std::fs::create_dir_all(&p).unwrap();
        let text = echo_profile("dupe", &["1"]).replace("title: Echo dupe", &format!("title: {title}"));
        std::fs::write(p.join("profile.yaml"), text).unwrap();
    }
    let (a, b) = (dir.join("a/dupe/profile.yaml"), dir.join("b/dupe/profile.yaml"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let r = env.bench(&[a, b, "--runs", "1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("two different profiles are both `dupe@1.0.0`"), "{r:?}");
    assert!(r.stderr.contains(a) && r.stderr.contains(b), "{r:?}");
    let r = env.bench(&[a, a, "--runs", "1"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("[1/1]"), "{r:?}");
}
