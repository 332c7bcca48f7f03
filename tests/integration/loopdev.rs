//! A real loop device with a real file system, created and destroyed by the
//! test (root only). Engine must describe the device under test — its
//! scheduler and mount options — not the disk it is installed on.

use std::path::{Path, PathBuf};
use std::process::Command;

/// An ext4 file system on a loop device over a file; torn down on drop.
pub struct LoopFs {
    pub dev: String,
    pub mnt: tempfile::TempDir,
    _img_dir: tempfile::TempDir,
}

fn sh(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(o.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Root-only tests are `#[ignore = "needs root"]`: `cargo test` skips them
/// visibly, and CI (root) runs them with `--include-ignored`. Run without
/// root, they fail here instead of passing without checking anything.
pub fn require_root() {
    assert!(is_root(), "this test needs root: run it as root with `cargo test -- --include-ignored`");
}

impl LoopFs {
    pub fn new(size_mb: u64, mount_opts: &str) -> LoopFs {
        require_root();
        let img_dir = tempfile::tempdir().unwrap();
        let img = img_dir.path().join("disk.img");
        std::fs::File::create(&img).unwrap().set_len(size_mb << 20).unwrap();
        let dev = sh("losetup", &["--find", "--show", img.to_str().unwrap()]);
        let mnt = tempfile::tempdir().unwrap();
        let fs = LoopFs { dev, mnt, _img_dir: img_dir };
        sh("mkfs.ext4", &["-q", "-F", &fs.dev]);
        sh("mount", &["-o", mount_opts, &fs.dev, fs.mnt.path().to_str().unwrap()]);
        fs
    }

    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    pub fn scheduler_path(&self) -> PathBuf {
        Path::new("/sys/block").join(self.name()).join("queue/scheduler")
    }

    pub fn set_scheduler(&self, s: &str) {
        std::fs::write(self.scheduler_path(), s).unwrap();
        let now = std::fs::read_to_string(self.scheduler_path()).unwrap();
        assert!(now.contains(&format!("[{s}]")), "{now}");
    }

    /// The backing file.
    pub fn image(&self) -> PathBuf {
        self._img_dir.path().join("disk.img")
    }

    pub fn path(&self) -> &str {
        self.mnt.path().to_str().unwrap()
    }
}

/// Unmounts `path`; lazily when something still holds it, so no test leaves a mount behind.
pub fn unmount(path: &str) {
    if !Command::new("umount").arg(path).status().is_ok_and(|s| s.success()) {
        let _ = Command::new("umount").args(["-l", path]).status();
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        unmount(self.mnt.path().to_str().unwrap());
        let _ = Command::new("losetup").args(["-d", &self.dev]).output();
    }
}
