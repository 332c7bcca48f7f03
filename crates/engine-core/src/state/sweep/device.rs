//! Is a device safe to make file systems on? Refuses what holds the root file
//! system, a partition of the root disk, anything mounted or in use (directly
//! or under device-mapper/md), and — unless `--force-destroy-data` — a device
//! with a partition table or a file-system signature. Reads only.

use crate::sysinfo::device::{self, Kind};
use crate::sysinfo::mounts;
use crate::sysinfo::source::{self, Source};
use std::path::Path;

/// A device that passed the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scratch {
    /// `/dev/sdb`.
    pub path: String,
    /// `sdb`.
    pub name: String,
    /// The disk whose queue (scheduler) applies: `sdb` for `sdb1`.
    pub queue_disk: String,
}

/// Why a device given with `--device` is not used.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("`{0}` does not exist")]
    Missing(String),
    #[error("`{0}` is not a block device")]
    NotBlock(String),
    #[error(transparent)]
    Unreadable(#[from] device::DeviceError),
    #[error("`{dev}` holds the root file system (/ is {chain})")]
    Root { dev: String, chain: String },
    #[error("`{dev}` is a partition of the root disk `{disk}` (/ is {chain})")]
    RootDisk { dev: String, disk: String, chain: String },
    #[error("`{dev}` holds a mounted file system: {what} on {mount_point} ({fstype})")]
    Mounted { dev: String, what: String, mount_point: String, fstype: String },
    #[error("`{dev}` is in use by {}", holders.join(", "))]
    InUse { dev: String, holders: Vec<String> },
    #[error("`{dev}` has a partition table ({}); pass --force-destroy-data to erase it", parts.join(", "))]
    Partitioned { dev: String, parts: Vec<String> },
    #[error("`{dev}` has {signature}; pass --force-destroy-data to erase it")]
    Signature { dev: String, signature: String },
}

/// Checks `dev` (`/dev/sdb`, a `/dev/disk/by-id/…` link) in `src`.
/// `signature` probes the device for an existing partition table or file
/// system (blkid on the live system).
pub(crate) fn check(
    src: &dyn Source,
    dev: &str,
    force: bool,
    signature: &dyn Fn(&str) -> Option<String>,
) -> Result<Scratch, Refusal> {
    let canon = src.canonical(dev).map_err(|_| Refusal::Missing(dev.to_string()))?;
    let name = source::base(&canon).to_string();
    if !canon.starts_with("/dev/") || !src.exists(&format!("/sys/class/block/{name}")) {
        return Err(Refusal::NotBlock(dev.to_string()));
    }
    let (d, dir) = device::describe(src, &name)?;
    let queue_disk = match &d.kind {
        Kind::Partition { disk } => disk.clone(),
        _ => name.clone(),
    };
    // What the root file system sits on.
    if let Ok(root) = device::resolve(src, Path::new("/")) {
        let under_root: Vec<&str> = root.layers.iter().map(|l| l.name.as_str()).collect();
        if under_root.contains(&name.as_str()) {
            return Err(Refusal::Root { dev: dev.to_string(), chain: root.chain() });
        }
        if let Kind::Partition { disk } = &d.kind
            && root.disks.iter().any(|r| &r.name == disk)
        {
            return Err(Refusal::RootDisk { dev: dev.to_string(), disk: disk.clone(), chain: root.chain() });
        }
    }
    // Anything mounted on it, on one of its partitions, or on a stack above it.
    for m in mounts::mounts(src) {
        let Ok(r) = device::resolve(src, Path::new(&m.mount_point)) else { continue };
        if r.mount.mount_point != m.mount_point {
            continue;
        }
        if r.layers.iter().any(|l| l.name == name || matches!(&l.kind, Kind::Partition { disk } if *disk == name)) {
            return Err(Refusal::Mounted {
                dev: dev.to_string(),
                what: m.source.clone(),
                mount_point: m.mount_point.clone(),
                fstype: m.fstype.clone(),
            });
        }
    }
    if let Ok(holders) = src.list(&format!("{dir}/holders"))
        && !holders.is_empty()
    {
        return Err(Refusal::InUse { dev: dev.to_string(), holders });
    }
    if !force {
        let parts: Vec<String> = src
            .list(&dir)
            .unwrap_or_default()
            .into_iter()
            .filter(|c| src.exists(&format!("{dir}/{c}/partition")))
            .collect();
        if !parts.is_empty() {
            return Err(Refusal::Partitioned { dev: dev.to_string(), parts });
        }
        if let Some(sig) = signature(&canon) {
            return Err(Refusal::Signature { dev: dev.to_string(), signature: sig });
        }
    }
    Ok(Scratch { path: canon, name, queue_disk })
}

/// What blkid finds on `dev`: `an ext4 file system`, `a gpt partition table`.
pub(crate) fn blkid_signature(dev: &str) -> Option<String> {
    let o = std::process::Command::new("blkid").args(["-p", "-o", "export", dev]).output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let get = |k: &str| text.lines().find_map(|l| l.strip_prefix(k)).map(str::to_string);
    if let Some(pt) = get("PTTYPE=") {
        return Some(format!("a {pt} partition table"));
    }
    get("TYPE=").map(|t| format!("a file system ({t})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::source::Fs;

    struct WithDev<'a>(Fs, &'a [&'a str]);
    impl Source for WithDev<'_> {
        fn read(&self, p: &str) -> std::io::Result<String> {
            self.0.read(p)
        }
        fn list(&self, p: &str) -> std::io::Result<Vec<String>> {
            self.0.list(p)
        }
        fn canonical(&self, p: &str) -> std::io::Result<String> {
            // The fixtures have no /dev: device nodes are taken as given.
            if let Some(n) = p.strip_prefix("/dev/") {
                return if self.1.contains(&n) { Ok(p.to_string()) } else { Err(std::io::ErrorKind::NotFound.into()) };
            }
            self.0.canonical(p)
        }
    }

    fn fixture(name: &str, devs: &'static [&'static str]) -> WithDev<'static> {
        WithDev(Fs::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sysfs").join(name)), devs)
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_root_disk_and_its_partitions_are_refused() {
        let src = fixture("sata-partition", &["sda", "sda1", "sda2"]);
        let e = check(&src, "/dev/sda", true, &none).unwrap_err().to_string();
        assert!(e.starts_with("`/dev/sda` holds the root file system"), "{e}");
        let e = check(&src, "/dev/sda1", true, &none).unwrap_err().to_string();
        assert_eq!(e, "`/dev/sda1` is a partition of the root disk `sda` (/ is ext4 on sda2 (partition of sda))");
        assert_eq!(check(&src, "/dev/sdz", true, &none).unwrap_err().to_string(), "`/dev/sdz` does not exist");
    }

    #[test]
    fn devices_under_a_mounted_stack_are_refused_even_with_force() {
        let src = fixture("lvm-on-md-raid1", &["sda", "sda1", "sdb", "md0", "dm-0"]);
        for dev in ["/dev/sda1", "/dev/sdb", "/dev/md0", "/dev/dm-0"] {
            let e = check(&src, dev, true, &none).unwrap_err().to_string();
            assert!(e.contains("holds a mounted file system: /dev/mapper/vg0-srv on /srv (ext4)"), "{dev}: {e}");
        }
    }

    #[test]
    fn a_mounted_loop_device_is_refused_and_a_free_disk_needs_force_if_it_has_data() {
        let src = fixture("loop-file", &["loop0", "vda"]);
        let e = check(&src, "/dev/loop0", true, &none).unwrap_err().to_string();
        assert!(e.contains("holds a mounted file system: /dev/loop0 on /mnt/scratch"), "{e}");
        let src = fixture("nvme-partition", &["nvme0n1", "nvme0n1p2"]);
        // nvme0n1 has partitions (one of them mounted): refused either way.
        assert!(check(&src, "/dev/nvme0n1", true, &none).is_err());
        // nvme1n1 is free: fine when blank, refused when it holds data unless forced.
        let src = fixture("nvme-partition", &["nvme1n1"]);
        let ok = check(&src, "/dev/nvme1n1", false, &none).unwrap();
        assert_eq!((ok.name.as_str(), ok.queue_disk.as_str()), ("nvme1n1", "nvme1n1"));
        let sig = |_: &str| Some("an ext4 file system".to_string());
        assert_eq!(
            check(&src, "/dev/nvme1n1", false, &sig).unwrap_err().to_string(),
            "`/dev/nvme1n1` has an ext4 file system; pass --force-destroy-data to erase it"
        );
        assert!(check(&src, "/dev/nvme1n1", true, &sig).is_ok());
    }
}
