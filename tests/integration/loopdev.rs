//! A real loop device with a real file system, created and destroyed by the
//! test (root only), and a guard that unmounts what a test mounted itself.

use crate::common::require_root;
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

impl LoopFs {
    /// `size_mb` of ext4, mounted with `mount_opts`.
    pub fn new(size_mb: u64, mount_opts: &str) -> LoopFs {
        LoopFs::create(size_mb, &[], &[], Some(mount_opts))
    }

    /// As [`LoopFs::new`], the loop device reading and writing its backing
    /// file with direct I/O (as engine's own `loop:SIZE` devices do), so its
    /// I/O reaches the disk under it instead of that disk's page cache.
    pub fn direct(size_mb: u64, mount_opts: &str) -> LoopFs {
        LoopFs::create(size_mb, &["--direct-io=on"], &[], Some(mount_opts))
    }

    /// As [`LoopFs::direct`], with the inode tables and journal written by
    /// mkfs instead of a kernel thread after mount: nothing but the test's
    /// own I/O reaches the device.
    pub fn direct_quiet(size_mb: u64, mount_opts: &str) -> LoopFs {
        LoopFs::create(
            size_mb,
            &["--direct-io=on"],
            &["-E", "lazy_itable_init=0,lazy_journal_init=0"],
            Some(mount_opts),
        )
    }

    /// As [`LoopFs::direct`], its backing file in memory (`/dev/shm`): a
    /// device as fast as the CPU that copies for it.
    pub fn in_memory(size_mb: u64) -> LoopFs {
        LoopFs::create_in(Path::new("/dev/shm"), size_mb, &["--direct-io=on"], &[], None)
    }

    /// A small ext4 with no blocks reserved for root (root would otherwise
    /// write on into the reserve), mounted with the defaults.
    pub fn without_reserve(size_mb: u64) -> LoopFs {
        LoopFs::create(size_mb, &[], &["-m", "0"], None)
    }

    /// ext4 on a loop device whose logical block size is `sector` bytes.
    pub fn with_sector_size(size_mb: u64, sector: u32) -> LoopFs {
        LoopFs::create(size_mb, &["--sector-size", &sector.to_string()], &[], None)
    }

    fn create(size_mb: u64, losetup: &[&str], mkfs: &[&str], mount_opts: Option<&str>) -> LoopFs {
        LoopFs::create_in(&std::env::temp_dir(), size_mb, losetup, mkfs, mount_opts)
    }

    fn create_in(parent: &Path, size_mb: u64, losetup: &[&str], mkfs: &[&str], mount_opts: Option<&str>) -> LoopFs {
        require_root();
        let img_dir = tempfile::tempdir_in(parent).unwrap();
        let img = img_dir.path().join("disk.img");
        std::fs::File::create(&img).unwrap().set_len(size_mb << 20).unwrap();
        let mut args = vec!["--find", "--show"];
        args.extend_from_slice(losetup);
        args.push(img.to_str().unwrap());
        let dev = sh("losetup", &args);
        let mnt = tempfile::tempdir().unwrap();
        let fs = LoopFs { dev, mnt, _img_dir: img_dir };
        let mut args = vec!["-q", "-F"];
        args.extend_from_slice(mkfs);
        args.push(&fs.dev);
        sh("mkfs.ext4", &args);
        let mut args = Vec::new();
        if let Some(o) = mount_opts {
            args.extend(["-o", o]);
        }
        args.extend([fs.dev.as_str(), fs.mnt.path().to_str().unwrap()]);
        sh("mount", &args);
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

/// Unmounts the path a test mounted (a tmpfs, a ramfs) when dropped.
pub struct Unmount<'a>(pub &'a str);

impl Drop for Unmount<'_> {
    fn drop(&mut self) {
        unmount(self.0);
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        unmount(self.mnt.path().to_str().unwrap());
        let _ = Command::new("losetup").args(["-d", &self.dev]).output();
    }
}
