//! From a directory to the block devices under it: its mount, file system and
//! source device, down through partitions, device-mapper/LVM, md RAID and loop
//! devices to the disks whose queue settings (scheduler, read-ahead …) apply.
//! The I/O-scheduler sweep uses this to know which devices to set.

use super::mounts;
use super::source::{self, Source};
pub use crate::model::system::{BlockDevice, Kind, Mount, Queue, Resolution};
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DeviceError {
    #[error("no mount holds {0}")]
    NoMount(String),
    #[error("{path} is on {fstype} ({what}), which has no block device")]
    NoBlockDevice { path: String, fstype: String, what: String },
    #[error("block device {0} is not in sysfs")]
    Missing(String),
}

/// Parses `none [mq-deadline] kyber bfq`.
pub(crate) fn parse_scheduler(text: &str) -> (Option<String>, Vec<String>) {
    let mut active = None;
    let mut all = Vec::new();
    for w in text.split_whitespace() {
        match w.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            Some(a) => {
                active = Some(a.to_string());
                all.push(a.to_string());
            }
            None => all.push(w.to_string()),
        }
    }
    (active, all)
}

fn queue(src: &dyn Source, dir: &str) -> Option<Queue> {
    let q = format!("{dir}/queue");
    if !src.exists(&q) {
        return None;
    }
    let (scheduler, schedulers) =
        source::text(src, &format!("{q}/scheduler")).map(|t| parse_scheduler(&t)).unwrap_or_default();
    Some(Queue {
        scheduler,
        schedulers,
        read_ahead_kb: source::number(src, &format!("{q}/read_ahead_kb")),
        nr_requests: source::number(src, &format!("{q}/nr_requests")),
        rotational: source::number::<u8>(src, &format!("{q}/rotational")).map(|r| r == 1),
        write_cache: source::text(src, &format!("{q}/write_cache")),
        iosched: src
            .list(&format!("{q}/iosched"))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|n| source::text(src, &format!("{q}/iosched/{n}")).map(|v| (n, v)))
            .collect(),
    })
}

fn transport(canonical: &str) -> Option<String> {
    let t = if canonical.contains("/virtual/") {
        "virtual"
    } else if canonical.contains("/nvme") {
        "NVMe"
    } else if canonical.contains("/usb") {
        "USB"
    } else if canonical.contains("/ata") {
        "SATA"
    } else if canonical.contains("/virtio") {
        "virtio"
    } else if canonical.contains("/mmc") {
        "MMC"
    } else if canonical.contains("/host") && canonical.contains("/target") {
        "SCSI"
    } else {
        return None;
    };
    Some(t.to_string())
}

fn model(src: &dyn Source, dir: &str) -> Option<String> {
    // NVMe namespaces keep the model on the controller (`device/model`), as do
    // SCSI/SATA disks; virtio has none.
    let m = source::text(src, &format!("{dir}/device/model"))
        .or_else(|| source::text(src, &format!("{dir}/device/device/model")))?;
    Some(m.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Describes block device `name` (its sysfs directory must exist).
pub fn describe(src: &dyn Source, name: &str) -> Result<(BlockDevice, String), DeviceError> {
    let dir = src.canonical(&format!("/sys/class/block/{name}")).map_err(|_| DeviceError::Missing(name.to_string()))?;
    let kind = if src.exists(&format!("{dir}/partition")) {
        let parent = dir.rsplit_once('/').map(|(p, _)| source::base(p).to_string()).unwrap_or_default();
        Kind::Partition { disk: parent }
    } else if src.exists(&format!("{dir}/dm")) {
        Kind::DeviceMapper { name: source::text(src, &format!("{dir}/dm/name")) }
    } else if src.exists(&format!("{dir}/md")) {
        Kind::Md { level: source::text(src, &format!("{dir}/md/level")) }
    } else if name.starts_with("loop") {
        Kind::Loop { backing_file: source::text(src, &format!("{dir}/loop/backing_file")) }
    } else {
        Kind::Disk
    };
    let size_bytes = source::number::<u64>(src, &format!("{dir}/size")).map(|s| s * 512);
    let dev = BlockDevice {
        name: name.to_string(),
        model: if matches!(kind, Kind::Disk) { model(src, &dir) } else { None },
        transport: transport(&dir),
        queue: if matches!(kind, Kind::Partition { .. }) { None } else { queue(src, &dir) },
        size_bytes,
        kind,
    };
    Ok((dev, dir))
}

/// Name of the block device `major:minor`.
pub(crate) fn name_of_dev(src: &dyn Source, majmin: &str) -> Option<String> {
    let c = src.canonical(&format!("/sys/dev/block/{majmin}")).ok()?;
    Some(source::base(&c).to_string())
}

/// Walks down from `name`, filling `layers` and `disks`; `depth` guards loops.
fn walk(
    src: &dyn Source,
    name: &str,
    layers: &mut Vec<BlockDevice>,
    disks: &mut Vec<BlockDevice>,
    depth: usize,
) -> Result<(), DeviceError> {
    if depth > 16 {
        return Ok(());
    }
    let (dev, dir) = describe(src, name)?;
    layers.push(dev.clone());
    match &dev.kind {
        Kind::Partition { disk } => {
            let disk = disk.clone();
            walk(src, &disk, layers, disks, depth + 1)
        }
        Kind::DeviceMapper { .. } | Kind::Md { .. } => {
            let slaves = src.list(&format!("{dir}/slaves")).unwrap_or_default();
            if slaves.is_empty() {
                disks.push(dev);
            }
            for s in slaves {
                // A member that vanished while we looked is skipped, not fatal.
                let _ = walk(src, &s, layers, disks, depth + 1);
            }
            Ok(())
        }
        Kind::Disk | Kind::Loop { .. } => {
            if !disks.iter().any(|d| d.name == dev.name) {
                disks.push(dev);
            }
            Ok(())
        }
    }
}

/// Resolves `path` (taken as canonical) to its mount and devices.
pub(crate) fn resolve(src: &dyn Source, path: &Path) -> Result<Resolution, DeviceError> {
    resolve_depth(src, path, 0)
}

fn resolve_depth(src: &dyn Source, path: &Path, depth: usize) -> Result<Resolution, DeviceError> {
    let shown = path.display().to_string();
    let mount = mounts::mount_of(src, path).ok_or_else(|| DeviceError::NoMount(shown.clone()))?;
    let name = name_of_dev(src, &mount.dev)
        .or_else(|| {
            // btrfs and some others report an anonymous 0:N; use the source path.
            let b = source::base(&mount.source).to_string();
            src.exists(&format!("/sys/class/block/{b}")).then_some(b)
        })
        .ok_or_else(|| DeviceError::NoBlockDevice {
            path: shown.clone(),
            fstype: mount.fstype.clone(),
            what: mount.source.clone(),
        })?;
    let mut layers = Vec::new();
    let mut disks = Vec::new();
    walk(src, &name, &mut layers, &mut disks, 0)?;
    let backing = match layers.first().map(|d| &d.kind) {
        Some(Kind::Loop { backing_file: Some(f) }) if depth < 4 => {
            let f = f.trim_end_matches(" (deleted)");
            resolve_depth(src, Path::new(f), depth + 1).ok().map(Box::new)
        }
        _ => None,
    };
    Ok(Resolution { path: shown, mount, layers, disks, backing })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::source::Fs;

    fn fixture(name: &str) -> Fs {
        Fs::at(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sysfs").join(name))
    }

    fn names(v: &[BlockDevice]) -> Vec<&str> {
        v.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn partition_on_a_sata_disk() {
        let r = resolve(&fixture("sata-partition"), Path::new("/home/user/bench")).unwrap();
        assert_eq!((r.mount.mount_point.as_str(), r.mount.fstype.as_str()), ("/", "ext4"));
        assert_eq!(r.mount.sorted_options(), "errors=remount-ro,relatime,rw");
        assert_eq!(names(&r.layers), ["sda2", "sda"]);
        assert_eq!(r.layers[0].kind, Kind::Partition { disk: "sda".into() });
        let sda = &r.disks[0];
        assert_eq!(names(&r.disks), ["sda"]);
        assert_eq!(sda.model.as_deref(), Some("Samsung SSD 860 EVO 500GB"));
        assert_eq!(sda.transport.as_deref(), Some("SATA"));
        assert_eq!(sda.size_bytes, Some(976773168 * 512));
        let q = sda.queue.as_ref().unwrap();
        assert_eq!(q.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(q.schedulers, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!((q.read_ahead_kb, q.nr_requests, q.rotational), (Some(128), Some(64), Some(false)));
        assert_eq!(q.write_cache.as_deref(), Some("write back"));
        assert_eq!(r.chain(), "ext4 on sda2 (partition of sda)");
        // tmpfs has no block device: a clear error, not a wrong device.
        let e = resolve(&fixture("sata-partition"), Path::new("/tmp/x")).unwrap_err();
        assert_eq!(e.to_string(), "/tmp/x is on tmpfs (tmpfs), which has no block device");
    }

    #[test]
    fn nvme_namespace_partition() {
        let r = resolve(&fixture("nvme-partition"), Path::new("/data/fio")).unwrap();
        assert_eq!(r.mount.fstype, "xfs");
        assert_eq!(names(&r.layers), ["nvme0n1p2", "nvme0n1"]);
        let d = &r.disks[0];
        assert_eq!(d.name, "nvme0n1");
        assert_eq!(d.model.as_deref(), Some("Samsung SSD 980 PRO 1TB"));
        assert_eq!(d.transport.as_deref(), Some("NVMe"));
        let q = d.queue.as_ref().unwrap();
        assert_eq!((q.scheduler.as_deref(), q.nr_requests), (Some("none"), Some(1023)));
        assert_eq!(q.write_cache.as_deref(), Some("write through"));
    }

    #[test]
    fn lvm_on_md_raid1_reaches_both_disks() {
        let r = resolve(&fixture("lvm-on-md-raid1"), Path::new("/srv/bench")).unwrap();
        assert_eq!(names(&r.layers), ["dm-0", "md0", "sda1", "sda", "sdb1", "sdb"]);
        assert_eq!(r.layers[0].kind, Kind::DeviceMapper { name: Some("vg0-srv".into()) });
        assert_eq!(r.layers[1].kind, Kind::Md { level: Some("raid1".into()) });
        assert_eq!(names(&r.disks), ["sda", "sdb"]);
        for d in &r.disks {
            assert_eq!(d.queue.as_ref().unwrap().scheduler.as_deref(), Some("bfq"));
            assert_eq!(d.queue.as_ref().unwrap().rotational, Some(true));
            assert_eq!(d.model.as_deref(), Some("WDC WD5000AZRX-00A8LB0"));
        }
        assert_eq!(
            r.chain(),
            "ext4 on dm-0 (vg0-srv) > md0 (raid1) > sda1 (partition of sda) > sdb1 (partition of sdb)"
        );
    }

    #[test]
    fn loop_device_backed_by_a_file() {
        let r = resolve(&fixture("loop-file"), Path::new("/mnt/scratch/t")).unwrap();
        assert_eq!(names(&r.disks), ["loop0"]);
        let l = &r.disks[0];
        assert_eq!(l.kind, Kind::Loop { backing_file: Some("/var/tmp/engine disk.img".into()) });
        assert_eq!(l.queue.as_ref().unwrap().scheduler.as_deref(), Some("bfq"));
        let b = r.backing.as_ref().unwrap();
        assert_eq!(names(&b.disks), ["vda"]);
        assert_eq!(b.disks[0].transport.as_deref(), Some("virtio"));
        assert_eq!(b.disks[0].queue.as_ref().unwrap().scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(r.chain(), "ext4 on loop0 (loop, /var/tmp/engine disk.img), backing file on ext4 on vda");
    }

    #[test]
    fn odd_entries_read_as_unknown() {
        let r = resolve(&fixture("odd-entries"), Path::new("/srv")).unwrap();
        // sdb1 vanished: skipped; sda's odd files read as unknown.
        assert_eq!(names(&r.disks), ["sda"]);
        let sda = &r.disks[0];
        assert_eq!(sda.size_bytes, None);
        assert_eq!(sda.model, None);
        let q = sda.queue.as_ref().unwrap();
        assert_eq!((q.scheduler.as_deref(), q.schedulers.len()), (None, 0));
        assert_eq!((q.read_ahead_kb, q.nr_requests), (None, None));
        assert_eq!(r.layers[0].kind, Kind::Md { level: None });
        assert!(matches!(resolve(&fixture("odd-entries"), Path::new("/proc")), Err(DeviceError::NoBlockDevice { .. })));
    }
}
