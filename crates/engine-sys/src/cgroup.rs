//! A cgroup per confined test, holding one per command: the test's budget
//! (its memory and processes, shared by all its steps, servers and trials,
//! and charged what a command leaves behind, such as shared memory) on the
//! test's cgroup; each command's whole process tree's CPU time and block
//! I/O, and a kill that reaches every process in it, on the command's.
//! Memory has no cgroup per command: every command of a test is charged to
//! the test's memory cgroup itself. Two memory cgroups taking turns on a
//! CPU (a client and its server) cost the kernel's per-CPU charge caches a
//! drain at every switch: pgbench with one client lost 3 % to it.
//! cgroup v2 where it is mounted (with whatever controllers it delegates:
//! `cgroup.kill` and CPU time always), and the v1 controllers present
//! (cpuacct, memory, blkio, pids) beside or instead of it; each under
//! engine's own cgroup of that hierarchy, named `engine-<pid>-<n>` so
//! `engine recover` can tell a dead run's leftovers.

use std::fs;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The hierarchies a command's cgroup is made in: engine's own cgroup in each.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// engine's cgroup in the unified (v2) hierarchy.
    pub v2: Option<PathBuf>,
    /// engine's cgroup per v1 controller used (`cpuacct`, `memory`, `blkio`, `pids`).
    pub v1: Vec<(&'static str, PathBuf)>,
    /// A test's memory cgroup (v1 `memory`, or the v2 one, which keeps the
    /// controller to itself), charged for every command made in this
    /// layout: none of them gets a memory cgroup of its own.
    pub memory: Option<PathBuf>,
}

/// Default limit on a confined command's processes (its whole tree).
pub const PIDS_MAX: u64 = 4096;

/// What one command's cgroup allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most processes its tree may have.
    pub pids: u64,
    /// Most memory (bytes) its tree may use, swap not counted as room:
    /// over it, the kernel kills within the cgroup.
    pub memory: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { pids: PIDS_MAX, memory: None }
    }
}

const V1: [&str; 4] = ["cpuacct", "memory", "blkio", "pids"];

impl Layout {
    /// The hierarchies mounted under `root` (normally /sys/fs/cgroup), from
    /// `/proc/self/cgroup`; `None` when there is none to use.
    pub fn detect(root: &Path) -> Option<Layout> {
        let own = fs::read_to_string("/proc/self/cgroup").ok()?;
        let mut l = Layout::default();
        for line in own.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let rel = path.trim_start_matches('/');
            if controllers.is_empty() {
                let base =
                    if root.join("cgroup.controllers").is_file() { root.to_path_buf() } else { root.join("unified") };
                if base.join("cgroup.procs").is_file() {
                    l.v2 = Some(base.join(rel));
                }
                continue;
            }
            for c in controllers.split(',') {
                let Some(&name) = V1.iter().find(|v| **v == c) else { continue };
                let mount =
                    [root.join(controllers), root.join(c)].into_iter().find(|m| m.join("cgroup.procs").is_file());
                if let Some(m) = mount {
                    l.v1.push((name, m.join(rel)));
                }
            }
        }
        (l.v2.is_some() || !l.v1.is_empty()).then_some(l)
    }

    /// Whether a command's memory can be limited here: the v1 memory
    /// controller, or v2 delegating `memory` to engine's children.
    pub fn has_memory(&self) -> bool {
        self.memory.is_some()
            || self.v1.iter().any(|(c, _)| *c == "memory")
            || self.v2.as_ref().is_some_and(|d| {
                fs::read_to_string(d.join("cgroup.subtree_control"))
                    .is_ok_and(|s| s.split_whitespace().any(|c| c == "memory"))
            })
    }

    /// `v2 + v1 cpuacct, memory, blkio, pids`, for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.v2.is_some() {
            parts.push("v2".to_string());
        }
        if !self.v1.is_empty() {
            parts.push(format!("v1 {}", self.v1.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")));
        }
        parts.join(" + ")
    }

    /// Every hierarchy's own cgroup dir.
    pub fn roots(&self) -> impl Iterator<Item = &PathBuf> {
        self.v2.iter().chain(self.v1.iter().map(|(_, p)| p))
    }

    /// Removes the cgroups of engine runs that are gone (killed), killing
    /// what is left in them: under this layout's own cgroups, and where
    /// each dead run recorded it made them (a run from another cgroup — a
    /// service, another login — makes them under its own); returns how many.
    pub fn sweep(&self) -> usize {
        let recorded = registry::dead_runs();
        let mut n = 0;
        for (notes, pid, parents) in &recorded {
            for parent in parents {
                let prefix = format!("engine-{pid}-");
                for e in fs::read_dir(parent).into_iter().flatten().flatten() {
                    if e.file_name().to_string_lossy().starts_with(&prefix) && remove_nested(&e.path()) {
                        n += 1;
                    }
                }
            }
            registry::forget(notes);
        }
        for root in self.roots() {
            for e in fs::read_dir(root).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                let Some(pid) =
                    name.strip_prefix("engine-").and_then(|r| r.split('-').next()).and_then(|p| p.parse::<i32>().ok())
                else {
                    continue;
                };
                if Path::new(&format!("/proc/{pid}")).exists() {
                    continue;
                }
                if remove_nested(&e.path()) {
                    n += 1;
                }
            }
        }
        n
    }
}

/// What a command's process tree used, where the hierarchy tells.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Usage {
    /// CPU time, user and system together, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    /// Peak memory, bytes. A confined command's is its test's peak while
    /// it ran: every command of a test is charged to one memory cgroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// Bytes read from and written to block devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes: Option<u64>,
    /// Forks refused by the process limit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pids_refused: u64,
    /// Processes the kernel killed for going over the memory limit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub oom_kills: u64,
    /// Time its own processes stalled, from its cgroup's pressure files
    /// (cgroup v2 only): the test's share of the system's I/O, CPU and
    /// memory pressure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Pressure>,
}

/// A cgroup's pressure stall totals over its life, microseconds: `some`,
/// time at least one of its runnable tasks waited for the resource; `full`,
/// time all of them did (absent where the kernel does not count it).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Pressure {
    pub io_some_us: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_full_us: Option<u64>,
    pub cpu_some_us: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_full_us: Option<u64>,
    pub memory_some_us: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_full_us: Option<u64>,
}

impl Pressure {
    /// From cgroup v2 folder `d`; `None` where it has no pressure files.
    fn of(d: &Path) -> Option<Pressure> {
        let read = |f: &str| fs::read(d.join(f)).ok().map(|t| super::psi::totals(&t));
        let ((io_some_us, io_full_us), (cpu_some_us, cpu_full_us), (memory_some_us, memory_full_us)) =
            (read("io.pressure")?, read("cpu.pressure")?, read("memory.pressure")?);
        Some(Pressure {
            io_some_us: io_some_us?,
            io_full_us,
            cpu_some_us: cpu_some_us?,
            cpu_full_us,
            memory_some_us: memory_some_us?,
            memory_full_us,
        })
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One command's cgroup, in every hierarchy of the layout.
#[derive(Debug)]
pub struct Cgroup {
    v2: Option<PathBuf>,
    v1: Vec<(&'static str, PathBuf)>,
    /// The test's memory cgroup, which this command is charged to.
    charged: Option<Charged>,
}

/// A command's share of its test's memory cgroup: the peak from its start
/// and the kills since then.
#[derive(Debug)]
struct Charged {
    dir: PathBuf,
    /// v1: the command joins `dir` (v2: it is inside it already).
    join: bool,
    /// v2's `memory.peak`, reset through this descriptor at the start
    /// (Linux 6.12 and later; else no peak is given).
    peak: Option<fs::File>,
    oom_base: u64,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// A test's cgroup, with `limits` for all its commands together: where
    /// v2 has them, its pids, CPU and I/O controllers are handed on to the
    /// commands' cgroups inside it ([`Cgroup::layout`]); memory stays here.
    pub fn create_budget(layout: &Layout, limits: &Limits) -> std::io::Result<Cgroup> {
        let g = Cgroup::create(layout, limits)?;
        if let Some(d) = &g.v2 {
            let offered = fs::read_to_string(d.join("cgroup.controllers")).unwrap_or_default();
            for c in offered.split_whitespace().filter(|c| ["pids", "cpu", "io"].contains(c)) {
                let _ = fs::write(d.join("cgroup.subtree_control"), format!("+{c}"));
            }
        }
        Ok(g)
    }

    /// Where cgroups inside this one are made: in each hierarchy but
    /// memory, whose cgroup is this one for all of them.
    pub fn layout(&self) -> Layout {
        let memory = match self.dir("memory") {
            Some(d) => Some(d.to_path_buf()),
            None => self.v2.clone().filter(|d| d.join("memory.max").exists()),
        };
        let v1 = self.v1.iter().filter(|(c, _)| *c != "memory").cloned().collect();
        Layout { v2: self.v2.clone(), v1, memory }
    }

    /// A new cgroup in each hierarchy, with `limits`.
    pub fn create(layout: &Layout, limits: &Limits) -> std::io::Result<Cgroup> {
        let name = format!("engine-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
        registry::opened(layout.roots());
        let mut g = Cgroup { v2: None, v1: Vec::new(), charged: layout.memory.as_deref().map(Charged::start) };
        if let Some(v2) = &layout.v2 {
            let d = v2.join(&name);
            fs::create_dir(&d)?;
            // Where v2 delegates pids and memory, the limits go here too.
            let _ = fs::write(d.join("pids.max"), limits.pids.to_string());
            g.v2 = Some(d);
        }
        for (c, root) in &layout.v1 {
            let d = root.join(&name);
            if let Err(e) = fs::create_dir(&d) {
                g.remove();
                return Err(e);
            }
            g.v1.push((c, d));
        }
        if let Some(d) = g.dir("pids") {
            fs::write(d.join("pids.max"), limits.pids.to_string())?;
        }
        if let Some(max) = limits.memory {
            g.limit_memory(max)?;
        }
        Ok(g)
    }

    /// `max` bytes of memory, and no swap to spill into. The limit must take
    /// where some hierarchy has the memory controller (else it is refused:
    /// a sandbox promised a limit); the swap part is best effort (absent
    /// where the machine has no swap accounting).
    fn limit_memory(&self, max: u64) -> std::io::Result<()> {
        let mut set = false;
        if let Some(d) = self.dir("memory") {
            fs::write(d.join("memory.limit_in_bytes"), max.to_string())?;
            let _ = fs::write(d.join("memory.memsw.limit_in_bytes"), max.to_string());
            // v1 keeps socket buffers (TCP, UDP, MPTCP) out of the limit
            // above, on a counter of their own that runs only once it has a
            // limit: the kernel then refuses most growth past it, and the
            // socket watch (`sockmem`) adds it to the rest. Best effort:
            // kernels without it (v1's kmem files are going) charge nothing.
            let _ = fs::write(d.join("memory.kmem.tcp.limit_in_bytes"), max.to_string());
            set = true;
        } else if let Some(d) = self.v2.as_ref().filter(|d| d.join("memory.max").exists()) {
            fs::write(d.join("memory.max"), max.to_string())?;
            let _ = fs::write(d.join("memory.swap.max"), "0");
            set = true;
        }
        if set {
            Ok(())
        } else {
            Err(std::io::Error::other(
                "no cgroup hierarchy here has the memory controller, which the memory limit needs",
            ))
        }
    }

    fn dir(&self, controller: &str) -> Option<&Path> {
        self.v1.iter().find(|(c, _)| *c == controller).map(|(_, d)| d.as_path())
    }

    /// Its own cgroups (not the test's memory cgroup it is charged to).
    fn dirs(&self) -> Vec<PathBuf> {
        self.v2.iter().cloned().chain(self.v1.iter().map(|(_, d)| d.clone())).collect()
    }

    /// `cgroup.procs` of each hierarchy, open for the child to write "0" (itself) into.
    pub fn procs(&self) -> std::io::Result<Vec<OwnedFd>> {
        let joined = self.charged.as_ref().filter(|c| c.join).map(|c| c.dir.clone());
        self.dirs()
            .iter()
            .chain(joined.as_ref())
            .map(|d| fs::OpenOptions::new().write(true).open(d.join("cgroup.procs")).map(OwnedFd::from))
            .collect()
    }

    pub fn usage(&self) -> Usage {
        let read = |p: PathBuf| fs::read_to_string(p).ok();
        let num = |p: PathBuf| read(p).and_then(|s| s.trim().parse::<u64>().ok());
        let cpu_seconds = match self.dir("cpuacct") {
            Some(d) => num(d.join("cpuacct.usage")).map(|ns| ns as f64 / 1e9),
            None => self
                .v2
                .as_ref()
                .and_then(|d| read(d.join("cpu.stat")))
                .and_then(|s| field(&s, "usage_usec"))
                .map(|us| us as f64 / 1e6),
        };
        let peak_memory_bytes = match (&self.charged, self.dir("memory")) {
            (Some(c), _) => c.peak(),
            (None, Some(d)) => num(d.join("memory.max_usage_in_bytes")),
            (None, None) => self.v2.as_ref().and_then(|d| num(d.join("memory.peak"))),
        };
        let io = match self.dir("blkio") {
            Some(d) => read(d.join("blkio.throttle.io_service_bytes_recursive")).map(|s| blkio_v1(&s)),
            None => self.v2.as_ref().and_then(|d| read(d.join("io.stat"))).map(|s| io_v2(&s)),
        };
        let events = self.dir("pids").map(Path::to_path_buf).or_else(|| self.v2.clone());
        Usage {
            cpu_seconds,
            peak_memory_bytes,
            read_bytes: io.map(|(r, _)| r),
            written_bytes: io.map(|(_, w)| w),
            pids_refused: events.and_then(|d| read(d.join("pids.events"))).and_then(|s| field(&s, "max")).unwrap_or(0),
            oom_kills: self.oom_kills(),
            pressure: self.v2.as_deref().and_then(Pressure::of),
        }
    }

    /// How many processes the memory limit's killer took (v1
    /// `memory.oom_control`, v2 `memory.events`).
    fn oom_kills(&self) -> u64 {
        match (&self.charged, self.dir("memory")) {
            (Some(c), _) => oom_kills_in(&c.dir).saturating_sub(c.oom_base),
            (None, Some(d)) => oom_kills_in(d),
            (None, None) => self.v2.as_deref().map(oom_kills_in).unwrap_or(0),
        }
    }

    /// Kills every process in the cgroup and waits (up to 5 s) until it is empty.
    pub fn kill(&self) {
        kill_all(&self.dirs(), self.v2.as_deref());
    }

    /// Kills what is left and removes the cgroup, with any inside it.
    pub fn remove(&self) {
        self.kill();
        for d in self.dirs() {
            remove_nested(&d);
        }
    }
}

impl Charged {
    /// From now on, in the test's memory cgroup `dir`: the peak restarts at
    /// the present use (v1: for everyone reading it; the commands whose
    /// figures are kept, steps and trials, run one at a time), the kills
    /// are counted from here.
    fn start(dir: &Path) -> Charged {
        let v1 = dir.join("memory.max_usage_in_bytes");
        let join = v1.exists();
        let peak = if join {
            let _ = fs::write(&v1, "0");
            None
        } else {
            use std::io::Write;
            let f = fs::OpenOptions::new().read(true).write(true).open(dir.join("memory.peak")).ok();
            f.filter(|mut f| f.write_all(b"reset\n").is_ok())
        };
        Charged { dir: dir.to_path_buf(), join, peak, oom_base: oom_kills_in(dir) }
    }

    /// The test's peak memory since this command started, bytes.
    fn peak(&self) -> Option<u64> {
        let text = match &self.peak {
            Some(f) => {
                use std::os::unix::fs::FileExt;
                let mut buf = [0u8; 32];
                let n = f.read_at(&mut buf, 0).ok()?;
                String::from_utf8_lossy(&buf[..n]).into_owned()
            }
            None if self.join => fs::read_to_string(self.dir.join("memory.max_usage_in_bytes")).ok()?,
            None => return None,
        };
        text.trim().parse().ok()
    }
}

/// How many processes the memory limit's killer took in memory cgroup `d`
/// and those inside it (v1 `memory.oom_control`, v2 `memory.events`).
fn oom_kills_in(d: &Path) -> u64 {
    let read = |f: &str| fs::read_to_string(d.join(f)).ok();
    read("memory.oom_control").or_else(|| read("memory.events")).and_then(|s| field(&s, "oom_kill ")).unwrap_or(0)
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.remove();
        registry::closed();
    }
}

/// Kills what is in cgroup `dir` and in the cgroups inside it (a test's
/// commands', one level down), and removes them, innermost first; whether
/// `dir` is gone.
fn remove_nested(dir: &Path) -> bool {
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            kill_all(&[e.path()], None);
            let _ = fs::remove_dir(e.path());
        }
    }
    kill_all(&[dir.to_path_buf()], None);
    fs::remove_dir(dir).is_ok()
}

/// `key value` lines (cpu.stat, pids.events): the value of `key`.
fn field(s: &str, key: &str) -> Option<u64> {
    s.lines().find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
}

/// v1 `blkio.throttle.io_service_bytes_recursive`: (read, written) over devices.
fn blkio_v1(s: &str) -> (u64, u64) {
    let (mut r, mut w) = (0, 0);
    for l in s.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let [_, op, n] = f.as_slice() {
            let n: u64 = n.parse().unwrap_or(0);
            match *op {
                "Read" => r += n,
                "Write" => w += n,
                _ => {}
            }
        }
    }
    (r, w)
}

/// v2 `io.stat`: (rbytes, wbytes) over devices.
fn io_v2(s: &str) -> (u64, u64) {
    let (mut r, mut w) = (0, 0);
    for kv in s.split_whitespace() {
        match kv.split_once('=') {
            Some(("rbytes", n)) => r += n.parse::<u64>().unwrap_or(0),
            Some(("wbytes", n)) => w += n.parse::<u64>().unwrap_or(0),
            _ => {}
        }
    }
    (r, w)
}

/// SIGKILL, once, to every process in cgroup `dir` (and, through v2's
/// `cgroup.kill`, those inside it): a stop that does not look further.
pub(crate) fn kill_now(dir: &Path) {
    if fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    for pid in fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default().lines() {
        if let Ok(pid) = pid.trim().parse::<i32>() {
            // SAFETY: plain syscall.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// SIGKILL to every process in `dirs` (`cgroup.kill` where v2 has it)
/// until they are empty, at most 5 s.
fn kill_all(dirs: &[PathBuf], v2: Option<&Path>) {
    if let Some(d) = v2 {
        let _ = fs::write(d.join("cgroup.kill"), "1");
    }
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let mut any = false;
        for d in dirs {
            for pid in fs::read_to_string(d.join("cgroup.procs")).unwrap_or_default().lines() {
                if let Ok(pid) = pid.trim().parse::<i32>() {
                    any = true;
                    // SAFETY: plain syscall.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        if !any || Instant::now() > end {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_limit_needs_the_memory_controller() {
        let d = tempfile::tempdir().unwrap();
        let pids = Layout { v2: None, v1: vec![("pids", d.path().to_path_buf())], memory: None };
        assert!(!pids.has_memory());
        let v2 = Layout { v2: Some(d.path().to_path_buf()), v1: Vec::new(), memory: None };
        std::fs::write(d.path().join("cgroup.subtree_control"), "cpu io\n").unwrap();
        assert!(!v2.has_memory());
        std::fs::write(d.path().join("cgroup.subtree_control"), "cpu memory pids\n").unwrap();
        assert!(v2.has_memory());
        assert!(Layout { v2: None, v1: vec![("memory", d.path().to_path_buf())], memory: None }.has_memory());
        assert!(Layout { v2: None, v1: Vec::new(), memory: Some(d.path().to_path_buf()) }.has_memory());
    }

    #[test]
    fn stat_files() {
        assert_eq!(field("usage_usec 1500\nuser_usec 1000\n", "usage_usec"), Some(1500));
        assert_eq!(field("max 3\n", "max"), Some(3));
        assert_eq!(blkio_v1("8:0 Read 4096\n8:0 Write 8192\n8:0 Total 12288\nTotal 12288\n"), (4096, 8192));
        assert_eq!(io_v2("8:0 rbytes=10 wbytes=20 rios=1\n7:0 rbytes=5 wbytes=0\n"), (15, 20));
    }
}

/// Where each run notes the cgroups it makes its own in, so that
/// `engine recover` finds a killed run's from any cgroup: a root-only
/// folder in /run (gone at boot with the cgroups), a file per run named
/// `PID-START` (its start time: a pid alone may be another process's by
/// then), a parent folder per line; removed with the run's last cgroup.
mod registry {
    use std::collections::HashSet;
    use std::fs;
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    const DIR: &str = "/run/engine/cgroups";

    /// The parents noted, and how many of this run's cgroups exist.
    static STATE: Mutex<(Option<HashSet<PathBuf>>, usize)> = Mutex::new((None, 0));

    /// The folder, when it is root's own, not writable by others and no
    /// link (else nothing is noted or trusted).
    fn dir() -> Option<&'static Path> {
        let dir = Path::new(DIR);
        let _ = fs::DirBuilder::new().recursive(true).mode(0o700).create(dir);
        let ok = [dir, Path::new("/run/engine")]
            .iter()
            .all(|d| fs::symlink_metadata(d).is_ok_and(|m| m.is_dir() && m.uid() == 0 && m.mode() & 0o022 == 0));
        ok.then_some(dir)
    }

    fn own_name() -> Option<String> {
        let pid = std::process::id() as i32;
        Some(format!("{pid}-{}", crate::proc::start_ticks(pid)?))
    }

    /// A cgroup is being made in each of `parents`: each noted once while
    /// the run has cgroups. Cgroups inside one of engine's own (a
    /// command's inside its test's) go with it: not noted.
    pub(super) fn opened<'a>(parents: impl Iterator<Item = &'a PathBuf>) {
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        state.1 += 1;
        for parent in parents {
            if parent.file_name().is_some_and(|n| n.to_string_lossy().starts_with("engine-")) {
                continue;
            }
            if !state.0.get_or_insert_with(HashSet::new).insert(parent.clone()) {
                continue;
            }
            let (Some(dir), Some(name)) = (dir(), own_name()) else { continue };
            let file = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(dir.join(name));
            if let Ok(mut f) = file {
                let _ = writeln!(f, "{}", parent.display());
            }
        }
    }

    /// A cgroup of this run is gone: with the last, so are its notes.
    pub(super) fn closed() {
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        state.1 = state.1.saturating_sub(1);
        if state.1 == 0
            && state.0.take().is_some_and(|n| !n.is_empty())
            && let (Some(dir), Some(name)) = (dir(), own_name())
        {
            let _ = fs::remove_file(dir.join(name));
        }
    }

    /// Runs that noted cgroups and are gone: each one's notes, pid and
    /// parents.
    pub(super) fn dead_runs() -> Vec<(PathBuf, i32, Vec<PathBuf>)> {
        let Some(dir) = dir() else { return Vec::new() };
        let mut dead = Vec::new();
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let parsed = name.split_once('-').and_then(|(p, t)| Some((p.parse::<i32>().ok()?, t.parse::<u64>().ok()?)));
            let Some((pid, ticks)) = parsed else { continue };
            if crate::proc::process_running(pid, Some(ticks)) {
                continue;
            }
            let text = fs::read_to_string(e.path()).unwrap_or_default();
            // Only cgroup folders: a line naming anything else is skipped.
            let parents = text
                .lines()
                .map(PathBuf::from)
                .filter(|p| p.is_absolute() && !p.components().any(|c| c.as_os_str() == ".."))
                .filter(|p| p.join("cgroup.procs").is_file())
                .collect();
            dead.push((e.path(), pid, parents));
        }
        dead
    }

    /// Drops a dead run's notes.
    pub(super) fn forget(notes: &Path) {
        let _ = fs::remove_file(notes);
    }
}
