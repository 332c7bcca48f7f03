//! `engine result show`, `compare` and `odd`: a loaded result presented as
//! its flags ask — the tests kept, outliers and noisy results taken out,
//! the baseline found, the report exported, a regression gate judged, or a
//! fleet's odd hosts listed. The binary prints what this returns.

use crate::gate::{self, Judged};
use crate::{Failure, exit};
use engine::analysis::normalize::Reference;
use engine::analysis::{self, NoIdentifier, fleet, noise};
use engine::model::result::{ResultFile, TestResult};
use engine::model::series::Recorded;
use engine::report::{self, View};
use std::borrow::Cow;

pub use engine::analysis::fleet::Select;
pub use engine::analysis::significance::{EQUIVALENCE_PCT, NOISE_PCT};
pub use engine::report::view::FLEET_FROM;
pub use engine::report::{FleetView, Format};

/// What `--normalize` makes 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalize {
    /// The worst value of each result.
    Lowest,
    /// The baseline's value (the first identifier when none is named).
    Baseline,
}

/// How a result is presented: `result show`'s and `compare`'s flags.
#[derive(Debug, Clone)]
pub struct Presentation {
    pub format: Format,
    /// Columns of the text report.
    pub width: usize,
    /// Only the tests whose identity, profile id, `profile: description` or
    /// title matches one of these (none: all).
    pub tests: Vec<glob::Pattern>,
    pub baseline: Option<String>,
    pub normalize: Option<Normalize>,
    pub remove_outliers: bool,
    /// Hide results whose relative SD is over this, percent.
    pub hide_noisy: Option<f64>,
    pub noise_pct: f64,
    pub equivalence_pct: f64,
    pub notable: usize,
    pub detail: bool,
    /// `--fail-on-regression [PCT]`: judge against the baseline.
    pub fail_on_regression: Option<Option<f64>>,
    pub fleet: FleetView,
}

/// A presented result.
pub struct Presented {
    /// The report, as `format` writes it.
    pub bytes: Vec<u8>,
    /// Results `--hide-noisy` took out.
    pub hidden_noisy: usize,
    /// The gate's judgement, when `--fail-on-regression` asked for one.
    pub judged: Option<Judged>,
}

/// `file` presented as `p` says, with the monitor series the HTML report
/// charts. Bad flags for this result (no test matches, an unknown
/// baseline, a gate with nothing to compare) are usage failures.
pub fn present(file: &ResultFile, p: &Presentation, monitors: Vec<Recorded>) -> Result<Presented, Failure> {
    // A copy only to change it: a fleet's result is hundreds of MiB.
    let mut file = Cow::Borrowed(file);
    if !p.tests.is_empty() {
        let keep = |r: &TestResult| {
            let names =
                [r.test.clone(), r.profile.clone(), format!("{}: {}", r.profile, r.description), r.title.clone()];
            p.tests.iter().any(|g| names.iter().any(|n| g.matches(n)))
        };
        file.to_mut().results.retain(keep);
        if file.results.is_empty() {
            return Err(Failure::usage("no test matches --test").hint("`engine result show NAME` lists them all"));
        }
    }
    if p.remove_outliers {
        noise::remove_outliers(file.to_mut());
    }
    let hidden_noisy = p.hide_noisy.map_or(0, |pct| noise::hide_noisy(file.to_mut(), pct));
    let ids = analysis::identifiers(&file);
    if p.fail_on_regression.is_some() && ids.len() < 2 {
        return Err(Failure::usage(format!(
            "--fail-on-regression needs a baseline and another identifier to compare; this result has {}",
            if ids.is_empty() { "none".to_string() } else { format!("only `{}`", ids[0]) }
        ))
        .hint("compare two results: `engine result compare BASE NEW --fail-on-regression`"));
    }
    let baseline = match &p.baseline {
        None => None,
        Some(b) => Some(analysis::find_identifier(&ids, b).map_err(|e| {
            let (what, candidates) = match e {
                NoIdentifier::None(c) => (format!("no identifier `{b}` in this result"), c),
                NoIdentifier::Several(c) => (format!("`{b}` is part of several identifiers"), c),
            };
            Failure::usage(what).hint(format!("identifiers: {}", candidates.join(", ")))
        })?),
    };
    let view = View {
        baseline: baseline.clone(),
        normalize: p.normalize.map(|n| match n {
            Normalize::Baseline => {
                Reference::Baseline((baseline.clone().or_else(|| ids.first().cloned()).unwrap_or_default()).into())
            }
            Normalize::Lowest => Reference::Lowest,
        }),
        noise_pct: p.noise_pct,
        equivalence_pct: p.equivalence_pct,
        notable: p.notable,
        regression_pct: p.fail_on_regression.flatten(),
        detail: p.detail,
        monitors,
        fleet: p.fleet.clone(),
    };
    let bytes = p.format.exporter(p.width).export_bytes(&file, &view).map_err(Failure::error)?;
    let judged = p.fail_on_regression.is_some().then(|| gate::judge(&file, &view));
    Ok(Presented { bytes, hidden_noisy, judged })
}

/// Whether `format` writes an image (not for a terminal).
pub fn is_binary(format: Format) -> bool {
    format.exporter(80).binary()
}

/// How `engine result odd` lists a fleet's odd hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OddFormat {
    /// A line each, under a heading with the rule.
    Text,
    Csv,
    /// With the rule.
    Json,
}

/// The odd hosts of `file`'s fleet (far from their group by the robust
/// rule of `analysis::fleet`), as `format` writes them.
pub fn odd(file: &ResultFile, select: &Select, format: OddFormat) -> String {
    let fleet = fleet::analyse(file, select);
    match format {
        OddFormat::Csv => report::fleet::odd_csv(file, &fleet),
        OddFormat::Json => report::fleet::odd_json(file, &fleet),
        OddFormat::Text => {
            let mut out = format!(
                "{} odd host-result(s) of {} judged in {} hosts ({})\n",
                fleet.odd.len(),
                fleet.judged,
                fleet.hosts,
                fleet::RULE
            );
            for o in &fleet.odd {
                out.push_str(&report::fleet::odd_line(file, o));
                out.push('\n');
            }
            out
        }
    }
}

/// The exit code of a presentation: the gate's, else success.
pub fn exit_code(p: &Presented) -> i32 {
    p.judged.as_ref().map_or(exit::OK, Judged::exit_code)
}
