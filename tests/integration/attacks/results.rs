//! A shared result file as an attack (red team, issue 54's re-created sweep
//! states): its recorded state never reaches sysfs by another path, never
//! picks the disk engine changes, never costs without bound, and what it
//! records is shown on one line, quoted where it is a command.

use crate::common::*;

/// An unsettled result `u` whose first identifier records `state` (and the
/// target directory `target`), as a hostile file would.
fn planted(env: &Env, state: serde_json::Value, target: &str) {
    let noisy = "sleep 0.05; case $((n % 3)) in 0) v=50;; 1) v=150;; *) v=100;; esac; echo value: $v";
    env.profile("noisy", &counter_profile("noisy", noisy, ""));
    let r = env.bench(&["noisy", "--budget", "1s", "--save", "u"]);
    assert_eq!(r.code, 0, "{r:?}");
    let mut f = env.result("u");
    f["systems"][0]["state"] = state;
    f["systems"][0]["target_dir"] = serde_json::json!(target);
    std::fs::write(env.result_path("u"), serde_json::to_string(&f).unwrap()).unwrap();
}

fn rerun(env: &Env, extra: &[&str]) -> Run {
    let mut args = vec!["benchmark", "u", "--only-unsettled", "--budget", "1s", "-y"];
    args.extend_from_slice(extra);
    env.run(&args)
}

#[test]
fn a_recorded_queue_setting_names_one_attribute_only() {
    for set in [
        "queue/./scheduler=kyber",
        "queue//scheduler=kyber",
        "queue/ ./scheduler=kyber",
        "queue/iosched/x=1",
        "queue/nr_requests=4\nhint: run rm",
    ] {
        let env = Env::new();
        let t = env.target.path().to_str().unwrap().to_string();
        planted(&env, serde_json::json!({"settings": [set], "prefix": "vm"}), &t);
        let r = rerun(&env, &["--target-dir", &t]);
        assert_eq!(r.code, 2, "{set:?}: {r:?}");
        assert!(r.stderr.contains("records a queue setting engine cannot read back"), "{set:?}: {r:?}");
        assert!(!r.stderr.contains("\nhint: run rm"), "a recorded newline forged a line: {r:?}");
        assert!(
            !env.home.path().join("journal").exists()
                || std::fs::read_dir(env.home.path().join("journal")).unwrap().count() == 0
        );
    }
}

#[test]
fn a_file_never_picks_the_directory_whose_disk_a_sweep_changes() {
    let env = Env::new();
    planted(&env, serde_json::json!({"scheduler": "kyber", "prefix": "vm"}), "/etc");
    let r = rerun(&env, &["--dry-run"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("engine changes a disk only under a directory you name"), "{r:?}");
    assert!(r.stderr.contains("hint: name it yourself: --only-unsettled --target-dir /etc"), "{r:?}");
}

#[test]
fn a_recorded_list_of_states_is_bounded() {
    let env = Env::new();
    let t = env.target.path().to_str().unwrap().to_string();
    let many: Vec<String> = (0..2000).map(|i| format!("s{i}")).collect();
    planted(&env, serde_json::json!({"scheduler": many.join(","), "prefix": "vm"}), &t);
    let start = std::time::Instant::now();
    let r = rerun(&env, &["--target-dir", &t]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("more than 16 scheduler states"), "{r:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    // The same state listed 2,000 times is one state.
    let list = vec!["none"; 2000].join(",");
    let s: engine::state::sweep::Schedulers = list.parse().unwrap();
    assert_eq!(s.to_string(), "none");
}

#[test]
fn a_recorded_device_is_quoted_in_the_hint_and_on_one_line() {
    let env = Env::new();
    let t = env.target.path().to_str().unwrap().to_string();
    planted(
        &env,
        serde_json::json!({"device": "/dev/sdb --force-destroy-data", "filesystem": "ext4", "prefix": "vm"}),
        &t,
    );
    let r = rerun(&env, &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("--device '/dev/sdb --force-destroy-data'"), "quoted: {r:?}");
}
