//! `engine benchmark --compare-to NAME [--fail-on-regression [PCT]]` and
//! `engine result show --fail-on-regression`: a result judged against a
//! baseline, as a CI job reads it. The library judges; the CLI prints the
//! [`Judged`] it returns.

use crate::{Context, Failure, exit};
use engine::analysis::gate;
use engine::model::facts::Identifier;
use engine::model::result::ResultFile;
use engine::report::View;

/// A benchmark's baseline, checked before anything runs.
#[derive(Debug, Clone)]
pub struct Gate {
    base: String,
    /// `--fail-on-regression [PCT]` (`Some(None)`: the default percentage).
    fail: Option<Option<f64>>,
    /// `--equivalence PCT`.
    margin: f64,
}

/// One regression, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    pub title: String,
    /// What of the test (`Random Read - 4KB`).
    pub what: String,
    pub identifier: Identifier,
    /// `0.91× [0.89, 0.93]`.
    pub ratio: String,
    /// `worse by 9.0 %`.
    pub verdict: String,
}

/// How a result fared against its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub baseline: String,
    /// Significantly worse by this many percent or more is a regression.
    pub pct: f64,
    pub regressions: Vec<Regression>,
    pub improvements: usize,
    /// Equivalent within the margin, and neither way decided.
    pub equivalent: usize,
    pub undecided: usize,
    /// The equivalence margin, percent.
    pub margin: f64,
}

impl Judged {
    /// 6 with a regression, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.regressions.is_empty() { exit::OK } else { exit::REGRESSION }
    }
}

/// `file`'s comparisons (as `view` makes them) sorted for a gate.
pub fn judge(file: &ResultFile, view: &View) -> Judged {
    let a = engine::report::view::analyze(file, view);
    let pct = view.gate_pct();
    let g = gate::gate(&a.comparisons, pct);
    let regressions = g
        .regressions
        .iter()
        .map(|c| {
            let t = &file.results[c.result];
            Regression {
                title: t.title.clone(),
                what: t.what().to_string(),
                identifier: c.identifier.into(),
                ratio: c.comparison.ratio_text(),
                verdict: c.comparison.verdict.to_string(),
            }
        })
        .collect();
    Judged {
        baseline: a.baseline.unwrap_or_default().into(),
        pct,
        regressions,
        improvements: g.improvements.len(),
        equivalent: g.equivalent,
        undecided: g.undecided,
        margin: view.equivalence_pct,
    }
}

impl Gate {
    /// `--compare-to NAME`: NAME must exist.
    pub fn check(
        cx: &Context,
        compare_to: Option<engine::store::ResultName>,
        fail: Option<Option<f64>>,
        margin: f64,
    ) -> Result<Option<Gate>, Failure> {
        let Some(base) = compare_to.map(|n| n.to_string()) else { return Ok(None) };
        if !cx.store.exists(&base) {
            return Err(Failure::usage(format!("--compare-to: no saved result `{base}`"))
                .hint("`engine list results` lists them; save a baseline first with --save NAME"));
        }
        Ok(Some(Gate { base, fail, margin }))
    }

    /// The baseline and the run's result `new` (named `name`) in one file,
    /// baseline first, and the view that gates it.
    pub fn merged(&self, cx: &Context, name: &str, new: &ResultFile) -> Option<(ResultFile, View)> {
        let base = cx.store.load_lean(&self.base).ok()?;
        let merged = engine::store::edit::merge(
            vec![(self.base.clone(), base), (name.to_string(), new.clone())],
            &format!("{} vs {name}", self.base),
        );
        let view = View { regression_pct: self.fail.flatten(), equivalence_pct: self.margin, ..Default::default() };
        Some((merged, view))
    }

    /// Whether the gate decides the exit code (`--fail-on-regression`),
    /// rather than only showing the comparison.
    pub(crate) fn fails(&self) -> bool {
        self.fail.is_some()
    }

    /// The exit code: the run's own when it is not 0 (failed tests, an
    /// interrupt), else 6 for a regression under --fail-on-regression.
    pub fn exit_code(&self, run: i32, judged: &Judged) -> i32 {
        if run == exit::OK && self.fails() { judged.exit_code() } else { run }
    }
}
