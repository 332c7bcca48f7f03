//! The seeds' tests (issue 13): every profile at a tiny size with the real
//! tools from Debian (scripts/install-deps.sh installs them), parsers on
//! output captured from those tools, the servers a test starts (PostgreSQL,
//! nginx, Apache httpd) — stopped after a failed trial, a failed start, and
//! by `engine recover` after a kill -9 — and the suites that follow the seeds.

use crate::common::{Env, repo};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(repo().join("tests/fixtures/output").join(name)).unwrap()
}

/// Every parser of shipped profile `id` on `output`, for the test `presets` pick.
fn parse(id: &str, presets: &[&str], output: &str) -> Vec<(String, f64)> {
    crate::parsers::parse_with(id, presets, output)
}

fn pairs(v: &[(&str, f64)]) -> Vec<(String, f64)> {
    v.iter().map(|(k, x)| (k.to_string(), *x)).collect()
}

#[test]
fn pgbench_tps_and_average_latency_from_pgbench_15() {
    let pick = ["scaling=Scale 1", "test=Normal Load", "run_time=3 Seconds"];
    let ro = [&pick[..], &["mode=Read Only"]].concat();
    let got = parse("pgbench", &ro, &fixture("pgbench-15-select-only-scale-1.txt"));
    assert_eq!(got, pairs(&[("tps", 42603.477524), ("latency", 0.188)]));
    let rw = [&pick[..], &["mode=Read Write"]].concat();
    let got = parse("pgbench", &rw, &fixture("pgbench-15-tpc-b-scale-1.txt"));
    assert_eq!(got, pairs(&[("tps", 2413.162803), ("latency", 3.315)]));
}

#[test]
fn dbench_throughput_and_max_latency_from_dbench_4() {
    let got = parse("dbench", &["clients=1", "run_time=5 Seconds"], &fixture("dbench-4.00-1-client-5s.txt"));
    assert_eq!(got, pairs(&[("throughput", 317.756), ("max_latency", 62.575)]));
    // The older fixture (2 clients) reads the same way.
    let got = parse("dbench", &["clients=6", "run_time=5 Seconds"], &fixture("dbench-4.00-2-clients.txt"));
    assert_eq!(got, pairs(&[("throughput", 210.757), ("max_latency", 29.021)]));
}

#[test]
fn postmark_transactions_per_second_from_postmark_1_51() {
    let got = parse("postmark", &["transactions=2500"], &fixture("postmark-1.51-2500-transactions.txt"));
    assert_eq!(got, pairs(&[("tps", 2500.0)]));
}

#[test]
fn john_the_ripper_real_candidates_per_second_from_john_1_9() {
    let got = parse("john-the-ripper", &["test=Blowfish", "duration=1 Second"], &fixture("john-1.9.0-bcrypt.txt"));
    assert_eq!(got, pairs(&[("cps", 405.0)]));
    let got = parse("john-the-ripper", &["test=MD5", "duration=1 Second"], &fixture("john-1.9.0-md5crypt.txt"));
    assert_eq!(got, pairs(&[("cps", 6183.0)]));
    // DES: the "Many salts" line (as PTS reads it), not "Only one salt".
    let got =
        parse("john-the-ripper", &["test=Traditional DES", "duration=1 Second"], &fixture("john-1.9.0-descrypt.txt"));
    assert_eq!(got, pairs(&[("cps", 399410.0)]));
}

#[test]
fn openssl_rsa_4096_signs_per_second_from_openssl_3() {
    let got = parse("openssl", &["seconds=1 Second"], &fixture("openssl-3.0-speed-rsa4096.txt"));
    assert_eq!(got, pairs(&[("signs", 244.9)]));
}

#[test]
fn ab_requests_per_second_from_nginx_and_apache_runs() {
    let pick = ["concurrency=100", "requests=5000"];
    let got = parse("nginx", &pick, &fixture("ab-2.3-nginx-1.22-5000-requests-c100.txt"));
    assert_eq!(got[0].0, "rps");
    let text = fixture("ab-2.3-nginx-1.22-5000-requests-c100.txt");
    let want: f64 = text
        .lines()
        .find(|l| l.starts_with("Requests per second:"))
        .and_then(|l| l.split_whitespace().nth(3))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(got[0].1, want);
    let got = parse("apache", &pick, &fixture("ab-2.3-apache-2.4-5000-requests-c100.txt"));
    // The mean time per request, not the one across all concurrent requests.
    assert_eq!(got, pairs(&[("rps", 7988.01), ("time_per_request", 12.519)]));
}

/// Processes (not zombies) whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next()).unwrap_or("Z");
        if state == "Z" || pid == std::process::id() {
            continue;
        }
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

fn journal_files(env: &Env) -> Vec<String> {
    std::fs::read_dir(env.home.path().join("journal"))
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// Every seed profile at a tiny size, one trial each, in one run: the
/// external tools (PostgreSQL with its own cluster, dbench, PostMark, Git,
/// nginx and Apache with ab, the compressors, John the Ripper, OpenSSL,
/// GnuPG) and the built-in presets.
#[test]
fn every_seed_profile_runs_at_a_tiny_size() {
    let env = Env::new();
    env.suite(
        "tiny",
        r#"title: Tiny
tests:
  - {profile: pgbench, options: {scaling: Scale 1, test: Normal Load, mode: [Read Only, Read Write], run_time: 3 Seconds}}
  - {profile: dbench, options: {clients: "1", run_time: 5 Seconds}}
  - {profile: postmark, options: {transactions: "2500"}}
  - {profile: git, options: {repository: "1000 Commits, 300 Files"}}
  - {profile: nginx, options: {concurrency: "20", requests: "5000"}}
  - {profile: apache, options: {concurrency: "20", requests: "5000"}}
  - {profile: compress-gzip, options: {file_size: 16MB}}
  - {profile: compress-pbzip2, options: {file_size: 16MB}}
  - {profile: compress-7zip, options: {file_size: 16MB}}
  - {profile: compress-zstd, options: {file_size: 16MB}}
  - {profile: compress-xz, options: {file_size: 16MB}}
  - {profile: tiobench-io, options: {test: [Random Write, Random Read], size: 4MB, threads: "4"}}
  - {profile: iozone, options: {record: 64Kb, file_size: 64MB, test: [Write Performance, Read Performance]}}
  - {profile: blogbench, options: {duration: 2 x 1 Seconds}}
  - {profile: io-patterns, options: {pattern: AIO-Stress Random Write, file_size: 64 MiB}}
  - {profile: john-the-ripper, options: {test: MD5, duration: 1 Second}}
  - {profile: openssl, options: {seconds: 1 Second}}
  - {profile: gnupg, options: {file_size: 64MB}}
"#,
    );
    let t0 = Instant::now();
    let r = env.bench(&["suite/tiny", "--runs", "1", "--save", "tiny"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = env.result("tiny");
    let results = v["results"].as_array().unwrap();
    let has = |profile: &str, result: &str| {
        results.iter().any(|x| {
            x["profile"] == profile
                && x["result"] == result
                && x["entries"][0]["value"].as_f64().is_some_and(|v| v > 0.0)
        })
    };
    for (p, res) in [
        ("pgbench", "tps"),
        ("pgbench", "latency"),
        ("dbench", "throughput"),
        ("postmark", "tps"),
        ("git", "seconds"),
        ("nginx", "rps"),
        ("apache", "rps"),
        ("compress-gzip", "seconds"),
        ("compress-pbzip2", "seconds"),
        ("compress-7zip", "seconds"),
        ("compress-zstd", "seconds"),
        ("compress-xz", "seconds"),
        ("tiobench-io", "bandwidth"),
        ("iozone", "bandwidth"),
        ("blogbench", "read_score"),
        ("blogbench", "write_score"),
        ("io-patterns", "bandwidth"),
        ("john-the-ripper", "cps"),
        ("openssl", "signs"),
        ("gnupg", "seconds"),
    ] {
        assert!(has(p, res), "no {p} {res} in the result: {r:?}");
    }
    // Both pgbench modes ran, as separate tests with the seeds' description.
    let pg: Vec<&str> = results
        .iter()
        .filter(|x| x["profile"] == "pgbench" && x["result"] == "tps")
        .map(|x| x["description"].as_str().unwrap())
        .collect();
    assert_eq!(pg.len(), 2, "{pg:?}");
    assert!(pg.iter().any(|d| d.contains("Scaling: Scale 1 - Test: Normal Load - Mode: Read Only")), "{pg:?}");
    // Servers are stopped and their data removed; nothing stays journaled.
    let target = env.target.path().display().to_string();
    assert!(processes_mentioning(&target).is_empty(), "{:?}", processes_mentioning(&target));
    assert!(journal_files(&env).is_empty(), "{:?}", journal_files(&env));
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "scratch directories were left");
    eprintln!("tiny run of every seed profile: {:.1} s", t0.elapsed().as_secs_f64());
}

/// The unpack-linux profile extracts Debian's kernel tarball (one trial).
#[test]
fn unpack_linux_extracts_the_debian_kernel_tarball() {
    let env = Env::new();
    let r = env.bench(&["unpack-linux", "--runs", "1", "--save", "unpack"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = env.result("unpack");
    let secs = v["results"][0]["entries"][0]["value"].as_f64().unwrap();
    assert!(secs > 0.5, "extracting 1.3 GB cannot take {secs} s");
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "the extracted tree was left");
}

/// Waits until `cond` holds, up to `limit`.
fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
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
            "scaling=Scale 1",
            "-o",
            "test=Single Thread",
            "-o",
            "mode=Read Write",
            "-o",
            "run_time=30 Seconds",
            "--runs",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Mid-trial: the timed pgbench run is going.
    let running = wait_for(Duration::from_secs(60), || {
        processes_mentioning(&target).iter().any(|p| p.contains("pgbench -h") && p.contains("-T"))
    });
    assert!(running, "the trial never started: {:?}", processes_mentioning(&target));
    let cluster: Vec<_> = std::fs::read_dir(&target).unwrap().flatten().map(|e| e.path().join("pgdata")).collect();
    assert!(cluster.iter().any(|p| p.exists()), "no cluster in {target}");
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    // What the dead run left is journaled; a new run refuses to start.
    assert!(!journal_files(&env).is_empty(), "the server was not journaled");
    let r = env.bench(&["pgbench", "-o", "scaling=Scale 1", "--runs", "1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("engine recover"), "{r:?}");
    let r = env.run(&["recover"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("stop server postgres"), "{r:?}");
    // No postgres (nor its client) is left, and the cluster is gone.
    let left = || processes_mentioning(&target);
    assert!(wait_for(Duration::from_secs(10), || left().is_empty()), "{:?}", left());
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
            "scaling=Scale 1",
            "-o",
            "test=Single Thread",
            "-o",
            "mode=Read Only",
            "-o",
            "run_time=30 Seconds",
            "--runs",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let running = wait_for(Duration::from_secs(60), || {
        processes_mentioning(&target).iter().any(|p| p.contains("pgbench -h") && p.contains("-T"))
    });
    assert!(running, "the trial never started: {:?}", processes_mentioning(&target));
    let t0 = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let r: crate::common::Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 130, "{r:?}");
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
        "scaling=Scale 1",
        "-o",
        "mode=Read Only",
        "-o",
        "run_time=3 Seconds",
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

#[test]
fn a_missing_seed_tool_is_skipped_with_its_install_command_and_the_rest_runs() {
    let env = Env::new();
    let empty = tempfile::tempdir().unwrap();
    let r = env
        .cmd(&[
            "benchmark",
            "-y",
            "--target-dir",
            env.target.path().to_str().unwrap(),
            "postmark",
            "tiobench-io",
            "-o",
            "transactions=2500",
            "-o",
            "test=Random Write",
            "-o",
            "size=4MB",
            "-o",
            "threads=2",
            "--runs",
            "1",
        ])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let r: crate::common::Run = r.into();
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("postmark not found — install it with `apt-get install postmark`"), "{r:?}");
    assert!(r.stdout.contains("Threaded I/O Tester"), "{r:?}");
}

#[test]
fn each_suite_names_the_seed_it_follows() {
    let text = |s: &str| std::fs::read_to_string(repo().join("suites").join(s)).unwrap();
    assert!(text("io-schedulers.yaml").contains("Seed 000"));
    assert!(text("filesystems.yaml").contains("Seed 004"));
    for s in ["disk.yaml", "disk-quick.yaml"] {
        assert!(text(s).contains("../shared/seeds"), "{s}");
    }
    // suite/disk's items are the seeds' tests; the quick suite has the same
    // profiles (but unpack-linux and the timed builds) at tiny sizes.
    let profiles = |s: &str| -> Vec<String> {
        let v: serde_json::Value = serde_saphyr::from_str(&text(s)).unwrap();
        let mut p: Vec<String> =
            v["tests"].as_array().unwrap().iter().filter_map(|t| t["profile"].as_str().map(String::from)).collect();
        p.dedup();
        p.sort();
        p.dedup();
        p
    };
    let mut disk = profiles("disk.yaml");
    disk.retain(|p| !["unpack-linux", "build-linux-kernel", "build-gcc"].contains(&p.as_str()));
    assert_eq!(disk, profiles("disk-quick.yaml"));
    for p in ["pgbench", "dbench", "postmark", "tiobench-io", "iozone", "blogbench", "git", "io-patterns"] {
        assert!(disk.contains(&p.to_string()), "suite/disk lacks {p}");
    }
}

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
