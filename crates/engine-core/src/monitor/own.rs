//! A state's workload intervals as columns: one row per interval a trial's
//! workload reported, one column per figure it named.

use super::recording::Recording;
use crate::model::series::{Intervals, MAX_NAMES, Metric, WORKLOAD};

/// The intervals of state `state`, in time order (`None` when its workload
/// reported none); past the recording's `points` per trial, neighbours in
/// one trial are averaged pairwise. At most [`MAX_NAMES`] columns: figures
/// of other names (a workload that names each interval anew) are counted
/// in `left_out`, so the table stays rows × 32 at most.
pub(crate) fn intervals(rec: &Recording, state: usize) -> Option<Intervals> {
    let trials: Vec<&super::recording::Reports> = rec.workload.iter().filter(|r| r.state == state).collect();
    let mut rows: Vec<(f64, u32, usize, usize)> = Vec::new();
    for (t, r) in trials.iter().enumerate() {
        for (k, (at, _)) in r.reported.rows.iter().enumerate() {
            rows.push((r.origin_ms + at.as_secs_f64() * 1000.0, r.trial, t, k));
        }
    }
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut metrics: Vec<Metric> = Vec::new();
    let mut left_out = 0u64;
    // Each trial's name index → column, found once a trial.
    let cols: Vec<Vec<Option<usize>>> = trials
        .iter()
        .map(|r| {
            r.reported
                .names
                .iter()
                .map(|(name, unit)| match metrics.iter().position(|m| m.name == *name) {
                    Some(c) => Some(c),
                    None if metrics.len() < MAX_NAMES => {
                        let values = vec![None; rows.len()];
                        metrics.push(Metric {
                            name: name.clone().into(),
                            source: WORKLOAD.into(),
                            unit: unit.clone().into(),
                            values,
                        });
                        Some(metrics.len() - 1)
                    }
                    None => None,
                })
                .collect()
        })
        .collect();
    for (k, &(_, _, t, row)) in rows.iter().enumerate() {
        for &(c, value) in &trials[t].reported.rows[row].1 {
            match cols[t].get(c as usize).copied().flatten() {
                Some(col) => metrics[col].values[k] = Some(round(value)),
                None => left_out += 1,
            }
        }
    }
    let mut iv = Intervals {
        t_ms: rows.iter().map(|r| round(r.0)).collect(),
        trial: rows.iter().map(|r| r.1).collect(),
        metrics,
        thinned: 0,
        left_out,
    };
    let mut numbers: Vec<u32> = iv.trial.clone();
    numbers.sort_unstable();
    numbers.dedup();
    while iv.t_ms.len() > rec.points.saturating_mul(numbers.len()) {
        halve(&mut iv);
    }
    Some(iv)
}

/// Six significant digits are more than an interval's figure resolves.
fn round(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(5 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// Merges each pair of neighbouring rows of one trial into one: the later
/// time, the mean of the known values.
fn halve(iv: &mut Intervals) {
    let n = iv.t_ms.len();
    let mut keep = Vec::with_capacity(n / 2 + 1);
    let mut i = 0;
    while i < n {
        let pair = i + 1 < n && iv.trial[i + 1] == iv.trial[i];
        keep.push((i, if pair { i + 1 } else { i }));
        i += if pair { 2 } else { 1 };
    }
    iv.t_ms = keep.iter().map(|&(_, b)| iv.t_ms[b]).collect();
    iv.trial = keep.iter().map(|&(_, b)| iv.trial[b]).collect();
    for m in &mut iv.metrics {
        m.values = keep
            .iter()
            .map(|&(a, b)| match (m.values[a], m.values[b]) {
                (Some(x), Some(y)) if a != b => Some((x + y) / 2.0),
                (x, y) => y.or(x),
            })
            .collect();
    }
    iv.thinned += 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::series::Reported;
    use crate::monitor::probe::{Layout, Probes};
    use crate::monitor::recording::Reports;
    use std::time::{Duration, Instant};

    /// (state, trial, ms, figures by name).
    type Row = (usize, u32, f64, Vec<(String, f64)>);

    fn rec(rows: Vec<Row>) -> Recording {
        let root = tempfile::tempdir().unwrap();
        let layout: Layout = Probes::open(root.path(), &[]).layout();
        let origin = Instant::now().checked_sub(Duration::from_secs(3600)).unwrap();
        let mut workload: Vec<Reports> = Vec::new();
        for (state, trial, ms, figures) in rows {
            let at = workload.iter().position(|r| r.state == state && r.trial == trial).unwrap_or_else(|| {
                workload.push(Reports { state, trial, origin_ms: 0.0, reported: Reported::new(origin) });
                workload.len() - 1
            });
            let at_ms = Duration::from_secs_f64(ms / 1000.0);
            workload[at].reported.push(at_ms, figures.iter().map(|(n, v)| (n.as_str(), "1/s", *v)));
        }
        Recording {
            layout,
            devices: vec![],
            interval: Duration::from_secs(1),
            rows: vec![],
            marks: vec![],
            late: 0,
            thinned: 0,
            points: 100,
            unavailable: vec![],
            cpus: 1,
            workload,
        }
    }

    fn fig(name: &str, v: f64) -> (String, f64) {
        (name.into(), v)
    }

    /// A workload that names every interval anew (20,000 of them, over ten
    /// trials) gets 32 columns, not a 20,000 × 20,000 table: each trial
    /// keeps its first 32 names and refuses the rest, the test's columns
    /// stop at 32 and count what they left out.
    #[test]
    fn distinct_names_stay_linear() {
        let rows = (0..20_000u32).map(|k| (0, 1 + k / 2000, f64::from(k), vec![fig(&format!("f{k}"), 1.0)]));
        let r = rec(rows.collect());
        let kept: usize = r.workload.iter().map(|t| t.reported.rows.len()).sum();
        let refused: u64 = r.workload.iter().map(|t| t.reported.refused).sum();
        assert!(r.workload.iter().all(|t| t.reported.names.len() == MAX_NAMES));
        assert_eq!((kept, refused), (10 * MAX_NAMES, 20_000 - 10 * MAX_NAMES as u64));
        let iv = intervals(&r, 0).unwrap();
        let cells: usize = iv.metrics.iter().map(|m| m.values.len()).sum();
        assert_eq!(iv.metrics.len(), MAX_NAMES);
        assert_eq!(cells, MAX_NAMES * iv.t_ms.len(), "the table is rows × 32");
        assert_eq!(iv.t_ms.len(), 10 * MAX_NAMES);
        assert_eq!(iv.left_out, 9 * MAX_NAMES as u64, "the other trials' names are counted, not kept");
    }

    /// A trial's reports thin pairwise to the points a trial keeps: later
    /// time, mean of the figures both have.
    #[test]
    fn a_trials_reports_thin_in_place() {
        let origin = Instant::now().checked_sub(Duration::from_secs(3600)).unwrap();
        let mut r = Reported::new(origin);
        for k in 0..1000u64 {
            let figs = [("iops", "1/s", k as f64), ("lat", "ms", 1.0)];
            r.push(Duration::from_millis(k), figs.into_iter().take(1 + (k % 2) as usize));
        }
        assert_eq!(r.thin(300), 2);
        assert_eq!(r.rows.len(), 250);
        assert_eq!(r.rows[0].0, Duration::from_millis(3));
        assert_eq!(r.rows[0].1, [(0, 1.5), (1, 1.0)]);
    }

    #[test]
    fn a_column_per_figure_in_time_order_and_bounded() {
        let r = rec(vec![
            (0, 2, 2500.0, vec![fig("iops", 30.0)]),
            (0, 1, 1000.0, vec![fig("iops", 10.0), fig("lat_p99", 123.4567891)]),
            (1, 1, 1000.0, vec![fig("iops", 99.0)]),
            (0, 1, 2000.0, vec![fig("iops", 20.0)]),
        ]);
        let iv = intervals(&r, 0).unwrap();
        assert_eq!(iv.t_ms, [1000.0, 2000.0, 2500.0]);
        assert_eq!(iv.trial, [1, 1, 2]);
        assert_eq!(iv.metrics[0].values, [Some(10.0), Some(20.0), Some(30.0)]);
        assert_eq!(iv.metrics[1].values, [Some(123.457), None, None], "six digits; absent where not reported");
        assert!(intervals(&r, 2).is_none());

        // 100 points a trial: 250 rows of two trials are halved once.
        let many = (0..250).map(|k| (0, 1 + k / 125, k as f64, vec![fig("iops", k as f64)]));
        let iv = intervals(&rec(many.collect()), 0).unwrap();
        assert!(iv.t_ms.len() <= 200 && iv.thinned == 1, "{} rows", iv.t_ms.len());
        assert_eq!(iv.metrics[0].values[0], Some(0.5), "pairs averaged");
        assert!(iv.trial.windows(2).all(|w| w[0] <= w[1]));
    }
}
