//! What a result ran on: hardware, software, and notes about the state that
//! changes results — above all, the device under test, resolved from the
//! target directory (not the disk engine is installed on). Capture only reads
//! files and runs a few read-only commands with timeouts; whatever cannot be
//! read is `unknown`, never an error, and nothing waits on the network.

pub mod command;
pub mod cpu;
pub mod device;
pub mod diskstats;
pub mod dmi;
pub mod mounts;
pub mod pci;
pub mod place;
pub mod render;
pub mod software;
pub mod source;

use crate::model::result::System;
use crate::model::system::{Disk, Memory, SystemInfo, Target};
use source::Source;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long each part of a capture took (`engine system-info --timings`).
pub(crate) type Timings = Vec<(&'static str, Duration)>;

/// Physical disks in /sys/block (virtual ones left out).
pub(crate) fn disks(src: &dyn Source) -> Vec<Disk> {
    src.list("/sys/block")
        .unwrap_or_default()
        .into_iter()
        .filter(|n| !["loop", "ram", "zram", "dm-", "md", "nbd", "fd", "sr"].iter().any(|p| n.starts_with(p)))
        .filter_map(|n| device::describe(src, &n).ok())
        .map(|(d, _)| Disk {
            rotational: d.queue.as_ref().and_then(|q| q.rotational),
            name: d.name,
            model: d.model,
            size_bytes: d.size_bytes,
            transport: d.transport,
        })
        .collect()
}

/// The machine's memory in bytes (MemTotal), read now.
pub fn memory_bytes() -> Option<u64> {
    memory_total(&source::Fs::live())
}

fn memory_total(src: &dyn Source) -> Option<u64> {
    let t = src.read("/proc/meminfo").ok()?;
    let kib: u64 =
        t.lines().find_map(|l| l.strip_prefix("MemTotal:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// The environment engine was started with (read once, where the command
/// line is turned into a request).
pub type Environ = std::collections::BTreeMap<String, String>;

/// Collects everything from `src`; `target` is the directory tests run in,
/// `env` the environment variables profiles declared relevant, read from `environ`.
pub fn collect(src: &dyn Source, target: Option<&Path>, env: &[String], environ: &Environ) -> (SystemInfo, Timings) {
    let mut t: Timings = Vec::new();
    let mut lap = Instant::now();
    let mut tick = |name: &'static str, t: &mut Timings| {
        let now = Instant::now();
        t.push((name, now - lap));
        lap = now;
    };
    std::thread::scope(|scope| {
        // The commands take longest; they run while the files are read.
        let tools = scope.spawn(|| {
            let t0 = Instant::now();
            let r = software::toolchain(src);
            (r, t0.elapsed())
        });
        let mut s = SystemInfo { arch: std::env::consts::ARCH.to_string(), ..Default::default() };
        s.hostname = source::text(src, "/proc/sys/kernel/hostname");
        s.processor = cpu::probe(src);
        tick("processor", &mut t);
        s.motherboard = dmi::board(src);
        s.memory = Memory { total_bytes: memory_total(src), dimms: if src.live() { dmi::dimms() } else { Vec::new() } };
        tick("motherboard and memory (DMI)", &mut t);
        let (g, a, n, c) = pci::categorize(src);
        (s.graphics, s.audio, s.network, s.chipset) = (g, a, n, c);
        tick("PCI devices (pci.ids)", &mut t);
        s.disks = disks(src);
        tick("disks", &mut t);
        s.os = software::os(src);
        s.kernel = software::kernel(src);
        s.kernel_cmdline = software::cmdline(src);
        s.transparent_hugepages = software::thp(src);
        s.security = software::security(src);
        s.system_layer = software::system_layer(src);
        if src.live() {
            (s.desktop, s.display_server) = software::session(environ);
            s.environment = env.iter().filter_map(|k| environ.get(k).map(|v| (k.clone(), v.clone()))).collect();
        }
        tick("OS, kernel, security, system layer", &mut t);
        s.target = target.map(|p| {
            let canon =
                if src.live() { std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()) } else { p.to_path_buf() };
            let (resolution, problem) = match device::resolve(src, &canon) {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            };
            Target { path: canon.display().to_string(), mount: mounts::mount_of(src, &canon), resolution, problem }
        });
        tick("target directory and its devices", &mut t);
        let ((compiler, python), took) = tools.join().unwrap_or(((None, None), Duration::ZERO));
        s.compiler = compiler;
        s.python = python;
        t.push(("compiler and Python commands (in parallel)", took));
        (s, t)
    })
}

/// A result file's system entry for `identifier`, from the live machine;
/// `highlight` names scheduler tunables the run set (shown in the Disk Notes).
pub fn capture(identifier: &str, target: &Path, env: &[String], environ: &Environ, highlight: &[String]) -> System {
    let (mut info, _) = collect(&source::Fs::live(), Some(target), env, environ);
    info.highlight = highlight.to_vec();
    to_system(identifier, info)
}

pub(crate) fn to_system(identifier: &str, info: SystemInfo) -> System {
    // The tags every run gets by itself.
    let mut tags = indexmap::IndexMap::new();
    if let Some(k) = &info.kernel {
        tags.insert("kernel".to_string(), k.split_whitespace().next().unwrap_or(k).to_string());
    }
    tags.insert("engine".to_string(), env!("CARGO_PKG_VERSION").to_string());
    System {
        tags,
        identifier: identifier.into(),
        hardware: render::hardware(&info),
        software: render::software(&info),
        notes: render::notes(&info),
        target_dir: info.target.as_ref().map(|t| t.path.clone()),
        started: crate::model::facts::Timestamp::now(),
        finished: None,
        engine_version: env!("CARGO_PKG_VERSION").to_string(),
        details: Some(info),
        state: None,
    }
}

/// What a file system is when it is not on a block device of this machine:
/// results measured on it are not a disk's.
pub(crate) fn fs_class(fstype: &str) -> Option<&'static str> {
    let t = fstype.to_ascii_lowercase();
    Some(match t.as_str() {
        "tmpfs" | "ramfs" | "devtmpfs" | "hugetlbfs" => "memory, not a disk",
        "overlay" | "overlayfs" | "aufs" => "a container overlay, not the disk itself",
        "nfs" | "nfs4" | "cifs" | "smb3" | "smbfs" | "9p" | "ceph" | "glusterfs" | "afs" | "lustre" | "virtiofs"
        | "beegfs" | "gpfs" => "a network or host-shared file system",
        "proc" | "sysfs" | "debugfs" | "tracefs" | "cgroup" | "cgroup2" => "a virtual file system",
        _ if t.starts_with("fuse") => "a FUSE file system",
        _ => return None,
    })
}

/// A warning for a target directory that is not on a local disk (`None` when it is).
pub fn target_warning(dir: &Path) -> Option<String> {
    let canon = std::fs::canonicalize(dir).ok()?;
    let m = mounts::mount_of(&source::Fs::live(), &canon)?;
    let what = fs_class(&m.fstype)?;
    Some(format!(
        "the target directory {} is on {} ({what}): its results do not measure a disk; \
         point --target-dir at a directory on the disk you want to test",
        canon.display(),
        m.fstype
    ))
}

pub fn hostname() -> String {
    source::text(&source::Fs::live(), "/proc/sys/kernel/hostname").unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use source::Fs;
    use std::io;

    fn fixture(name: &str) -> Fs {
        Fs::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sysfs").join(name))
    }

    #[test]
    fn a_full_capture_from_a_captured_tree() {
        let (s, _) = collect(&fixture("sata-partition"), Some(Path::new("/home/user/bench")), &[], &Environ::new());
        let h = render::hardware(&s);
        assert_eq!(h["Processor"], "AMD Ryzen 9 5950X 16-Core @ 3.40GHz (16 Cores / 32 Threads)");
        assert_eq!(h["Motherboard"], "ASUSTeK COMPUTER INC. ROG STRIX X570-E GAMING (4021 BIOS)");
        assert_eq!(h["Chipset"], "AMD Starship/Matisse Root Complex");
        assert_eq!(h["Memory"], "62.7 GiB");
        assert_eq!(h["Disk"], "500GB Samsung SSD 860 EVO 500GB");
        assert_eq!(h["Graphics"], "NVIDIA GA104 [GeForce RTX 3070]");
        assert_eq!(h["Audio"], "NVIDIA GA104 High Definition Audio Controller");
        assert_eq!(h["Network"], "Intel I211 Gigabit Network Connection + Intel Wi-Fi 6 AX200");
        let w = render::software(&s);
        assert_eq!(w["OS"], "Debian 12");
        assert_eq!(w["Kernel"], format!("6.1.0-27-amd64 ({})", std::env::consts::ARCH));
        assert_eq!(w["File-System"], "ext4");
        assert!(!w.contains_key("System Layer"), "{w:?}");
        let n = render::notes(&s);
        assert_eq!(
            n["Disk Notes"],
            "MQ-DEADLINE / errors=remount-ro,relatime,rw / ext4 on sda2 (partition of sda) / sda: read_ahead_kb=128 nr_requests=64 rotational=0 write_cache=write back"
        );
        assert_eq!(
            n["Processor Notes"],
            "Scaling Governor: acpi-cpufreq schedutil - Boost: Enabled - EPP: balance_performance - CPU Microcode: 0xa201016"
        );
        assert_eq!(
            n["Security Notes"],
            "meltdown: Not affected + spec_rstack_overflow: Mitigation: Safe RET + spectre_v1: Mitigation: usercopy/swapgs barriers and __user pointer sanitization"
        );
        assert_eq!(
            n["Kernel Notes"],
            "Transparent Huge Pages: madvise - Command Line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-27-amd64 root=UUID=abc ro quiet"
        );
        assert_eq!(s.hostname.as_deref(), Some("bench-box"));
        // No commands run against a captured tree.
        assert!(s.compiler.is_none() && s.python.is_none());
    }

    #[test]
    fn the_disk_notes_are_those_of_the_device_under_test() {
        // The same machine, two targets: the loop device (BFQ) and the root disk (MQ-DEADLINE).
        let src = fixture("loop-file");
        let (s, _) = collect(&src, Some(Path::new("/mnt/scratch")), &[], &Environ::new());
        assert!(render::notes(&s)["Disk Notes"].starts_with(
            "BFQ / noatime,rw / ext4 on loop0 (loop, /var/tmp/engine disk.img), backing file on ext4 on vda / loop0: "
        ));
        let (s, _) = collect(&src, Some(Path::new("/home")), &[], &Environ::new());
        assert!(
            render::notes(&s)["Disk Notes"]
                .starts_with("MQ-DEADLINE / discard,relatime,rw / ext4 on vda / vda: read_ahead_kb=4096")
        );
        // The disk list leaves the loop device out.
        assert_eq!(render::hardware(&s)["Disk"], "268GB vda");
    }

    #[test]
    fn raid_members_with_the_same_scheduler_read_once() {
        let (s, _) = collect(&fixture("lvm-on-md-raid1"), Some(Path::new("/srv")), &[], &Environ::new());
        assert!(render::notes(&s)["Disk Notes"].starts_with("BFQ / noatime,rw,stripe=32 / "));
        assert_eq!(render::hardware(&s)["Disk"], "2 x 500GB WDC WD5000AZRX-00A8LB0");
    }

    #[test]
    fn odd_entries_read_as_unknown() {
        let (s, _) = collect(&fixture("odd-entries"), Some(Path::new("/srv")), &[], &Environ::new());
        let h = render::hardware(&s);
        assert_eq!(h["Processor"], "unknown (2 Cores)");
        assert_eq!(h["Memory"], "unknown");
        assert_eq!(render::software(&s)["OS"], "unknown");
        let n = render::notes(&s);
        assert_eq!(n["Security Notes"], "meltdown: unknown + spectre_v2: unknown");
        assert!(
            n["Disk Notes"].starts_with(
                "unknown / rw / ext4 on md0 (md) > sda1 (partition of sda) / sda: rotational=0 write_cache=write back"
            ),
            "{}",
            n["Disk Notes"]
        );
        // A target on a file system without a block device.
        let (s, _) = collect(&fixture("odd-entries"), Some(Path::new("/nowhere-mounted")), &[], &Environ::new());
        let _ = render::notes(&s);
    }

    /// Wraps a source and answers "permission denied" for some paths, as
    /// sysfs does for unprivileged readers.
    struct Denied<'a>(&'a dyn Source, &'a [&'a str]);

    impl Source for Denied<'_> {
        fn read(&self, path: &str) -> io::Result<String> {
            if self.1.iter().any(|p| path.starts_with(p)) {
                return Err(io::Error::from(io::ErrorKind::PermissionDenied));
            }
            self.0.read(path)
        }
        fn list(&self, path: &str) -> io::Result<Vec<String>> {
            if self.1.iter().any(|p| path.starts_with(p)) {
                return Err(io::Error::from(io::ErrorKind::PermissionDenied));
            }
            self.0.list(path)
        }
        fn canonical(&self, path: &str) -> io::Result<String> {
            self.0.canonical(path)
        }
    }

    #[test]
    fn permission_denied_reads_as_unknown() {
        let base = fixture("sata-partition");
        let src = Denied(
            &base,
            &[
                "/sys/class/dmi",
                "/sys/devices/system/cpu/vulnerabilities/meltdown",
                "/proc/cpuinfo",
                "/sys/devices/pci0000:00/0000:00:17.0",
            ],
        );
        let (s, _) = collect(&src, Some(Path::new("/home")), &[], &Environ::new());
        let h = render::hardware(&s);
        assert_eq!(h["Processor"], "unknown @ 3.40GHz");
        assert!(!h.contains_key("Motherboard"));
        let n = render::notes(&s);
        assert!(n["Security Notes"].starts_with("meltdown: unknown + "), "{}", n["Security Notes"]);
        assert_eq!(n["Disk Notes"], "unknown / errors=remount-ro,relatime,rw / ext4 on sda2 (partition of sda)");
    }
}
