//! How exact a run's numbers are: how many results have a 95 % confidence
//! interval of the mean within ±5, ±10 and ±25 % of it. Printed at the end
//! of every run, so a reader knows which numbers are worth reading.

use crate::model::result::{ResultEntry, ResultFile};
use crate::stats::adaptive::{Stop, ci_half_pct, seconds, trials_needed};
use std::collections::{BTreeMap, HashSet};

/// The bands counted, percent of the mean.
pub const BANDS: [f64; 3] = [5.0, 10.0, 25.0];

/// Budgets the end of a run weighs: what each would bring within ±5 %.
const LADDER: [u64; 7] = [30, 60, 120, 300, 600, 1800, 3600];

/// The 95 % CI half-widths of a set of entries (`None`: a single trial).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Precision {
    pub halves: Vec<Option<f64>>,
    /// Per entry wider than ±5 % that stopped for time (its budget, the
    /// projection, the cap): the test and identifier it belongs to, the
    /// seconds its trials took, and the seconds they would need for ±5 % at
    /// the spread they showed (`None`: over 100,000 trials).
    wide: Vec<(String, f64, Option<f64>)>,
    /// Those entries' tests, identifiers and result names (`Title: Description`).
    names: Vec<(String, String, String)>,
}

/// Tests the unsettled list names, and the columns a line of it takes.
const SHOWN: usize = 3;
const WIDTH: usize = 100;

/// The heading `names` share, up to a ` - ` or `: ` between options: what
/// is left of each is its result.
fn common_heading<'a>(names: &[&'a str]) -> &'a str {
    let first = names[0];
    let mut end = first.len();
    for n in &names[1..] {
        end = end.min(first.bytes().zip(n.bytes()).take_while(|(a, b)| a == b).count());
    }
    let cut = &first[..first.floor_char_boundary(end)];
    match cut.rfind(" - ").into_iter().chain(cut.rfind(": ")).max() {
        Some(i) => &first[..i],
        None => "",
    }
}

/// Stopped for time (its budget, the projection, the cap) wider than ±5 %:
/// what more time could settle.
fn unsettled_entry(e: &ResultEntry) -> bool {
    let for_time = matches!(e.stopped, Some(Stop::Budget | Stop::Projection | Stop::Cap));
    for_time && ci_half_pct(&e.units()).is_some_and(|h| h > BANDS[0]) && !e.trial_seconds.is_empty()
}

/// Per identifier of `f`, the tests (their keys) with an unsettled entry.
pub fn unsettled(f: &ResultFile) -> BTreeMap<String, HashSet<String>> {
    let mut out: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    for r in &f.results {
        for e in r.entries.iter().filter(|e| unsettled_entry(e)) {
            out.entry(e.identifier.clone().into()).or_default().insert(r.test.clone());
        }
    }
    out
}

impl Precision {
    /// Counts the entry `e` of test `test` (its key), named `name`.
    pub fn add(&mut self, test: &str, name: &str, e: &ResultEntry) {
        // With set-ups, a set-up (its trials) is the unit that narrows the interval.
        let units = e.units();
        self.halves.push(ci_half_pct(&units));
        if !unsettled_entry(e) {
            return;
        }
        let spent: f64 = e.trial_seconds.iter().sum();
        let each = spent / units.len() as f64;
        let need = trials_needed(&units, BANDS[0]);
        let need = (need != u32::MAX).then_some(need as f64 * each);
        self.wide.push((format!("{test}\u{1f}{}", e.identifier), spent, need));
        self.names.push((test.to_string(), e.identifier.clone().into(), name.to_string()));
    }

    /// What is not settled and the command that re-runs only that into the
    /// result `saved` with more time: `unsettled: A, B; re-run only these:
    /// engine benchmark NAME --only-unsettled --budget 2m`.
    pub fn rerun_hint(&self, saved: &str) -> Option<String> {
        if self.wide.is_empty() {
            return None;
        }
        let budget = self.ladder().last().map_or(LADDER[LADDER.len() - 1], |(secs, ..)| *secs);
        // One line per test and identifier: its heading, then its results.
        let mut tests: indexmap::IndexMap<(&str, &str), Vec<&str>> = indexmap::IndexMap::new();
        for (test, id, name) in &self.names {
            tests.entry((test, id)).or_default().push(name);
        }
        let mut out = format!("unsettled: {} test(s)\n", tests.len());
        for ((_, id), names) in tests.iter().take(SHOWN) {
            let line = match names.as_slice() {
                [one] => format!("  {one} ({id})"),
                many => {
                    let head = common_heading(many);
                    let rest: Vec<&str> =
                        many.iter().map(|n| n[head.len()..].trim_start_matches([' ', '-', ':'])).collect();
                    format!("  {} ({id}): {}", head.trim_end_matches([' ', '-', ':']), rest.join(", "))
                }
            };
            out.push_str(&crate::sys::text::fit(&crate::sys::text::one_line(&line), WIDTH));
            out.push('\n');
        }
        if tests.len() > SHOWN {
            out.push_str(&format!(
                "  and {} more test(s): `engine result show {saved}` names them\n",
                tests.len() - SHOWN
            ));
        }
        out.push_str(&format!(
            "re-run only these into the same result: engine benchmark {} --only-unsettled --budget {}",
            crate::model::template::quote(saved),
            budget_text(budget)
        ));
        Some(out)
    }

    /// The budgets worth naming: (budget, entries it brings within ±5 %,
    /// seconds the run would take longer); at most three, each bringing more.
    fn ladder(&self) -> Vec<(u64, usize, f64)> {
        // Each test (and identifier) runs until its widest entry is within
        // ±5 % or the budget is spent: the time its trials took, and the
        // time its widest entry needs.
        let mut tests: std::collections::BTreeMap<&str, (f64, f64)> = Default::default();
        for (k, spent, need) in &self.wide {
            let t = tests.entry(k).or_insert((0.0, 0.0));
            t.0 = t.0.max(*spent);
            t.1 = t.1.max(need.unwrap_or(f64::INFINITY));
        }
        let mut out: Vec<(u64, usize, f64)> = Vec::new();
        for secs in LADDER {
            let b = secs as f64;
            let reached = self.wide.iter().filter(|(_, _, n)| n.is_some_and(|n| n <= b)).count();
            if reached <= out.last().map_or(0, |x| x.1) {
                continue;
            }
            let more: f64 = tests.values().map(|(spent, need)| (need.min(b) - spent).max(0.0)).sum();
            out.push((secs, reached, more));
            if reached == self.wide.len() || out.len() == 3 {
                break;
            }
        }
        out
    }

    /// What larger budgets would bring within ±5 %, from the entries that
    /// stopped for time: `…; within it with --budget 1m 6 more (+2 min), …
    /// (the run about that much longer)`. `None` when none stopped for time.
    pub fn what_it_would_take(&self) -> Option<String> {
        if self.wide.is_empty() {
            return None;
        }
        let ladder = self.ladder();
        let said: Vec<String> = ladder
            .iter()
            .map(|(secs, reached, more)| {
                format!(
                    "`--budget {}` {reached} more (+{})",
                    budget_text(*secs),
                    seconds(std::time::Duration::from_secs_f64(*more))
                )
            })
            .collect();
        let last = ladder.last().map_or(0, |x| x.1);
        // The budget beyond which the rest would need more.
        let over = match ladder.last() {
            Some((secs, ..)) if ladder.len() == 3 || last == self.wide.len() => *secs,
            _ => LADDER[LADDER.len() - 1],
        };
        let n = self.wide.len();
        let mut out = format!("{n} result(s) stopped for time wider than ±{} %", BANDS[0]);
        if !said.is_empty() {
            out += &format!("; within it with {} (the run about that much longer)", said.join(", "));
        }
        if n > last {
            out += &format!("; {} would need a budget over {}", n - last, budget_text(over));
        }
        Some(out)
    }

    /// How many are within ±`band` %.
    pub(crate) fn within(&self, band: f64) -> usize {
        self.halves.iter().filter(|h| h.is_some_and(|h| h <= band)).count()
    }

    /// The median half-width of those with one (`None` when none has).
    pub(crate) fn median(&self) -> Option<f64> {
        let mut h: Vec<f64> = self.halves.iter().flatten().copied().collect();
        h.sort_by(f64::total_cmp);
        (!h.is_empty()).then(|| crate::stats::summary::median(&h))
    }
}

/// A budget as `--budget` takes it: `30s`, `5m`, `1h`.
fn budget_text(secs: u64) -> String {
    humantime::format_duration(std::time::Duration::from_secs(secs)).to_string()
}

impl std::fmt::Display for Precision {
    /// `precision (95 % CI of the mean): 62 of 68 results within ±5 %, 66 within ±10 %, 68 within ±25 %; median ±1.8 %`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.halves.len();
        write!(
            f,
            "precision (95 % CI of the mean): {} of {n} result(s) within ±{} %",
            self.within(BANDS[0]),
            BANDS[0]
        )?;
        for b in &BANDS[1..] {
            write!(f, ", {} within ±{b} %", self.within(*b))?;
        }
        if let Some(m) = self.median() {
            write!(f, "; median ±{} %", crate::stats::shape::short(m))?;
        }
        let single = self.halves.iter().filter(|h| h.is_none()).count();
        if single > 0 {
            write!(f, "; {single} with a single trial")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_band_and_the_median() {
        let mut p = Precision::default();
        for t in [&[100.0, 100.5, 99.5][..], &[100.0, 110.0, 90.0], &[100.0, 150.0, 50.0], &[7.0]] {
            p.add("t", "T", &ResultEntry::from_trials("a", t.to_vec(), None, vec![], String::new().into()).unwrap());
        }
        assert_eq!(p.what_it_would_take(), None, "none stopped for time");
        // ±1.24 %, ±24.8 %, ±124 %, one trial.
        assert_eq!((p.within(5.0), p.within(10.0), p.within(25.0)), (1, 1, 2));
        let s = p.to_string();
        assert!(s.starts_with("precision (95 % CI of the mean): 1 of 4 result(s) within ±5 %, 1 within ±10 %, 2 within ±25 %; median ±24.8"), "{s}");
        assert!(s.ends_with("; 1 with a single trial"), "{s}");
    }

    /// An entry of test `t` stopped by `why` after trials `values` of `secs` each.
    fn stopped(t: &str, values: &[f64], secs: f64, why: Stop) -> (String, ResultEntry) {
        let mut e = ResultEntry::from_trials("a", values.to_vec(), None, vec![], String::new().into()).unwrap();
        e.trial_seconds = vec![secs; values.len()];
        e.stopped = Some(why);
        (t.to_string(), e)
    }

    /// One short line per test: its heading once, then its results.
    #[test]
    fn the_unsettled_list_is_a_line_per_test() {
        let mut p = Precision::default();
        let wide = [90.0, 100.0, 110.0];
        for (t, name) in [
            ("io", "Block I/O: Type: Write - Block Size: 2MB - 99th Percentile Latency"),
            ("io", "Block I/O: Type: Write - Block Size: 2MB - 99.9th Percentile Latency"),
            ("compile", "Compile Trees: Scale 0.02 - Compile"),
        ] {
            p.add(t, name, &stopped(t, &wide, 1.0, Stop::Budget).1);
        }
        let h = p.rerun_hint("r").unwrap();
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[0], "unsettled: 2 test(s)");
        assert_eq!(
            lines[1],
            "  Block I/O: Type: Write - Block Size: 2MB (a): 99th Percentile Latency, 99.9th Percentile Latency"
        );
        assert_eq!(lines[2], "  Compile Trees: Scale 0.02 - Compile (a)");
        assert!(lines[3].starts_with("re-run only these into the same result: engine benchmark r --only-unsettled"));
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{h}");
    }

    #[test]
    fn says_what_larger_budgets_would_bring() {
        let mut p = Precision::default();
        // RSD 8.94 %: ±5 % takes 15 trials (t(14) · 8.94 / √15 = 4.95; 14 give 5.16), 15 s at 1 s each.
        let ten = [90.0, 100.0, 110.0, 90.0, 100.0, 110.0];
        // RSD 26.8 %: 114 trials (t(113) · 26.83 / √114 = 4.98; 113 give 5.001), 114 s.
        let thirty = [70.0, 100.0, 130.0, 70.0, 100.0, 130.0];
        for (t, e) in [
            stopped("fast", &ten, 1.0, Stop::Budget),
            // The same test's second result is narrower: the test's time follows the wider one.
            stopped("slow", &thirty, 1.0, Stop::Projection),
            stopped("slow", &ten, 1.0, Stop::Projection),
            // Drift is not a matter of time; nor is a result already within ±5 %.
            stopped("drift", &thirty, 1.0, Stop::Drift),
            stopped("done", &[100.0, 100.1, 99.9], 1.0, Stop::Target),
            // RSD 98 % in 1-minute trials: about 1,500 of them, beyond any budget weighed.
            stopped("huge", &[1.0, 100.0, 50.0], 60.0, Stop::Projection),
        ] {
            p.add(&t, &t, &e);
        }
        let s = p.what_it_would_take().unwrap();
        assert_eq!(
            s,
            "4 result(s) stopped for time wider than ±5 %; within it with \
             `--budget 30s` 2 more (+33 s), `--budget 2m` 3 more (+1 min 57 s) \
             (the run about that much longer); 1 would need a budget over 1h",
            "fast: 6 → 15 s; slow: 6 → 30 s, then 6 → 114 s"
        );
        // Three budgets at most: the rest are said to need more than the last.
        let mut p = Precision::default();
        for (i, each) in [1.0, 3.0, 6.0, 15.0].into_iter().enumerate() {
            let (_, e) = stopped("t", &ten, each, Stop::Budget);
            p.add(&format!("t{i}"), "T", &e);
        }
        let s = p.what_it_would_take().unwrap();
        assert!(s.contains("`--budget 2m` 3 more") && s.ends_with("; 1 would need a budget over 2m"), "{s}");
    }
}
