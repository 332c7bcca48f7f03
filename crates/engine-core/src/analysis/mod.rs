//! Comparing identifiers across the results of a result file: overall means,
//! wins and losses, normalization, noise filters, notable results, and
//! whether a difference against a baseline is real. One statistic per file.

pub(crate) mod fdr;
pub mod fleet;
pub mod gate;
pub mod history;
pub mod means;
pub mod noise;
pub mod normalize;
pub mod notable;
pub(crate) mod paired;
pub mod precision;
pub mod significance;
pub mod wins;

use crate::model::facts::Identifier;
use crate::model::profile::Proportion;
use crate::model::result::{ResultEntry, ResultFile, TestResult};

/// The identifiers of a result file, in order.
pub fn identifiers(f: &ResultFile) -> Vec<Identifier> {
    let mut ids: Vec<Identifier> = f.systems.iter().map(|s| s.identifier.clone()).collect();
    // Looked up, not searched: a fleet has thousands of identifiers.
    let mut seen: std::collections::HashSet<&str> = f.systems.iter().map(|s| s.identifier.as_str()).collect();
    for r in &f.results {
        for e in &r.entries {
            if seen.insert(e.identifier.as_str()) {
                ids.push(e.identifier.clone());
            }
        }
    }
    ids
}

/// Why a name picks no single identifier.
#[derive(Debug, Clone, PartialEq)]
pub enum NoIdentifier {
    /// No identifier holds it: all of them.
    None(Vec<Identifier>),
    /// Several hold it: those.
    Several(Vec<Identifier>),
}

/// The identifier `want` names: itself, else the one identifier that holds
/// it (case aside): `mq-deadline` for `loop0: ext4 / MQ-DEADLINE`.
pub fn find_identifier(ids: &[Identifier], want: &str) -> Result<Identifier, NoIdentifier> {
    if ids.iter().any(|i| i == want) {
        return Ok(want.into());
    }
    let w = want.to_lowercase();
    let holding: Vec<Identifier> = ids.iter().filter(|i| i.to_lowercase().contains(&w)).cloned().collect();
    match holding.len() {
        1 => Ok(holding[0].clone()),
        0 => Err(NoIdentifier::None(ids.to_vec())),
        _ => Err(NoIdentifier::Several(holding)),
    }
}

/// The entry of `id` in result `r`.
pub fn entry<'a>(r: &'a TestResult, id: &str) -> Option<&'a ResultEntry> {
    r.entries.iter().find(|e| e.identifier == id)
}

/// A value where higher is always better (lower-is-better values inverted),
/// for means and wins across results of different kinds.
pub(crate) fn goodness(value: f64, p: Proportion) -> Option<f64> {
    match p {
        Proportion::Hib => (value > 0.0).then_some(value),
        Proportion::Lib => (value > 0.0).then(|| 1.0 / value),
    }
}

/// The entries of a result file as a table: one row per result, one column
/// per identifier — built once, so analyses do not search entries by name.
pub(crate) struct Matrix<'a> {
    pub ids: Vec<Identifier>,
    pub rows: Vec<Vec<Option<&'a ResultEntry>>>,
}

impl<'a> Matrix<'a> {
    pub(crate) fn new(f: &'a ResultFile) -> Self {
        let ids = identifiers(f);
        let pos: std::collections::HashMap<&str, usize> =
            ids.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
        let rows = f
            .results
            .iter()
            .map(|r| {
                let mut row = vec![None; ids.len()];
                for e in &r.entries {
                    if let Some(&i) = pos.get(e.identifier.as_str()) {
                        row[i] = Some(e);
                    }
                }
                row
            })
            .collect();
        Matrix { ids, rows }
    }

    pub(crate) fn index(&self, id: &str) -> Option<usize> {
        self.ids.iter().position(|x| x == id)
    }
}

/// Indexes of the results every identifier has a positive value for.
pub(crate) fn complete(m: &Matrix<'_>) -> Vec<usize> {
    (0..m.rows.len())
        .filter(|&r| m.rows[r].iter().all(|e| e.is_some_and(|e| e.value > 0.0 && e.value.is_finite())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::{ResultEntry, System, TestResult};

    #[test]
    fn a_baseline_by_a_unique_part_of_its_identifier() {
        let ids: Vec<Identifier> = ["loop0: NONE", "loop0: MQ-DEADLINE", "loop0: BFQ", "loop0: BFQ low_latency=0"]
            .map(Identifier::from)
            .to_vec();
        assert_eq!(find_identifier(&ids, "mq-deadline"), Ok("loop0: MQ-DEADLINE".into()));
        assert_eq!(find_identifier(&ids, "loop0: BFQ"), Ok("loop0: BFQ".into()), "the whole name wins");
        assert_eq!(
            find_identifier(&ids, "bfq"),
            Err(NoIdentifier::Several(vec!["loop0: BFQ".into(), "loop0: BFQ low_latency=0".into()]))
        );
        assert_eq!(find_identifier(&ids, "kyber"), Err(NoIdentifier::None(ids.clone())));
    }

    fn entry_of(id: &str, v: f64, trials: &[f64]) -> ResultEntry {
        let mut e = ResultEntry::from_trials(id, trials.to_vec(), None, vec![], String::new().into()).unwrap();
        e.value = v;
        e
    }

    fn result(test: &str, p: Proportion, vals: &[(&str, f64)]) -> TestResult {
        TestResult {
            test: test.into(),
            profile: "p".into(),
            profile_version: "1.0.0".into(),
            result: "r".into(),
            title: test.into(),
            app_version: None,
            description: String::new(),
            options: vec![],
            unit: "U".into(),
            proportion: p,
            // A small spread: trials all equal would be resolution-limited.
            entries: vals.iter().map(|(id, v)| entry_of(id, *v, &[*v * 0.99, *v, *v * 1.01])).collect(),
            pts: None,
            repository: None,
            about: String::new(),
        }
    }

    fn file() -> ResultFile {
        let mut f = ResultFile::new("t");
        f.systems = ["A", "B"].iter().map(|i| System { identifier: (*i).into(), ..Default::default() }).collect();
        f.results = vec![
            result("t1", Proportion::Hib, &[("A", 100.0), ("B", 200.0)]),
            result("t2", Proportion::Lib, &[("A", 2.0), ("B", 4.0)]),
            result("t3", Proportion::Hib, &[("A", 50.0), ("B", 50.0)]),
            // Only A has it: left out of the means.
            result("t4", Proportion::Hib, &[("A", 1000.0)]),
        ];
        f
    }

    #[test]
    fn geometric_and_harmonic_means_by_hand() {
        let f = file();
        let m = Matrix::new(&f);
        // A: goodness 100, 1/2, 50 → (100 · 0.5 · 50)^(1/3) = 2500^(1/3) = 13.572
        // B: 200, 1/4, 50 → 2500^(1/3) as well.
        let g = means::geometric(&f, &m).unwrap();
        assert!((g[0].1 - 2500f64.powf(1.0 / 3.0)).abs() < 1e-9);
        assert!((g[1].1 - 2500f64.powf(1.0 / 3.0)).abs() < 1e-9);
        assert_eq!(means::shared_count(&m), 3);
        // No harmonic mean across a lower-is-better result: it would have no unit.
        assert!(means::harmonic(&f, &m).is_none());
        // Over t1 and t3 (both U, higher is better): A 2 / (1/100 + 1/50) = 66.667,
        // B 2 / (1/200 + 1/50) = 80.
        let mut f = f;
        f.results.remove(1);
        let (unit, h) = means::harmonic(&f, &Matrix::new(&f)).unwrap();
        assert_eq!(unit, "U");
        assert!((h[0].1 - 2.0 / 0.03).abs() < 1e-9);
        assert!((h[1].1 - 80.0).abs() < 1e-9);
    }

    #[test]
    fn wins_and_losses_by_hand() {
        let f = file();
        let t = wins::tally(&f, &Matrix::new(&f), crate::analysis::significance::Rule::noise(1.0));
        // t1: B wins (HIB 200). t2: A wins (LIB 2). t3: tie, nobody. t4: one entry.
        assert_eq!((t[0].wins, t[0].losses), (1, 1));
        assert_eq!((t[1].wins, t[1].losses), (1, 1));
    }

    #[test]
    fn only_a_real_difference_wins() {
        // B's mean is higher, but the spread makes it undecided.
        let mut f = file();
        f.results.truncate(1);
        f.results[0].entries =
            vec![entry_of("A", 100.0, &[90.0, 110.0, 100.0]), entry_of("B", 104.0, &[94.0, 114.0, 104.0])];
        let t = wins::tally(&f, &Matrix::new(&f), crate::analysis::significance::Rule::noise(1.0));
        assert_eq!((t[0].wins, t[0].losses, t[1].wins, t[1].losses), (0, 0, 0, 0));
    }

    #[test]
    fn each_test_weighs_once_in_the_means() {
        // t1 has two results where B is 4× better; t2 one where A is 4× better.
        // Per result the two would tilt it to B; per test they are even.
        let mut f = file();
        f.results.truncate(2);
        f.results[0].entries = vec![entry_of("A", 1.0, &[1.0, 1.0]), entry_of("B", 4.0, &[4.0, 4.0])];
        let mut second = f.results[0].clone();
        second.result = "r2".into();
        f.results.insert(1, second);
        f.results[2].proportion = Proportion::Hib;
        f.results[2].entries = vec![entry_of("A", 4.0, &[4.0, 4.0]), entry_of("B", 1.0, &[1.0, 1.0])];
        let m = Matrix::new(&f);
        let g = means::geometric(&f, &m).unwrap();
        assert!((g[0].1 - 2.0).abs() < 1e-12 && (g[1].1 - 2.0).abs() < 1e-12, "{g:?}");
        assert_eq!((means::shared_count(&m), means::shared_tests(&f, &m)), (3, 2));
    }

    #[test]
    fn normalization_by_hand() {
        let f = file();
        let m = Matrix::new(&f);
        let ids = &m.ids;
        let n = normalize::normalize(&f.results[0], &m.rows[0], ids, &normalize::Reference::Lowest);
        assert_eq!(n, vec![("A".into(), Some(1.0)), ("B".into(), Some(2.0))]);
        // Lower is better: A (2 s) is twice as good as B (4 s), relative to B.
        let n = normalize::normalize(&f.results[1], &m.rows[1], ids, &normalize::Reference::Baseline("B".into()));
        assert_eq!(n, vec![("A".into(), Some(2.0)), ("B".into(), Some(1.0))]);
        let n = normalize::normalize(&f.results[3], &m.rows[3], ids, &normalize::Reference::Baseline("B".into()));
        assert_eq!(n, vec![("A".into(), None), ("B".into(), None)]);
    }

    #[test]
    fn outliers_are_removed_and_noisy_results_hidden() {
        let mut f = file();
        f.results[0].entries[0] = entry_of("A", 0.0, &[100.0, 101.0, 99.0, 100.5, 300.0]);
        f.results[1].entries[0] = entry_of("A", 0.0, &[1.0, 3.0, 2.0]);
        // 300 is an outlier (modified z 0.6745 · 199.5 / 0.5 = 269.1): 4 trials
        // stay, mean 100.125, median (100 + 100.5) / 2.
        assert_eq!(noise::remove_outliers(&mut f), 1);
        let e = &f.results[0].entries[0];
        assert_eq!((e.n, e.value, e.median), (4, 100.125, 100.25));
        // A's t2 trials have an RSD of 50 %: hidden at 6 %.
        assert!(noise::is_noisy(&f.results[1].entries[0], noise::NOISY_RSD));
        assert_eq!(noise::hide_noisy(&mut f, noise::NOISY_RSD), 1);
        assert_eq!(f.results.len(), 3);
    }

    #[test]
    fn notable_results_have_the_largest_spread() {
        let f = file();
        let n = notable::notable(&f, &Matrix::new(&f), 2);
        assert_eq!(n, vec![(0, 2.0), (1, 2.0)]);
    }
}
