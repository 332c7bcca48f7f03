//! A state's workload intervals as columns: one row per interval a trial's
//! workload reported, one column per figure it named.

use super::recording::Recording;
use crate::model::series::{Intervals, Metric, WORKLOAD};

/// The intervals of state `state`, in time order (`None` when its workload
/// reported none); past the recording's `points` per trial, neighbours in
/// one trial are averaged pairwise.
pub(crate) fn intervals(rec: &Recording, state: usize) -> Option<Intervals> {
    let mut rows: Vec<&(usize, u32, f64, Vec<super::recording::Figure>)> =
        rec.workload.iter().filter(|r| r.0 == state).collect();
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.2.total_cmp(&b.2));
    let mut metrics: Vec<Metric> = Vec::new();
    for (k, (_, _, _, figures)) in rows.iter().enumerate() {
        for (name, unit, value) in figures {
            let col = match metrics.iter().position(|m| m.name == *name) {
                Some(c) => c,
                None => {
                    metrics.push(Metric {
                        name: name.clone(),
                        source: WORKLOAD.into(),
                        unit: unit.clone(),
                        values: vec![None; rows.len()],
                    });
                    metrics.len() - 1
                }
            };
            metrics[col].values[k] = Some(round(*value));
        }
    }
    let mut iv = Intervals {
        t_ms: rows.iter().map(|r| round(r.2)).collect(),
        trial: rows.iter().map(|r| r.1).collect(),
        metrics,
        thinned: 0,
    };
    let mut trials = iv.trial.clone();
    trials.sort_unstable();
    trials.dedup();
    while iv.t_ms.len() > rec.points.saturating_mul(trials.len()) {
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
    use crate::monitor::probe::{Layout, Probes};
    use std::time::Duration;

    fn rec(rows: Vec<(usize, u32, f64, Vec<super::super::recording::Figure>)>) -> Recording {
        let root = tempfile::tempdir().unwrap();
        let layout: Layout = Probes::open(root.path(), &[]).layout();
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
            workload: rows,
        }
    }

    fn fig(name: &str, v: f64) -> (String, String, f64) {
        (name.into(), "1/s".into(), v)
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
