//! CSV as one tidy table: a row per identifier × test × metric, every row as
//! wide as the header, so pandas, R and DuckDB load it in one call
//! (`pd.read_csv`, `read.csv`, `read_csv_auto`). The interval is the 95 %
//! CI of the mean (of the set-ups' means with several); the verdict is
//! against the baseline identifier (`baseline` on its own rows). Every line
//! goes through `sys::text::csv_row`: no text opens as a formula.

use super::{Exporter, View};
use crate::model::result::{ResultEntry, ResultFile};
use crate::sys::text::csv_row as row;
use crate::units::exact;

pub struct Csv;

/// The header of [`Csv`].
pub const HEADER: [&str; 17] = [
    "test",
    "profile",
    "title",
    "description",
    "metric",
    "unit",
    "proportion",
    "identifier",
    "value",
    "se",
    "n",
    "setups",
    "ci_low",
    "ci_high",
    "ratio",
    "p",
    "verdict",
];

impl Exporter for Csv {
    fn export(&self, r: &ResultFile, view: &View) -> String {
        let records = super::view::comparison_records(r, view);
        let baseline = records.first().map(|c| c.baseline.clone());
        let mut out = row(&HEADER.map(String::from));
        for t in &r.results {
            for e in &t.entries {
                let vs =
                    records.iter().find(|c| c.test == t.test && c.result == t.result && c.identifier == e.identifier);
                let (ratio, p, verdict) = match vs {
                    Some(c) => (exact(c.ratio), c.p_value.map(exact).unwrap_or_default(), c.verdict.clone()),
                    None if baseline.as_deref() == Some(e.identifier.as_str()) => {
                        (String::new(), String::new(), "baseline".into())
                    }
                    None => Default::default(),
                };
                let (lo, hi) = ci(e).map(|(l, h)| (exact(l), exact(h))).unwrap_or_default();
                out.push_str(&row(&[
                    t.test.clone(),
                    t.profile.clone(),
                    match &t.app_version {
                        Some(v) => format!("{} {v}", t.title),
                        None => t.title.clone(),
                    },
                    t.description.clone(),
                    t.result.clone(),
                    t.unit.clone().into(),
                    format!("{:?}", t.proportion).to_uppercase(),
                    e.identifier.clone().into(),
                    exact(e.value),
                    e.se.map(exact).unwrap_or_default(),
                    e.n.to_string(),
                    e.setup_count().to_string(),
                    lo,
                    hi,
                    ratio,
                    p,
                    verdict,
                ]));
            }
        }
        out
    }
}

/// The 95 % interval of an entry's mean: t with one degree of freedom
/// fewer than its units (trials, or set-ups when there were several).
fn ci(e: &ResultEntry) -> Option<(f64, f64)> {
    let se = e.se?;
    let k = e.units().len();
    if k < 2 || !se.is_finite() {
        return None;
    }
    let half = crate::stats::adaptive::t975(k as f64 - 1.0) * se;
    Some((e.value - half, e.value + half))
}

/// `--format csv-trials`: the trials in long form, a row each: test,
/// metric, unit, identifier, the trial's number, its set-up, its value and
/// its seconds.
pub struct CsvTrials;

impl Exporter for CsvTrials {
    fn export(&self, r: &ResultFile, _view: &View) -> String {
        let head = ["test", "profile", "metric", "unit", "identifier", "trial", "setup", "value", "seconds"];
        let mut out = row(&head.map(String::from));
        for t in &r.results {
            for e in &t.entries {
                for (i, v) in e.trials.iter().enumerate() {
                    out.push_str(&row(&[
                        t.test.clone(),
                        t.profile.clone(),
                        t.result.clone(),
                        t.unit.clone().into(),
                        e.identifier.clone().into(),
                        (i + 1).to_string(),
                        e.setups.get(i).map_or("1".into(), u32::to_string),
                        exact(*v),
                        e.trial_seconds.get(i).map(|s| exact(*s)).unwrap_or_default(),
                    ]));
                }
            }
        }
        out
    }
}
