//! `--setups N` (issue 41, Kalibera & Jones): a test set up afresh N times
//! or more, trials in each; the interval of a mean from the set-ups' means;
//! set-ups added where the set-ups differ; on a --device, the file system
//! made afresh for each.

use crate::common::*;

/// A profile whose set-up draws a level — 100 for odd set-ups, 120 for even
/// ones, counted in `log` — and whose trials report the level plus 0–2: the
/// set-up level dominates. Each set-up first logs how many entries the
/// test's folder held (a fresh set-up sees none).
fn levels_profile(env: &Env, log: &std::path::Path) {
    let l = log.display();
    env.profile(
        "levels",
        &format!(
            "id: levels\nversion: 1.0.0\ntitle: Levels\ntest_type: other\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'echo value: $(( $(cat {{{{test_dir}}}}/level) + $(od -An -N1 -tu1 /dev/urandom) % 3 ))']\n    pre_test: [{{shell: 'echo seen $(ls {{{{test_dir}}}} | wc -l) >> {l}; n=$(grep -c seen {l}); echo $((100 + 20 * (1 - n % 2))) > {{{{test_dir}}}}/level; touch {{{{test_dir}}}}/left-by-pre-test'}}]\nresults: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value: (?P<value>\\d+)'}}]\n"
        ),
    );
}

fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// Each set-up's mean, in order.
fn setup_means(trials: &[f64], setups: &[f64]) -> Vec<f64> {
    let k = setups.iter().fold(0.0f64, |a, b| a.max(*b)) as usize;
    (1..=k)
        .map(|j| {
            let x: Vec<f64> = trials.iter().zip(setups).filter(|(_, s)| **s as usize == j).map(|(v, _)| *v).collect();
            x.iter().sum::<f64>() / x.len() as f64
        })
        .collect()
}

#[test]
fn setups_make_the_test_afresh_and_the_interval_comes_from_them() {
    let env = Env::new();
    let log = env.target.path().join("setups.log");
    levels_profile(&env, &log);
    let r = env.bench(&["levels", "--setups", "3", "--runs", "6", "--save", "a"]);
    assert_eq!(r.code, 0, "{r:?}");
    let seen = std::fs::read_to_string(&log).unwrap();
    assert_eq!(seen, "seen 0\n".repeat(3), "three set-ups, each in an emptied test folder");
    let e = &env.result("a")["results"][0]["entries"][0];
    let (trials, setups) = (numbers(&e["trials"]), numbers(&e["setups"]));
    assert_eq!(setups, [1.0, 1.0, 2.0, 2.0, 3.0, 3.0], "--runs 6: two trials a set-up: {e}");
    let m = setup_means(&trials, &setups);
    assert!(m[0] < 103.0 && m[1] >= 120.0 && m[2] < 103.0, "the levels each set-up drew: {m:?}");
    // The mean is the set-ups' mean, its SE theirs (k − 1 = 2 degrees of freedom).
    let (mean, sd, _) = stats_of(&m);
    assert!(close(e["value"].as_f64().unwrap(), mean), "{e}");
    assert!(close(e["se"].as_f64().unwrap(), sd / 3f64.sqrt()), "{e}");
    assert_eq!(e["n"], 6);
    assert_eq!(e["stopped"], "forced");
    let w = e["warning"].as_str().unwrap();
    assert!(w.starts_with("--runs 6 in 3 set-ups: two-level 95 % CI ±"), "{w}");
    assert!(r.stdout.contains("N = 6 (3 set-ups)"), "{}", r.stdout);
    let notes: Vec<&str> = e["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.starts_with("3 set-ups: ") && n.contains("between set-ups")), "{notes:?}");
    // Shown and exported as any result.
    let show = env.run(&["result", "show", "a"]);
    assert_eq!(show.code, 0, "{show:?}");
    assert!(show.stdout.contains("N = 6 (3 set-ups)"), "{}", show.stdout);
    let json = env.run(&["result", "show", "a", "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    // Without --setups the test is set up once and the entry has no set-ups.
    let r = env.bench(&["levels", "--runs", "2", "--save", "once"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("once")["results"][0]["entries"][0];
    assert!(e.get("setups").is_none(), "{e}");
}

/// Set-ups whose levels differ by 20 % are added, two trials each (the
/// set-up level holds the variance), until the two-level interval reaches
/// the target; each added one says why.
#[test]
fn setups_are_added_where_the_setups_differ() {
    let env = Env::new();
    let log = env.target.path().join("setups.log");
    levels_profile(&env, &log);
    let r = env.bench(&["levels", "--setups", "2", "--budget", "30s", "--save", "b"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("b")["results"][0]["entries"][0];
    let setups = numbers(&e["setups"]);
    let k = setups.iter().fold(0.0f64, |a, b| a.max(*b)) as usize;
    assert!(k > 4, "set-ups were added: {e}");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), k, "one set-up per index");
    for j in 1..=k {
        assert_eq!(setups.iter().filter(|s| **s as usize == j).count(), 2, "two trials in set-up {j}: {e}");
    }
    assert_eq!(e["stopped"], "target", "{e}");
    let added: Vec<&str> = e["added_trials"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(added.len(), k - 2, "{added:?}");
    assert!(added[0].starts_with("set-up 3: two-level 95 % CI ±"), "{added:?}");
    // The interval the result reports is within the target.
    let m = setup_means(&numbers(&e["trials"]), &setups);
    let (mean, sd, _) = stats_of(&m);
    let t = match k - 1 {
        d if d >= 30 => 2.05,
        d => [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.37, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.15, 2.13][d.min(15) - 1],
    };
    assert!(t * sd / (k as f64).sqrt() / mean * 100.0 <= 5.2, "k = {k}, means {m:?}");
}

/// A profile's `trials.setups` applies, a suite's wins over it, the flag
/// over both; 0 is refused where it is written.
#[test]
fn a_profile_or_suite_sets_the_setups_and_the_flag_wins() {
    let env = Env::new();
    let log = env.target.path().join("setups.log");
    let l = log.display();
    env.profile(
        "twice",
        &format!(
            "id: twice\nversion: 1.0.0\ntitle: T\ntest_type: other\ntrials: {{times: 2, setups: 2}}\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'echo value: 1']\n    pre_test: [{{shell: 'echo setup >> {l}'}}]\nresults: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value: (?P<value>\\d+)'}}]\n"
        ),
    );
    let count = |name: &str| {
        let e = &env.result(name)["results"][0]["entries"][0];
        e.get("setups").map(|s| numbers(s).iter().fold(0.0f64, |a, b| a.max(*b)) as usize).unwrap_or(1)
    };
    let r = env.bench(&["twice", "--runs", "4", "--save", "p"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(count("p"), 2, "the profile's two set-ups");
    env.suite("thrice", "title: Thrice\nsetups: 3\ntests:\n  - profile: twice\n");
    let r = env.bench(&["suite/thrice", "--runs", "6", "--save", "s"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(count("s"), 3, "the suite's over the profile's");
    let r = env.bench(&["suite/thrice", "--runs", "2", "--setups", "1", "--save", "f"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(count("f"), 1, "the flag over both");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2 + 3 + 1);

    let bad = env.profile("zero", "id: zero\nversion: 1.0.0\ntitle: Z\ntest_type: other\ntrials:\n  setups: 0\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'echo value: 1']\nresults: [{id: x, unit: U, proportion: HIB}]\nparsers: [{result: x, regex: 'value: (?P<value>\\d+)'}]\n");
    let r = env.bench(&["zero", "--save", "z"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains(&format!("{}:6:11", bad.display())), "file:line:col: {}", r.stderr);
    assert!(r.stderr.contains("setups must be at least 1"), "{}", r.stderr);
    env.suite("none", "title: None\nsetups: 0\ntests:\n  - profile: twice\n");
    let r = env.bench(&["suite/none", "--save", "n"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("none.yaml:2:9") && r.stderr.contains("setups must be at least 1"), "{}", r.stderr);
    let r = env.bench(&["twice", "--setups", "0", "--save", "c"]);
    assert_eq!(r.code, 2, "{r:?}");
    // --runs N is the trials in all: it must split evenly.
    let r = env.bench(&["twice", "--setups", "3", "--runs", "7", "--save", "c"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--runs 7 cannot be split into 3 set-ups"), "{}", r.stderr);
    assert!(r.stderr.contains("--runs 9 is 3 a set-up"), "{}", r.stderr);
    // On a device, set-ups are rounds that make the file system afresh: not both.
    let r = env.bench(&["twice", "--setups", "2", "--rounds", "2", "--device", "loop:64M", "--save", "d"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("give --setups or --rounds, not both"), "{}", r.stderr);
    assert!(!env.result_path("d").exists());
}

/// On a device engine formats, each set-up makes the file system afresh
/// (a round each), the schedulers interleaved inside it; the trials of
/// each round are one set-up of both identifiers.
#[test]
#[ignore = "needs root"]
fn setups_on_a_device_make_the_file_system_afresh() {
    require_root();
    let env = Env::new();
    let log = env.target.path().join("fs.log");
    let l = log.display();
    // Each set-up records the file system's creation time: a fresh mkfs each time.
    env.profile(
        "fresh-fs",
        &format!(
            "id: fresh-fs\nversion: 1.0.0\ntitle: Fresh\ntest_type: disk\nexecutor:\n  external:\n    program: sh\n    args: [-c, 'echo value: 1']\n    pre_test: [{{shell: 'echo setup $(findmnt -n -o FSTYPE --target .) $(ls -a .. | wc -l) >> {l}; touch ../planted-by-setup'}}]\nresults: [{{id: x, unit: U, proportion: HIB}}]\nparsers: [{{result: x, regex: 'value: (?P<value>\\d+)'}}]\n"
        ),
    );
    let r = env.bench(&[
        "fresh-fs",
        "--runs",
        "4",
        "--setups",
        "2",
        "--device",
        "loop:64M",
        "--scheduler",
        "none,mq-deadline",
        "--save",
        "d",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("set-up 1 of 2: the file systems made afresh"), "{}", r.stderr);
    assert!(r.stderr.contains("set-up 2 of 2: the file systems made afresh"), "{}", r.stderr);
    assert!(r.stderr.contains("Trials interleaved round-robin across 2 states"), "{}", r.stderr);
    let lines: Vec<String> = std::fs::read_to_string(&log).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    // The mount point holds lost+found and the test folder only: what the
    // first set-up planted went with its file system.
    assert_eq!(lines[0], lines[1], "{lines:?}");
    assert!(lines[0].starts_with("setup ext4 "), "{lines:?}");
    let f = env.result("d");
    assert_eq!(f["systems"].as_array().unwrap().len(), 2, "{f}");
    for e in entries(&f, 0) {
        assert_eq!(numbers(&e["setups"]), [1.0, 1.0, 2.0, 2.0], "--runs 4 in two set-ups: {e}");
    }
    let rec = env.run(&["recover"]);
    assert!(rec.stdout.contains("nothing to recover"), "{rec:?}");
}
