//! The monitor series as text (a sparkline per metric and identifier,
//! trials separated by `│`), CSV (one row per sample and metric) and JSON.

use crate::model::series::{Metric, Series, WORKLOAD, metric};
use crate::sys::text;
use std::fmt::Write;

/// Eight heights of a sparkline, lowest first.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// What is shown without `--metric`: each device's iostat columns, then
/// the CPU split, dirty pages and I/O pressure.
const DEFAULT: &[&str] = &[
    metric::UTIL,
    metric::READ_MB_S,
    metric::WRITE_MB_S,
    metric::READS_S,
    metric::WRITES_S,
    metric::QUEUE_DEPTH,
    metric::AWAIT,
    metric::CPU_USER,
    metric::CPU_SYSTEM,
    metric::CPU_IOWAIT,
    metric::CPU_STEAL,
    metric::DIRTY,
    metric::PSI_IO_SOME,
];

/// One test's series for one identifier, as the view takes it.
#[derive(Clone)]
pub struct Shown<'a> {
    pub heading: &'a str,
    pub identifier: &'a str,
    pub series: Result<&'a Series, &'a crate::store::series::SeriesError>,
    /// The test's own processes' stall shares (I/O, CPU, memory, %), when
    /// a cgroup counted them.
    pub pressure: Option<[f64; 3]>,
}

/// Whether metric `m` is shown for `wanted` (`--metric`; empty: the
/// default set and every figure of the workload's own).
fn chosen(m: &Metric, wanted: &[String]) -> bool {
    if wanted.is_empty() {
        DEFAULT.contains(&m.name.as_str()) || m.source == WORKLOAD
    } else {
        wanted.iter().any(|w| *w == m.key() || *w == m.name)
    }
}

/// Sparklines of `shown`, `width` characters each, under each test's heading.
pub fn text(shown: &[Shown], wanted: &[String], width: usize) -> String {
    let mut out = String::new();
    let mut last_heading = "";
    for s in shown {
        if s.heading != last_heading {
            let _ = writeln!(out, "{}", text::one_line(s.heading));
            last_heading = s.heading;
        }
        let _ = writeln!(out, "  {}", text::one_line(s.identifier));
        let series = match s.series {
            Ok(series) => series,
            Err(why) => {
                let _ = writeln!(out, "    no series: {}", text::one_line(&why.to_string()));
                continue;
            }
        };
        let metrics: Vec<&Metric> = series.columns().filter(|m| chosen(m, wanted)).collect();
        if metrics.is_empty() {
            let _ = writeln!(out, "    none of the metrics asked for (it has {})", text::one_line(&keys(series)));
        }
        let label_w = metrics.iter().map(|m| text::width(&label(m))).max().unwrap_or(0);
        for m in metrics {
            let (line, lo, hi, mean) = sparkline(series, m, width);
            let _ = writeln!(
                out,
                "    {}  {line}  min {} max {} mean {}",
                text::pad(&label(m), label_w),
                num(lo),
                num(hi),
                num(mean)
            );
        }
        if let Some([io, cpu, memory]) = s.pressure {
            let _ = writeln!(
                out,
                "    the test's own processes stalled (their cgroup's PSI, some): I/O {io:.1} %, CPU {cpu:.1} %, memory {memory:.1} % of the trials' time"
            );
        }
        for u in &series.unavailable {
            let _ = writeln!(out, "    not available: {}", text::one_line(u));
        }
        if series.late > 0 {
            let _ = writeln!(out, "    {} sample(s) came late: the sampler could not keep up", series.late);
        }
    }
    out
}

/// `vda util %`.
fn label(m: &Metric) -> String {
    text::one_line(&format!("{} {} {}", m.source, m.name, m.unit)).into_owned()
}

fn keys(s: &Series) -> String {
    s.columns().map(Metric::key).collect::<Vec<_>>().join(", ")
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_string(),
        None => "-".into(),
    }
}

/// The sparkline of `m` in `width` characters (each the mean of its
/// samples), trials separated by `│`; its min, max and mean.
fn sparkline(s: &Series, m: &Metric, width: usize) -> (String, Option<f64>, Option<f64>, Option<f64>) {
    let known: Vec<f64> = m.values.iter().flatten().copied().collect();
    let lo = known.iter().copied().reduce(f64::min);
    let hi = known.iter().copied().reduce(f64::max);
    let mean = (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64);
    // Each trial's samples: those from its start to its end.
    let trials: Vec<&[Option<f64>]> = s.per_trial(m).into_iter().map(|(_, _, v)| v).collect();
    let total: usize = trials.iter().map(|t| t.len()).sum::<usize>().max(1);
    let room = width.saturating_sub(trials.len().saturating_sub(1)).max(trials.len());
    let mut line = String::new();
    for (i, t) in trials.iter().enumerate() {
        if i > 0 {
            line.push('│');
        }
        let cells = (t.len() * room).div_ceil(total).clamp(1, t.len().max(1));
        for c in 0..cells {
            let bucket = &t[c * t.len() / cells..((c + 1) * t.len() / cells).max(c * t.len() / cells + 1).min(t.len())];
            let vals: Vec<f64> = bucket.iter().flatten().copied().collect();
            line.push(match (vals.is_empty(), lo, hi) {
                (true, ..) => ' ',
                (false, Some(lo), Some(hi)) => {
                    let v = vals.iter().sum::<f64>() / vals.len() as f64;
                    let k = if hi > lo { ((v - lo) / (hi - lo) * 7.0).round() as usize } else { 0 };
                    BARS[k.min(7)]
                }
                _ => ' ',
            });
        }
    }
    (line, lo, hi, mean)
}

/// One row per sample and metric: test, identifier, trial, t_ms, metric, unit, value.
pub fn csv(shown: &[(&str, &str, &Series)], wanted: &[String]) -> String {
    let mut out = text::csv_row(&["test", "identifier", "trial", "t_ms", "metric", "unit", "value"]);
    for (test, identifier, s) in shown {
        let mut trial_at: Vec<String> = vec![String::new(); s.t_ms.len()];
        for (t, r) in s.trial_samples() {
            for i in std::iter::once(t.first).chain(r) {
                trial_at[i] = t.trial.to_string();
            }
        }
        for m in s.metrics.iter().filter(|m| wanted.is_empty() || chosen(m, wanted)) {
            for (i, (at, v)) in s.t_ms.iter().zip(&m.values).enumerate() {
                out.push_str(&text::csv_row(&[
                    test.to_string(),
                    identifier.to_string(),
                    trial_at[i].clone(),
                    at.to_string(),
                    m.key(),
                    m.unit.clone().into(),
                    v.map(|v| v.to_string()).unwrap_or_default(),
                ]));
            }
        }
        let Some(w) = &s.workload else { continue };
        for m in w.metrics.iter().filter(|m| wanted.is_empty() || chosen(m, wanted)) {
            for ((at, trial), v) in w.t_ms.iter().zip(&w.trial).zip(&m.values) {
                out.push_str(&text::csv_row(&[
                    test.to_string(),
                    identifier.to_string(),
                    trial.to_string(),
                    at.to_string(),
                    m.key(),
                    m.unit.clone().into(),
                    v.map(|v| v.to_string()).unwrap_or_default(),
                ]));
            }
        }
    }
    out
}

/// Every series with its test and identifier, as JSON (a series that
/// cannot be read has `error` instead).
pub fn json(shown: &[(&str, &Shown)]) -> String {
    let items: Vec<serde_json::Value> = shown
        .iter()
        .map(|(test, s)| {
            let mut v = serde_json::json!({"test": test, "heading": s.heading, "identifier": s.identifier});
            match s.series {
                Ok(series) => v["series"] = serde_json::to_value(series).unwrap_or_default(),
                Err(why) => v["error"] = why.to_string().into(),
            }
            if let Some([io, cpu, memory]) = s.pressure {
                v["own_pressure_pct"] = serde_json::json!({"io": io, "cpu": cpu, "memory": memory});
            }
            v
        })
        .collect();
    let text = serde_json::to_string_pretty(&items).expect("series serialize");
    crate::sys::text::json(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::series::{FORMAT, TrialSpan};

    fn series() -> Series {
        Series {
            format: FORMAT.into(),
            interval_ms: 1000,
            t_ms: vec![0.0, 1000.0, 2000.0, 3000.0, 3000.0, 4000.0, 5000.0],
            metrics: vec![Metric {
                name: "util".into(),
                source: "vda".into(),
                unit: "%".into(),
                values: vec![None, Some(0.0), Some(50.0), Some(100.0), None, Some(100.0), Some(0.0)],
            }],
            trials: vec![
                TrialSpan { trial: 1, start_ms: 0.0, end_ms: 3000.0, first: 0, trials: 1 },
                TrialSpan { trial: 2, start_ms: 3000.0, end_ms: 5000.0, first: 4, trials: 1 },
            ],
            unavailable: vec!["temperature: no hwmon sensor on this machine".into()],
            late: 0,
            thinned: 0,
            workload: None,
        }
    }

    #[test]
    fn a_sparkline_per_metric_with_trials_apart() {
        let s = series();
        let shown = [Shown {
            heading: "fio: Random Read",
            identifier: "vda: bfq\u{1b}[2J",
            series: Ok(&s),
            pressure: Some([12.04, 3.0, 0.0]),
        }];
        let out = text(&shown, &[], 40);
        assert!(out.contains("vda util %  ▁▅█│█▁  min 0 max 100 mean 50"), "{out}");
        assert!(!out.contains('\u{1b}'), "outside text is inert: {out:?}");
        assert!(out.contains("not available: temperature"), "{out}");
        assert!(out.contains("stalled (their cgroup's PSI, some): I/O 12.0 %, CPU 3.0 %, memory 0.0 %"), "{out}");
        let none = text(&shown, &["cpu_user".to_string()], 40);
        assert!(none.contains("none of the metrics asked for (it has vda:util)"), "{none}");
        let csv = csv(&[("fio#1", "vda: bfq", &s)], &[]);
        assert!(csv.starts_with("test,identifier,trial,t_ms,metric,unit,value\n"), "{csv}");
        assert!(csv.contains("fio#1,vda: bfq,1,2000,vda:util,%,50\n"), "{csv}");
        assert_eq!(csv.lines().count(), 8);
    }
}
