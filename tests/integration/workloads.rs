//! Built-in workloads through `engine benchmark`: tiny sizes on a temp dir,
//! exact byte counts on a loop device with O_DIRECT, side by side with
//! external tests in one result file, start-up time under load, and what
//! goes wrong (a bad config value, O_DIRECT refused, a full disk).

use crate::common::*;
use crate::loopdev::{LoopFs, Unmount};
use serde_json::Value;
use std::process::Command;

/// The trial log of result `name`'s test `i` for its first identifier.
fn trial_log(env: &Env, name: &str, i: usize, trial: u32) -> String {
    let f = env.result(name);
    let rel = f["results"][i]["entries"][0]["logs"].as_str().unwrap().to_string();
    trial_log_in(&env.home.path().join("results").join(name).join(rel), &format!("trial-{trial}"))
}

fn values(f: &Value) -> Vec<(String, String, f64)> {
    f["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["profile"].as_str().unwrap().into(),
                r["result"].as_str().unwrap().into(),
                r["entries"][0]["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// A custom io profile: one test with the given config (no placeholders).
fn io_profile(env: &Env, id: &str, config: &str) {
    env.profile(
        id,
        &format!(
            "id: {id}\nversion: 1.0.0\ntitle: IO\ntest_type: disk\nexecutor: {{builtin: {{workload: io, config: {{{config}}}}}}}\nresults:\n  - {{id: iops, unit: IOPS, proportion: HIB}}\n  - {{id: bandwidth, unit: MB/s, proportion: HIB}}\nparsers: []\n"
        ),
    );
}

/// Every built-in profile at tiny sizes, with an external test, in one result file.
#[test]
fn built_in_and_external_tests_in_one_result() {
    let env = Env::new();
    let r = env.bench(&[
        "io",
        "files",
        "compile",
        "sqlite-embedded",
        "sqlite",
        "--option",
        "type=Random Read,Sequential Write",
        "--option",
        "block_size=4KB",
        "--option",
        "file_size=32 MiB",
        "--option",
        "runtime=2 Seconds",
        "--option",
        "engine=POSIX Sync",
        "--option",
        "direct=No",
        "--option",
        "test=100 Files, 1MB Size, No Sync/FSync",
        "--option",
        "trees=1 Tree, Scale 0.02",
        "--option",
        "copies=1 (engine quick: 3 x 100 inserts)",
        "--runs",
        "1",
        "--save",
        "mixed",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let f = env.result("mixed");
    let v = values(&f);
    for (profile, result) in [
        ("io", "bandwidth"),
        ("io", "iops"),
        ("io", "lat_p99"),
        ("io", "cpu_per_io"),
        ("files", "files_per_second"),
        ("compile", "initial_create"),
        ("compile", "delete_tree"),
        ("sqlite-embedded", "seconds"),
        ("sqlite", "seconds"),
    ] {
        assert!(v.iter().any(|(p, r, x)| p == profile && r == result && *x > 0.0), "{profile} {result}: {v:?}");
    }
    // The io log says what was moved; a 2 s psync random read moves 4 KiB at a time.
    let log = trial_log(&env, "mixed", 0, 1);
    assert!(log.starts_with("# workload io "), "{log}");
    assert!(log.contains("engine=Psync") && log.contains(" reads ("), "{log}");
    // `info` shows the workload and its configuration; `list` marks it built-in.
    let info = env.run(&["info", "io"]);
    assert!(info.stdout.contains("runs (builtin): workload io rw={{rw}}"), "{}", info.stdout);
    let list = env.run(&["list", "profiles"]);
    assert!(list.stdout.lines().any(|l| l.starts_with("files@") && l.contains("builtin")), "{}", list.stdout);
}

/// A bad config value fails its test before the first trial, naming the
/// profile, the workload and the key; the other tests still run.
#[test]
fn a_bad_config_value_names_the_key_and_the_run_goes_on() {
    let env = Env::new();
    io_profile(&env, "badio", "rw: randread, bs: 4q, size: 1m, runtime: '0'");
    env.profile("echo", &echo_profile("echo", &["1"]));
    let r = env.bench(&["badio", "echo", "--runs", "1", "--save", "b"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr.contains("workload io: config `bs`: `4q` is not a size") && r.stderr.contains("(profile badio)"),
        "{r:?}"
    );
    assert_eq!(env.result("b")["results"][0]["profile"], "echo");
    assert!(env.home.path().join("results/b/logs").exists());
}

/// O_DIRECT on a file system that refuses it (ramfs) is a clear error, not EINVAL.
#[test]
#[ignore = "needs root"]
fn direct_io_where_the_file_system_refuses_it() {
    require_root();
    let env = Env::new();
    let mnt = tempfile::tempdir().unwrap();
    let m = mnt.path().to_str().unwrap();
    assert!(Command::new("mount").args(["-t", "ramfs", "ramfs", m]).status().unwrap().success());
    let _u = Unmount(m);
    io_profile(&env, "dio", "rw: randread, bs: 4k, size: 1m, runtime: '0', direct: 'yes'");
    let r = env.run(&["benchmark", "-y", "dio", "--runs", "1", "--target-dir", m, "--save", "d"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("(ramfs) refuses direct I/O (O_DIRECT); run with `direct: no`"), "{r:?}");
    // Buffered works there.
    io_profile(&env, "bio", "rw: randread, bs: 4k, size: 1m, runtime: '0', direct: 'no'");
    let r = env.run(&["benchmark", "-y", "bio", "--runs", "1", "--target-dir", m, "--save", "d2"]);
    assert_eq!(r.code, 0, "{r:?}");
}

/// A block size that is not a multiple of the device's logical block size
/// (a loop device with 4096-byte sectors) names both numbers.
#[test]
#[ignore = "needs root"]
fn direct_io_with_a_block_size_the_device_cannot_take() {
    require_root();
    let fs = LoopFs::with_sector_size(64, 4096);
    let m = fs.path().to_string();
    let env = Env::new();
    io_profile(&env, "small", "rw: randread, bs: '512', size: 1m, runtime: '0', direct: 'yes'");
    let r = env.run(&["benchmark", "-y", "small", "--runs", "1", "--target-dir", &m, "--save", "s"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr.contains("config `bs`: 512 bytes is not a multiple of the device's logical block size, 4096 bytes"),
        "{r:?}"
    );
}

/// On a loop device with O_DIRECT: the kernel's own count of bytes sent to
/// storage (/proc/self/io, in the trial log) equals what was asked, exactly.
#[test]
#[ignore = "needs root"]
fn direct_io_on_a_loop_device_moves_exactly_the_bytes_asked() {
    let fs = LoopFs::new(96, "relatime");
    let env = Env::new();
    io_profile(
        &env,
        "exact-w",
        "rw: randwrite, bs: 16k, size: 8m, runtime: '0', direct: 'yes', iodepth: '8', numjobs: '2'",
    );
    io_profile(
        &env,
        "exact-r",
        "rw: read, bs: 64k, size: 8m, runtime: '0', direct: 'yes', iodepth: '4', ioengine: psync",
    );
    let r =
        env.run(&["benchmark", "-y", "exact-w", "exact-r", "--runs", "1", "--target-dir", fs.path(), "--save", "x"]);
    assert_eq!(r.code, 0, "{r:?}");
    let bytes = 2 * 8 * 1048576;
    let w = trial_log(&env, "x", 0, 1);
    assert!(w.contains(&format!("0 reads (0 bytes), {} writes ({bytes} bytes)", bytes / 16384)), "{w}");
    assert!(w.contains(&format!("write_bytes +{bytes}")), "the kernel counted the same: {w}");
    let rl = trial_log(&env, "x", 2, 1);
    let rb = 8 * 1048576;
    assert!(rl.contains(&format!("{} reads ({rb} bytes), 0 writes", rb / 65536)), "{rl}");
    assert!(rl.contains(&format!("read_bytes +{rb} ")), "the kernel counted the same: {rl}");
}

/// Disk full mid-trial: the trial fails naming ENOSPC, its files are
/// removed, and the run goes on to the next test.
#[test]
#[ignore = "needs root"]
fn disk_full_fails_the_trial_with_enospc_and_the_run_goes_on() {
    let fs = LoopFs::new(32, "relatime");
    let env = Env::new();
    io_profile(&env, "toobig", "rw: read, bs: 1m, size: 64m, runtime: '0', direct: 'no'");
    env.profile("echo", &echo_profile("echo", &["1"]));
    let r = env.run(&["benchmark", "-y", "toobig", "echo", "--runs", "1", "--target-dir", fs.path(), "--save", "full"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("No space left on device (ENOSPC)"), "{r:?}");
    assert_eq!(env.result("full")["results"][0]["profile"], "echo", "the next test ran");
    let left: Vec<_> =
        std::fs::read_dir(fs.path()).unwrap().flatten().map(|e| e.file_name()).filter(|n| n != "lost+found").collect();
    assert!(left.is_empty(), "the trial's files are removed: {left:?}");
}

/// Application start-up time runs as root with a real background load.
#[test]
#[ignore = "needs root"]
fn startup_time_measures_a_cold_start_under_load() {
    let fs = LoopFs::new(600, "relatime");
    let env = Env::new();
    let r = env.run(&[
        "benchmark",
        "-y",
        "startup-time",
        "--option",
        "background_size=64 MiB",
        "--option",
        "background=Sequential Reads + Writes",
        "--runs",
        "1",
        "--target-dir",
        fs.path(),
        "--save",
        "st",
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let log = trial_log(&env, "st", 0, 1);
    assert!(log.contains("with 2 reader(s) and 2 writer(s) in the background, which moved"), "{log}");
    assert!(env.result("st")["results"][0]["entries"][0]["value"].as_f64().unwrap() > 0.0);
}

/// The processes whose parent is `pid` (from /proc).
fn children_of(pid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| s.rsplit(')').next()?.split_whitespace().nth(1)?.parse::<i32>().ok())
                == Some(pid)
        })
        .collect()
}

/// Whether process `pid` still runs (a zombie does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| !r.trim_start().starts_with('Z')))
}

/// io's jobs, when there are several, are processes of their own sessions
/// (as fio's): Ctrl-C stops them with the run, and kill -9 of engine takes
/// them with it.
#[test]
fn several_io_jobs_are_processes_that_stop_with_engine() {
    let env = Env::new();
    io_profile(&env, "jobs3", "rw: randread, bs: 4k, size: 1m, runtime: 60s, numjobs: '3', ioengine: psync");
    for signal in [libc::SIGINT, libc::SIGKILL] {
        let mut engine = env
            .cmd(&["benchmark", "-y", "jobs3", "--runs", "1", "--target-dir", env.target.path().to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = engine.id() as i32;
        let t = std::time::Instant::now();
        // Engine's children that lead a session of their own: the jobs
        // (anything else engine starts stays in its session).
        let jobs = loop {
            // SAFETY: getsid reads another process's session id.
            let c: Vec<i32> = children_of(pid).into_iter().filter(|c| unsafe { libc::getsid(*c) } == *c).collect();
            if c.len() == 3 {
                break c;
            }
            assert!(t.elapsed() < std::time::Duration::from_secs(30), "three job processes, each a session: {c:?}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, signal) };
        let status = engine.wait().unwrap();
        if signal == libc::SIGINT {
            assert_eq!(status.code(), Some(130), "Ctrl-C: {status:?}");
        }
        let t = std::time::Instant::now();
        while jobs.iter().any(|j| running(*j)) {
            assert!(t.elapsed() < std::time::Duration::from_secs(5), "a job outlived signal {signal}: {jobs:?}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
