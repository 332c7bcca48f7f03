//! What reached the device: per trial, the block-layer counters of the
//! device under the target directory (and of the one a loop device's
//! backing file lives on) and the CPU time, stored in the result file; a
//! disk number the device never saw is flagged as served from memory.

use crate::common::*;
use crate::loopdev::LoopFs;
use serde_json::Value;

/// A profile reading a 64 MiB file made by `pre_test`, with `dd` flags
/// `flags`, reporting MB/s (10⁶ bytes per second) from its own clock.
fn reader(id: &str, flags: &str, warm: bool) -> String {
    let warm = if warm { "; cat {{test_dir}}/f > /dev/null" } else { "" };
    format!(
        r#"id: {id}
version: 1.0.0
title: Read {id}
test_type: disk
scratch: per_test
executor:
  external:
    program: sh
    args: ["-c", "s=$(date +%s.%N); dd if={{{{test_dir}}}}/f of=/dev/null bs=1M {flags} 2>/dev/null; e=$(date +%s.%N); awk \"BEGIN {{ print \\\"rate: \\\" 67.108864 / ($e - $s) }}\""]
    pre_test: [{{shell: "dd if=/dev/urandom of={{{{test_dir}}}}/f bs=1M count=64 2>/dev/null; sync{warm}"}}]
results: [{{id: rate, unit: MB/s, proportion: HIB}}]
parsers: [{{result: rate, regex: 'rate: (?P<value>[0-9.]+)'}}]
"#
    )
}

fn devices(trial: &Value) -> Vec<(String, u64)> {
    trial["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["device"].as_str().unwrap().to_string(), d["read_bytes"].as_u64().unwrap()))
        .collect()
}

#[test]
#[ignore = "needs root"]
fn a_direct_read_reaches_the_loop_device_and_a_cached_one_is_flagged() {
    // A loop device over a cached file would be judged served from memory
    // at the disk under it, rightly: this one reads its file directly.
    let fs = LoopFs::direct(200, "relatime");
    let env = Env::new();
    env.profile("direct", &reader("direct", "iflag=direct", false));
    env.profile("cached", &reader("cached", "", true));
    let run = |p: &str| {
        let r = env.run(&["benchmark", "-y", "--target-dir", fs.path(), p, "--runs", "3", "--save", p]);
        assert_eq!(r.code, 0, "{r:?}");
        r
    };
    run("direct");
    let e = &env.result("direct")["results"][0]["entries"][0];
    let io = e["trial_io"].as_array().unwrap();
    assert_eq!(io.len(), 3, "one per trial: {e}");
    for t in io {
        let d = devices(t);
        assert_eq!(d[0].0, fs.name(), "the file system's device first: {d:?}");
        assert!(d[0].1 >= 64 << 20, "the whole file was read at the device: {d:?}");
        // The loop device's backing file lives on another device, counted too.
        assert_eq!(d.len(), 2, "{d:?}");
        assert_ne!(d[1].0, fs.name());
        assert!(t["user_seconds"].as_f64().unwrap() + t["system_seconds"].as_f64().unwrap() > 0.0, "{t}");
    }
    assert!(e.get("served_from_memory").is_none(), "{e}");

    let r = run("cached");
    let e = &env.result("cached")["results"][0]["entries"][0];
    for t in e["trial_io"].as_array().unwrap() {
        assert!(devices(t)[0].1 < 8 << 20, "the page cache served it: {t}");
    }
    let w = e["served_from_memory"].as_str().expect("flagged");
    // Judged at the disk under the loop device, and said so.
    assert!(w.starts_with("served from memory: the device (") && w.contains(&format!("under {})", fs.name())), "{w}");
    assert!(r.stdout.contains("! vm: served from memory") || r.stdout.contains(": served from memory"), "{}", r.stdout);
    // The HTML report shows it too.
    let html = env.run(&["result", "show", "cached", "--format", "html"]);
    assert!(html.stdout.contains("served from memory"), "the HTML report says it");
}

/// A target whose device cannot be counted (a tmpfs): the trial runs and
/// the result says why there are no counters.
#[test]
fn a_target_without_a_block_device_runs_and_says_why() {
    let env = Env::new();
    env.profile("one", &counter_profile("one", "echo value: 1", ""));
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let r = env.run(&["benchmark", "-y", "--target-dir", shm.path().to_str().unwrap(), "one", "--save", "t"]);
    assert_eq!(r.code, 0, "{r:?}");
    let e = &env.result("t")["results"][0]["entries"][0];
    let why = e["no_counters"].as_str().unwrap();
    assert!(why.contains("tmpfs") && why.contains("no block device"), "{why}");
    // CPU time is there all the same.
    assert!(e["trial_io"][0]["user_seconds"].is_number(), "{e}");
}
