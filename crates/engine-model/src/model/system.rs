//! What a result ran on, as stored in result files (`systems[].details`).
//! Every field a machine may not have is optional: absent means unknown.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SystemInfo {
    pub hostname: Option<String>,
    pub processor: Processor,
    pub motherboard: Option<Board>,
    pub chipset: Option<String>,
    pub memory: Memory,
    /// Physical disks (loop, RAM and zram devices left out).
    pub disks: Vec<Disk>,
    pub graphics: Vec<String>,
    pub audio: Vec<String>,
    pub network: Vec<String>,
    pub os: Option<String>,
    pub kernel: Option<String>,
    pub arch: String,
    pub kernel_cmdline: Option<String>,
    pub transparent_hugepages: Option<String>,
    pub desktop: Option<String>,
    pub display_server: Option<String>,
    pub compiler: Option<Compiler>,
    pub python: Option<String>,
    /// Virtualization or container layer (`KVM`, `docker`).
    pub system_layer: Option<String>,
    /// Every entry of /sys/devices/system/cpu/vulnerabilities.
    pub security: IndexMap<String, String>,
    /// Environment variables the profiles declare as relevant.
    pub environment: IndexMap<String, String>,
    /// The directory the tests ran in, and the devices under it.
    pub target: Option<Target>,
    /// Scheduler tunables the run set (`low_latency`); the Disk Notes show their values as read back.
    #[serde(default)]
    pub highlight: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Processor {
    pub model: Option<String>,
    pub sockets: Option<usize>,
    pub cores: Option<usize>,
    pub threads: Option<usize>,
    pub max_mhz: Option<u64>,
    pub microcode: Option<String>,
    pub scaling_driver: Option<String>,
    pub governor: Option<String>,
    /// Turbo/boost enabled.
    pub boost: Option<bool>,
    pub energy_preference: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    pub system_vendor: Option<String>,
    pub product: Option<String>,
    pub vendor: Option<String>,
    pub name: Option<String>,
    pub bios_vendor: Option<String>,
    pub bios_version: Option<String>,
    pub bios_date: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Memory {
    /// MemTotal: what the kernel can use, in bytes.
    pub total_bytes: Option<u64>,
    /// Memory devices from the DMI tables (root only).
    pub dimms: Vec<Dimm>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dimm {
    pub locator: Option<String>,
    pub size_bytes: u64,
    /// `DDR4`, `DDR5` …
    pub kind: Option<String>,
    /// Speed in MT/s.
    pub speed_mts: Option<u32>,
    pub manufacturer: Option<String>,
    pub part_number: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Disk {
    pub name: String,
    pub model: Option<String>,
    pub size_bytes: Option<u64>,
    pub rotational: Option<bool>,
    pub transport: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Compiler {
    /// `GCC 12.2.0`.
    pub version: String,
    /// The `Configured with:` flags.
    pub configure: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    pub path: String,
    /// The mount and devices under `path`; absent when they could not be read.
    pub resolution: Option<Resolution>,
    /// The mount holding `path`, also when it has no block device (tmpfs, NFS).
    #[serde(default)]
    pub mount: Option<Mount>,
    /// Why the devices could not be read (`/tmp is on tmpfs (tmpfs), which has no block device`).
    #[serde(default)]
    pub problem: Option<String>,
}

/// The settings of a request queue that matter for benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Queue {
    /// The scheduler in force (the bracketed one), `none` included.
    pub scheduler: Option<String>,
    /// Schedulers the device offers.
    pub schedulers: Vec<String>,
    pub read_ahead_kb: Option<u64>,
    pub nr_requests: Option<u64>,
    pub rotational: Option<bool>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
    /// Tunables of the scheduler in force (`queue/iosched/*`).
    #[serde(default)]
    pub iosched: indexmap::IndexMap<String, String>,
}

/// What kind of block device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Kind {
    Disk,
    Partition { disk: String },
    DeviceMapper { name: Option<String> },
    Md { level: Option<String> },
    Loop { backing_file: Option<String> },
}

/// One block device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlockDevice {
    /// Kernel name (`sda`, `nvme0n1p2`, `dm-0`, `md0`, `loop3`).
    pub name: String,
    #[serde(flatten)]
    pub kind: Kind,
    pub model: Option<String>,
    pub size_bytes: Option<u64>,
    /// `NVMe`, `SATA`, `SCSI`, `USB`, `virtio`, `MMC`, `virtual`.
    pub transport: Option<String>,
    pub queue: Option<Queue>,
}

/// A directory resolved to its devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resolution {
    pub path: String,
    pub mount: Mount,
    /// The device the file system is on, then each layer below it.
    pub layers: Vec<BlockDevice>,
    /// The devices whose queue settings apply: whole disks (or the loop
    /// device) at the bottom of the stack.
    pub disks: Vec<BlockDevice>,
    /// For a loop device: where its backing file lives.
    pub backing: Option<Box<Resolution>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Mount {
    pub mount_point: String,
    pub fstype: String,
    /// What was mounted (`/dev/sda1`, `tmpfs`).
    pub source: String,
    /// `major:minor` of the mounted device (`0:xx` for virtual file systems and btrfs).
    pub dev: String,
    /// Per-mount and per-superblock options together, sorted, without duplicates.
    pub options: Vec<String>,
}

impl Resolution {
    /// `ext4 on sda1 (partition of sda)`, `xfs on dm-0 (LVM vg-root) on md0 (raid1) on sda1, sdb1`.
    pub fn chain(&self) -> String {
        let mut s = format!("{} on ", self.mount.fstype);
        let parts: Vec<String> = self
            .layers
            .iter()
            .enumerate()
            // A disk right after its own partition is already named by it.
            .filter(|(i, d)| {
                !(matches!(d.kind, Kind::Disk)
                    && *i > 0
                    && matches!(&self.layers[i - 1].kind, Kind::Partition { disk } if *disk == d.name))
            })
            .map(|(_, d)| match &d.kind {
                Kind::Disk => d.name.clone(),
                Kind::Partition { disk } => format!("{} (partition of {disk})", d.name),
                Kind::DeviceMapper { name } => format!("{} ({})", d.name, name.as_deref().unwrap_or("device-mapper")),
                Kind::Md { level } => format!("{} ({})", d.name, level.as_deref().unwrap_or("md")),
                Kind::Loop { backing_file } => {
                    format!("{} (loop, {})", d.name, backing_file.as_deref().unwrap_or("unknown file"))
                }
            })
            .collect();
        s.push_str(&parts.join(" > "));
        if let Some(b) = &self.backing {
            s.push_str(&format!(", backing file on {}", b.chain()));
        }
        s
    }
}

impl Mount {
    /// Options joined, as PTS's Disk Notes show them (`relatime,rw`).
    pub fn sorted_options(&self) -> String {
        self.options.join(",")
    }
}
