//! The verdict of each identifier against the baseline, a test counting
//! once: shared by the text and HTML reports.

use super::view::Analysis;
use crate::analysis::significance::Comparison;
use crate::model::facts::Identifier;
use crate::model::result::{ResultFile, TestResult};
use crate::sys::text::one_line;

/// Per identifier but the baseline, what its comparison says: which tests got
/// significantly worse or better (each changed metric with its change and
/// interval), and how many did not. A test counts once however many results
/// it has: io's MB/s and IOPS, or pgbench's TPS and latency, are one effect.
pub(crate) fn lines(f: &ResultFile, a: &Analysis, baseline: &str) -> Vec<(Identifier, Vec<String>)> {
    a.ids
        .iter()
        .filter(|i| *i != baseline)
        .map(|id| {
            let mut tally = VerdictTally::default();
            for (_, cs) in by_test(f, a, id) {
                tally.add(f, &cs);
            }
            (id.clone(), tally.parts())
        })
        .collect()
}

/// `id`'s comparisons grouped by test, in the order tests first appear.
fn by_test<'a>(f: &'a ResultFile, a: &'a Analysis, id: &str) -> Vec<(&'a str, Vec<(usize, &'a Comparison)>)> {
    let mut groups: Vec<(&str, Vec<(usize, &Comparison)>)> = Vec::new();
    for (i, cs) in &a.comparisons {
        let Some((_, c)) = cs.iter().find(|(x, _)| x == id) else { continue };
        let test = f.results[*i].test.as_str();
        match groups.iter_mut().find(|(t, _)| *t == test) {
            Some((_, v)) => v.push((*i, c)),
            None => groups.push((test, vec![(*i, c)])),
        }
    }
    groups
}

/// How the verdicts were decided, for the reports to say.
pub(crate) const RULE: &str = "paired over rounds where the trials were interleaved (a t interval of the per-round log ratios), else Welch's t-test, at 5 %; a change beyond the noise threshold; equivalent when the ratio's 90 % interval is within the margin (two one-sided tests); across the tests compared, Benjamini–Hochberg at 5 % (a test's metrics as one, by Simes)";

/// Tests by what their comparisons say.
#[derive(Default)]
struct VerdictTally {
    worse: Vec<String>,
    better: Vec<String>,
    mixed: Vec<String>,
    /// Tests all of whose metrics are equivalent, and the margin.
    same: usize,
    margin: Option<f64>,
    /// Undecided tests, those of them more trials would likely settle, and
    /// the trials a side the most demanding of those needs.
    undecided: usize,
    /// Tests changed alone but not across the family (Benjamini–Hochberg).
    held: usize,
    settle: usize,
    settle_at: u32,
    unknown: usize,
    at_resolution: usize,
}

impl VerdictTally {
    fn add(&mut self, f: &ResultFile, cs: &[(usize, &Comparison)]) {
        use crate::analysis::significance::Verdict;
        let desc = cs.iter().map(|(i, _)| f.results[*i].description.as_str()).min_by_key(|d| d.len()).unwrap_or("");
        let first = &f.results[cs[0].0];
        let name = match desc {
            "" => one_line(&first.title).into_owned(),
            d => format!("{}: {}", one_line(&first.title), super::svg::cut_middle(&one_line(d), 60)),
        };
        let pct = |x: f64| format!("{:+.0}", (x - 1.0) * 100.0);
        // The metric is named where the test has several (`read_iops -12 %`).
        let changed = |c: &Comparison, i: usize| {
            let ci = c.ratio_ci.map(|(lo, hi)| format!(" [{}, {}]", pct(lo), pct(hi))).unwrap_or_default();
            let metric =
                if cs.len() > 1 { format!("{} ", one_line(&result_name(&f.results[i], desc))) } else { String::new() };
            format!("{metric}{} %{ci}", pct(c.ratio))
        };
        let (mut w, mut b) = (Vec::new(), Vec::new());
        for (i, c) in cs {
            match c.verdict {
                Verdict::Worse(_) => w.push(changed(c, *i)),
                Verdict::Better(_) => b.push(changed(c, *i)),
                _ => {}
            }
        }
        let line = |metrics: &[String]| {
            if cs.len() > 1 {
                format!("{name} — {}", metrics.join(", "))
            } else {
                format!("{name} {}", metrics.join(", "))
            }
        };
        let any = |v: fn(&Verdict) -> bool| cs.iter().any(|(_, c)| v(&c.verdict));
        match (w.is_empty(), b.is_empty()) {
            (false, true) => self.worse.push(line(&w)),
            (true, false) => self.better.push(line(&b)),
            (false, false) => self.mixed.push(line(&[w, b].concat())),
            _ if any(|v| matches!(v, Verdict::Held { .. })) => self.held += 1,
            _ if any(|v| matches!(v, Verdict::Undecided(_))) => {
                self.undecided += 1;
                let needs: Option<Vec<u32>> = cs
                    .iter()
                    .filter_map(|(_, c)| match c.verdict {
                        Verdict::Undecided(n) => Some(n),
                        _ => None,
                    })
                    .collect();
                if let Some(n) = needs.and_then(|v| v.into_iter().max()) {
                    self.settle += 1;
                    self.settle_at = self.settle_at.max(n);
                }
            }
            _ if any(|v| matches!(v, Verdict::Equivalent(_))) => {
                self.same += 1;
                self.margin = cs.iter().find_map(|(_, c)| match c.verdict {
                    Verdict::Equivalent(m) => Some(m),
                    _ => None,
                });
            }
            _ if any(|v| matches!(v, Verdict::NotEnoughTrials)) => self.unknown += 1,
            _ => self.at_resolution += 1,
        }
    }

    fn parts(&self) -> Vec<String> {
        let mut parts = Vec::new();
        for (word, list) in [("worse", &self.worse), ("better", &self.better), ("mixed", &self.mixed)] {
            let n = list.len();
            if n > 0 {
                let shown: Vec<&str> = list.iter().take(3).map(String::as_str).collect();
                let more = if n > 3 { format!("; {} more", n - 3) } else { String::new() };
                parts.push(format!("{n} {word} ({}{more})", shown.join("; ")));
            }
        }
        let margin = self.margin.map(|m| format!(" within ±{m} %")).unwrap_or_default();
        parts.push(format!("{} equivalent{margin}", self.same));
        if self.undecided > 0 {
            let settle = match self.settle {
                0 => String::new(),
                n if n == self.undecided => {
                    format!(": about {} trials a side would likely settle them", self.settle_at)
                }
                n => format!(": {n} of them with about {} trials a side", self.settle_at),
            };
            parts.push(format!("{} undecided{settle}", self.undecided));
        }
        if self.held > 0 {
            parts.push(format!("{} changed alone, not across the tests compared (Benjamini–Hochberg)", self.held));
        }
        if self.unknown > 0 {
            parts.push(format!("{} with too few trials to tell", self.unknown));
        }
        if self.at_resolution > 0 {
            parts.push(format!("{} at the tool's resolution (cannot tell)", self.at_resolution));
        }
        parts
    }
}

/// A result by its name in the test (`Read Latency`, what its profile
/// calls it), else by its id.
pub(super) fn result_name(t: &TestResult, test_desc: &str) -> String {
    let own = t.description.strip_prefix(test_desc).unwrap_or("").trim_start_matches(" - ").trim();
    if own.is_empty() { t.result.clone() } else { own.to_string() }
}
