//! What a report shows beyond the stored values: normalization, the baseline
//! of comparisons, the noise threshold, and the analysis computed once for
//! every exporter (overall means, wins, notable results, significance).

use crate::analysis::normalize::Reference;
use crate::analysis::significance::{self, Comparison};
use crate::analysis::{Matrix, means, notable, wins};
use crate::model::facts::{Identifier, Unit};
use crate::model::result::ResultFile;

#[derive(Debug, Clone)]
pub struct View {
    /// Identifier comparisons are made against (default: the first).
    pub baseline: Option<Identifier>,
    /// Show values relative to a reference instead of as measured.
    pub normalize: Option<Reference>,
    /// Smallest change reported as real, percent.
    pub noise_pct: f64,
    /// Largest difference still called equivalent, percent.
    pub equivalence_pct: f64,
    /// How many notable results to list.
    pub notable: usize,
    /// A regression is worse by at least this, percent (default: `noise_pct`).
    pub regression_pct: Option<f64>,
    /// Every system field whole (compiler flags, kernel command line,
    /// security notes); else the text report cuts long ones to a line.
    pub detail: bool,
    /// The monitor series the HTML report charts under each test.
    pub monitors: Vec<crate::model::series::Recorded>,
    /// When and how a result is shown as a fleet.
    pub fleet: FleetView,
}

/// A result of many identifiers shown as a fleet (`report::fleet`).
#[derive(Debug, Clone)]
pub struct FleetView {
    /// From this many identifiers on (default 30).
    pub from: usize,
    /// The grouping and the hosts shown; either given makes any result a fleet.
    pub select: crate::analysis::fleet::Select,
    /// How many odd hosts the reports list.
    pub top: usize,
}

/// Identifiers from which a result's report is a fleet's.
pub const FLEET_FROM: usize = 30;

impl Default for FleetView {
    fn default() -> Self {
        FleetView { from: FLEET_FROM, select: Default::default(), top: 20 }
    }
}

impl Default for View {
    fn default() -> Self {
        View {
            baseline: None,
            normalize: None,
            noise_pct: significance::NOISE_PCT,
            equivalence_pct: significance::EQUIVALENCE_PCT,
            notable: 5,
            regression_pct: None,
            detail: false,
            monitors: Vec::new(),
            fleet: FleetView::default(),
        }
    }
}

impl View {
    /// What a verdict asks of a change.
    pub(crate) fn rule(&self) -> significance::Rule {
        significance::Rule { noise_pct: self.noise_pct, equivalence_pct: self.equivalence_pct }
    }

    /// The fleet view of `f`, when it is shown as one.
    pub(crate) fn fleet_of(&self, f: &ResultFile) -> Option<crate::analysis::fleet::Fleet> {
        let s = &self.fleet.select;
        let asked = s.group_by.is_some() || s.identifiers.is_some();
        (asked || f.systems.len() > self.fleet.from).then(|| crate::analysis::fleet::analyse(f, s))
    }

    /// The percentage a regression is worse by at least.
    pub fn gate_pct(&self) -> f64 {
        self.regression_pct.unwrap_or(self.noise_pct)
    }
}

/// The analysis of a result file under a view.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub ids: Vec<Identifier>,
    pub baseline: Option<Identifier>,
    pub geometric: Option<Vec<(Identifier, f64)>>,
    /// The unit and each identifier's harmonic mean (results of one unit only).
    pub harmonic: Option<(Unit, Vec<(Identifier, f64)>)>,
    /// Results the means were taken over.
    pub shared: usize,
    /// Tests those results belong to (each weighs once in the means).
    pub shared_tests: usize,
    pub wins: Vec<wins::Tally>,
    /// Result index and its spread (best / worst).
    pub notable: Vec<(usize, f64)>,
    /// Per result index: each non-baseline identifier's comparison.
    pub comparisons: Vec<(usize, Vec<(Identifier, Comparison)>)>,
}

pub fn analyze(f: &ResultFile, v: &View) -> Analysis {
    let m = Matrix::new(f);
    analyze_matrix(f, &m, v)
}

/// [`analyze`] with the entry table already built.
pub(crate) fn analyze_matrix(f: &ResultFile, m: &Matrix<'_>, v: &View) -> Analysis {
    let ids = m.ids.clone();
    let baseline = v.baseline.clone().filter(|b| ids.contains(b)).or_else(|| ids.first().cloned());
    let mut comparisons = Vec::new();
    if let Some(bi) = baseline.as_deref().and_then(|b| m.index(b)) {
        for (i, (r, row)) in f.results.iter().zip(&m.rows).enumerate() {
            let Some(base) = row[bi] else { continue };
            let c: Vec<(Identifier, Comparison)> = row
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != bi)
                .filter_map(|(j, e)| {
                    let e = (*e)?;
                    let mut c = crate::analysis::paired::compare_entries(e, base, r.proportion, &r.unit, v.rule())?;
                    // With set-ups the units are set-ups: what would settle
                    // it is said in trials, at the trials a set-up had.
                    if let significance::Verdict::Undecided(Some(k)) = &mut c.verdict {
                        let per = [e, base]
                            .iter()
                            .filter(|x| x.setup_count() > 1)
                            .map(|x| x.n.div_ceil(x.setup_count()))
                            .max()
                            .unwrap_or(1);
                        *k = k.saturating_mul(per as u32);
                    }
                    Some((ids[j].clone(), c))
                })
                .collect();
            if !c.is_empty() {
                comparisons.push((i, c));
            }
        }
        let tests: Vec<&str> = f.results.iter().map(|r| r.test.as_str()).collect();
        crate::analysis::fdr::hold_back(&tests, &mut comparisons);
    }
    // Notable results lead with the significant differences (a wide spread
    // that the trials cannot tell from noise comes after them).
    let mut notable = notable::notable(f, m, usize::MAX);
    let significant =
        |i: usize| comparisons.iter().any(|(r, cs)| *r == i && cs.iter().any(|(_, c)| c.verdict.is_change()));
    notable.sort_by_key(|(i, _)| !significant(*i));
    notable.truncate(v.notable);
    Analysis {
        geometric: means::geometric(f, m),
        harmonic: means::harmonic(f, m),
        shared: means::shared_count(m),
        shared_tests: means::shared_tests(f, m),
        wins: wins::tally(f, m, v.rule()),
        notable,
        comparisons,
        baseline,
        ids,
    }
}

/// The comparisons of `r` against the baseline of `view`, as records.
pub(crate) fn comparison_records(r: &ResultFile, view: &View) -> Vec<crate::model::result::ComparisonRecord> {
    let a = analyze(r, view);
    let Some(baseline) = a.baseline.clone() else { return Vec::new() };
    let mut out = Vec::new();
    for (i, cs) in &a.comparisons {
        let t = &r.results[*i];
        for (id, c) in cs {
            out.push(crate::model::result::ComparisonRecord {
                test: t.test.clone(),
                result: t.result.clone(),
                identifier: id.clone(),
                baseline: baseline.clone().into(),
                ratio: c.ratio,
                ratio_ci: c.ratio_ci.map(|(lo, hi)| [lo, hi]),
                change_pct: c.change_pct,
                p_value: c.p_value,
                verdict: match c.verdict {
                    significance::Verdict::Better(_) => "better".into(),
                    significance::Verdict::Worse(_) => "worse".into(),
                    significance::Verdict::Equivalent(_) => "equivalent".into(),
                    significance::Verdict::Undecided(_) => "undecided".into(),
                    significance::Verdict::Held { .. } => "undecided".into(),
                    ref v => v.to_string(),
                },
            });
        }
    }
    out
}
