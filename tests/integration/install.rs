//! Installing what profiles need: real downloads from servers on 127.0.0.1
//! (nginx for the honest path, a programmable server for faults), real
//! archives, real build steps, real package checks, and a full disk (root).

use crate::common::*;
use crate::httpd::{FaultServer, Nginx, Route};
use crate::loopdev::Unmount;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn sha(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// A .tar.gz holding `files` (name, content) under `pkg/`.
fn tgz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (name, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o755);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, format!("pkg/{name}"), *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap()
}

/// Pseudo-random bytes (so compression and hashing see real data).
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A profile that installs `file` from `urls` and prints the installed value.
fn profile(id: &str, file: &str, data: &[u8], urls: &[String], extra: &str, build: &str) -> String {
    let urls: Vec<String> = urls.iter().map(|u| format!("        - {u}")).collect();
    format!(
        r#"id: {id}
version: 1.0.0
title: Install {id}
test_type: other
install:
  downloads:
    - file: {file}
      size: {size}
      sha256: {sha}
      insecure: true
      urls:
{urls}
{extra}
  build:
    - shell: "{build}"
executor:
  external:
    program: sh
    args: ["-c", "cat {{{{install_dir}}}}/pkg/value.txt"]
results:
  - {{id: number, unit: Items, proportion: HIB}}
parsers:
  - {{result: number, regex: 'value: (?P<value>[0-9.]+)'}}
"#,
        size = data.len(),
        sha = sha(data),
        urls = urls.join("\n"),
    )
}

fn cache_files(env: &Env) -> Vec<String> {
    let dir = env.home.path().join("cache/downloads");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn state_path(env: &Env, id: &str) -> PathBuf {
    env.home.path().join(format!("installed/{id}@1.0.0/install-state.json"))
}

fn quick(env: &Env) -> Vec<(&'static str, String)> {
    let _ = env;
    vec![("ENGINE_DOWNLOAD_TIMEOUT", "1".into()), ("ENGINE_DOWNLOAD_RETRIES", "2".into())]
}

fn run_env(env: &Env, args: &[&str], vars: &[(&str, String)]) -> Run {
    let mut c = env.cmd(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    c.env_remove("ENGINE_DOWNLOAD_CACHE");
    c.output().unwrap().into()
}

#[test]
fn a_good_download_from_nginx_installs_and_a_cache_hit_makes_no_request() {
    let env = Env::new();
    let www = tempfile::tempdir().unwrap();
    let data = tgz(&[("value.txt", b"value: 42\n"), ("big.bin", &noise(300_000, 1))]);
    std::fs::write(www.path().join("tool-1.0.tar.gz"), &data).unwrap();
    let nginx = Nginx::start(www.path());
    env.profile(
        "nginx-tool",
        &profile("nginx-tool", "tool-1.0.tar.gz", &data, &[nginx.url("tool-1.0.tar.gz")], "", "test -f pkg/big.bin"),
    );
    let r = run_env(&env, &["install", "nginx-tool"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("nginx-tool@1.0.0: installed in"), "{r:?}");
    assert_eq!(cache_files(&env), vec![sha(&data)]);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state_path(&env, "nginx-tool")).unwrap()).unwrap();
    assert_eq!(state["inputs"]["tool-1.0.tar.gz"], sha(&data));
    assert_eq!(state["version"], "1.0.0");
    assert!(state["log"].as_str().unwrap().ends_with("install.log"));
    assert_eq!(nginx.requests().len(), 1);

    // Idempotent: nothing is fetched or rebuilt.
    let r = run_env(&env, &["install", "nginx-tool"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("already installed"), "{r:?}");
    // --force reinstalls from the cache: no request.
    let r = run_env(&env, &["install", "nginx-tool", "--force"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("from cache"), "{r:?}");
    assert_eq!(nginx.requests().len(), 1, "a cache hit makes no request");

    // The test runs from its install directory.
    let r = env.bench(&["nginx-tool", "--runs", "1"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains(" 42.00 "), "{r:?}");
}

#[test]
fn a_wrong_sha256_is_refused_and_nothing_stays_in_the_cache() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 1\n")]);
    let mut bad = data.clone();
    let last = bad.len() - 20;
    bad[last] ^= 0xff;
    let srv = FaultServer::start(HashMap::from([("f.tar.gz".to_string(), Route::Body { data: bad, ranges: true })]));
    env.profile("badsum", &profile("badsum", "f.tar.gz", &data, &[srv.url("f.tar.gz")], "", "true"));
    let r = run_env(&env, &["install", "badsum"], &quick(&env));
    assert_eq!(r.code, 5, "{r:?}");
    assert!(r.stderr.contains("sha256 mismatch"), "{r:?}");
    assert!(cache_files(&env).is_empty(), "{:?}", cache_files(&env));
    assert!(!state_path(&env, "badsum").exists());
}

#[test]
fn a_truncated_body_without_range_support_fails_and_leaves_nothing() {
    let env = Env::new();
    let data = noise(200_000, 2);
    let srv = FaultServer::start(HashMap::from([(
        "t.bin".to_string(),
        Route::Truncate { data: data.clone(), at: 50_000, times: 100, ranges: false },
    )]));
    env.profile("trunc", &profile("trunc", "t.bin", &data, &[srv.url("t.bin")], "", "true"));
    let r = run_env(&env, &["install", "trunc"], &quick(&env));
    assert_eq!(r.code, 5, "{r:?}");
    assert!(r.stderr.contains("attempt 2 of 2"), "{r:?}");
    assert!(r.stderr.contains("50000"), "the message says where it broke: {r:?}");
    assert!(cache_files(&env).is_empty(), "{:?}", cache_files(&env));
    assert_eq!(srv.requests().len(), 2);
}

#[test]
fn an_interrupted_download_resumes_with_range_and_hashes_right() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 7\n"), ("x.bin", &noise(400_000, 3))]);
    let srv = FaultServer::start(HashMap::from([(
        "r.tar.gz".to_string(),
        Route::Truncate { data: data.clone(), at: 100_000, times: 1, ranges: true },
    )]));
    env.profile("resume", &profile("resume", "r.tar.gz", &data, &[srv.url("r.tar.gz")], "", "true"));
    let r = run_env(&env, &["install", "resume"], &quick(&env));
    assert_eq!(r.code, 0, "{r:?}");
    let reqs = srv.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(reqs[0].range, None);
    assert_eq!(reqs[1].range.as_deref(), Some("bytes=100000-"), "{reqs:?}");
    assert_eq!(cache_files(&env), vec![sha(&data)]);
    let cached = std::fs::read(env.home.path().join("cache/downloads").join(sha(&data))).unwrap();
    assert_eq!(cached, data);
}

#[test]
fn a_404_on_the_first_mirror_falls_through_to_the_second() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 3\n")]);
    let srv = FaultServer::start(HashMap::from([(
        "good/f.tar.gz".to_string(),
        Route::Body { data: data.clone(), ranges: true },
    )]));
    let urls = [srv.url("gone/f.tar.gz"), srv.url("good/f.tar.gz")];
    env.profile("mirrors", &profile("mirrors", "f.tar.gz", &data, &urls, "", "true"));
    let r = run_env(&env, &["install", "mirrors"], &quick(&env));
    assert_eq!(r.code, 0, "{r:?}");
    let paths: Vec<String> = srv.requests().iter().map(|q| q.path.clone()).collect();
    assert_eq!(paths, ["gone/f.tar.gz", "good/f.tar.gz"], "a 404 is not retried");
}

#[test]
fn a_stalling_server_times_out_and_the_next_mirror_serves() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 5\n"), ("x.bin", &noise(100_000, 4))]);
    let srv = FaultServer::start(HashMap::from([
        ("stall/f.tar.gz".to_string(), Route::Stall { data: data.clone(), after: 1000 }),
        ("ok/f.tar.gz".to_string(), Route::Body { data: data.clone(), ranges: false }),
    ]));
    let urls = [srv.url("stall/f.tar.gz"), srv.url("ok/f.tar.gz")];
    env.profile("stall", &profile("stall", "f.tar.gz", &data, &urls, "", "true"));
    let t = Instant::now();
    let vars = [("ENGINE_DOWNLOAD_TIMEOUT", "1".to_string()), ("ENGINE_DOWNLOAD_RETRIES", "1".to_string())];
    let r = run_env(&env, &["install", "stall"], &vars);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(20), "bounded by the read timeout: {:?}", t.elapsed());
    let paths: Vec<String> = srv.requests().iter().map(|q| q.path.clone()).collect();
    assert_eq!(paths, ["stall/f.tar.gz", "ok/f.tar.gz"]);
}

#[test]
fn ctrl_c_mid_download_leaves_no_file_in_the_cache() {
    let env = Env::new();
    let data = noise(2_000_000, 5);
    let srv = FaultServer::start(HashMap::from([(
        "slow.bin".to_string(),
        Route::Drip { data: data.clone(), chunk: 16_384, every: Duration::from_millis(50) },
    )]));
    env.profile("slow", &profile("slow", "slow.bin", &data, &[srv.url("slow.bin")], "", "true"));
    let mut c = env.cmd(&["install", "slow"]);
    c.env_remove("ENGINE_DOWNLOAD_CACHE").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let part = env.home.path().join("cache/downloads").join(format!("{}.part", sha(&data)));
    let t = Instant::now();
    while std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0) < 50_000 {
        assert!(t.elapsed() < Duration::from_secs(20), "the download never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: plain kill(2) of our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r: Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 130, "{r:?}");
    assert!(r.stderr.contains("interrupted"), "{r:?}");
    assert!(cache_files(&env).is_empty(), "{:?}", cache_files(&env));
    assert!(!state_path(&env, "slow").exists());
}

/// Writes a .tar.gz whose members are given raw (the tar crate's builder
/// refuses such paths itself): (path, kind, link target, data).
fn evil_tgz(members: &[(&str, tar::EntryType, &str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (path, kind, link, data) in members {
        let mut h = tar::Header::new_old();
        {
            let old = h.as_old_mut();
            old.name[..path.len()].copy_from_slice(path.as_bytes());
            old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        h.set_entry_type(*kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap()
}

#[test]
fn archives_that_escape_are_refused_with_the_member_named() {
    use tar::EntryType as T;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "dotdot",
            evil_tgz(&[("pkg/ok.txt", T::Regular, "", b"ok"), ("../evil", T::Regular, "", b"x")]),
            "member `../evil` climbs out with `..`",
        ),
        (
            "absolute",
            evil_tgz(&[("/tmp/engine-test-abs-evil", T::Regular, "", b"x")]),
            "member `/tmp/engine-test-abs-evil` has an absolute path",
        ),
        (
            "symlink",
            evil_tgz(&[("etc", T::Symlink, "/etc", b""), ("etc/evil", T::Regular, "", b"x")]),
            "member `etc` is a symlink to `/etc`",
        ),
        ("climb", evil_tgz(&[("pkg/up", T::Symlink, "../../..", b"")]), "member `pkg/up` is a symlink to `../../..`"),
        (
            "hardlink",
            evil_tgz(&[("pkg/h", T::Link, "/etc/passwd", b"")]),
            "member `pkg/h` is a hard link to `/etc/passwd`",
        ),
    ];
    for (id, data, want) in cases {
        let env = Env::new();
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("evil.tar.gz"), &data).unwrap();
        // The archive comes from an ENGINE_DOWNLOAD_CACHE folder; the mirror is never asked.
        env.profile(
            id,
            &profile(id, "evil.tar.gz", &data, &["http://127.0.0.1:9/evil.tar.gz".to_string()], "", "true"),
        );
        let vars = [("ENGINE_DOWNLOAD_CACHE", folder.path().display().to_string())];
        let mut c = env.cmd(&["install", id]);
        for (k, v) in &vars {
            c.env(k, v);
        }
        let r: Run = c.output().unwrap().into();
        assert_eq!(r.code, 5, "{id}: {r:?}");
        assert!(r.stderr.contains(want), "{id}: {r:?}");
        assert!(!Path::new("/tmp/engine-test-abs-evil").exists());
        assert!(!env.home.path().join("installed/evil").exists());
        assert!(!state_path(&env, id).exists());
        let left: Vec<String> = std::fs::read_dir(env.home.path().join("installed"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| !n.ends_with(".lock"))
            .collect();
        assert!(left.is_empty(), "{id}: nothing half-extracted is left: {left:?}");
    }
}

#[test]
fn a_failing_build_step_names_its_log_and_records_no_install() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 9\n")]);
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("b.tar.gz"), &data).unwrap();
    env.profile(
        "badbuild",
        &profile(
            "badbuild",
            "b.tar.gz",
            &data,
            &["https://example.invalid/b.tar.gz".into()],
            "",
            "echo compiling $NUM_CPU_CORES; exit 3",
        ),
    );
    let mut c = env.cmd(&["install", "badbuild"]);
    c.env("ENGINE_DOWNLOAD_CACHE", folder.path());
    let r: Run = c.output().unwrap().into();
    assert_eq!(r.code, 5, "{r:?}");
    let log = env.home.path().join("installed/badbuild@1.0.0/install.log");
    assert!(r.stderr.contains(&log.display().to_string()), "{r:?}");
    assert!(r.stderr.contains("exited with status 3"), "{r:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(text.contains(&format!("compiling {cores}")), "{text}");
    assert!(!state_path(&env, "badbuild").exists());
    // `run` never installs, and says so.
    let r = env.run(&["run", "badbuild", "-y", "--target-dir", env.target.path().to_str().unwrap()]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("not installed: `engine run` never installs"), "{r:?}");
}

#[test]
fn a_new_profile_version_or_changed_inputs_reinstall() {
    let env = Env::new();
    let folder = tempfile::tempdir().unwrap();
    let one = tgz(&[("value.txt", b"value: 1\n")]);
    let two = tgz(&[("value.txt", b"value: 2\n")]);
    std::fs::write(folder.path().join(sha(&one)), &one).unwrap();
    std::fs::write(folder.path().join(sha(&two)), &two).unwrap();
    let url = ["https://example.invalid/v.tar.gz".to_string()];
    let run = |env: &Env| {
        let mut c = env.cmd(&["install", "versions"]);
        c.env("ENGINE_DOWNLOAD_CACHE", folder.path());
        let r: Run = c.output().unwrap().into();
        r
    };
    env.profile("versions", &profile("versions", "v.tar.gz", &one, &url, "", "true"));
    assert_eq!(run(&env).code, 0);
    env.profile("versions", &profile("versions", "v.tar.gz", &two, &url, "", "true"));
    let r = run(&env);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("installed in"), "changed inputs reinstall: {r:?}");
    let v = std::fs::read_to_string(env.home.path().join("installed/versions@1.0.0/pkg/value.txt")).unwrap();
    assert_eq!(v, "value: 2\n");
    let r = env.bench(&["versions", "--runs", "1"]);
    assert!(r.stdout.contains(" 2.00 "), "{r:?}");
    // A new version installs beside the old one.
    env.profile(
        "versions",
        &profile("versions", "v.tar.gz", &two, &url, "", "true").replace("version: 1.0.0", "version: 1.1.0"),
    );
    let r = run(&env);
    assert!(r.stdout.contains("versions@1.1.0: installed in"), "{r:?}");
}

#[test]
fn bad_install_sections_are_reported_at_file_line_col() {
    let env = Env::new();
    let data = b"x";
    let good = profile("badinput", "x.tar.gz", data, &["https://example.org/x.tar.gz".into()], "", "true");
    let no_sha = good.replace(&format!("      sha256: {}\n", sha(data)), "");
    let p = env.profile("badinput", &no_sha);
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("profile.yaml:7:7: download `x.tar.gz` has no sha256"), "{r:?}");
    assert!(r.stderr.contains("hint: add `sha256:`"), "{r:?}");
    let http = good.replace("      insecure: true\n", "").replace("https://example.org", "http://example.org");
    let p = env.profile("badinput", &http);
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("profile.yaml:11:11: `http://example.org/x.tar.gz` is not HTTPS"), "{r:?}");
    assert!(r.stderr.contains("set `insecure: true`"), "{r:?}");
    let pkg = good.replace("install:\n", "install:\n  packages: [bulid-utilities]\n");
    let p = env.profile("badinput", &pkg);
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert!(
        r.stderr.contains("no generic package `bulid-utilities`")
            && r.stderr.contains("did you mean `build-utilities`?"),
        "{r:?}"
    );
}

/// Runs engine as `nobody` when the tests run as root, so the non-root path is real.
fn as_user(env: &Env, args: &[&str], vars: &[(&str, String)]) -> Run {
    use std::os::unix::fs::PermissionsExt;
    let root = is_root();
    let mut c = if root {
        std::fs::set_permissions(env.home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::set_permissions(env.profiles.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin()]).args(args);
        c.env("ENGINE_HOME", env.home.path()).env("ENGINE_PROFILE_PATH", env.profiles.path()).env("NO_COLOR", "1");
        c.env("ENGINE_MACHINE_LOCK", env.home.path().join("machine.lock"));
        c
    } else {
        env.cmd(args)
    };
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().unwrap().into()
}

#[test]
fn missing_packages_on_a_non_root_run_print_the_exact_command() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("packages.yaml"),
        "engine-test-absent:\n  check: {programs: [engine-test-absent-tool]}\n  debian: [engine-test-absent-deb]\n  fedora: [engine-test-absent-rpm]\n",
    )
    .unwrap();
    std::fs::write(
        env.home.path().join("fedora-os-release"),
        "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n",
    )
    .unwrap();
    env.profile(
        "needs-pkg",
        &echo_profile("needs-pkg", &["1"])
            .replace("executor:", "install:\n  packages: [engine-test-absent, awk]\nexecutor:"),
    );
    use std::os::unix::fs::PermissionsExt;
    for d in ["test-profiles", "test-profiles/needs-pkg"] {
        std::fs::set_permissions(env.profiles.path().join(d), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let r = as_user(&env, &["install-deps", "needs-pkg"], &[]);
    assert_eq!(r.code, 5, "{r:?}");
    assert!(r.stdout.contains("missing packages: engine-test-absent (engine-test-absent-deb)"), "{r:?}");
    assert!(r.stdout.contains("\n  sudo apt-get install -y --no-install-recommends engine-test-absent-deb\n"), "{r:?}");
    assert!(r.stdout.contains("present: awk"), "{r:?}");
    let fedora = [("ENGINE_OS_RELEASE", env.home.path().join("fedora-os-release").display().to_string())];
    let r = as_user(&env, &["install-deps", "needs-pkg"], &fedora);
    assert!(r.stdout.contains("\n  sudo dnf install -y engine-test-absent-rpm\n"), "{r:?}");
    // The benchmark skips the profile and says how to get it.
    let r = as_user(&env, &["run", "needs-pkg", "-y", "--target-dir", "/tmp"], &[]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("sudo apt-get install -y --no-install-recommends engine-test-absent-deb"), "{r:?}");
    // `nobody` with root's HOME cannot read root's config: a warning, not a stop.
    if is_root() && std::env::var_os("XDG_CONFIG_HOME").is_none() {
        assert!(r.stderr.contains("config.toml: Permission denied") && r.stderr.contains("not used"), "{r:?}");
    }
}

#[test]
fn the_disk_suite_declares_its_packages() {
    let env = Env::new();
    let r = env.run(&["install-deps", "suite/disk", "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    for p in ["fio", "fs-mark", "sqlite3", "awk"] {
        assert!(r.stdout.contains(p), "{p}: {r:?}");
    }
}

#[test]
fn tiobench_builds_from_its_source_tarball_served_locally() {
    let env = Env::new();
    let fixture = repo().join("tests/fixtures/downloads/tiobench-0.4.2.tar.gz");
    let data = std::fs::read(&fixture).unwrap();
    let srv = FaultServer::start(HashMap::from([(
        "mirror/tiobench-0.4.2.tar.gz".to_string(),
        Route::Body { data, ranges: true },
    )]));
    let mut c = env.cmd(&[
        "benchmark",
        "tiobench",
        "-y",
        "--target-dir",
        env.target.path().to_str().unwrap(),
        "--option",
        "test=Random Write",
        "--option",
        "size=8MB",
        "--option",
        "threads=2",
        "--runs",
        "2",
        "--save",
        "tio",
    ]);
    c.env("ENGINE_DOWNLOAD_CACHE", srv.url("mirror/"));
    let r: Run = c.output().unwrap().into();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(
            "Threaded I/O Tester (engine) 0.4.2\nTest: Random Write - Size Per Thread: 8MB - Threads: 2\nMiB/s"
        ),
        "{r:?}"
    );
    assert_eq!(srv.requests().len(), 1);
    let res = env.result("tio");
    assert_eq!(res["results"][0]["entries"][0]["trials"].as_array().unwrap().len(), 2);
    assert!(env.home.path().join("installed/tiobench@1.0.0/tiobench-0.4.2/tiotest").is_file());
    // Offline: a folder filled by `engine cache fill --to`, then a fresh home that uses only it.
    let lab = tempfile::tempdir().unwrap();
    let r = env.run(&["cache", "fill", "tiobench", "--to", lab.path().to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(lab.path().join("tiobench-0.4.2.tar.gz").is_file());
    let offline = Env::new();
    let mut c = offline.cmd(&["install", "tiobench"]);
    c.env("ENGINE_DOWNLOAD_CACHE", lab.path());
    let r: Run = c.output().unwrap().into();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains(&format!("tiobench-0.4.2.tar.gz from {}", lab.path().join("tiobench-0.4.2.tar.gz").display())),
        "{r:?}"
    );
    let r = offline.run(&["cache", "list"]);
    assert!(
        r.stdout.contains("tiobench-0.4.2.tar.gz (tiobench@1.0.0)") && r.stdout.contains("tiobench@1.0.0  installed"),
        "{r:?}"
    );
}

/// A tiny tmpfs as ENGINE_HOME: a download, then an extraction, that fill it.
#[test]
#[ignore = "needs root"]
fn a_full_disk_during_a_download_or_an_extraction_leaves_nothing_partial() {
    let env = Env::new();
    let mnt = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "engine-test", mnt.path().to_str().unwrap()])
        .status()
        .unwrap();
    assert!(ok.success(), "mount tmpfs (needs root)");
    let _u = Unmount(mnt.path().to_str().unwrap());
    let home = mnt.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let run = |id: &str, vars: &[(&str, String)]| -> Run {
        let mut c = env.cmd(&["install", id]);
        c.env("ENGINE_HOME", &home).env_remove("ENGINE_DOWNLOAD_CACHE");
        for (k, v) in vars {
            c.env(k, v);
        }
        c.output().unwrap().into()
    };
    // 1. The download itself does not fit (no `size`, so no check before it starts).
    let big = noise(4_000_000, 6);
    let srv =
        FaultServer::start(HashMap::from([("big.bin".to_string(), Route::Body { data: big.clone(), ranges: true })]));
    let p = profile("fullget", "big.bin", &big, &[srv.url("big.bin")], "", "true")
        .replace(&format!("      size: {}\n", big.len()), "");
    env.profile("fullget", &p);
    let r = run("fullget", &[]);
    assert_eq!(r.code, 5, "{r:?}");
    assert!(r.stderr.contains("No space left on device") && r.stderr.contains("nothing was kept"), "{r:?}");
    let cache: Vec<_> = std::fs::read_dir(home.join("cache/downloads")).unwrap().flatten().collect();
    assert!(cache.is_empty(), "{cache:?}");
    // With `size`, engine refuses before the first byte.
    env.profile("fullget", &profile("fullget", "big.bin", &big, &[srv.url("big.bin")], "", "true"));
    let r = run("fullget", &[]);
    assert!(r.stderr.contains("needs 4000000 bytes but"), "{r:?}");
    // 2. A small archive whose content does not fit.
    let zeros = vec![0u8; 3_000_000];
    let data = tgz(&[("value.txt", b"value: 1\n"), ("zeros.bin", &zeros)]);
    let srv2 =
        FaultServer::start(HashMap::from([("z.tar.gz".to_string(), Route::Body { data: data.clone(), ranges: true })]));
    env.profile("fullx", &profile("fullx", "z.tar.gz", &data, &[srv2.url("z.tar.gz")], "", "true"));
    let r = run("fullx", &[]);
    assert_eq!(r.code, 5, "{r:?}");
    assert!(
        r.stderr.contains("cannot extract `pkg/zeros.bin`") && r.stderr.contains("No space left on device"),
        "{r:?}"
    );
    let left: Vec<String> = std::fs::read_dir(home.join("installed"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert!(left.is_empty(), "no half-extracted install: {left:?}");
}

/// A profile only optional suite items ask for is not installed by
/// `benchmark --yes`; the message names the command that installs it, the
/// rest of the suite runs, and after that command the optional item runs.
#[test]
fn optional_suite_items_are_not_installed_by_benchmark() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 7\n")]);
    let srv = FaultServer::start(HashMap::from([(
        "o.tar.gz".to_string(),
        Route::Body { data: data.clone(), ranges: false },
    )]));
    env.profile("opt", &profile("opt", "o.tar.gz", &data, &[srv.url("o.tar.gz")], "", "true"));
    env.profile("plain", &echo_profile("plain", &["3"]));
    env.suite("mixed", "title: Mixed\ntests:\n  - profile: plain\n  - profile: opt\n    optional: true\n");
    let r = env.bench(&["suite/mixed", "--runs", "1", "--save", "m"]);
    assert_eq!(r.code, 0, "the optional item is left out, not failed: {r:?}");
    assert!(
        r.stderr.contains(
            "not run (optional in this suite) opt: not installed: optional in this suite, so `benchmark` does not install it: run `engine install suite/mixed`"
        ),
        "{r:?}"
    );
    assert!(!r.stderr.contains("pass --yes"), "--yes was passed: {r:?}");
    assert!(srv.requests().is_empty(), "nothing downloaded");
    assert_eq!(env.result("m")["results"].as_array().unwrap().len(), 1);
    // The named command installs it; the same run then adds the optional test.
    let i = env.run(&["install", "suite/mixed"]);
    assert_eq!(i.code, 0, "{i:?}");
    let r = env.bench(&["suite/mixed", "--runs", "1", "--save", "m"]);
    assert_eq!(r.code, 0, "{r:?}");
    let res = env.result("m");
    let values: Vec<f64> =
        res["results"].as_array().unwrap().iter().map(|x| x["entries"][0]["value"].as_f64().unwrap()).collect();
    assert_eq!(values, vec![3.0, 7.0], "{res}");
}

/// `benchmark` asks on a terminal (Enter accepts) and shows a progress bar;
/// without a terminal and without --yes it installs nothing and says how.
#[test]
fn benchmark_asks_on_a_terminal_and_needs_yes_in_batch() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 11\n"), ("x.bin", &noise(3_000_000, 8))]);
    let srv = FaultServer::start(HashMap::from([(
        "p.tar.gz".to_string(),
        Route::Drip { data: data.clone(), chunk: 200_000, every: Duration::from_millis(40) },
    )]));
    env.profile("asked", &profile("asked", "p.tar.gz", &data, &[srv.url("p.tar.gz")], "", "true"));
    // Batch without --yes: nothing is installed, the test is skipped with the way out.
    let r = env.run(&["benchmark", "asked", "--runs", "1", "--target-dir", env.target.path().to_str().unwrap()]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("not installed: pass --yes to install it, or run `engine install asked`"), "{r:?}");
    assert!(srv.requests().is_empty());
    // On a terminal: the question, Enter, a progress bar, the result.
    let cmdline = format!("{} benchmark asked --runs 1 --save t --target-dir {}", bin(), env.target.path().display());
    let mut pty = OnPty::spawn(&mut env.cmd(&[]), &cmdline);
    pty.wait_text("Install asked@1.0.0 (downloads up to 2.9 MiB");
    pty.type_keys(b"\r");
    let (_, text) = pty.finish();
    assert!(text.contains("p.tar.gz") && text.contains("MiB/s"), "a progress bar with the rate: {text}");
    assert!(env.result("t")["results"][0]["entries"][0]["value"].as_f64() == Some(11.0), "{text}");
}

/// A build step that replaces `install.log` with a FIFO: the next step's
/// log is refused at once (no reader: `O_NONBLOCK` fails instead of
/// waiting), the install fails naming the log, and engine exits.
#[test]
fn a_fifo_for_the_install_log_is_refused_at_once() {
    let env = Env::new();
    let data = tgz(&[("value.txt", b"value: 9\n")]);
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("b.tar.gz"), &data).unwrap();
    let yaml = profile(
        "fifolog",
        "b.tar.gz",
        &data,
        &["https://example.invalid/b.tar.gz".into()],
        "",
        "rm -f install.log && mkfifo install.log",
    )
    .replace(
        "    - shell: \"rm -f install.log && mkfifo install.log\"",
        "    - shell: \"rm -f install.log && mkfifo install.log\"\n    - shell: \"true\"",
    );
    env.profile("fifolog", &yaml);
    let mut c = env.cmd(&["install", "fifolog"]);
    c.env("ENGINE_DOWNLOAD_CACHE", folder.path());
    let t0 = std::time::Instant::now();
    let r: Run = c.output().unwrap().into();
    assert!(t0.elapsed() < std::time::Duration::from_secs(20), "{:?}", t0.elapsed());
    assert_eq!(r.code, 5, "{r:?}");
    assert!(r.stderr.contains("install.log") && r.stderr.contains("not a regular file"), "{r:?}");
}

/// Ctrl-C while the server sends nothing (a stall, under the 30 s read
/// timeout): the download stops within a second, nothing kept.
#[test]
fn ctrl_c_during_a_stalled_download_exits_at_once() {
    let env = Env::new();
    let data = noise(2_000_000, 6);
    let srv = FaultServer::start(HashMap::from([(
        "stall.bin".to_string(),
        Route::Stall { data: data.clone(), after: 600_000 },
    )]));
    env.profile("stalled", &profile("stalled", "stall.bin", &data, &[srv.url("stall.bin")], "", "true"));
    let mut c = env.cmd(&["install", "stalled"]);
    c.env_remove("ENGINE_DOWNLOAD_CACHE").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let part = env.home.path().join("cache/downloads").join(format!("{}.part", sha(&data)));
    // Engine writes what it reads in chunks of 512 KiB: the first written,
    // the rest of the 600,000 bytes is in its reader's chunk, which the
    // stall keeps from filling — engine is in the stall.
    let t = Instant::now();
    while std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0) < 512 * 1024 {
        assert!(t.elapsed() < Duration::from_secs(20), "the download never reached the stall");
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = Instant::now();
    // SAFETY: plain kill(2) of our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let r: Run = child.wait_with_output().unwrap().into();
    let took = t.elapsed();
    assert_eq!(r.code, 130, "{r:?}");
    assert!(took < Duration::from_secs(1), "Ctrl-C took {took:?} during a stall");
    assert!(cache_files(&env).is_empty(), "{:?}", cache_files(&env));
}
