//! The Debian package (scripts/package-deb.sh, cargo-deb): built from the
//! binary under test, installed on this machine with dpkg, run — `--version`,
//! `list profiles`, its man page and completions, and the quick suite — then
//! removed.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// Removes the package when the test ends, however it ends.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["-r", "engine"]).output();
    }
}

fn sh(cmd: &mut Command) -> String {
    String::from_utf8_lossy(&succeed(cmd).stdout).into_owned()
}

#[test]
#[ignore = "needs root: installs the package on this machine (and removes it)"]
fn the_debian_package_installs_runs_the_quick_suite_and_removes() {
    require_root();
    assert!(!Path::new("/usr/bin/engine").exists(), "/usr/bin/engine exists already: not installing over it");
    let out = tempfile::tempdir().unwrap();
    let script = repo().join("scripts/package-deb.sh");
    sh(Command::new(&script).args(["--debug", "--no-build", "--out", out.path().to_str().unwrap()]));
    let deb = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .expect("a .deb");
    let info = sh(Command::new("dpkg-deb").args(["--info", deb.to_str().unwrap()]));
    assert!(info.contains("Package: engine") && info.contains("Depends:"), "{info}");
    let _installed = Installed;
    sh(Command::new("dpkg").args(["-i", deb.to_str().unwrap()]));
    let engine = Path::new("/usr/bin/engine");
    let version = sh(Command::new(engine).arg("--version"));
    assert!(version.starts_with("engine "), "{version}");
    for f in [
        "/usr/share/man/man1/engine.1.gz",
        "/usr/share/man/man1/engine-benchmark.1.gz",
        "/usr/share/bash-completion/completions/engine",
        "/usr/share/zsh/vendor-completions/_engine",
        "/usr/share/fish/vendor_completions.d/engine.fish",
        "/usr/share/man/man1/engine-serve.1.gz",
        "/lib/systemd/system/engine-serve.service",
    ] {
        assert!(Path::new(f).is_file(), "{f} is not installed");
    }
    // The service is installed, not enabled (no link in any .wants folder).
    let wants = sh(Command::new("sh").args(["-c", "ls /etc/systemd/system/*.wants 2>/dev/null || true"]));
    assert!(!wants.contains("engine-serve"), "{wants}");
    if which::which("systemd-analyze").is_ok() {
        sh(Command::new("systemd-analyze").args(["verify", "--man=no", "/lib/systemd/system/engine-serve.service"]));
    }
    let home = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| -> Run {
        Command::new(engine)
            .args(args)
            .env("ENGINE_HOME", home.path())
            .env("ENGINE_MACHINE_LOCK", home.path().join("machine.lock"))
            .env_remove("ENGINE_PROFILE_PATH")
            .output()
            .unwrap()
            .into()
    };
    let r = run(&["list", "profiles"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.lines().any(|l| l.starts_with("fio")), "{r:?}");
    let r = run(&[
        "benchmark",
        "suite/disk-quick",
        "-y",
        "--runs",
        "1",
        "--save",
        "q",
        "--target-dir",
        target.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(home.path().join("results/q/result.json").is_file());
    sh(Command::new("dpkg").args(["-r", "engine"]));
    assert!(!engine.exists(), "dpkg -r left /usr/bin/engine");
}
