//! fio's own interval logs as a workload's intervals: a profile that says
//! `interval_logs: fio` gets `--write_bw_log`, `--write_iops_log` and
//! `--log_avg_msec` at the monitors' interval added to fio's arguments,
//! and the logs fio leaves in the scratch directory (one per job, lines of
//! `time ms, value, direction, block size, offset`; bandwidth in KiB/s) are
//! summed over the jobs per interval.

use crate::model::series::Reported;
use crate::sys::safepath::Dir;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

/// The logs' names in the scratch directory: `engine-intervals_bw.1.log` …
const PREFIX: &str = "engine-intervals";
/// Most bytes read of one log and of all together, most jobs' logs read,
/// and most intervals kept (the program writing them is the profile's:
/// its logs are text from outside).
const MAX_BYTES: u64 = 16 << 20;
const MAX_TOTAL: u64 = 64 << 20;
const MAX_JOBS: u32 = 1024;
const MAX_INTERVALS: usize = 100_000;

/// The arguments that make fio write its logs every `every`.
pub(crate) fn args(every: Duration) -> Vec<String> {
    vec![
        format!("--write_bw_log={PREFIX}"),
        format!("--write_iops_log={PREFIX}"),
        format!("--log_avg_msec={}", every.as_millis().max(1)),
    ]
}

/// Per interval: reads/s, writes/s, KiB/s read, KiB/s written.
type Sums = BTreeMap<u64, [f64; 4]>;

/// The logs fio left in `dir` (the trial's scratch directory, held open:
/// the program could have planted links there), with times from `origin`,
/// fio's start; each log is removed once read.
pub(crate) fn read(dir: &Dir, origin: Instant, every: Duration) -> Reported {
    let mut out = Reported::new(origin);
    let ms = u64::try_from(every.as_millis().max(1)).unwrap_or(u64::MAX);
    let mut sums = Sums::new();
    let mut left = MAX_TOTAL;
    for job in 1..=MAX_JOBS {
        let mut found = false;
        for (kind, at) in [("iops", 0), ("bw", 2)] {
            let rel = format!("{PREFIX}_{kind}.{job}.log");
            let Some(text) = slurp(dir, Path::new(&rel), left) else { continue };
            found = true;
            left = left.saturating_sub(text.len() as u64);
            out.refused += add(&text, ms, at, &mut sums);
        }
        if !found {
            break;
        }
    }
    let reads = sums.values().any(|s| s[0] > 0.0);
    let writes = sums.values().any(|s| s[1] > 0.0);
    for (k, s) in sums {
        let mut figures = vec![("iops", "1/s", s[0] + s[1])];
        if reads {
            figures.push((crate::model::series::metric::READ_MB_S, "MB/s", s[2] * 1024.0 / 1e6));
        }
        if writes {
            figures.push((crate::model::series::metric::WRITE_MB_S, "MB/s", s[3] * 1024.0 / 1e6));
        }
        out.push(Duration::from_millis(k.saturating_mul(ms)), figures.into_iter());
    }
    out
}

/// The text of log `rel` beneath `dir` (at most [`MAX_BYTES`] and `left`),
/// removed after; `None` when there is none or it is not a regular file.
fn slurp(dir: &Dir, rel: &Path, left: u64) -> Option<String> {
    let f = dir.open_regular(rel).ok()?;
    let mut bytes = Vec::new();
    f.take(MAX_BYTES.min(left)).read_to_end(&mut bytes).ok()?;
    let _ = dir.remove(rel);
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Adds one log's lines to `sums` (`at`: 0 for an IOPS log, 2 for a
/// bandwidth log; the direction picks reads or writes); how many lines
/// could not be read.
fn add(text: &str, ms: u64, at: usize, sums: &mut Sums) -> u64 {
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut f = line.split(',').map(str::trim);
        let (t, v, d) = (f.next().and_then(|x| x.parse::<u64>().ok()), f.next(), f.next());
        let v = v.and_then(|x| x.parse::<f64>().ok()).filter(|v| v.is_finite() && *v >= 0.0);
        match (t, v, d) {
            (Some(t), Some(v), Some("0" | "1")) => {
                // Jobs log a millisecond or two apart: the nearest interval.
                let k = (t.saturating_add(ms / 2) / ms).max(1);
                if sums.len() >= MAX_INTERVALS && !sums.contains_key(&k) {
                    bad += 1;
                    continue;
                }
                sums.entry(k).or_default()[at + usize::from(d == Some("1"))] += v;
            }
            (Some(_), Some(_), Some(_)) => {} // trims (direction 2)
            _ => bad += 1,
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_jobs_logs_sum_per_interval_and_links_are_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let w = |n: &str, s: &str| std::fs::write(d.path().join(n), s).unwrap();
        w("engine-intervals_iops.1.log", "500, 100, 0, 4096, 0\n1000, 110, 0, 4096, 0\n");
        w("engine-intervals_iops.2.log", "501, 50, 0, 4096, 0\n999, 60, 0, 4096, 0\nnot a line\n");
        w("engine-intervals_bw.1.log", "500, 400, 0, 4096, 0\n1000, 440, 0, 4096, 0\n");
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("engine-intervals_bw.2.log")).unwrap();
        let dir = Dir::open(d.path()).unwrap();
        let started = Instant::now().checked_sub(Duration::from_secs(2)).unwrap();
        let r = read(&dir, started, Duration::from_millis(500));
        let rows: Vec<(u128, Vec<(String, f64)>)> =
            r.figures().map(|(at, f)| (at.as_millis(), f.map(|x| (x.0.to_string(), x.2)).collect())).collect();
        assert_eq!(
            rows,
            [
                (500, vec![("iops".into(), 150.0), ("read_mb_s".into(), 0.4096)]),
                (1000, vec![("iops".into(), 170.0), ("read_mb_s".into(), 0.45056)]),
            ]
        );
        assert_eq!(r.refused, 1, "the line that is not fio's");
        assert!(!d.path().join("engine-intervals_iops.1.log").exists(), "read logs are removed");
        assert!(std::fs::symlink_metadata(d.path().join("engine-intervals_bw.2.log")).is_ok(), "a link is left alone");
        assert_eq!(args(Duration::from_secs(1))[2], "--log_avg_msec=1000");
    }
}
