//! Authoring: `engine profile import-pts` on ten real PTS test-profile
//! folders, and `engine profile new --from-command … --run` with dd.

use crate::common::{Env, repo};

#[test]
fn ten_pts_profiles_convert_and_validate() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let fixtures = repo().join("tests/fixtures/pts-profiles");
    let mut dirs: Vec<String> = std::fs::read_dir(&fixtures)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.path().display().to_string())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 10, "{dirs:?}");
    let mut args = vec!["profile", "import-pts", "--root", root.path().to_str().unwrap()];
    args.extend(dirs.iter().map(String::as_str));
    let r = env.run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.matches("converted, validates").count(), 10, "{r:?}");
    for id in [
        "build-linux-kernel",
        "compilebench",
        "dbench",
        "fio",
        "fs-mark",
        "git",
        "iozone",
        "pgbench",
        "postmark",
        "sqlite",
    ] {
        let p = root.path().join("test-profiles").join(id).join("profile.yaml");
        let v = env.run(&["validate", p.to_str().unwrap()]);
        assert_eq!(v.code, 0, "{id}: {v:?}");
    }
    // What did not convert is listed, by name.
    assert!(r.stdout.contains("Option `Disk Target`: a free-form value"), "{r:?}");
    assert!(r.stdout.contains("MatchToTestArguments `#WRITE`"), "{r:?}");
    assert!(r.stdout.contains("#_INITIAL_CREATE_#"), "{r:?}");
    let fsmark = std::fs::read_to_string(root.path().join("test-profiles/fs-mark/profile.yaml")).unwrap();
    assert!(fsmark.contains("line_before_hint: \"Files/sec\""), "{fsmark}");
    assert!(fsmark.contains("{{@test}}"), "{fsmark}");
    // A second import refuses to replace the profiles.
    let r = env.run(&args);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn profile_new_scaffolds_a_profile_that_runs() {
    let env = Env::new();
    let root = env.profiles.path().to_str().unwrap().to_string();
    let r = env.run(&[
        "profile",
        "new",
        "dd-write",
        "--from-command",
        "dd if=/dev/zero of=/tmp/dd.out bs=64k count=16 conv=fsync",
        "--run",
        "--root",
        &root,
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(env.profiles.path().join("test-profiles/dd-write/profile.yaml")).unwrap();
    assert!(text.starts_with("# yaml-language-server: $schema="), "{text}");
    assert!(text.contains("of={{scratch_dir}}/dd.out"), "{text}");
    assert!(text.contains("bs={{bs}}") && text.contains("count={{count}}"), "{text}");
    assert!(text.contains("stream: stderr") && text.contains("(?P<value>"), "{text}");
    let r = env.bench(&["dd-write", "--runs", "2", "--save", "dd"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(env.result("dd")["results"][0]["profile"], "dd-write");
    // Without --run: the wall time.
    let r = env.run(&["profile", "new", "sleepy", "--from-command", "sleep 0", "--root", &root]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(env.profiles.path().join("test-profiles/sleepy/profile.yaml")).unwrap();
    assert!(text.contains("wall_time: true"), "{text}");
    let r = env.run(&["profile", "new", "Bad Name", "--from-command", "true", "--root", &root]);
    assert_eq!(r.code, 2, "{r:?}");
}
