//! Raw counter rows to metrics: iostat's `-x` columns per device, vmstat's
//! CPU split, the memory and pressure levels — each over the time since the
//! sample before it, within the trials of one state.

use super::probe::{CPU, Layout, NA};
use super::recording::Recording;
use crate::model::series::{FORMAT, Metric, Series, TrialSpan, metric};

/// The block layer's sectors are 512 bytes whatever the device's own.
const SECTOR: f64 = 512.0;

/// What one metric is computed from: the row before and the row now, and
/// the seconds between them.
type Formula = fn(prev: &[u64], now: &[u64], dt: f64) -> Option<f64>;

/// A counter's increase; `None` when either is not available or it went
/// backwards (a reset or a wrap).
fn inc(prev: &[u64], now: &[u64], i: usize) -> Option<f64> {
    let (a, b) = (prev[i], now[i]);
    (a != NA && b != NA && b >= a).then(|| (b - a) as f64)
}

/// A level at the row now.
fn level(now: &[u64], i: usize) -> Option<f64> {
    (now[i] != NA).then(|| now[i] as f64)
}

/// The share (%) of the CPU time since the row before spent in `parts`.
fn cpu_share(prev: &[u64], now: &[u64], parts: &[usize]) -> Option<f64> {
    let total: f64 = (0..CPU).map(|k| inc(prev, now, Layout::CPU + k)).sum::<Option<f64>>()?;
    let part: f64 = parts.iter().map(|&k| inc(prev, now, Layout::CPU + k)).sum::<Option<f64>>()?;
    (total > 0.0).then(|| 100.0 * part / total)
}

/// The system's metrics: (name, unit, formula).
const SYSTEM: &[(&str, &str, Formula)] = &[
    (metric::CPU_USER, "%", |p, n, _| cpu_share(p, n, &[0, 1])),
    (metric::CPU_SYSTEM, "%", |p, n, _| cpu_share(p, n, &[2, 5, 6])),
    (metric::CPU_IOWAIT, "%", |p, n, _| cpu_share(p, n, &[4])),
    (metric::CPU_STEAL, "%", |p, n, _| cpu_share(p, n, &[7])),
    (metric::CPU_IDLE, "%", |p, n, _| cpu_share(p, n, &[3])),
    (metric::DIRTY, "MiB", |_, n, _| level(n, Layout::MEM).map(kib_to_mib)),
    (metric::WRITEBACK, "MiB", |_, n, _| level(n, Layout::MEM + 1).map(kib_to_mib)),
    (metric::CACHED, "MiB", |_, n, _| level(n, Layout::MEM + 2).map(kib_to_mib)),
    (metric::PSI_IO_SOME, "%", |p, n, dt| stall(p, n, dt, 0)),
    (metric::PSI_IO_FULL, "%", |p, n, dt| stall(p, n, dt, 1)),
    (metric::PSI_CPU_SOME, "%", |p, n, dt| stall(p, n, dt, 2)),
    (metric::PSI_CPU_FULL, "%", |p, n, dt| stall(p, n, dt, 3)),
    (metric::PSI_MEMORY_SOME, "%", |p, n, dt| stall(p, n, dt, 4)),
    (metric::PSI_MEMORY_FULL, "%", |p, n, dt| stall(p, n, dt, 5)),
    ("cpu_mhz", "MHz", |_, n, _| {
        let (sum, count) = (level(n, Layout::FREQ)?, level(n, Layout::FREQ + 1)?);
        (count > 0.0).then(|| sum / count / 1000.0)
    }),
    ("temperature", "°C", |_, n, _| level(n, Layout::TEMP).map(|m| m / 1000.0)),
];

fn kib_to_mib(kib: f64) -> f64 {
    kib / 1024.0
}

/// The share (%) of the time since the row before that tasks stalled (PSI `total=` is µs).
fn stall(prev: &[u64], now: &[u64], dt: f64, k: usize) -> Option<f64> {
    inc(prev, now, Layout::PSI + k).map(|us| (100.0 * us / 1e6 / dt).min(100.0))
}

/// A device's metrics, given the offset of its nine counters: (name, unit, formula).
type DeviceFormula = fn(prev: &[u64], now: &[u64], dt: f64, at: usize) -> Option<f64>;

const DEVICE: &[(&str, &str, DeviceFormula)] = &[
    (metric::READS_S, "1/s", |p, n, dt, at| inc(p, n, at).map(|x| x / dt)),
    (metric::WRITES_S, "1/s", |p, n, dt, at| inc(p, n, at + 3).map(|x| x / dt)),
    (metric::READ_MB_S, "MB/s", |p, n, dt, at| inc(p, n, at + 1).map(|s| s * SECTOR / 1e6 / dt)),
    (metric::WRITE_MB_S, "MB/s", |p, n, dt, at| inc(p, n, at + 4).map(|s| s * SECTOR / 1e6 / dt)),
    // iostat's %util: the share of the time with a request in flight (io_ticks, ms).
    (metric::UTIL, "%", |p, n, dt, at| inc(p, n, at + 7).map(|ms| (100.0 * ms / 1000.0 / dt).min(100.0))),
    // iostat's aqu-sz: time in queue (ms, weighted by requests) per ms.
    (metric::QUEUE_DEPTH, "requests", |p, n, dt, at| inc(p, n, at + 8).map(|ms| ms / 1000.0 / dt)),
    // iostat's await: ms per completed request, reads and writes together.
    (metric::AWAIT, "ms", |p, n, _, at| {
        let done = inc(p, n, at)? + inc(p, n, at + 3)?;
        let ticks = inc(p, n, at + 2)? + inc(p, n, at + 5)?;
        (done > 0.0).then(|| ticks / done)
    }),
];

/// The device whose counters start at `at`, between two rows, for the live line.
pub(crate) fn live(prev: &[u64], now: &[u64], at: usize) -> Option<crate::events::LiveReading> {
    let dt = now[Layout::TIME].saturating_sub(prev[Layout::TIME]) as f64 / 1e9;
    if dt <= 0.0 {
        return None;
    }
    let f = |name: &str| DEVICE.iter().find(|(n, ..)| *n == name).and_then(|(_, _, f)| f(prev, now, dt, at));
    Some(crate::events::LiveReading {
        read_mb_s: f(metric::READ_MB_S)?,
        write_mb_s: f(metric::WRITE_MB_S)?,
        iops: f(metric::READS_S)? + f(metric::WRITES_S)?,
        util_pct: f(metric::UTIL)?,
        queue_depth: f(metric::QUEUE_DEPTH)?,
    })
}

/// The series of state `state`: the samples inside its trials, each
/// trial's first one (its start) without values of its own.
pub(crate) fn series(rec: &Recording, state: usize) -> Series {
    let spans = spans(rec, state);
    let mut t_ms = Vec::new();
    let mut columns: Vec<Vec<Option<f64>>> = vec![Vec::new(); SYSTEM.len() + DEVICE.len() * rec.devices.len()];
    // Microseconds are more than a sample's time resolves.
    let ms = |r: usize| round(rec.row(r)[Layout::TIME] as f64 / 1e6);
    let mut firsts = Vec::new();
    for &(_, _, from, to) in &spans {
        firsts.push(t_ms.len());
        t_ms.push(ms(from));
        columns.iter_mut().for_each(|c| c.push(None));
        for r in from + 1..=to {
            let (prev, now) = (rec.row(r - 1), rec.row(r));
            let dt = (now[Layout::TIME].saturating_sub(prev[Layout::TIME])) as f64 / 1e9;
            t_ms.push(ms(r));
            let mut c = columns.iter_mut();
            for (_, _, f) in SYSTEM {
                c.next().unwrap().push(if dt > 0.0 { f(prev, now, dt).map(round) } else { None });
            }
            for d in 0..rec.devices.len() {
                let at = rec.layout.device(d);
                for (_, _, f) in DEVICE {
                    c.next().unwrap().push(if dt > 0.0 { f(prev, now, dt, at).map(round) } else { None });
                }
            }
        }
    }
    let names = SYSTEM
        .iter()
        .map(|(n, u, _)| ("system".to_string(), *n, *u))
        .chain(rec.devices.iter().flat_map(|d| DEVICE.iter().map(move |(n, u, _)| (d.clone(), *n, *u))));
    let metrics = names
        .zip(columns)
        .filter(|(_, values)| values.iter().any(Option::is_some))
        .map(|((source, name, unit), values)| Metric { name: name.into(), source, unit: unit.into(), values })
        .collect();
    Series {
        format: FORMAT.into(),
        interval_ms: rec.interval.as_millis() as u64,
        t_ms,
        metrics,
        trials: spans
            .iter()
            .zip(firsts)
            .map(|(&(trial, trials, from, to), first)| TrialSpan {
                trial,
                start_ms: ms(from),
                end_ms: ms(to),
                first,
                trials,
            })
            .collect(),
        unavailable: rec.unavailable.clone(),
        late: rec.late,
        thinned: rec.thinned,
        workload: super::own::intervals(rec, state),
    }
}

/// Three decimals are more than any of these metrics resolves.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// (first trial, trials, first row, last row) of `state`'s trials that
/// have both marks. A trial that began and ended on one row (shorter than
/// the sampling resolves) takes the interval after it; trials whose rows
/// overlap share one span.
fn spans(rec: &Recording, state: usize) -> Vec<(u32, u32, usize, usize)> {
    let last = rec.len().saturating_sub(1);
    let mut out: Vec<(u32, u32, usize, usize)> = Vec::new();
    let mut open: Option<(u32, usize)> = None;
    for &(m, row) in rec.marks.iter().filter(|(m, _)| m.state == state) {
        match (m.begin, open) {
            (true, _) => open = Some((m.trial, row)),
            (false, Some((t, from))) if t == m.trial => {
                open = None;
                let to = row.max((from + 1).min(last));
                if to <= from {
                    continue;
                }
                match out.last_mut() {
                    Some(prev) if from < prev.3 => {
                        prev.1 += 1;
                        prev.3 = prev.3.max(to);
                    }
                    _ => out.push((t, 1, from, to)),
                }
            }
            _ => open = None,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::probe::{DEV, Layout};
    use super::super::sampler::{Mark, Recording};
    use super::*;
    use std::time::Duration;

    /// A recording of one device whose rows the test writes.
    fn recording(rows: &[(u64, [u64; DEV])], marks: Vec<(Mark, usize)>) -> Recording {
        let layout = Layout { devices: 1 };
        let mut flat = Vec::new();
        for (t_ms, dev) in rows {
            let mut row = vec![NA; layout.width()];
            row[Layout::TIME] = t_ms * 1_000_000;
            row[layout.device(0)..].copy_from_slice(dev);
            flat.extend(row);
        }
        Recording {
            layout,
            devices: vec!["loop9".into()],
            interval: Duration::from_secs(1),
            rows: flat,
            marks,
            late: 0,
            thinned: 0,
            points: crate::monitor::POINTS,
            unavailable: vec![],
            cpus: 2,
            workload: vec![],
        }
    }

    /// iostat's formulas on counters a test wrote: 2,000 sectors (1.024 MB)
    /// a second, busy half the time, two requests queued on average.
    #[test]
    fn device_columns_are_iostats() {
        let m = |trial, begin| Mark { state: 0, trial, begin };
        // reads, rsect, rticks, writes, wsect, wticks, in flight, io_ticks, queue
        let rec = recording(
            &[
                (0, [0, 0, 0, 0, 0, 0, 0, 0, 0]),
                (1000, [100, 0, 0, 100, 2000, 300, 1, 500, 2000]),
                (2000, [200, 0, 0, 200, 4000, 600, 1, 1000, 4000]),
                (2500, [200, 0, 0, 150, 4000, 600, 1, 1000, 4000]),
            ],
            vec![(m(1, true), 0), (m(1, false), 3)],
        );
        let s = series(&rec, 0);
        assert_eq!(s.t_ms, [0.0, 1000.0, 2000.0, 2500.0]);
        let col = |k: &str| s.metric(k).unwrap_or_else(|| panic!("{k}: {s:?}")).values.clone();
        assert_eq!(col("loop9:writes_s"), [None, Some(100.0), Some(100.0), None], "a counter going back is no value");
        assert_eq!(col("loop9:write_mb_s"), [None, Some(1.024), Some(1.024), Some(0.0)]);
        assert_eq!(col("loop9:util"), [None, Some(50.0), Some(50.0), Some(0.0)]);
        assert_eq!(col("loop9:queue_depth"), [None, Some(2.0), Some(2.0), Some(0.0)]);
        assert_eq!(col("loop9:await")[1], Some(1.5), "300 ms over 200 requests");
        assert_eq!(col("loop9:reads_s")[1], Some(100.0));
        assert!(s.metric("system:cpu_user").is_none(), "a metric never available is left out");
        assert_eq!(s.trials, [TrialSpan { trial: 1, start_ms: 0.0, end_ms: 2500.0, first: 0, trials: 1 }]);
    }

    /// Each state gets its own trials; samples between them are left out.
    #[test]
    fn states_get_their_own_trials() {
        let m = |state, trial, begin| Mark { state, trial, begin };
        let z = [0u64; DEV];
        let rec = recording(
            &[(0, z), (10, z), (20, z), (30, z), (40, z), (50, z)],
            vec![
                (m(0, 1, true), 0),
                (m(0, 1, false), 1),
                (m(1, 1, true), 2),
                (m(1, 1, false), 3),
                (m(0, 2, true), 4),
                (m(0, 2, false), 5),
            ],
        );
        let a = series(&rec, 0);
        assert_eq!(a.t_ms, [0.0, 10.0, 40.0, 50.0]);
        assert_eq!(a.trials.iter().map(|t| (t.trial, t.first)).collect::<Vec<_>>(), [(1, 0), (2, 2)]);
        assert_eq!(series(&rec, 1).t_ms, [20.0, 30.0]);
        assert!(series(&rec, 2).t_ms.is_empty());
    }

    /// Trials shorter than the sampling resolves share the interval after
    /// their row, in one span.
    #[test]
    fn short_trials_share_a_span() {
        let m = |trial, begin| Mark { state: 0, trial, begin };
        let z = [0u64; DEV];
        let marks = (1..=5).flat_map(|t| [(m(t, true), 1), (m(t, false), 1)]).collect();
        let rec = recording(&[(0, z), (10, z), (20, z)], marks);
        let s = series(&rec, 0);
        assert_eq!(s.trials, [TrialSpan { trial: 1, start_ms: 10.0, end_ms: 20.0, first: 0, trials: 5 }]);
        assert_eq!(s.t_ms, [10.0, 20.0]);
    }
}
