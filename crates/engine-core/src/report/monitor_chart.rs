//! The HTML report's monitor charts: under each test, one line chart per
//! metric (a line per identifier, every other trial shaded), drawn as SVG in
//! the page; a menu picks the metric shown.

use super::svg::PALETTE;
use crate::model::facts::Identifier;
use crate::model::series::{Metric, Recorded, Series, WORKLOAD, metric};
use crate::sys::text::xml as esc;
use std::fmt::Write;

/// The metrics charted, by name: the device's iostat columns (its first
/// device), then the CPU split, dirty pages and I/O pressure.
const CHARTED: &[&str] = &[
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
    metric::PSI_CPU_SOME,
];

/// Points per line at most: a page of many tests stays a few megabytes.
const MAX_POINTS: usize = 240;
const W: f64 = 720.0;
const H: f64 = 170.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 22.0;

/// The metric `name` of `s`: the system's, else its first device's; a
/// workload's own figure by its key (`workload:iops`).
fn metric<'a>(s: &'a Series, name: &str) -> Option<&'a Metric> {
    s.columns().find(|m| m.name == name && m.source != WORKLOAD || m.key() == name)
}

/// Runs of (seconds into the identifier's trials, value), broken where a
/// value is missing.
type Runs = Vec<Vec<(f64, f64)>>;

/// A line's runs, and where each trial ends, in the same seconds.
fn line(s: &Series, m: &Metric) -> (Runs, Vec<f64>) {
    let mut runs = Vec::new();
    let mut ends = Vec::new();
    let mut offset = 0.0;
    for (t, times, values) in s.per_trial(m) {
        let mut run = Vec::new();
        for (at, v) in times.iter().zip(values) {
            let x = offset + (at - t.start_ms) / 1000.0;
            match v {
                Some(v) => run.push((x, *v)),
                None if !run.is_empty() => runs.push(std::mem::take(&mut run)),
                None => {}
            }
        }
        if !run.is_empty() {
            runs.push(run);
        }
        offset += (t.end_ms - t.start_ms) / 1000.0;
        ends.push(offset);
    }
    (runs.into_iter().map(thin).collect(), ends)
}

/// At most [`MAX_POINTS`] points: each the mean of its bucket.
fn thin(run: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if run.len() <= MAX_POINTS {
        return run;
    }
    let k = run.len().div_ceil(MAX_POINTS);
    run.chunks(k)
        .map(|c| {
            let n = c.len() as f64;
            (c.iter().map(|p| p.0).sum::<f64>() / n, c.iter().map(|p| p.1).sum::<f64>() / n)
        })
        .collect()
}

/// Appends the monitor block of test `test` (nothing when it has no series).
pub(crate) fn write_block(h: &mut String, test: &str, ids: &[Identifier], all: &[Recorded]) {
    let mine: Vec<&Recorded> = all.iter().filter(|r| r.test == test).collect();
    let mut charted: Vec<String> =
        CHARTED.iter().filter(|n| mine.iter().any(|r| metric(&r.series, n).is_some())).map(|n| n.to_string()).collect();
    for m in mine.iter().filter_map(|r| r.series.workload.as_ref()).flat_map(|w| &w.metrics) {
        if !charted.contains(&m.key()) {
            charted.push(m.key());
        }
    }
    if charted.is_empty() {
        return;
    }
    h.push_str("<details class=\"monitor\"><summary>Monitors</summary><label class=\"pick\" hidden>Metric <select class=\"metric\">");
    for n in &charted {
        write!(h, "<option value=\"{}\">{}</option>", esc(n), esc(&title(&mine, n))).unwrap();
    }
    h.push_str("</select></label>");
    for (k, n) in charted.iter().enumerate() {
        write!(h, "<figure data-metric=\"{}\"{}>", esc(n), if k == 0 { "" } else { " hidden" }).unwrap();
        chart(h, &mine, ids, n);
        write!(h, "<figcaption>{}</figcaption></figure>", esc(&title(&mine, n))).unwrap();
    }
    h.push_str("</details>");
}

/// `vda util (%)`.
fn title(mine: &[&Recorded], name: &str) -> String {
    let m = mine.iter().find_map(|r| metric(&r.series, name));
    match m {
        Some(m) => format!("{} {} ({})", m.source, m.name, m.unit),
        None => name.to_string(),
    }
}

/// One metric's chart: a line per identifier, every other trial of the
/// first shaded.
fn chart(h: &mut String, mine: &[&Recorded], ids: &[Identifier], name: &str) {
    let lines: Vec<(&Recorded, Runs, Vec<f64>)> = mine
        .iter()
        .filter_map(|r| metric(&r.series, name).map(|m| (*r, line(&r.series, m))))
        .map(|(r, (runs, ends))| (r, runs, ends))
        .collect();
    let x_max = lines.iter().filter_map(|(_, _, e)| e.last().copied()).fold(0.0, f64::max).max(1e-9);
    let y_max = nice(lines.iter().flat_map(|(_, runs, _)| runs.iter().flatten().map(|p| p.1)).fold(0.0, f64::max));
    let x = |s: f64| LEFT + s / x_max * (W - LEFT - 8.0);
    let y = |v: f64| (H - BOTTOM) - v / y_max * (H - BOTTOM - 8.0);
    write!(h, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" class=\"series\">").unwrap();
    if let Some((_, _, ends)) = lines.first() {
        let mut from = 0.0;
        for (k, &to) in ends.iter().enumerate() {
            if k % 2 == 1 {
                write!(
                    h,
                    "<rect x=\"{:.1}\" y=\"8\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#f1f1f1\"/>",
                    x(from),
                    x(to) - x(from),
                    H - BOTTOM - 8.0
                )
                .unwrap();
            }
            from = to;
        }
    }
    write!(h, "<line x1=\"{LEFT}\" y1=\"{0}\" x2=\"{W}\" y2=\"{0}\" stroke=\"#999\"/>", H - BOTTOM).unwrap();
    write!(
        h,
        "<text x=\"{}\" y=\"14\" text-anchor=\"end\" font-size=\"11\">{}</text>",
        LEFT - 4.0,
        crate::units::number(y_max)
    )
    .unwrap();
    write!(h, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">0</text>", LEFT - 4.0, H - BOTTOM).unwrap();
    write!(h, "<text x=\"{W}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{:.1} s of trials</text>", H - 4.0, x_max)
        .unwrap();
    for (r, runs, _) in &lines {
        let color = PALETTE[ids.iter().position(|i| *i == r.identifier).unwrap_or(0) % PALETTE.len()];
        write!(h, "<path fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" d=\"").unwrap();
        for run in runs {
            for (k, (s, v)) in run.iter().enumerate() {
                write!(h, "{}{:.1},{:.1}", if k == 0 { "M" } else { "L" }, x(*s), y(*v)).unwrap();
            }
        }
        write!(h, "\"><title>{}</title></path>", esc(&r.identifier)).unwrap();
    }
    h.push_str("</svg>");
}

/// A round top for the y axis: 1, 2 or 5 times a power of ten.
fn nice(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|k| k * p).find(|v| *v >= max).unwrap_or(10.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::series::{FORMAT, TrialSpan};

    fn rec(id: &str, n: usize) -> Recorded {
        let t_ms: Vec<f64> = (0..=n).map(|i| i as f64 * 100.0).collect();
        let values = (0..=n).map(|i| if i == 0 { None } else { Some((i % 10) as f64) }).collect();
        Recorded {
            test: "t".into(),
            identifier: id.into(),
            series: Series {
                format: FORMAT.into(),
                interval_ms: 100,
                t_ms,
                metrics: vec![Metric { name: "util".into(), source: "vda".into(), unit: "%".into(), values }],
                trials: vec![
                    TrialSpan { trial: 1, start_ms: 0.0, end_ms: n as f64 * 50.0, first: 0, trials: 1 },
                    TrialSpan {
                        trial: 2,
                        start_ms: n as f64 * 50.0,
                        end_ms: n as f64 * 100.0,
                        first: n / 2,
                        trials: 1,
                    },
                ],
                unavailable: vec![],
                late: 0,
                thinned: 0,
                workload: None,
            },
        }
    }

    #[test]
    fn a_chart_per_metric_a_line_per_identifier_bounded() {
        let all = vec![rec("a<b", 2000), rec("c", 10)];
        let ids: Vec<Identifier> = vec!["a<b".into(), "c".into()];
        let mut h = String::new();
        write_block(&mut h, "t", &ids, &all);
        assert!(h.contains("<option value=\"util\">vda util (%)</option>"), "{h}");
        assert_eq!(h.matches("<path ").count(), 2, "a line per identifier");
        assert!(h.contains("<title>a&lt;b</title>"), "identifiers are escaped");
        assert_eq!(h.matches("<rect ").count(), 1, "the second trial shaded");
        let points = h.matches('L').count();
        assert!(points < 2 * MAX_POINTS + 20, "thinned: {points}");
        let mut none = String::new();
        write_block(&mut none, "other", &ids, &all);
        assert!(none.is_empty(), "a test without series gets no block");
        assert_eq!((nice(0.0), nice(7.3), nice(100.0), nice(101.0)), (1.0, 10.0, 100.0, 200.0));
    }

    /// A workload's own figures get a chart of their own, drawn at their
    /// intervals' times within each trial.
    #[test]
    fn the_workloads_figures_are_charted_too() {
        let mut r = rec("a", 10);
        r.series.workload = Some(crate::model::series::Intervals {
            t_ms: vec![200.0, 500.0, 700.0, 1000.0],
            trial: vec![1, 1, 2, 2],
            metrics: vec![Metric {
                name: "iops".into(),
                source: WORKLOAD.into(),
                unit: "1/s".into(),
                values: vec![Some(10.0), Some(20.0), Some(30.0), None],
            }],
            thinned: 0,
            left_out: 0,
        });
        let mut h = String::new();
        write_block(&mut h, "t", &["a".into()], &[r]);
        assert!(h.contains("<option value=\"workload:iops\">workload iops (1/s)</option>"), "{h}");
        let fig = &h[h.find("data-metric=\"workload:iops\"").unwrap()..];
        let path = &fig[fig.find(" d=\"").unwrap() + 4..];
        let path = &path[..path.find('"').unwrap()];
        assert_eq!(path.matches(['M', 'L']).count(), 3, "three known values, in two runs: {path}");
        assert_eq!(path.matches('M').count(), 2, "a run per trial: {path}");
    }
}
