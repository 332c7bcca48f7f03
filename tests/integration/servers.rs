//! Servers a test starts (PostgreSQL for pgbench, nginx for web serving):
//! a bad server step is a positioned diagnostic; the server is stopped and
//! its data removed after a failed trial, after a failed start (quoting its
//! log), on SIGTERM, and by `engine recover` after a kill -9.

use crate::common::*;
use std::time::{Duration, Instant};

/// The server mechanism is declared, validated, and its mistakes are
/// positioned diagnostics.
#[test]
fn a_bad_server_step_is_a_positioned_diagnostic() {
    let env = Env::new();
    let p = env.profile(
        "bad-server",
        r#"id: bad-server
version: 1.0.0
title: Bad
test_type: system
executor:
  external:
    program: "true"
    post_test:
      - server:
          name: web
          program: nginx
          ready: {}
          stop_signal: BANANA
          remove: [/etc]
results:
  - {id: n, unit: Items, proportion: HIB}
parsers:
  - {result: n, wall_time: true}
"#,
    );
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    for want in [
        "a server cannot start in `post_test`",
        "`ready` names no condition",
        "unknown signal `BANANA`",
        "`remove` path `/etc` is not inside the test's directory",
    ] {
        assert!(r.stdout.contains(want) || r.stderr.contains(want), "{want}: {r:?}");
    }
    let positioned = regex::Regex::new(r"bad-server/profile\.yaml:\d+:\d+: ").unwrap();
    assert!(positioned.is_match(&r.stdout) || positioned.is_match(&r.stderr), "{r:?}");
}

/// Waits until `cond` holds, up to `limit`.
fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    cond()
}

#[test]
fn pgbench_killed_mid_trial_is_cleaned_up_by_recover() {
    let env = Env::new();
    let target = env.target.path().to_str().unwrap().to_string();
    let mut child = env
        .cmd(&[
            "benchmark",
            "-y",
            "--target-dir",
            &target,
            "pgbench",
            "-o",
            "scaling_factor=1",
            "-o",
            "clients=1",
            "-o",
            "mode=Read Write",
            "--runs",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Mid-trial: the timed pgbench run is going.
    let running = wait_until(Duration::from_secs(60), || {
        processes_mentioning(&target).iter().any(|p| p.contains("pgbench --protocol=prepared") && p.contains("-T"))
    });
    assert!(running, "the trial never started: {:?}", processes_mentioning(&target));
    let cluster: Vec<_> = std::fs::read_dir(&target).unwrap().flatten().map(|e| e.path().join("pgdata")).collect();
    assert!(cluster.iter().any(|p| p.exists()), "no cluster in {target}");
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    // What the dead run left is journaled; a new run refuses to start.
    assert!(!journal_files(&env).is_empty(), "the server was not journaled");
    let r = env.bench(&["pgbench", "-o", "scaling_factor=1", "-o", "clients=1", "--runs", "1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("engine recover"), "{r:?}");
    let r = env.run(&["recover"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("stop server postgres"), "{r:?}");
    // No postgres (nor its client) is left, and the cluster is gone.
    let left = || processes_mentioning(&target);
    assert!(wait_until(Duration::from_secs(10), || left().is_empty()), "{:?}", left());
    assert!(cluster.iter().all(|p| !p.exists()), "the cluster was not removed");
    assert!(journal_files(&env).is_empty(), "{:?}", journal_files(&env));
    let r = env.run(&["recover"]);
    assert!(r.stdout.contains("nothing to recover"), "{r:?}");
}

#[test]
fn pgbench_stopped_by_sigterm_mid_trial_stops_its_server_and_removes_the_cluster() {
    let env = Env::new();
    let target = env.target.path().to_str().unwrap().to_string();
    let child = env
        .cmd(&[
            "benchmark",
            "-y",
            "--target-dir",
            &target,
            "pgbench",
            "-o",
            "scaling_factor=1",
            "-o",
            "clients=1",
            "-o",
            "mode=Read Only",
            "--runs",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let running = wait_until(Duration::from_secs(60), || {
        processes_mentioning(&target).iter().any(|p| p.contains("pgbench --protocol=prepared") && p.contains("-T"))
    });
    assert!(running, "the trial never started: {:?}", processes_mentioning(&target));
    let t0 = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let r: crate::common::Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 143, "SIGTERM gives 128 + 15: {r:?}");
    assert!(t0.elapsed() < Duration::from_secs(20), "stopping took {:?}", t0.elapsed());
    assert!(processes_mentioning(&target).is_empty(), "{:?}", processes_mentioning(&target));
    assert!(journal_files(&env).is_empty(), "{:?}", journal_files(&env));
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "the cluster was left");
}

/// A profile with an nginx server (the shipped profile's configuration) and
/// a trial that fails after printing the server's port.
fn nginx_profile(id: &str, port: &str, trial: &str) -> String {
    let shipped = std::fs::read_to_string(repo().join("test-profiles/nginx/profile.yaml")).unwrap();
    let pre_test = &shipped[shipped.find("    pre_test:").unwrap()..shipped.find("results:").unwrap()];
    let pre_test = pre_test.replace("{{free_port}}", port);
    format!(
        r#"id: {id}
version: 1.0.0
title: Web {id}
test_type: system
executor:
  external:
    program: sh
    args: [-c, "{trial}"]
{pre_test}results:
  - {{id: number, unit: Items, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}
requirements:
  programs:
    - {{name: nginx, apt: nginx-light, dirs: [/usr/sbin]}}
"#
    )
}

#[test]
fn web_serving_leaves_no_server_listening_after_a_failed_trial() {
    let env = Env::new();
    env.profile("web-fails", &nginx_profile("web-fails", "{{free_port}}", "echo port {{free_port}}; exit 3"));
    let r = env.bench(&["web-fails", "--runs", "1", "--save", "web"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("sh exited 3"), "{r:?}");
    let log = std::fs::read_dir(env.home.path().join("results/web/logs")).unwrap().flatten().next().unwrap().path();
    let test = std::fs::read_dir(&log).unwrap().flatten().next().unwrap().path();
    let trial = std::fs::read_to_string(test.join("trial-1.log")).unwrap();
    let port: u16 = trial.lines().find_map(|l| l.strip_prefix("port ")).unwrap().trim().parse().unwrap();
    // The server was up during the trial (its log says it ran) and is gone now.
    assert!(test.join("server-nginx.log").exists());
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "something still listens on {port}");
    let target = env.target.path().display().to_string();
    assert!(processes_mentioning(&target).is_empty(), "{:?}", processes_mentioning(&target));
    assert!(journal_files(&env).is_empty());
}

#[test]
fn a_server_whose_port_is_taken_fails_the_test_quoting_its_log() {
    let env = Env::new();
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    env.profile("web-taken", &nginx_profile("web-taken", &port, "echo value: 1"));
    env.profile("other", &crate::common::echo_profile("other", &["5"]));
    let r = env.bench(&["web-taken", "other", "--runs", "1"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("server nginx exited with code 1 before it was ready"), "{r:?}");
    // The server's own words, quoted under the failure.
    let quoted = r.stderr.lines().any(|l| l.trim_start().starts_with("| ") && l.contains("Address already in use"));
    assert!(quoted, "{r:?}");
    // The other test still ran.
    assert!(r.stdout.contains("Echo other"), "{r:?}");
    let target = env.target.path().display().to_string();
    assert!(processes_mentioning(&target).is_empty(), "{:?}", processes_mentioning(&target));
    assert!(journal_files(&env).is_empty());
    drop(taken);
}

#[test]
fn a_postgres_with_a_bad_setting_fails_the_test_quoting_its_log_and_leaves_nothing() {
    let env = Env::new();
    let shipped = std::fs::read_to_string(repo().join("test-profiles/pgbench/profile.yaml")).unwrap();
    let bad = shipped.replace("id: pgbench", "id: pg-bad").replace(
        r#"args: [-D, "{{test_dir}}/pgdata", -k, "{{test_dir}}"]"#,
        r#"args: [-D, "{{test_dir}}/pgdata", -k, "{{test_dir}}", -c, "shared_buffers=lots"]"#,
    );
    assert_ne!(bad, shipped.replace("id: pgbench", "id: pg-bad"), "the server's args were not found");
    env.profile("pg-bad", &bad);
    let r = env.bench(&[
        "pg-bad",
        "-o",
        "scaling_factor=1",
        "-o",
        "clients=1 (engine quick: 3 s)",
        "-o",
        "mode=Read Only",
        "--runs",
        "1",
    ]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("server postgres exited with code 1 before it was ready"), "{r:?}");
    assert!(r.stderr.contains(r#"invalid value for parameter "shared_buffers": "lots""#), "{r:?}");
    let target = env.target.path().display().to_string();
    assert!(processes_mentioning(&target).is_empty(), "{:?}", processes_mentioning(&target));
    assert!(journal_files(&env).is_empty());
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "the cluster was left");
}
