//! WASM plugins through the real binary: the examples land in a result file
//! next to built-in and external tests; every abuse of the sandbox fails its
//! own test with its own message while the run goes on; bad plugin paths
//! and configurations are refused before anything runs.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The plugins of `plugins/`, built for wasm32-wasip2 once per test run
/// (cargo is incremental: a no-op when nothing changed).
fn built() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let ws = repo().join("plugins");
        let target = ws.join("target");
        let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--release", "--target", "wasm32-wasip2", "--manifest-path"])
            .arg(ws.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "building plugins/ failed (scripts/install-deps.sh installs the wasm32-wasip2 target):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let release = target.join("wasm32-wasip2/release");
        // Compile each plugin once into a cache the tests copy (a debug
        // engine's Cranelift takes 1–2 s per plugin; each test has its own
        // ENGINE_HOME). The compile path itself is tested without it.
        let children: Vec<_> = std::fs::read_dir(&release)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
            .map(|p| {
                Command::new(bin())
                    .args(["plugin", "info"])
                    .arg(&p)
                    .env("ENGINE_HOME", seed_home(&target))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            let _ = c.wait();
        }
        release
    })
}

/// The ENGINE_HOME whose `cache/wasm` holds the plugins compiled once.
fn seed_home(target: &Path) -> PathBuf {
    target.join("engine-test-home")
}

/// Copies the compiled plugins into `env`'s ENGINE_HOME.
fn seed_cache(env: &Env) {
    let from = seed_home(&built().join("../..")).join("cache/wasm");
    let to = env.home.path().join("cache/wasm");
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).into_iter().flatten().flatten() {
        let _ = std::fs::copy(e.path(), to.join(e.file_name()));
    }
}

/// The built `.wasm` of crate `name` (`sha256_plugin`).
pub fn wasm(name: &str) -> PathBuf {
    built().join(format!("{name}.wasm"))
}

/// A profile folder `id` in the extra profile root, with `plugin` copied in
/// as `plugin.wasm` (when given) and `body` after the header.
pub fn wasm_profile(env: &Env, id: &str, plugin: Option<&str>, body: &str) -> PathBuf {
    seed_cache(env);
    let dir = env.profiles.path().join("test-profiles").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(p) = plugin {
        std::fs::copy(wasm(p), dir.join("plugin.wasm")).unwrap();
    }
    let yaml = format!("id: {id}\nversion: 1.0.0\ntitle: Plugin {id}\ntest_type: other\n{body}");
    std::fs::write(dir.join("profile.yaml"), yaml).unwrap();
    dir
}

pub fn abuse(env: &Env, id: &str, mode: &str, limits: &str) {
    wasm_profile(
        env,
        id,
        Some("abuse_plugin"),
        &format!(
            "executor:\n  wasm:\n    plugin: plugin.wasm\n    config: {{mode: {mode}}}\n    limits: {limits}\nresults:\n  - {{id: value, unit: Items, proportion: HIB}}\nparsers: []\n"
        ),
    );
}

fn results_of(f: &Value) -> Vec<(String, String)> {
    f["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["profile"].as_str().unwrap().to_string(), r["result"].as_str().unwrap().to_string()))
        .collect()
}

fn failure<'a>(f: &'a Value, profile: &str) -> &'a str {
    f["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["profile"] == profile)
        .unwrap_or_else(|| panic!("no failure of {profile}: {f}"))["reason"]
        .as_str()
        .unwrap()
}

const SHA256: &str = r#"executor:
  wasm:
    plugin: plugin.wasm
    config: {size: 1MiB}
    limits: {memory: 64MiB, time: 60s}
results:
  - {id: throughput, unit: MB/s, proportion: HIB, description: SHA-256 of 1MiB}
  - {id: seconds, unit: Seconds, proportion: LIB}
parsers: []
"#;

const FILES: &str = r#"options:
  - id: files
    name: Files
    entries:
      - {label: "2", value: 2}
executor:
  wasm:
    plugin: plugin.wasm
    config: {files: "{{files}}", size: 1MiB, block: 64KiB}
results:
  - {id: write, unit: MB/s, proportion: HIB, description: Write + fsync}
  - {id: read, unit: MB/s, proportion: HIB, description: Read back}
parsers: []
"#;

/// dbench for two seconds (it measures after the first), read by the parser plugin.
const DBENCH: &str = r#"executor:
  external:
    program: dbench
    args: ["-t", "2", "-D", "{{scratch_dir}}", "1"]
results:
  - {id: throughput, unit: MB/s, proportion: HIB}
  - {id: flush, unit: Milliseconds, proportion: LIB, description: Flush Average Latency}
parsers:
  - {result: throughput, plugin: {path: plugin.wasm}}
  - {result: flush, plugin: {path: plugin.wasm, config: {operation: Flush}, value: op_latency}}
requirements:
  programs: [{name: dbench, apt: dbench}]
"#;

#[test]
fn examples_land_in_a_result_file_next_to_builtin_and_external_tests() {
    let env = Env::new();
    wasm_profile(&env, "wasm-sha256", Some("sha256_plugin"), SHA256);
    wasm_profile(&env, "wasm-files", Some("files_io_plugin"), FILES);
    wasm_profile(&env, "dbench-plugin", Some("dbench_parser"), DBENCH);
    env.profile("echo", &echo_profile("echo", &["7"]));
    let r = env.bench(&[
        "wasm-sha256",
        "wasm-files",
        "dbench-plugin",
        "sqlite-embedded",
        "echo",
        "--option",
        "copies=1 (engine quick: 3 x 100 inserts)",
        "--runs",
        "2",
        "--save",
        "mix",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("mix");
    let got = results_of(&f);
    for want in [
        ("wasm-sha256", "throughput"),
        ("wasm-sha256", "seconds"),
        ("wasm-files", "write"),
        ("wasm-files", "read"),
        ("dbench-plugin", "throughput"),
        ("dbench-plugin", "flush"),
        ("sqlite-embedded", "seconds"),
        ("echo", "number"),
    ] {
        assert!(got.contains(&(want.0.to_string(), want.1.to_string())), "{want:?} in {got:?}");
    }
    for r in f["results"].as_array().unwrap() {
        let e = &r["entries"][0];
        assert!(e["n"].as_u64().unwrap() >= 2, "{r}");
        assert!(e["trials"].as_array().unwrap().iter().all(|v| v.as_f64().unwrap() > 0.0), "{r}");
    }
    let files = f["results"].as_array().unwrap().iter().find(|r| r["profile"] == "wasm-files").unwrap();
    assert_eq!(files["description"], "Files: 2 - Write + fsync");

    // The plugin hashed what it says: the same bytes through sha256sum.
    let sha = f["results"].as_array().unwrap().iter().find(|r| r["profile"] == "wasm-sha256").unwrap();
    let logs = env.home.path().join("results/mix").join(sha["entries"][0]["logs"].as_str().unwrap());
    let log = trial_log_in(&logs, "trial-1");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| i.wrapping_mul(2654435761).to_le_bytes()[3]).collect();
    let tmp = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(tmp.path(), &data).unwrap();
    let sum = Command::new("sha256sum").arg(tmp.path()).output().unwrap();
    let hex = String::from_utf8_lossy(&sum.stdout).split_whitespace().next().unwrap().to_string();
    assert!(log.contains(&format!("sha256 of 1048576 bytes: {hex}")), "{log}");
    assert!(log.starts_with("# plugin plugin.wasm (sha256 "), "{log}");
}

#[test]
fn the_parser_plugin_reads_a_real_dbench_summary() {
    let env = Env::new();
    let fixture = repo().join("tests/fixtures/output/dbench-4.00-2-clients.txt");
    let body = format!(
        r#"executor:
  external:
    program: cat
    args: ["{}"]
results:
  - {{id: throughput, unit: MB/s, proportion: HIB}}
  - {{id: max_latency, unit: Milliseconds, proportion: LIB}}
  - {{id: unlink, unit: Milliseconds, proportion: LIB}}
parsers:
  - {{result: throughput, plugin: {{path: plugin.wasm}}}}
  - {{result: max_latency, plugin: {{path: plugin.wasm}}}}
  - {{result: unlink, plugin: {{path: plugin.wasm, config: {{operation: Unlink}}, value: op_latency}}}}
trials: {{times: 2}}
"#,
        fixture.display()
    );
    wasm_profile(&env, "dbench-fixture", Some("dbench_parser"), &body);
    let r = env.bench(&["dbench-fixture", "--save", "d"]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("d");
    let value = |i: usize| f["results"][i]["entries"][0]["value"].as_f64().unwrap();
    assert_eq!((value(0), value(1), value(2)), (210.757, 29.021, 0.251));

    // A config key the parser does not read: the test fails before its first trial.
    std::fs::write(
        env.profiles.path().join("test-profiles/dbench-fixture/profile.yaml"),
        std::fs::read_to_string(env.profiles.path().join("test-profiles/dbench-fixture/profile.yaml"))
            .unwrap()
            .replace("operation: Unlink", "operaton: Unlink"),
    )
    .unwrap();
    let r = env.bench(&["dbench-fixture", "--save", "d2"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr.contains("parser plugin plugin.wasm: config `operaton`: unknown key; did you mean `operation`?"),
        "{r:?}"
    );
}

/// `cd myprofile && engine benchmark profile.yaml`: the profile's folder is
/// `.`, and its parser plugin is found there as from anywhere else (it was
/// taken for a built-in profile with no folder).
#[test]
fn a_parser_plugin_is_found_from_inside_the_profile_folder() {
    let env = Env::new();
    let fixture = repo().join("tests/fixtures/output/dbench-4.00-2-clients.txt");
    let body = format!(
        "executor:\n  external:\n    program: cat\n    args: [\"{}\"]\nresults:\n  - {{id: throughput, unit: MB/s, proportion: HIB}}\nparsers:\n  - {{result: throughput, plugin: {{path: plugin.wasm}}}}\ntrials: {{times: 2}}\n",
        fixture.display()
    );
    let dir = wasm_profile(&env, "dbench-here", Some("dbench_parser"), &body);
    let target = env.target.path().to_str().unwrap().to_string();
    let run = |reference: &str, save: &str, cwd: &Path| -> Run {
        env.cmd(&["benchmark", "-y", "--target-dir", &target, reference, "--save", save])
            .current_dir(cwd)
            .output()
            .unwrap()
            .into()
    };
    let inside = run("profile.yaml", "inside", &dir);
    assert_eq!(inside.code, 0, "{inside:?}");
    let outside = run(&dir.join("profile.yaml").display().to_string(), "outside", env.home.path());
    assert_eq!(outside.code, 0, "{outside:?}");
    for name in ["inside", "outside"] {
        assert_eq!(env.result(name)["results"][0]["entries"][0]["value"].as_f64(), Some(210.757), "{name}");
    }
}

#[test]
fn every_sandbox_abuse_fails_its_test_with_its_own_error_and_the_run_goes_on() {
    let env = Env::new();
    abuse(&env, "abuse-escape", "escape", "{}");
    abuse(&env, "abuse-loop", "loop", "{time: 1s}");
    abuse(&env, "abuse-bomb", "bomb", "{memory: 64MiB}");
    abuse(&env, "abuse-trap", "trap", "{}");
    abuse(&env, "abuse-panic", "panic", "{}");
    abuse(&env, "abuse-flood", "flood", "{}");
    abuse(&env, "abuse-flood-log", "flood-log", "{}");
    abuse(&env, "abuse-bulk-escape", "bulk-escape", "{}");
    abuse(&env, "abuse-bulk-negative", "bulk-negative", "{}");
    abuse(&env, "abuse-bulk-past-end", "bulk-past-end", "{}");
    let one = "executor:\n  wasm:\n    plugin: plugin.wasm\nresults:\n  - {id: value, unit: Items, proportion: HIB}\nparsers: []\n";
    wasm_profile(&env, "wrong-version", Some("wrong_version_plugin"), one);
    let dir = wasm_profile(&env, "truncated", None, one);
    let bytes = std::fs::read(wasm("sha256_plugin")).unwrap();
    std::fs::write(dir.join("plugin.wasm"), &bytes[..bytes.len() / 3]).unwrap();
    let dir = wasm_profile(&env, "not-wasm", None, one);
    std::fs::write(dir.join("plugin.wasm"), "#!/bin/sh\necho not a plugin\n").unwrap();
    let dir = wasm_profile(&env, "parser-as-workload", Some("dbench_parser"), one);
    assert!(dir.join("plugin.wasm").is_file());
    env.profile("echo", &echo_profile("echo", &["3"]));
    let start = std::time::Instant::now();
    let r = env.bench(&[
        "abuse-escape",
        "abuse-loop",
        "abuse-bomb",
        "abuse-trap",
        "abuse-panic",
        "abuse-flood",
        "abuse-flood-log",
        "abuse-bulk-escape",
        "abuse-bulk-negative",
        "abuse-bulk-past-end",
        "wrong-version",
        "truncated",
        "not-wasm",
        "parser-as-workload",
        "echo",
        "--save",
        "abuse",
    ]);
    assert_eq!(r.code, 4, "{r:?}");
    // The loop was stopped at its limit, not at the default 10 minutes.
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
    let f = env.result("abuse");
    assert_eq!(results_of(&f), [("echo".to_string(), "number".to_string())], "the run went on");
    let cases = [
        (
            "abuse-escape",
            "tried to open a file outside its scratch directory (a plugin sees only /scratch): open /etc/passwd",
        ),
        ("abuse-loop", "ran past its time limit of 1s and was stopped"),
        ("abuse-bomb", "allocated past its memory cap of 64 MiB"),
        ("abuse-trap", "trapped: wasm `unreachable` instruction executed"),
        ("abuse-panic", "panicked: the abuse plugin panics on purpose (at abuse/src/lib.rs:"),
        // More than 16 MiB of output fails the test, as sdk/README.md says.
        ("abuse-flood", "wrote more than 16 MiB in all to its standard output, standard error, log"),
        ("abuse-flood-log", "wrote more than 16 MiB in all to its standard output, standard error, log"),
        // The bulk file calls: each error names the call, path and fault.
        (
            "abuse-bulk-escape",
            "tried to open a file outside its scratch directory (a plugin sees only /scratch): \
             files.open(\"../../etc/passwd\"): the path leaves the scratch directory",
        ),
        ("abuse-bulk-negative", "files.read-at(\"data\", offset 0, length -1): the length is negative"),
        (
            "abuse-bulk-past-end",
            "files.read-at(\"data\", offset 100, length 10): the offset is past the end of the file (5 bytes)",
        ),
        (
            "wrong-version",
            "it was built for engine:plugin@1.0.0, another major version than this engine's engine:plugin@0.1.0",
        ),
        ("truncated", "truncated or corrupt WebAssembly"),
        ("not-wasm", "not a WebAssembly file"),
        ("parser-as-workload", "it is a parser plugin where a workload plugin is needed"),
    ];
    for (profile, want) in cases {
        let reason = failure(&f, profile);
        assert!(reason.starts_with("plugin plugin.wasm: "), "{profile}: {reason}");
        assert!(reason.contains(want), "{profile}: {reason}");
        assert!(r.stderr.contains(&format!("failed {profile} (")), "{profile}: {r:?}");
    }
    // A trial that failed in the sandbox keeps its log, with the plugin's stderr.
    let log = failure(&f, "abuse-panic").rsplit("; see ").next().unwrap();
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains("--- stderr ---\n") && text.contains("panics on purpose"), "{text}");
}

#[test]
fn plugin_paths_must_stay_in_the_profile_folder() {
    let env = Env::new();
    let outside = env.profiles.path().join("outside.wasm");
    std::fs::copy(wasm("sha256_plugin"), &outside).unwrap();
    let with = |id: &str, plugin: &str| {
        wasm_profile(
            &env,
            id,
            None,
            &format!(
                "executor:\n  wasm:\n    plugin: {plugin}\nresults:\n  - {{id: throughput, unit: MB/s, proportion: HIB}}\nparsers: []\n"
            ),
        )
    };
    with("climbs", "../../outside.wasm");
    with("absolute", &outside.display().to_string());
    let dir = with("linked", "plugin.wasm");
    std::os::unix::fs::symlink(&outside, dir.join("plugin.wasm")).unwrap();
    with("missing", "plugin.wasm");
    let r = env.run(&["validate", env.profiles.path().join("test-profiles").to_str().unwrap()]);
    assert_eq!(r.code, 3, "{r:?}");
    let out = format!("{}{}", r.stdout, r.stderr);
    for (id, want, hint) in [
        (
            "climbs",
            "plugin path `../../outside.wasm` climbs out of the profile's folder with `..`",
            "hint: put the `.wasm` file in the profile's folder",
        ),
        (
            "absolute",
            &format!("plugin path `{}` is absolute; it must be inside the profile's folder", outside.display()),
            "hint: put the `.wasm` file",
        ),
        (
            "linked",
            "plugin path `plugin.wasm` leads out of the profile's folder (through a symlink or `..`)",
            "hint: copy the `.wasm` file into the profile's folder",
        ),
        ("missing", "plugin file `plugin.wasm` does not exist", "hint: build the plugin (`engine plugin build`)"),
    ] {
        let line = format!("test-profiles/{id}/profile.yaml:7:13: {want}");
        assert!(out.contains(&line), "{line}\n{out}");
        assert!(out.contains(hint), "{hint}\n{out}");
    }
    // Nothing runs.
    let r = env.bench(&["climbs", "--save", "x"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(!env.result_path("x").exists());
}

#[test]
fn a_config_key_the_plugin_rejects_fails_before_the_first_trial() {
    let env = Env::new();
    wasm_profile(&env, "typo", Some("sha256_plugin"), &SHA256.replace("size: 1MiB", "sise: 1MiB"));
    wasm_profile(&env, "badvalue", Some("sha256_plugin"), &SHA256.replace("size: 1MiB", "size: lots"));
    let r = env.bench(&["typo", "badvalue", "--save", "c"]);
    assert_eq!(r.code, 4, "{r:?}");
    let f = env.result("c");
    assert_eq!(
        failure(&f, "typo"),
        "plugin plugin.wasm: config `sise`: unknown key; did you mean `size`? (known: size, chunk) (profile typo, plugin plugin.wasm)"
    );
    assert!(
        failure(&f, "badvalue").starts_with(
            "plugin plugin.wasm: config `size`: `lots` is not a size; write 4096, 4k, 2MiB or 1GB (k, m, g are powers of 2) (profile badvalue, plugin plugin.wasm)"
        ),
        "{f}"
    );
    // Before the first trial: no trial log was written.
    let trial_logs =
        walk(&env.home.path().join("results/c")).into_iter().filter(|p| p.to_string_lossy().contains("trial-")).count();
    assert_eq!(trial_logs, 0);
}

#[test]
fn compiled_code_is_cached_and_a_corrupt_entry_is_rebuilt() {
    let env = Env::new();
    let file = wasm("files_io_plugin");
    let info = || env.run(&["plugin", "info", file.to_str().unwrap()]);
    let r = info();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("code:       compiled now in "), "{r:?}");
    assert!(r.stdout.contains("keys:       files, size, block, fsync"), "{r:?}");
    assert!(r.stdout.contains("results:    write, read"), "{r:?}");
    let r = info();
    assert!(r.stdout.contains("code:       from the cache in "), "{r:?}");
    let cache = env.home.path().join("cache/wasm");
    let art = walk(&cache).into_iter().find(|p| p.extension().is_some_and(|e| e == "cwasm")).unwrap();
    let name = art.file_name().unwrap().to_string_lossy().to_string();
    assert!(name.contains(&format!("-engine-{}-wasmtime-48.", env!("CARGO_PKG_VERSION"))), "{name}");
    // Flip bytes in the middle of the compiled code: never executed, rebuilt.
    let mut bytes = std::fs::read(&art).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0xff;
    }
    std::fs::write(&art, &bytes).unwrap();
    let r = info();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("code:       compiled now (the cache entry was corrupt)"), "{r:?}");
    assert!(info().stdout.contains("code:       from the cache in "));
}

#[test]
fn a_new_plugin_from_nothing_to_a_result() {
    let env = Env::new();
    let work = tempfile::tempdir().unwrap();
    let r = env.run(&["plugin", "new", "my-plugin", "--dir", work.path().to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    let krate = work.path().join("my-plugin");
    let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
    assert!(lib.lines().count() <= 35, "a simple plugin stays short:\n{lib}");
    // Share the plugins' target folder: the SDK's dependencies are built once.
    let mut c = env.cmd(&["plugin", "build"]);
    let r: Run = c.current_dir(&krate).env("CARGO_TARGET_DIR", repo().join("plugins/target")).output().unwrap().into();
    assert_eq!(r.code, 0, "{r:?}");
    let mut lines = r.stdout.lines();
    let art = lines.next().unwrap();
    assert!(art.ends_with("/wasm32-wasip2/release/my_plugin.wasm"), "{r:?}");
    let sha = lines.next().unwrap().strip_prefix("sha256 ").unwrap().to_string();
    assert_eq!(sha.len(), 64);
    assert!(r.stdout.contains("copied to ./my-plugin-profile/my_plugin.wasm"), "{r:?}");
    let r: Run = env
        .cmd(&[
            "benchmark",
            "-y",
            "--target-dir",
            env.target.path().to_str().unwrap(),
            "./my-plugin-profile",
            "--save",
            "mine",
        ])
        .current_dir(&krate)
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("mine");
    assert_eq!(results_of(&f), [("my-plugin-profile".to_string(), "throughput".to_string())]);
}

#[test]
#[ignore = "needs root"]
fn the_io_plugin_runs_under_a_scheduler_sweep() {
    let fs = crate::loopdev::LoopFs::new(64, "relatime");
    let env = Env::new();
    wasm_profile(&env, "wasm-files", Some("files_io_plugin"), FILES);
    let r = env.run(&[
        "benchmark",
        "-y",
        "wasm-files",
        "--runs",
        "2",
        "--save",
        "sweep",
        "--target-dir",
        fs.path(),
        "--scheduler",
        "none,mq-deadline",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("sweep");
    let ids: Vec<&str> = f["systems"].as_array().unwrap().iter().map(|s| s["identifier"].as_str().unwrap()).collect();
    let n = fs.name();
    assert_eq!(ids, [format!("{n}: NONE"), format!("{n}: MQ-DEADLINE")]);
    assert_eq!(results_of(&f).len(), 2);
    for r in f["results"].as_array().unwrap() {
        let entries = r["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 2, "{r}");
        assert!(entries.iter().all(|e| e["n"].as_u64().unwrap() >= 2), "{r}");
    }
}

/// The workload's figures of one run's first series, as `result monitor
/// --format json` gives them: name → (trial, value) per interval.
fn own_intervals(env: &Env, name: &str) -> std::collections::BTreeMap<String, Vec<(u64, f64)>> {
    let r = env.run(&["result", "monitor", name, "--format", "json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let all: Value = serde_json::from_str(&r.stdout).unwrap();
    let w = &all[0]["series"]["workload"];
    assert!(w.is_object(), "no workload intervals: {}", all[0]["series"]);
    let trials: Vec<u64> = w["trial"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect();
    w["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            assert_eq!(m["source"], "workload");
            let vals = m["values"].as_array().unwrap().iter().zip(&trials);
            (m["name"].as_str().unwrap().to_string(), vals.filter_map(|(v, t)| Some((*t, v.as_f64()?))).collect())
        })
        .collect()
}

/// A plugin reports its own intervals through `host.interval` (the SDK's
/// `Rates`): seq-io's MB/s written and read land beside the monitors, under
/// each trial, and the terminal view draws them.
#[test]
fn a_plugin_reports_its_own_intervals_beside_the_monitors() {
    let env = Env::new();
    wasm_profile(
        &env,
        "wasm-seq",
        Some("seq_io_plugin"),
        "executor:\n  wasm:\n    plugin: plugin.wasm\n    config: {size: 64MiB, block: 1MiB}\nresults:\n  - {id: write, unit: MB/s, proportion: HIB}\n  - {id: read, unit: MB/s, proportion: HIB}\nparsers: []\n",
    );
    let r = env.bench(&["wasm-seq", "--runs", "2", "--save", "s", "--monitor-interval", "100ms"]);
    assert_eq!(r.code, 0, "{r:?}");
    let own = own_intervals(&env, "s");
    for name in ["write_mb_s", "read_mb_s"] {
        let v = &own[name];
        assert!(v.iter().any(|(t, _)| *t == 1) && v.iter().any(|(t, _)| *t == 2), "{name} in both trials: {v:?}");
        assert!(v.iter().all(|(_, x)| *x > 0.0 && x.is_finite()), "{name}: {v:?}");
    }
    let text = env.run(&["result", "monitor", "s"]);
    assert!(text.stdout.contains("workload write_mb_s MB/s"), "{}", text.stdout);
    // --monitor none: the plugin is told no interval and nothing is kept.
    let off = env.bench(&["wasm-seq", "--runs", "1", "--save", "off", "--monitor", "none"]);
    assert_eq!(off.code, 0, "{off:?}");
    assert!(env.result("off")["results"][0]["entries"][0].get("monitor").is_none());
}

/// A plugin's figures are text from outside: a name that is not a plain
/// key, a NaN, and figures past 32 in one call are refused and counted in
/// the trial's log; a unit with control characters lands inert; a time
/// ahead of the clock is taken as now.
#[test]
fn a_plugins_hostile_figures_are_refused_or_made_inert() {
    let env = Env::new();
    abuse(&env, "abuse-intervals", "intervals", "{}");
    let r = env.bench(&["abuse-intervals", "--runs", "1", "--save", "a", "--monitor-interval", "100ms"]);
    assert_eq!(r.code, 0, "{r:?}");
    let own = own_intervals(&env, "a");
    assert_eq!(own["ok_s"], [(1, 7.0)]);
    assert!(!own.keys().any(|k| k.contains('\u{1b}') || k == "nan_s"), "{:?}", own.keys());
    assert_eq!(own.len(), 32, "32 figures of one call kept: {:?}", own.keys());
    let e = &env.result("a")["results"][0]["entries"][0];
    let logs = env.home.path().join("results/a").join(e["logs"].as_str().unwrap());
    let log = std::fs::read_to_string(logs.join("trials.log")).unwrap();
    assert!(log.contains("# 71 interval figure(s) refused"), "{log}");
    for format in ["text", "csv", "json"] {
        let out = env.run(&["result", "monitor", "a", "--format", format, "--metric", "ok_s"]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(!out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{7}'), "{format}: {:?}", out.stdout);
    }
    let json: Value = serde_json::from_str(&env.run(&["result", "monitor", "a", "--format", "json"]).stdout).unwrap();
    let s = &json[0]["series"];
    let (t, trial) = (s["workload"]["t_ms"][0].as_f64().unwrap(), &s["trials"][0]);
    assert!(t <= trial["end_ms"].as_f64().unwrap() + 50.0, "a time ahead is now: {t} vs {trial}");
}
