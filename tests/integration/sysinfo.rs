//! `engine system-info` and the system data stored per identifier: the
//! device under test with its scheduler and mount options (not the disk
//! engine is installed on), and a target on tmpfs named as such.

use crate::common::*;
use crate::loopdev::{LoopFs, Unmount};
use serde_json::Value;
use std::process::Command;

#[test]
fn system_info_prints_a_block_and_json() {
    let env = Env::new();
    let r = env.run(&["system-info", "--target-dir", env.target.path().to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    for want in [
        "Hardware:",
        "Processor",
        "Memory",
        "Software:",
        "Kernel",
        "File-System",
        "Notes:",
        "Disk Notes: ",
        "Processor Notes: ",
    ] {
        assert!(r.stdout.contains(want), "missing {want}: {r:?}");
    }
    let r = env.run(&["system-info", "--target-dir", env.target.path().to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["processor"]["threads"].as_u64().unwrap() >= 1);
    assert!(v["memory"]["total_bytes"].as_u64().unwrap() > 1 << 20);
    assert_eq!(v["arch"], std::env::consts::ARCH);
    assert!(v["target"]["resolution"]["mount"]["fstype"].is_string(), "{v}");
}

#[test]
#[ignore = "needs root"]
fn a_loop_device_under_kyber_is_labelled_kyber_with_its_mount_options() {
    let fs = LoopFs::new(64, "noatime");
    // Kyber, not the loop device's default, and in every kernel that has
    // multi-queue schedulers (BFQ is not built into this machine's).
    fs.set_scheduler("kyber");
    let env = Env::new();
    let r = env.run(&["system-info", "--target-dir", fs.path(), "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &v["target"]["resolution"];
    assert_eq!(res["mount"]["fstype"], "ext4");
    assert!(res["mount"]["options"].as_array().unwrap().contains(&Value::from("noatime")), "{res}");
    assert_eq!(res["disks"][0]["name"], fs.name());
    assert_eq!(res["disks"][0]["kind"], "loop");
    assert_eq!(res["disks"][0]["queue"]["scheduler"], "kyber");
    assert!(res["backing"]["disks"][0]["name"].is_string(), "the backing file's disk is resolved too: {res}");

    let r = env.run(&["system-info", "--target-dir", fs.path()]);
    let notes = r.stdout.lines().find(|l| l.trim_start().starts_with("Disk Notes: ")).unwrap().trim().to_string();
    assert!(notes.starts_with("Disk Notes: KYBER / noatime,"), "{notes}");
    assert!(notes.contains(&format!("ext4 on {} (loop, ", fs.name())), "{notes}");

    // Results record the state that was in force for each identifier.
    env.profile("echo", &echo_profile("echo", &["1"]));
    let bench = |id: &str| {
        let r = env.run(&[
            "benchmark",
            "-y",
            "echo",
            "--runs",
            "1",
            "--save",
            "sched",
            "--identifier",
            id,
            "--target-dir",
            fs.path(),
        ]);
        assert_eq!(r.code, 0, "{r:?}");
    };
    bench(&format!("{}: KYBER", fs.name()));
    fs.set_scheduler("mq-deadline");
    bench(&format!("{}: MQ-DEADLINE", fs.name()));
    let f = env.result("sched");
    let notes: Vec<&str> =
        f["systems"].as_array().unwrap().iter().map(|s| s["notes"]["Disk Notes"].as_str().unwrap()).collect();
    assert!(notes[0].starts_with("KYBER / noatime,"), "{notes:?}");
    assert!(notes[1].starts_with("MQ-DEADLINE / noatime,"), "{notes:?}");
    assert_eq!(f["systems"][1]["details"]["target"]["resolution"]["disks"][0]["queue"]["scheduler"], "mq-deadline");
    let show = env.run(&["result", "show", "sched"]);
    assert!(
        show.stdout.contains(&format!("{}: MQ-DEADLINE: Changed Disk Notes to MQ-DEADLINE / noatime,", fs.name())),
        "{}",
        show.stdout
    );
}

/// A target on tmpfs is named as such, warned about, and never "unknown".
#[test]
#[ignore = "needs root"]
fn a_target_on_tmpfs_is_named_and_warned_about() {
    require_root();
    let env = Env::new();
    let mnt = tempfile::tempdir().unwrap();
    let m = mnt.path().to_str().unwrap();
    assert!(Command::new("mount").args(["-t", "tmpfs", "-o", "size=16m", "tmpfs", m]).status().unwrap().success());
    let _u = Unmount(m);
    env.profile("echo", &echo_profile("echo", &["1"]));
    let r = env.run(&["benchmark", "-y", "echo", "--runs", "1", "--target-dir", m, "--save", "t"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("warning: the target directory") && r.stderr.contains("is on tmpfs (memory, not a disk)"),
        "{r:?}"
    );
    let s = &env.result("t")["systems"][0];
    assert_eq!(s["software"]["File-System"], "tmpfs (memory, not a disk)");
    assert!(s["hardware"]["Disk"].as_str().unwrap().ends_with("(tests ran on tmpfs: memory, not a disk)"), "{s}");
    let notes = s["notes"]["Disk Notes"].as_str().unwrap();
    assert!(notes.starts_with("tmpfs (memory, not a disk) / "), "{notes}");
    assert!(!serde_json::to_string(s).unwrap().contains("\"unknown\""), "{s}");
}
