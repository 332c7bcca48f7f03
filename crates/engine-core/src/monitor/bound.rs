//! What bounded a result: from one state's series and its trials' CPU
//! time, the resource at its limit, with the numbers that show it.
//!
//! The rule (the book, "Monitors"), on the median of the samples inside the
//! trials (a trial's first second of ramp-up does not decide it):
//! - `memory` when the device saw far less than the result claims (the
//!   counters' "served from memory");
//! - else `contention` when others' processes took the CPU: at least half a
//!   core of user time outside the test's processes (kernel work done for
//!   the test, such as a loop device's, is system time and does not count);
//! - else `cpu` when the test kept a core busy (its processes, or engine's
//!   own threads for a built-in workload: ≥ 0.9 core) or every core was busy
//!   (≥ 90 % of all, the kernel's work for it included), or kept a loop
//!   device with no block device under it (a file in memory) busy ≥ 50 %
//!   of the time — its "device time" is CPU work, the test's or the loop's
//!   kernel thread's, never a device's limit; steal ≥ 10 % is
//!   named in its evidence (the hypervisor took part of the CPU it needed);
//! - else `contention` when steal was ≥ 10 %;
//! - else `device` when a device under test was busy ≥ 80 % of the time
//!   with ≥ 0.9 requests queued (blk-mq's `io_ticks` count by the jiffy, so
//!   a saturated virtio device reads 85–95 %, not 100: 64 KB direct reads at
//!   queue depth 16 through a loop device on this VM's disk showed a median
//!   near 88 % with 13 requests queued); `mixed` when, besides, the test
//!   kept most of a core busy (≥ 0.6);
//! - else nothing is named.

use crate::model::result::{Bound, BoundBy, TrialIo};
use crate::model::series::{Series, metric};
use std::time::Duration;

const STEAL_PCT: f64 = 10.0;
const OTHERS_CORES: f64 = 0.5;
const CORE: f64 = 0.9;
const ALL_CORES: f64 = 0.9;
const UTIL_PCT: f64 = 80.0;
const OVER_MEMORY_PCT: f64 = 50.0;
const QUEUED: f64 = 0.9;
const MOST_OF_A_CORE: f64 = 0.6;

/// What a state's trials showed, before a result's own evidence (memory) is added.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Signals {
    device: Option<String>,
    cpu: Option<String>,
    /// The test's CPU use in cores, for `mixed`.
    cores: f64,
    contention: Option<String>,
}

/// The median of `name` (from `source`) over the trials' samples.
fn median(s: &Series, source: &str, name: &str) -> Option<f64> {
    let m = s.metrics.iter().find(|m| m.name == name && m.source == source)?;
    let mut v: Vec<f64> = s.trial_samples().flat_map(|(_, r)| m.values[r].iter().flatten().copied()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The busiest device under test when it was saturated: (name, median
/// utilisation, median queue, whether it is a loop device over memory —
/// a loop device and no block device found under it). A loop device over
/// memory counts from [`OVER_MEMORY_PCT`]: its device time is all CPU (the
/// test's thread or the loop's kernel thread), never a device's limit.
fn saturated(s: &Series) -> Option<(&str, f64, f64, bool)> {
    let sources: Vec<&str> = s
        .metrics
        .iter()
        .filter(|m| m.name == metric::UTIL && m.source != "system")
        .map(|m| m.source.as_str())
        .collect();
    let (d, util, queued) = sources
        .iter()
        .filter_map(|d| Some((*d, median(s, d, metric::UTIL)?, median(s, d, metric::QUEUE_DEPTH).unwrap_or(0.0))))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let over_memory = d.starts_with("loop") && sources.len() == 1;
    let busy = if over_memory { util >= OVER_MEMORY_PCT } else { util >= UTIL_PCT && queued >= QUEUED };
    busy.then_some((d, util, queued, over_memory))
}

/// The signals of one state: its series, its trials' CPU time and wall
/// times; `in_process`: the workload runs in engine itself (built-in).
pub(crate) fn signals(s: &Series, io: &[TrialIo], walls: &[Duration], in_process: bool, cpus: usize) -> Signals {
    let wall: f64 = walls.iter().map(Duration::as_secs_f64).sum();
    let per_core = |seconds: f64| if wall > 0.0 { seconds / wall } else { 0.0 };
    let user = per_core(io.iter().map(|t| t.user_seconds).sum());
    let cores = user + per_core(io.iter().map(|t| t.system_seconds).sum());
    let mut out = Signals { cores, ..Signals::default() };
    let sys = |name| median(s, "system", name);
    let n = cpus as f64;
    let steal = sys(metric::CPU_STEAL).unwrap_or(0.0);
    let others = (sys(metric::CPU_USER).unwrap_or(0.0) / 100.0 * n - user).max(0.0);
    let mut waited =
        sys(metric::PSI_CPU_SOME).map(|w| format!("; tasks waited for a CPU {w:.0} % of the time")).unwrap_or_default();
    // A confined test's cgroup says how long its own processes waited.
    let seconds: Vec<f64> = walls.iter().map(Duration::as_secs_f64).collect();
    if let Some([_, own, _]) = crate::model::result::own_pressure(io, &seconds) {
        waited.push_str(&match waited.is_empty() {
            true => format!("; the test's own processes waited for a CPU {own:.0} % of the time"),
            false => format!(", the test's own {own:.0} %"),
        });
    }
    let idle = sys(metric::CPU_IDLE).unwrap_or(100.0) + sys(metric::CPU_IOWAIT).unwrap_or(0.0);
    let all_busy = ((100.0 - idle - steal) / 100.0 * n).clamp(0.0, n);
    let who = if in_process { "engine (the built-in workload)" } else { "the test's processes" };
    let stolen = if steal >= STEAL_PCT { format!("; steal {steal:.0} %") } else { String::new() };
    if cores >= CORE || all_busy >= ALL_CORES * n {
        out.cpu = Some(format!("{cores:.2} core(s) busy in {who}, {all_busy:.1} of {cpus} in all{stolen}"));
    }
    if let Some((d, util, queued, over_memory)) = saturated(s) {
        let busy = format!("{d} busy {util:.0} % of the time, {queued:.1} requests queued on average");
        if over_memory {
            // A loop device with no block device under it (a file in
            // memory): its "device time" is a kernel thread's copying.
            out.cpu.get_or_insert(format!(
                "{busy}: a loop device over memory, whose copies are CPU work; {cores:.2} core(s) busy in {who}, {all_busy:.1} of {cpus} in all{stolen}"
            ));
        } else {
            out.device = Some(busy);
        }
    }
    // Others' processes first; the hypervisor's steal counts against a
    // test that was not itself saturating the CPU.
    if others >= OTHERS_CORES {
        out.contention = Some(format!("{others:.2} core(s) of user time outside the test{waited}"));
    } else if steal >= STEAL_PCT && out.cpu.is_none() {
        out.contention = Some(format!("steal {steal:.0} %: the hypervisor ran others on this machine's CPUs{waited}"));
    }
    out
}

/// What bounded a result of a state with `signals`; `memory`: its "served
/// from memory" evidence, when the device saw far less than it claims.
pub(crate) fn bound(signals: &Signals, memory: Option<&str>) -> Option<Bound> {
    let named = |by, evidence: &str| Some(Bound { by, evidence: evidence.to_string() });
    if let Some(m) = memory {
        return named(BoundBy::Memory, m.strip_prefix("served from memory: ").unwrap_or(m));
    }
    if let Some(c) = &signals.contention {
        return named(BoundBy::Contention, c);
    }
    if let Some(c) = &signals.cpu {
        return named(BoundBy::Cpu, c);
    }
    let d = signals.device.as_deref()?;
    if signals.cores >= MOST_OF_A_CORE {
        return named(BoundBy::Mixed, &format!("{d}; {:.2} core(s) busy in the test", signals.cores));
    }
    named(BoundBy::Device, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::series::{FORMAT, Metric, TrialSpan};

    /// A series of one trial whose metrics hold `values` throughout.
    fn series(values: &[(&str, &str, f64)]) -> Series {
        Series {
            format: FORMAT.into(),
            interval_ms: 1000,
            t_ms: vec![0.0, 1000.0, 2000.0],
            metrics: values
                .iter()
                .map(|(src, name, v)| Metric {
                    name: (*name).into(),
                    source: src.to_string(),
                    unit: String::new().into(),
                    values: vec![None, Some(*v), Some(*v)],
                })
                .collect(),
            trials: vec![TrialSpan { trial: 1, start_ms: 0.0, end_ms: 2000.0, first: 0, trials: 1 }],
            unavailable: vec![],
            late: 0,
            thinned: 0,
            workload: None,
        }
    }

    fn cpu(seconds: f64) -> Vec<TrialIo> {
        vec![TrialIo { user_seconds: seconds / 2.0, system_seconds: seconds / 2.0, ..TrialIo::default() }]
    }

    #[test]
    fn each_resource_is_named_with_its_numbers() {
        let two = [Duration::from_secs(2)];
        let quiet = [("system", "cpu_idle", 60.0), ("system", "cpu_iowait", 30.0)];
        let disk = [quiet[0], quiet[1], ("loop0", "util", 99.0), ("loop0", "queue_depth", 1.8), ("vda", "util", 40.0)];
        let b = bound(&signals(&series(&disk), &cpu(0.4), &two, true, 2), None).unwrap();
        assert_eq!(b.by, BoundBy::Device);
        assert_eq!(b.evidence, "loop0 busy 99 % of the time, 1.8 requests queued on average");

        let hot = [("system", "cpu_idle", 40.0), ("loop0", "util", 100.0), ("loop0", "queue_depth", 1.0)];
        let b = bound(&signals(&series(&hot), &cpu(1.96), &two, true, 2), None).unwrap();
        assert_eq!(b.by, BoundBy::Cpu, "a saturated core wins over a busy loop device: {b:?}");
        assert_eq!(b.evidence, "0.98 core(s) busy in engine (the built-in workload), 1.2 of 2 in all");

        // A loop device with nothing under it (a file in /dev/shm): its
        // busy time is a kernel thread copying, so the CPU bounds it.
        let shm = [quiet[0], quiet[1], ("loop1", "util", 91.0), ("loop1", "queue_depth", 7.4)];
        let b = bound(&signals(&series(&shm), &cpu(1.5), &two, true, 2), None).unwrap();
        assert_eq!(b.by, BoundBy::Cpu, "{b:?}");
        assert!(
            b.evidence
                .starts_with("loop1 busy 91 % of the time, 7.4 requests queued on average: a loop device over memory"),
            "{}",
            b.evidence
        );
        // Busy three quarters of the time, the test's thread at half a core
        // and the loop's kernel thread copying: still the CPU, not the device.
        let shm_fast = [quiet[0], quiet[1], ("loop2", "util", 73.0), ("loop2", "queue_depth", 0.6)];
        let b = bound(&signals(&series(&shm_fast), &cpu(0.9), &two, true, 2), None).unwrap();
        assert_eq!(b.by, BoundBy::Cpu, "{b:?}");
        let idle_shm = [quiet[0], quiet[1], ("loop2", "util", 20.0), ("loop2", "queue_depth", 0.1)];
        assert_eq!(bound(&signals(&series(&idle_shm), &cpu(0.2), &two, true, 2), None), None, "no I/O to speak of");

        let b = bound(&signals(&series(&disk), &cpu(1.4), &two, false, 2), None).unwrap();
        assert_eq!(b.by, BoundBy::Mixed, "{b:?}");

        // A hog: a core of user time that is not the test's.
        let squeezed = [("system", "cpu_idle", 0.0), ("system", "cpu_user", 75.0), ("system", "psi_cpu_some", 45.0)];
        let b = bound(&signals(&series(&squeezed), &cpu(1.0), &two, false, 2), None).unwrap();
        assert_eq!(
            (b.by, b.evidence.as_str()),
            (
                BoundBy::Contention,
                "1.25 core(s) of user time outside the test; tasks waited for a CPU 45 % of the time"
            )
        );
        // Confined, its cgroup says how long the test's own processes waited.
        let mut boxed = cpu(1.0);
        boxed[0].cgroup = Some(crate::sys::cgroup::Usage {
            pressure: Some(crate::sys::cgroup::Pressure { cpu_some_us: 600_000, ..Default::default() }),
            ..Default::default()
        });
        let b = bound(&signals(&series(&squeezed), &boxed, &two, false, 2), None).unwrap();
        assert!(b.evidence.ends_with("waited for a CPU 45 % of the time, the test's own 30 %"), "{}", b.evidence);
        // The kernel working for the test (a loop device over memory) is no contention.
        let kernel = [("system", "cpu_idle", 0.0), ("system", "cpu_user", 10.0), ("system", "cpu_system", 90.0)];
        assert_eq!(bound(&signals(&series(&kernel), &cpu(1.0), &two, true, 2), None).unwrap().by, BoundBy::Cpu);
        let stolen = [("system", "cpu_steal", 12.0)];
        assert_eq!(bound(&signals(&series(&stolen), &cpu(0.1), &two, false, 2), None).unwrap().by, BoundBy::Contention);

        let m = bound(
            &signals(&series(&disk), &cpu(0.1), &two, false, 2),
            Some("served from memory: the device read 0.1 MB"),
        );
        assert_eq!(m, Some(Bound { by: BoundBy::Memory, evidence: "the device read 0.1 MB".into() }));

        let idle = [("system", "cpu_idle", 95.0), ("vda", "util", 20.0), ("vda", "queue_depth", 0.2)];
        assert_eq!(bound(&signals(&series(&idle), &cpu(0.1), &two, false, 2), None), None, "nothing at its limit");
    }
}
