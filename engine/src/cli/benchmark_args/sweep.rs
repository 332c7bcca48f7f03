//! The sweep's flags: the system states each test runs under.

use super::super::line::Line;
use clap::Args;
use engine_ops::benchmark::SweepRequest;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// Run every test under each I/O scheduler of the device under the target directory:
    /// `none,mq-deadline,kyber,bfq,bfq:low_latency=0`, or `all`; each state is its own identifier
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub scheduler: Option<engine_ops::benchmark::Schedulers>,
    /// Run every test on each file system made fresh on --device: `ext4,xfs,btrfs`,
    /// with mount options as `ext4:nobarrier` or `ext4:data=writeback,noatime`
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub filesystem: Vec<engine_ops::benchmark::FsList>,
    /// The device file systems are made on (ext4 unless --filesystem says): a spare `/dev/X` (refused if mounted, part of the
    /// root disk, or holding data without --force-destroy-data), or `loop:SIZE` (e.g. `loop:4G`)
    /// for a loop device over a file engine creates and removes, with direct I/O on the file
    /// (`loop:4G,cached` keeps the page cache)
    #[arg(long, value_name = "DEV", help_heading = "System-state sweeps (root)")]
    pub device: Option<engine_ops::benchmark::DeviceSpec>,
    /// Directory for the backing file of `--device loop:SIZE` (default: ENGINE_HOME/loop)
    #[arg(long, value_name = "DIR", help_heading = "System-state sweeps (root)")]
    pub loop_dir: Option<PathBuf>,
    /// Erase a --device that has a partition table or file system
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub force_destroy_data: bool,
    /// Set a queue attribute or scheduler tunable for the run: `queue/read_ahead_kb=128`,
    /// `iosched/slice_idle=0` (restored afterwards)
    #[arg(long = "set", value_name = "ATTR=VALUE", help_heading = "System-state sweeps (root)")]
    pub set: Vec<engine_ops::benchmark::Setting>,
    /// Run the states of each test in random order, to decorrelate drift
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub shuffle: bool,
    /// Run each test's trials round-robin across the scheduler states (set up once, a
    /// fresh random order each round), so drift hits every state alike; the default
    /// for scheduler sweeps, on one file system or inside each of --filesystem's blocks
    #[arg(long, overrides_with = "no_interleave", help_heading = "System-state sweeps (root)")]
    pub interleave: bool,
    /// The scheduler state the others are compared with, and the interleaved run stops on
    /// the verdicts against (`kyber`, `bfq low_latency=0`); listed first. Default: the first
    #[arg(long, value_name = "STATE", requires = "scheduler", help_heading = "System-state sweeps (root)")]
    pub baseline: Option<String>,
    /// Run each state's trials in one block instead
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub no_interleave: bool,
    /// Run the blocks of states N times, in a new order each round, each round adding
    /// its trials (a share of the budget) to the same identifiers: for file-system sweeps
    #[arg(long, value_name = "N", help_heading = "System-state sweeps (root)")]
    pub rounds: Option<u32>,
}

impl SweepArgs {
    /// The sweep these flags ask for; `setups`: `--setups`, which the
    /// sweep reads as each round's set-up on a --device.
    pub fn request(self, setups: Option<u32>) -> SweepRequest {
        SweepRequest {
            schedulers: self.scheduler.unwrap_or_default(),
            filesystems: self.filesystem.into_iter().flat_map(|l| l.0).collect(),
            device: self.device,
            loop_dir: self.loop_dir,
            force_destroy_data: self.force_destroy_data,
            settings: self.set,
            shuffle: self.shuffle,
            baseline: self.baseline,
            rounds: self.rounds,
            setups,
            interleave: match (self.interleave, self.no_interleave) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
        }
    }

    /// Whether the sweep changes the disk under the target directory (not
    /// a --device of its own): a re-run must name that directory.
    pub fn on_target(&self) -> bool {
        self.device.is_none() && (self.scheduler.is_some() || !self.set.is_empty())
    }

    pub fn render(&self, out: &mut Line) {
        out.opt("--scheduler", self.scheduler.as_ref());
        out.each("--filesystem", &self.filesystem);
        out.opt("--device", self.device.as_ref());
        out.opt("--loop-dir", self.loop_dir.as_ref().map(|p| p.display().to_string()));
        out.flag("--force-destroy-data", self.force_destroy_data);
        out.each("--set", &self.set);
        out.flag("--shuffle", self.shuffle);
        out.opt("--baseline", self.baseline.as_deref());
        out.flag("--interleave", self.interleave);
        out.flag("--no-interleave", self.no_interleave);
        out.opt("--rounds", self.rounds);
    }
}
