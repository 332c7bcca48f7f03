//! Sweeps of system state, as asked for: the I/O schedulers (with tunables),
//! queue settings and file systems to run every test under, checked before
//! anything changes; the queues of a directory and what they offer; how a
//! state's identifier reads; and the loop that runs every test under each
//! of them (`run`), applying each state through `state`'s journaled guards.
//! The benchmark reaches it through [`Tests`]; the runner reaches a state
//! through [`super::switch::Switch`].

pub mod device;
mod run;

pub use run::{Tests, Where, run};

use crate::state::filesystem::FsSpec;
use crate::state::hygiene::Hygiene;
use crate::state::scheduler::Scheduler;
use crate::state::sysfs::Setting;
use crate::state::{StateError, loopdev};
use crate::sysinfo::source::Fs;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The system-state sweep asked for, each flag parsed once where it was
/// given (all empty: no state is changed).
#[derive(Debug, Clone, Default)]
pub struct SweepRequest {
    /// `--scheduler none,bfq:low_latency=0` or `all`.
    pub schedulers: Schedulers,
    /// `--filesystem ext4,xfs` or `ext4:nobarrier`, every flag's list in turn.
    pub filesystems: Vec<FsSpec>,
    /// `--device /dev/X` or `loop:SIZE`.
    pub device: Option<DeviceSpec>,
    /// Where a loop device's backing file goes (default: ENGINE_HOME/loop).
    pub loop_dir: Option<PathBuf>,
    pub force_destroy_data: bool,
    /// `--set queue/read_ahead_kb=128`, `iosched/slice_idle=0`.
    pub settings: Vec<Setting>,
    /// Each test's states in random order.
    pub shuffle: bool,
    /// `--interleave` (`Some(true)`), `--no-interleave` (`Some(false)`), or
    /// neither: on for sweeps of schedulers and queue settings.
    pub interleave: Option<bool>,
    /// `--baseline`: the scheduler state the others are compared with (and
    /// the run stops on the verdicts against); listed first. Default: the first.
    pub baseline: Option<String>,
    /// `--rounds N`: the blocks of states run N times (1 when absent).
    pub rounds: Option<u32>,
    /// `--setups N`: on a --device, the file systems are made afresh N
    /// times, a round each (the trials of each round one set-up).
    pub setups: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub enum Schedulers {
    /// Leave the scheduler alone.
    #[default]
    Keep,
    List(Vec<Scheduler>),
    /// Every scheduler the device offers.
    All,
}

/// `--scheduler all` or a list (`none,mq-deadline,bfq:low_latency=0`).
impl std::str::FromStr for Schedulers {
    type Err = crate::state::SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return Ok(Schedulers::All);
        }
        Ok(Schedulers::List(Scheduler::parse_list(s)?))
    }
}

/// As `--scheduler` takes it (nothing for [`Schedulers::Keep`]).
impl std::fmt::Display for Schedulers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedulers::Keep => Ok(()),
            Schedulers::All => f.write_str("all"),
            Schedulers::List(l) => f.write_str(&l.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")),
        }
    }
}

/// One `--filesystem` value: its states (`ext4:noatime,xfs`).
#[derive(Debug, Clone, PartialEq)]
pub struct FsList(pub Vec<FsSpec>);

impl std::fmt::Display for FsList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.iter().map(ToString::to_string).collect::<Vec<_>>().join(","))
    }
}

impl std::str::FromStr for FsList {
    type Err = crate::state::SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FsSpec::parse_list(s).map(FsList)
    }
}

/// `--device`: a loop device engine makes (`loop:4G`, `loop:4G,cached`) or
/// a device the user names (checked when the sweep is planned).
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceSpec {
    Loop(loopdev::Spec),
    Path(String),
}

impl std::fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSpec::Loop(s) => {
                write!(f, "loop:{}{}", crate::units::exact_size(s.size), if s.cached { ",cached" } else { "" })
            }
            DeviceSpec::Path(p) => f.write_str(p),
        }
    }
}

impl std::str::FromStr for DeviceSpec {
    type Err = crate::state::SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match loopdev::parse_spec(s) {
            Some(spec) => spec.map(DeviceSpec::Loop),
            None => Ok(DeviceSpec::Path(s.to_string())),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum DeviceChoice {
    /// A device the user named, checked by [`device::check`].
    Dev(device::Scratch),
    /// A loop device over a file engine creates in `dir`.
    Loop { spec: loopdev::Spec, dir: PathBuf },
}

/// A checked sweep, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub schedulers: Schedulers,
    pub filesystems: Vec<FsSpec>,
    pub device: Option<DeviceChoice>,
    pub settings: Vec<Setting>,
    pub shuffle: bool,
    /// Each test's trials round-robin across its scheduler states, set up once.
    pub interleave: bool,
    /// How many times the blocks of states run, in a new order each time,
    /// each adding its trials to the same identifiers.
    pub rounds: u32,
    /// `--setups N` on a --device: the rounds are set-ups (each makes the
    /// file systems afresh; its trials are recorded as one set-up).
    pub setup_rounds: bool,
}

#[derive(Debug, Error)]
pub enum SweepError {
    #[error("{0}")]
    Usage(String),
    #[error("not root: {0}")]
    NeedsRoot(String),
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Device(#[from] device::Refusal),
    #[error("scheduler `{name}` is not offered by {devices}; it offers: {offer}")]
    NotOffered { name: String, devices: String, offer: String, hint: String },
    #[error(transparent)]
    State(#[from] StateError),
}

/// A state written wrong is bad usage.
impl From<crate::state::SpecError> for SweepError {
    fn from(e: crate::state::SpecError) -> Self {
        SweepError::Usage(e.0)
    }
}

impl Plan {
    /// Checks everything that can be checked before a change is made: the
    /// flags together, root, the device, the file-system tools; a loop
    /// device's file goes in `loop_dir`; `hygiene` may need root too.
    pub fn new(a: &SweepRequest, loop_dir: PathBuf, hygiene: Hygiene) -> Result<Plan, SweepError> {
        let (schedulers, filesystems, settings) = (a.schedulers.clone(), filesystems_of(a), a.settings.clone());
        if !filesystems.is_empty() && a.device.is_none() {
            return Err(SweepError::Usage(
                "--filesystem needs --device (a spare device, or loop:SIZE for a loop device engine creates)".into(),
            ));
        }
        let (interleave, rounds) = order(a, &filesystems, &schedulers)?;
        let setup_rounds = a.device.is_some() && a.setups.is_some_and(|n| n > 1);
        let plan = Plan {
            schedulers,
            filesystems,
            device: None,
            settings,
            shuffle: a.shuffle,
            interleave,
            rounds,
            setup_rounds,
        };
        let mut needs = plan.root_reasons();
        if hygiene.drop_caches {
            needs.push("--drop-caches writes /proc/sys/vm/drop_caches".into());
        }
        if hygiene.fstrim {
            needs.push("--fstrim runs fstrim".into());
        }
        if !needs.is_empty() && !crate::sys::is_root() {
            return Err(SweepError::NeedsRoot(needs.join("; ")));
        }
        for f in &plan.filesystems {
            let prog = format!("mkfs.{}", f.fstype);
            if which::which(&prog).is_err() {
                let pkg = match f.fstype.as_str() {
                    "ext2" | "ext3" | "ext4" => "e2fsprogs",
                    "xfs" => "xfsprogs",
                    "btrfs" => "btrfs-progs",
                    "f2fs" => "f2fs-tools",
                    "vfat" => "dosfstools",
                    other => other,
                };
                return Err(SweepError::Refused(format!(
                    "{prog} not found — install it with `apt-get install {pkg}` or put it on PATH"
                )));
            }
        }
        let device = match &a.device {
            None => None,
            Some(DeviceSpec::Loop(spec)) => {
                room_for_loop(spec.size, &loop_dir)?;
                Some(DeviceChoice::Loop { spec: *spec, dir: loop_dir })
            }
            Some(DeviceSpec::Path(d)) => {
                Some(DeviceChoice::Dev(device::check(&Fs::live(), d, a.force_destroy_data, &device::blkid_signature)?))
            }
        };
        Ok(Plan { device, ..plan })
    }

    /// How many states each test runs in, when the flags say
    /// (`--scheduler all` depends on the device: `None`).
    pub fn state_count(&self) -> Option<usize> {
        let scheds = match &self.schedulers {
            Schedulers::Keep => 1,
            Schedulers::List(l) => l.len(),
            Schedulers::All => return None,
        };
        Some(scheds * self.filesystems.len().max(1))
    }

    pub fn is_active(&self) -> bool {
        self.schedulers != Schedulers::Keep || !self.filesystems.is_empty() || !self.settings.is_empty()
    }

    fn root_reasons(&self) -> Vec<String> {
        let mut r = Vec::new();
        if self.schedulers != Schedulers::Keep {
            r.push("--scheduler writes /sys/block/<device>/queue/scheduler".to_string());
        }
        if !self.settings.is_empty() {
            r.push("--set writes /sys/block/<device>/queue/…".to_string());
        }
        if !self.filesystems.is_empty() {
            r.push("--filesystem runs mkfs and mount (and losetup for --device loop:SIZE)".to_string());
        }
        r
    }
}

/// The queue folders of the disks under `dir`.
pub fn queues_of(dir: &Path) -> Result<(Vec<String>, String), SweepError> {
    let canon = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let r = crate::sysinfo::device::resolve(&Fs::live(), &canon)
        .map_err(|e| SweepError::Refused(format!("cannot change the I/O scheduler for {}: {e}", dir.display())))?;
    let queues = r.disks.iter().map(|d| format!("/sys/block/{}/queue", d.name)).collect();
    let models: Vec<String> = r.disks.iter().map(|d| d.model.clone().unwrap_or_else(|| d.name.clone())).collect();
    let mut label = models.clone();
    label.dedup();
    Ok((queues, label.join(" + ")))
}

/// Schedulers every queue offers, in the first queue's order.
pub(crate) fn offered(queues: &[String]) -> Result<Vec<String>, SweepError> {
    let mut common: Option<Vec<String>> = None;
    for q in queues {
        let p = format!("{q}/scheduler");
        let text = std::fs::read_to_string(&p).map_err(|e| SweepError::Refused(format!("cannot read {p}: {e}")))?;
        let (_, all) = crate::sysinfo::device::parse_scheduler(&text);
        common = Some(match common {
            None => all,
            Some(c) => c.into_iter().filter(|s| all.contains(s)).collect(),
        });
    }
    Ok(common.unwrap_or_default())
}

/// The scheduler states to run, checked against what the devices offer.
pub fn scheduler_states(s: &Schedulers, queues: &[String]) -> Result<Vec<Scheduler>, SweepError> {
    let offer = offered(queues)?;
    let devices: Vec<&str> =
        queues.iter().map(|q| q.trim_end_matches("/queue").rsplit('/').next().unwrap_or(q)).collect();
    match s {
        Schedulers::Keep => Ok(Vec::new()),
        Schedulers::All => Ok(offer.into_iter().map(|name| Scheduler { name, tunables: Vec::new() }).collect()),
        Schedulers::List(l) => {
            for st in l {
                if !offer.contains(&st.name) {
                    return Err(not_offered(&st.name, &devices.join(", "), &offer));
                }
            }
            Ok(l.clone())
        }
    }
}

/// A scheduler the devices do not offer, with how to get it: the
/// `modprobe` that loads it when this kernel has it as a module, else the
/// ones to pick instead.
fn not_offered(name: &str, devices: &str, offer: &[String]) -> SweepError {
    let module = match name {
        "kyber" => "kyber-iosched",
        other => other,
    };
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let hint = match has_module(Path::new("/lib/modules").join(release.trim()).as_path(), module) {
        true => format!("this kernel has it as a module: load it with `modprobe {module}` and run again"),
        false => format!("this kernel has no {name}: pick from {}", offer.join(", ")),
    };
    SweepError::NotOffered { name: name.into(), devices: devices.into(), offer: offer.join(", "), hint }
}

/// Whether the kernel module tree `root` lists `module` (its modules.dep
/// names every module file, compressed or not).
fn has_module(root: &Path, module: &str) -> bool {
    let dep = std::fs::read_to_string(root.join("modules.dep")).unwrap_or_default();
    let file = |m: &str| format!("/{m}.ko");
    let (a, b) = (file(module), file(&module.replace('-', "_")));
    dep.lines().filter_map(|l| l.split(':').next()).any(|p| p.contains(&a) || p.contains(&b))
}

/// Before any menu or change: each scheduler asked for is offered where
/// the tests will run — the device's queue, a loop device's (any loop
/// device shows what the kernel offers them), or the target directory's
/// disks. Nothing is said when those cannot be read: the run checks again.
pub fn precheck(plan: &Plan, target: &Path) -> Result<(), SweepError> {
    let Schedulers::List(_) = &plan.schedulers else { return Ok(()) };
    let queues: Vec<String> = match &plan.device {
        Some(DeviceChoice::Dev(s)) => vec![format!("/sys/block/{}/queue", s.queue_disk)],
        Some(DeviceChoice::Loop { .. }) => std::fs::read_dir("/sys/block")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("loop"))
            .take(1)
            .map(|n| format!("/sys/block/{n}/queue"))
            .collect(),
        None => match queues_of(target) {
            Ok((q, _)) => q,
            Err(_) => return Ok(()),
        },
    };
    if queues.is_empty() || offered(&queues).is_err() {
        return Ok(());
    }
    match scheduler_states(&plan.schedulers, &queues) {
        Err(SweepError::NotOffered { name, offer, hint, .. })
            if matches!(plan.device, Some(DeviceChoice::Loop { .. })) =>
        {
            Err(SweepError::NotOffered { name, devices: "this kernel's loop devices".into(), offer, hint })
        }
        r => r.map(|_| ()),
    }
}

/// Puts the state `want` names first among `--scheduler`'s (the baseline
/// the others are compared with): matched by its label (`KYBER`,
/// `BFQ low_latency=0`), case aside, whole or as its start.
pub fn baseline_first(plan: &mut Plan, want: &str) -> Result<(), SweepError> {
    let Schedulers::List(list) = &mut plan.schedulers else {
        return match plan.schedulers {
            Schedulers::All => Ok(()),
            _ => {
                Err(SweepError::Usage("--baseline names a state of a scheduler sweep: give --scheduler with it".into()))
            }
        };
    };
    let label = |s: &crate::state::scheduler::Scheduler| {
        let mut l = s.name.to_uppercase();
        s.tunables.iter().for_each(|(k, v)| l.push_str(&format!(" {k}={v}")));
        l
    };
    let w = want.trim().to_uppercase();
    let exact = list.iter().position(|s| label(s) == w || s.to_string().to_uppercase() == w);
    let found = exact.or_else(|| {
        let starts: Vec<usize> = (0..list.len()).filter(|&i| label(&list[i]).starts_with(&w)).collect();
        (starts.len() == 1).then(|| starts[0])
    });
    let Some(i) = found else {
        let states: Vec<String> = list.iter().map(label).collect();
        return Err(SweepError::Usage(format!(
            "--baseline {} names no state of this sweep (one of: {})",
            crate::sys::text::one_line(want),
            states.join(", ")
        )));
    };
    let b = list.remove(i);
    list.insert(0, b);
    Ok(())
}

/// The loop device's file is sparse, but the tests can fill it: refused
/// before any menu when the file system under `dir` (or the nearest folder
/// of it that exists) has less free than `size`.
fn room_for_loop(size: u64, dir: &Path) -> Result<(), SweepError> {
    let Some(at) = dir.ancestors().find(|a| a.is_dir()) else { return Ok(()) };
    let Ok(free) = crate::sys::fs::free_bytes(at) else { return Ok(()) };
    if free >= size {
        return Ok(());
    }
    Err(SweepError::Refused(format!(
        "a loop device of {} needs up to that much in {}, which has {} free; give a smaller size or --loop-dir on a larger file system",
        crate::units::format_bytes_binary(size),
        at.display(),
        crate::units::format_bytes_binary(free)
    )))
}

/// The file systems a sweep makes: `--filesystem`'s, or for a `--device`
/// without it the common case, ext4 with its defaults.
fn filesystems_of(a: &SweepRequest) -> Vec<FsSpec> {
    if a.device.is_some() && a.filesystems.is_empty() {
        return vec![FsSpec { fstype: "ext4".into(), options: Vec::new() }];
    }
    a.filesystems.clone()
}

/// The order of states in a round: only needs to vary (fastrand, seeded
/// from the OS).
pub struct Shuffler(fastrand::Rng);

impl Shuffler {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Shuffler(fastrand::Rng::new())
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        self.0.shuffle(v);
    }
}

/// How the states take turns: the schedulers interleaved trial by trial on
/// each file system (the default for scheduler sweeps: one file system,
/// made once, with the schedulers alternating; several file systems run
/// as blocks, each made fresh, the schedulers interleaved inside each), and
/// in how many rounds of blocks.
fn order(a: &SweepRequest, filesystems: &[FsSpec], schedulers: &Schedulers) -> Result<(bool, u32), SweepError> {
    let varies_fs = filesystems.len() > 1;
    if a.interleave == Some(true) && *schedulers == Schedulers::Keep {
        return Err(SweepError::Usage(
            "--interleave alternates I/O schedulers between trials, and no --scheduler is swept; \
             file systems cannot alternate (each is made fresh with mkfs), so they run as blocks"
                .into(),
        ));
    }
    let interleave = a.interleave.unwrap_or(*schedulers != Schedulers::Keep);
    // On a device engine formats, a set-up includes the file system: each
    // set-up is a round that makes them afresh (interleaving inside it).
    if let (Some(n), true) = (a.setups.filter(|n| *n > 1), a.device.is_some()) {
        if a.rounds.is_some() {
            return Err(SweepError::Usage(
                "--setups on a --device makes the file systems afresh for each set-up, as rounds of blocks; \
                 give --setups or --rounds, not both"
                    .into(),
            ));
        }
        return Ok((interleave, n));
    }
    let rounds = a.rounds.unwrap_or(1);
    if rounds == 0 {
        return Err(SweepError::Usage("--rounds must be at least 1".into()));
    }
    if rounds > 1 && interleave && !varies_fs {
        return Err(SweepError::Usage(
            "--rounds repeats blocks of states; interleaved trials already alternate the states every trial \
             (add --no-interleave to run blocks in rounds)"
                .into(),
        ));
    }
    if rounds > 1 && filesystems.is_empty() && *schedulers == Schedulers::Keep {
        return Err(SweepError::Usage("--rounds needs a sweep of several states (--filesystem or --scheduler)".into()));
    }
    Ok((interleave, rounds))
}

/// The identifier of one state: `<prefix>: <file system> / <scheduler>`.
pub fn identifier(prefix: &str, fs: Option<&str>, sched: Option<&str>) -> String {
    let parts: Vec<&str> = [fs, sched].into_iter().flatten().collect();
    if parts.is_empty() { prefix.to_string() } else { format!("{prefix}: {}", parts.join(" / ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scheduler_module_is_found_in_modules_dep() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("modules.dep"),
            "kernel/block/bfq.ko.xz:\nkernel/block/kyber-iosched.ko.zst:\nkernel/fs/xfs/xfs.ko: kernel/lib/libcrc32c.ko\n",
        )
        .unwrap();
        assert!(has_module(d.path(), "bfq") && has_module(d.path(), "kyber-iosched"));
        assert!(!has_module(d.path(), "mq-deadline") && !has_module(&d.path().join("none"), "bfq"));
        let SweepError::NotOffered { hint, .. } = not_offered("bfq", "vda", &["none".into(), "kyber".into()]) else {
            panic!()
        };
        assert!(hint.contains("modprobe bfq") || hint.contains("pick from none, kyber"), "{hint}");
    }

    #[test]
    fn identifiers() {
        assert_eq!(identifier("loop0", None, Some("BFQ low_latency=0")), "loop0: BFQ low_latency=0");
        assert_eq!(
            identifier("WD5000AZRX", Some("ext4 nobarrier"), Some("KYBER")),
            "WD5000AZRX: ext4 nobarrier / KYBER"
        );
        assert_eq!(identifier("host", None, None), "host");
    }

    #[test]
    fn flags_that_need_each_other() {
        let plan = |a: &SweepRequest| Plan::new(a, PathBuf::from("/tmp"), Hygiene::default());
        let a = SweepRequest { device: Some("loop:1G".parse().unwrap()), ..Default::default() };
        assert_eq!(filesystems_of(&a), [FsSpec { fstype: "ext4".into(), options: vec![] }], "a device alone: ext4");
        let sched = |s: &str| s.parse::<Schedulers>().unwrap();
        let one = filesystems_of(&a);
        let two = "ext4,xfs".parse::<FsList>().unwrap().0;
        let ask = |interleave| SweepRequest { interleave, ..Default::default() };
        assert_eq!(order(&ask(None), &one, &sched("none,bfq")).unwrap(), (true, 1), "one file system interleaves");
        assert_eq!(order(&ask(None), &two, &sched("none,bfq")).unwrap(), (true, 1), "inside each block");
        assert_eq!(order(&ask(None), &two, &Schedulers::Keep).unwrap(), (false, 1), "file systems alone: blocks");
        assert!(
            matches!(order(&ask(Some(true)), &two, &Schedulers::Keep), Err(SweepError::Usage(m)) if m.contains("no --scheduler is swept"))
        );
        let a = SweepRequest { filesystems: "ext4".parse::<FsList>().unwrap().0, ..Default::default() };
        assert!(matches!(plan(&a), Err(SweepError::Usage(m)) if m.starts_with("--filesystem needs --device")));
        assert!(!plan(&SweepRequest::default()).unwrap().is_active());
    }

    #[test]
    fn each_flag_is_typed_where_it_is_given() {
        let e = "bfq:low_latency".parse::<Schedulers>().unwrap_err();
        assert_eq!(e.to_string(), "`low_latency` in `bfq:low_latency` is not `tunable=value`");
        assert_eq!("all".parse::<Schedulers>().unwrap(), Schedulers::All);
        assert_eq!("ALL".parse::<Schedulers>().unwrap(), Schedulers::All, "as it prints back");
        assert!(matches!("none,bfq".parse::<Schedulers>().unwrap(), Schedulers::List(l) if l.len() == 2));
        assert!("loop:lots".parse::<DeviceSpec>().is_err());
        assert_eq!("/dev/sdb".parse::<DeviceSpec>().unwrap(), DeviceSpec::Path("/dev/sdb".into()));
        assert!("zfs".parse::<FsList>().is_err());
    }

    #[test]
    fn shuffles_are_permutations_and_all_orders_come_up() {
        let mut s = Shuffler::new();
        let mut counts = std::collections::HashMap::new();
        for _ in 0..600 {
            let mut v: Vec<usize> = (0..3).collect();
            s.shuffle(&mut v);
            let mut sorted = v.clone();
            sorted.sort();
            assert_eq!(sorted, vec![0, 1, 2], "a permutation");
            *counts.entry(v).or_insert(0) += 1;
        }
        // Each of the 6 orders about 100 times; a shuffle that does nothing
        // (or always the same thing) fails here.
        assert_eq!(counts.len(), 6, "{counts:?}");
        assert!(counts.values().all(|&c| c >= 50), "{counts:?}");
    }
}
