//! Did a disk number reach the disk? A result in bytes per second claims
//! about value × seconds bytes per trial; when the device under the target
//! moved far less than that, the number was made in the page cache.

use crate::model::result::TrialIo;

/// A claim this many times what the device moved is flagged.
const FACTOR: f64 = 10.0;
/// Claims below this are too small to judge (a few metadata blocks decide them).
const LEAST: f64 = 1_048_576.0;

/// Bytes per second of one unit of `unit` (`MB/s` → 10⁶), for byte rates only.
pub(crate) fn byte_rate(unit: &str) -> Option<f64> {
    // Byte units only (`K/s` may count thousands of anything).
    let prefix = unit.trim().strip_suffix("/s")?.trim();
    crate::units::byte_rate(&format!("{prefix}/s"))
}

/// `served from memory: …` when the trials of a disk test's result in
/// `unit` with `values` over `walls` seconds claim over ten times the bytes
/// the physical device at the bottom of the stack read and wrote in them —
/// under a loop device, the disk its backing file is on: a loop device over
/// a cached file is memory too. Other kinds of test (a hash in memory) make
/// no claim on a device.
pub(crate) fn served_from_memory(
    disk: bool,
    unit: &str,
    values: &[f64],
    walls: &[f64],
    io: &[TrialIo],
) -> Option<String> {
    let per = byte_rate(unit).filter(|_| disk)?;
    if io.len() != values.len() || io.iter().any(|t| t.devices.is_empty()) {
        return None;
    }
    let claimed: f64 = values.iter().zip(walls).map(|(v, s)| v * per * s).sum();
    let bottom = |t: &TrialIo| t.devices.last().cloned().unwrap_or_default();
    let read: u64 = io.iter().map(|t| bottom(t).read_bytes).sum();
    let written: u64 = io.iter().map(|t| bottom(t).written_bytes).sum();
    if claimed < LEAST || claimed <= FACTOR * (read + written) as f64 {
        return None;
    }
    let mb = |b: f64| if b >= 1e8 { format!("{:.0}", b / 1e6) } else { format!("{:.1}", b / 1e6) };
    let devices = &io[0].devices;
    let device = match devices.len() {
        1 => devices[0].device.clone(),
        _ => format!("{}, under {}", devices[devices.len() - 1].device, devices[0].device),
    };
    Some(format!(
        "served from memory: the device ({device}) read {} MB and wrote {} MB in {} trial(s) while the test reports about {} MB",
        mb(read as f64),
        mb(written as f64),
        values.len(),
        mb(claimed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::DeviceIo;

    fn trial(read: u64, written: u64) -> TrialIo {
        TrialIo {
            devices: vec![DeviceIo {
                device: "loop0".into(),
                read_bytes: read,
                written_bytes: written,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn byte_rates_are_exact() {
        assert_eq!(byte_rate("MB/s"), Some(1e6));
        assert_eq!(byte_rate("MiB/s"), Some(1_048_576.0));
        assert_eq!(byte_rate("kB/s"), Some(1e3));
        assert_eq!(byte_rate("IOPS"), None);
        assert_eq!(byte_rate("K/s"), None, "thousands of anything are no bytes");
        assert_eq!(byte_rate("Files/s"), None);
    }

    #[test]
    fn a_loop_device_is_judged_by_the_disk_under_it() {
        // loop1 wrote 6.2 GB, vda (its backing file's disk) 73 KB.
        let mut t = trial(0, 6_200_000_000);
        t.devices[0].device = "loop1".into();
        t.devices.push(DeviceIo { device: "vda".into(), written_bytes: 73_000, ..Default::default() });
        let w = served_from_memory(true, "MB/s", &[5364.9], &[1.2], &[t]).unwrap();
        assert!(w.starts_with("served from memory: the device (vda, under loop1) read 0.0 MB and wrote 0.1 MB"), "{w}");
        // A hash test in memory makes no claim on a device.
        assert_eq!(served_from_memory(false, "MB/s", &[1900.0], &[1.0], &[trial(0, 0)]), None);
    }

    #[test]
    fn a_cached_read_is_flagged_and_a_direct_one_is_not() {
        // 1,900 MB/s for 1 s while the device read 12 MB.
        let w = served_from_memory(true, "MB/s", &[1900.0], &[1.0], &[trial(12_000_000, 0)]).unwrap();
        assert!(w.starts_with("served from memory: the device (loop0) read 12.0 MB and wrote 0.0 MB"), "{w}");
        assert!(w.ends_with("reports about 1900 MB"), "{w}");
        // 200 MB/s for 2 s, 400 MB at the device.
        assert_eq!(served_from_memory(true, "MB/s", &[200.0], &[2.0], &[trial(400_000_000, 0)]), None);
        // Writes count as well as reads.
        assert_eq!(served_from_memory(true, "MiB/s", &[100.0], &[1.0], &[trial(0, 50 << 20)]), None);
        // Not a byte rate; no counters; too small to judge.
        assert_eq!(served_from_memory(true, "IOPS", &[1e6], &[1.0], &[trial(0, 0)]), None);
        assert_eq!(served_from_memory(true, "MB/s", &[1900.0], &[1.0], &[TrialIo::default()]), None);
        assert_eq!(served_from_memory(true, "MB/s", &[0.5], &[1.0], &[trial(0, 0)]), None);
    }
}
