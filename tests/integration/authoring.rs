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
    assert!(fsmark.contains("line_before_hint: Files/sec"), "{fsmark}");
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
        "dd if=/dev/zero of=dd.out bs=64k count=16 conv=fsync",
        "--run",
        "--root",
        &root,
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(env.profiles.path().join("test-profiles/dd-write/profile.yaml")).unwrap();
    // The editor line names the schema engine installed, and it is there.
    let schema = env.home.path().join("schemas/profile.schema.json");
    assert!(text.starts_with(&format!("# yaml-language-server: $schema=file://{}\n", schema.display())), "{text}");
    let installed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&schema).unwrap()).unwrap();
    assert_eq!(installed["$schema"], "http://json-schema.org/draft-07/schema#");
    assert!(!text.contains("engine.invalid"), "{text}");
    // A relative output path goes into the scratch directory; settings stay
    // as given (no one-entry options), with one commented example.
    assert!(text.contains("\"of={{scratch_dir}}/dd.out\""), "{text}");
    assert!(text.contains("\"bs=64k\"") && text.contains("\"count=16\""), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("options:")), "{text}");
    assert!(text.contains("# and write \"bs={{bs}}\" for \"bs=64k\" below."), "{text}");
    // The rate in MB/s whatever prefix dd printed this time.
    assert!(
        text.contains("unit: \"MB/s\"") && text.contains("(?P<si>[kKMGT]?)B/s") && text.contains("divide_by: 1000000 "),
        "{text}"
    );
    assert!(text.contains("stream: stderr") && text.contains("(?P<value>"), "{text}");
    let r = env.bench(&["dd-write", "--runs", "2", "--save", "dd"]);
    assert_eq!(r.code, 0, "{r:?}");
    let res = env.result("dd");
    assert_eq!(res["results"][0]["profile"], "dd-write");
    assert_eq!(res["results"][0]["unit"], "MB/s");
    let v = res["results"][0]["entries"][0]["value"].as_f64().unwrap();
    assert!(v > 1.0 && v < 100_000.0, "a plausible MB/s: {v}");
    // Without --run: the wall time.
    let r = env.run(&["profile", "new", "sleepy", "--from-command", "sleep 0", "--root", &root]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(env.profiles.path().join("test-profiles/sleepy/profile.yaml")).unwrap();
    assert!(text.contains("wall_time: true"), "{text}");
    let r = env.run(&["profile", "new", "Bad Name", "--from-command", "true", "--root", &root]);
    assert_eq!(r.code, 2, "{r:?}");
}

/// `profile new --run` refuses a command that fails (issue 39 item 12): it
/// took `b2sum data.bin` with no such file and wrote a regex matching the
/// error message.
#[test]
fn profile_new_run_refuses_a_failing_command() {
    let env = Env::new();
    let root = tempfile::tempdir().unwrap();
    let r = env.run(&[
        "profile",
        "new",
        "b2",
        "--from-command",
        "b2sum data.bin",
        "--run",
        "--root",
        root.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("`b2sum` exited 1 in the sample run"), "{r:?}");
    assert!(r.stderr.contains("data.bin: No such file or directory"), "{r:?}");
    assert!(!root.path().join("test-profiles/b2").exists(), "a profile was written");
    let r =
        env.run(&["profile", "new", "t", "--from-command", "true", "--run", "--root", root.path().to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("printed no number"), "{r:?}");
}

/// A `dd`-style command gets MB/s from its size and the trial's wall time,
/// with no shell wrapper: rate × seconds is the size, trial by trial.
#[test]
fn a_rate_over_wall_time_gives_mb_per_second_without_a_wrapper() {
    let env = Env::new();
    env.profile(
        "dd",
        r#"id: dd
version: 1.0.0
title: dd
test_type: disk
options:
  - id: size
    name: Size
    entries:
      - {label: 8 MiB, values: {size: 8MiB, count: 8}}
executor:
  external:
    program: dd
    args: [if=/dev/zero, of=out, bs=1M, "count={{count}}"]
results:
  - {id: speed, unit: MB/s, proportion: HIB}
  - {id: seconds, unit: Seconds, proportion: LIB}
parsers:
  - {result: speed, rate: {amount: "{{size}}", per: wall_time}}
  - {result: seconds, wall_time: true}
"#,
    );
    let r = env.bench(&["dd", "--runs", "3", "--save", "dd"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("dd");
    let trials = |i: usize| -> Vec<f64> {
        f["results"][i]["entries"][0]["trials"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
    };
    assert_eq!(f["results"][0]["unit"], "MB/s");
    for (mbs, secs) in trials(0).iter().zip(trials(1)) {
        // 8 MiB = 8.388608 MB.
        assert!((mbs * secs - 8.388608).abs() < 1e-9, "{mbs} MB/s × {secs} s");
    }
}

/// A loose unit spelling is a validation error that names the exact one; a
/// size rate under a unit that is not a byte rate is refused too.
#[test]
fn a_loose_unit_spelling_is_refused_with_the_exact_one() {
    let env = Env::new();
    let p = env.profile(
        "loose",
        "id: loose\nversion: 1.0.0\ntitle: Loose\ntest_type: disk\nexecutor: {external: {program: 'true'}}\nresults:\n  - {id: speed, unit: MBps, proportion: HIB}\n  - {id: n, unit: Items, proportion: HIB}\nparsers:\n  - {result: speed, regex: 'speed (?P<value>[0-9.]+)'}\n  - {result: n, rate: {amount: 1GiB, per: wall_time}}\n",
    );
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains(":7:23: unit `MBps` is not an exact spelling"), "{all}");
    assert!(all.contains("hint: write `MB/s`"), "{all}");
    assert!(all.contains("`1GiB` is a size, but the result's unit `Items` is not a byte rate"), "{all}");
}
