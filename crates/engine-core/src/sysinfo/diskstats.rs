//! What reached the device: the block layer's counters
//! (`/sys/class/block/NAME/stat`, the per-device line of /proc/diskstats)
//! of the devices under a directory, read before and after each trial.
//!
//! Counted are the device the file system is on (a partition, an LVM or md
//! volume, a loop device) and, for a loop device, the device its backing
//! file lives on too: a loop device over a cached file takes I/O that never
//! reaches a disk. The stat files stay open; a read from offset 0 makes
//! sysfs fill them afresh, so a snapshot costs one `pread` per device.

use super::device;
use super::source::Fs;
use crate::model::result::DeviceIo;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The block layer's sectors are 512 bytes whatever the device's own.
const SECTOR: u64 = 512;

/// One device's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
    /// Milliseconds the device had I/O in flight (`io_ticks`).
    pub busy_ms: u64,
}

/// The fields of a `stat` file (see the kernel's Documentation/block/stat.rst).
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let f: Vec<u64> = text.split_whitespace().map(|x| x.parse().ok()).collect::<Option<_>>()?;
    if f.len() < 11 {
        return None;
    }
    Some(Stat { reads: f[0], read_sectors: f[2], writes: f[4], write_sectors: f[6], busy_ms: f[9] })
}

/// What happened between two snapshots of device `name`.
pub(crate) fn delta(name: &str, before: Stat, after: Stat) -> DeviceIo {
    DeviceIo {
        device: name.to_string(),
        read_bytes: after.read_sectors.saturating_sub(before.read_sectors) * SECTOR,
        written_bytes: after.write_sectors.saturating_sub(before.write_sectors) * SECTOR,
        reads: after.reads.saturating_sub(before.reads),
        writes: after.writes.saturating_sub(before.writes),
        busy_ms: after.busy_ms.saturating_sub(before.busy_ms),
    }
}

/// The open counters of the devices under a directory.
pub(crate) struct Counters {
    devices: Vec<(String, File)>,
}

/// A snapshot of every counted device, in [`Counters::names`] order.
pub(crate) type Snapshot = Vec<Stat>;

/// Why a directory's device counters cannot be read (a tmpfs, an overlay,
/// /sys not mounted): said in the result instead of the counters.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CountersError {
    #[error("cannot resolve {}: {source}", dir.display())]
    Resolve { dir: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Device(#[from] device::DeviceError),
    #[error("cannot read {path}: {source}")]
    Open { path: String, source: std::io::Error },
    #[error("no block device under {}", dir.display())]
    NoDevice { dir: PathBuf },
    #[error("cannot read the counters of {name}: {source}")]
    Read { name: String, source: std::io::Error },
    #[error("the counters of {name} do not read as /sys/class/block/*/stat")]
    Parse { name: String },
}

impl Counters {
    /// The counters of the devices under `dir`, or why there are none.
    pub(crate) fn under(dir: &Path) -> Result<Counters, CountersError> {
        let src = Fs::live();
        let canon = dir.canonicalize().map_err(|source| CountersError::Resolve { dir: dir.to_path_buf(), source })?;
        let mut r = device::resolve(&src, &canon)?;
        let mut names = Vec::new();
        loop {
            if let Some(top) = r.layers.first()
                && !names.contains(&top.name)
            {
                names.push(top.name.clone());
            }
            match r.backing {
                Some(b) => r = *b,
                None => break,
            }
        }
        let mut devices = Vec::new();
        for n in names {
            let path = format!("/sys/class/block/{n}/stat");
            let f = File::open(&path).map_err(|source| CountersError::Open { path: path.clone(), source })?;
            devices.push((n, f));
        }
        if devices.is_empty() {
            return Err(CountersError::NoDevice { dir: dir.to_path_buf() });
        }
        let c = Counters { devices };
        c.snapshot()?;
        Ok(c)
    }

    /// Names of the counted devices: the file system's first, then where a
    /// loop device's backing file lives.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.devices.iter().map(|(n, _)| n.as_str())
    }

    /// Every device's counters now.
    pub(crate) fn snapshot(&self) -> Result<Snapshot, CountersError> {
        let mut buf = [0u8; 512];
        self.devices
            .iter()
            .map(|(name, f)| {
                let n = f.read_at(&mut buf, 0).map_err(|source| CountersError::Read { name: name.clone(), source })?;
                std::str::from_utf8(&buf[..n])
                    .ok()
                    .and_then(parse_stat)
                    .ok_or_else(|| CountersError::Parse { name: name.clone() })
            })
            .collect()
    }

    /// What reached each device between `before` and `after`.
    pub(crate) fn between(&self, before: &Snapshot, after: &Snapshot) -> Vec<DeviceIo> {
        self.names().zip(before.iter().zip(after)).map(|(n, (b, a))| delta(n, *b, *a)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stat_file_by_its_fields() {
        // A line of the kernel's format: 17 fields since 5.5.
        let s = parse_stat("    4211      35   310762    2032    11437    9130  1262450   20961        0   21964   25393        0        0        0        0     2013     2398\n").unwrap();
        assert_eq!(
            s,
            Stat { reads: 4211, read_sectors: 310762, writes: 11437, write_sectors: 1262450, busy_ms: 21964 }
        );
        // The 11-field format of old kernels.
        assert!(parse_stat("1 0 8 0 2 0 16 0 0 3 4").is_some());
        assert!(parse_stat("1 2 3").is_none());
        assert!(parse_stat("a b c d e f g h i j k").is_none());
    }

    #[test]
    fn deltas_are_in_bytes_and_never_negative() {
        let b = Stat { reads: 10, read_sectors: 100, writes: 5, write_sectors: 50, busy_ms: 7 };
        let a = Stat { reads: 12, read_sectors: 2148, writes: 5, write_sectors: 50, busy_ms: 9 };
        let d = delta("loop0", b, a);
        assert_eq!((d.read_bytes, d.reads, d.written_bytes, d.busy_ms), (2048 * 512, 2, 0, 2));
        // A counter reset (device re-attached) reads as zero, not a huge number.
        assert_eq!(delta("x", a, b).read_bytes, 0);
    }

    #[test]
    fn a_virtual_file_system_has_no_counters_and_says_why() {
        let d = tempfile::tempdir_in("/dev/shm").expect("/dev/shm is a tmpfs here");
        let e = Counters::under(d.path()).err().expect("tmpfs has no block device").to_string();
        assert!(e.contains("tmpfs") || e.contains("block device"), "{e}");
    }
}
