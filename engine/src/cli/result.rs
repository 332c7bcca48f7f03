//! `engine result …`: show, compare, edit, import and export saved results.

use super::args::FormatArg;
use super::args::NormalizeTo;
use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use super::{Failure, exit};
use clap::{Args, Subcommand};
use engine_model::model::result::ResultFile;
use engine_ops::present;
use engine_ops::result::{self, Edit, Merge};
use engine_ops::vocab::store::edit;
use engine_ops::{Context, Events};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct ViewArgs {
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// Only the tests whose identity, profile id or `profile: description`
    /// matches this glob (repeatable: any may match), as history filters
    #[arg(long = "test", value_name = "GLOB", value_parser = super::odd::glob_pattern)]
    pub tests: Vec<glob::Pattern>,
    /// Write the report to FILE (atomically) instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Identifier the others are compared with (default: the first)
    #[arg(long, value_name = "ID")]
    pub baseline: Option<String>,
    /// Show values relative to the lowest of each result, or to the baseline
    #[arg(long, value_name = "TO", num_args = 0..=1, default_missing_value = "lowest", value_enum)]
    pub normalize: Option<super::args::NormalizeTo>,
    /// Drop outlier trials (modified z-score over 3.5) before averaging
    #[arg(long)]
    pub remove_outliers: bool,
    /// Hide results with a relative SD over PCT (default 6)
    #[arg(long, value_name = "PCT", num_args = 0..=1, default_missing_value = "6")]
    pub hide_noisy: Option<f64>,
    /// Smallest change reported as real, percent
    #[arg(long, value_name = "PCT", default_value_t = engine_ops::present::NOISE_PCT)]
    pub noise: f64,
    /// Largest difference called `equivalent`, percent: the ratio's 90 % interval must
    /// lie within ±PCT (two one-sided tests; default: config.toml's `equivalence`, else 2);
    /// otherwise a result is `undecided`
    #[arg(long, value_name = "PCT", value_parser = super::args::margin)]
    pub equivalence: Option<f64>,
    /// How many notable results to list
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub notable: usize,
    /// Print every system field whole (the text report cuts long notes to a line)
    #[arg(long)]
    pub detail: bool,
    /// Exit 6 when any result is significantly worse than the baseline by at least
    /// PCT (default: the noise threshold), listing each with its ratio interval;
    /// also the threshold of `--format junit` and `summary` failures
    #[arg(long, value_name = "PCT", num_args = 0..=1, value_parser = super::args::percent)]
    pub fail_on_regression: Option<Option<f64>>,
    /// Past this many identifiers (a fleet) the text and HTML reports show each
    /// result's distribution across hosts, and the odd hosts, instead of a bar per host
    #[arg(long, value_name = "N", default_value_t = engine_ops::present::FLEET_FROM)]
    pub fleet_from: usize,
    #[command(flatten)]
    pub fleet: super::odd::FleetArgs,
    /// How many odd hosts a fleet's report lists
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
}

#[derive(Subcommand, Debug)]
pub enum ResultCommand {
    /// Print a saved result: bars with SE and N, overall means, wins, and verdicts against a baseline
    Show {
        /// Result name
        name: String,
        #[command(flatten)]
        view: ViewArgs,
    },
    /// Compare saved results (names, result.json files or PTS composite.xml files) side by side
    Compare {
        #[arg(required = true, num_args = 1.., value_name = "NAME|FILE")]
        names: Vec<String>,
        #[command(flatten)]
        view: ViewArgs,
    },
    /// Merge results into a new one: tests aligned by identity, every identifier kept.
    /// Every result.json must satisfy schemas/result.schema.json and come from this engine's major version
    Merge {
        #[arg(required = true, num_args = 1.., value_name = "NAME|FILE")]
        names: Vec<String>,
        /// Name of the merged result
        #[arg(long, value_name = "NAME", value_parser = super::args::result_name)]
        save: engine_ops::benchmark::ResultName,
        /// Merge nothing when any input is refused (by default refused inputs are left
        /// out, named with the reason, and the rest merged with exit code 4)
        #[arg(long)]
        strict: bool,
        /// Record a source that has no result to merge, with why (`host3=unreachable`):
        /// listed in the merged result and its reports
        #[arg(long = "left-out", value_name = "SOURCE=REASON")]
        left_out: Vec<String>,
        /// Replace a result of that name (atomically) instead of refusing
        #[arg(long)]
        replace: bool,
    },
    /// Set a result's title and description (what reports head it with)
    #[command(arg_required_else_help = true)]
    Edit {
        name: String,
        /// The new title
        #[arg(long)]
        title: Option<String>,
        /// The new description
        #[arg(long)]
        description: Option<String>,
    },
    /// Rename an identifier
    RenameIdentifier { name: String, from: String, to: String },
    /// Remove an identifier and its values
    RemoveIdentifier { name: String, identifier: String },
    /// Remove results: by test identity, profile id, or `profile: description`
    RemoveResult { name: String, what: String },
    /// Delete a saved result and its logs (asks on a terminal; -y does not)
    Delete {
        name: String,
        /// Delete without asking
        #[arg(short = 'y', long)]
        yes: bool,
    },
    /// List saved results (as `engine list results`)
    List {
        /// Only those with an identifier tagged KEY=VALUE (repeatable: all must match)
        #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::args::tag)]
        tags: Vec<(String, String)>,
    },
    /// Each result's value over saved results in time order (or a tag's), with the change
    /// points E-Divisive with means finds: before/after means and their ratio interval
    History(super::history::HistoryArgs),
    /// The devices' and the system's time series around each test's trials
    /// (iostat's columns, CPU, dirty pages, pressure): sparklines, CSV or JSON
    Monitor(super::monitor::MonitorArgs),
    /// A fleet's odd hosts: far from their group's median by a robust rule
    /// (median and MAD, Benjamini–Hochberg across the fleet), as text, CSV or JSON
    Odd(super::odd::OddArgs),
    /// Send a saved result to an `engine serve` started with --upload-token-file
    /// (saved there as NAME, or appended to its result of that name)
    Push(super::push::PushArgs),
    /// Import a PTS/OpenBenchmarking composite.xml as a saved result
    Import {
        file: PathBuf,
        /// Name to save it as (default: its title)
        #[arg(long, value_name = "NAME", value_parser = super::args::result_name)]
        save: Option<engine_ops::benchmark::ResultName>,
    },
}

/// Renders `file` as `v` asks; `monitors` are its series (for HTML).
fn render(
    file: &ResultFile,
    v: &ViewArgs,
    monitors: Vec<engine_model::model::series::Recorded>,
) -> Result<i32, Failure> {
    let format = v.format.0;
    // An image on a terminal is garbage on the screen: refuse before any work.
    if present::is_binary(format) && v.output.is_none() && std::io::stdout().is_terminal() {
        return Err(Failure::usage(format!("--format {} is a binary image: not written to a terminal", format.name()))
            .hint("write it to a file with -o FILE (or redirect standard output)"));
    }
    let shown = present::present(file, &v.presentation(), monitors)?;
    if let (Some(pct), n @ 1..) = (v.hide_noisy, shown.hidden_noisy) {
        errln!("{n} noisy result(s) hidden (relative SD over {pct} %)");
    }
    super::ui::emit(&shown.bytes, v.output.as_deref(), "the report")?;
    if let Some(judged) = &shown.judged {
        print_judged(judged);
    }
    Ok(present::exit_code(&shown))
}

impl ViewArgs {
    /// The presentation these flags ask for.
    fn presentation(&self) -> present::Presentation {
        present::Presentation {
            format: self.format.0,
            width: ui::width(),
            tests: self.tests.clone(),
            baseline: self.baseline.clone(),
            normalize: self.normalize.map(|n| match n {
                NormalizeTo::Baseline => present::Normalize::Baseline,
                NormalizeTo::Lowest => present::Normalize::Lowest,
            }),
            remove_outliers: self.remove_outliers,
            hide_noisy: self.hide_noisy,
            noise_pct: self.noise,
            equivalence_pct: self.equivalence.unwrap_or(present::EQUIVALENCE_PCT),
            notable: self.notable,
            detail: self.detail,
            fail_on_regression: self.fail_on_regression,
            fleet: present::FleetView { from: self.fleet_from, select: self.fleet.select(), top: self.top },
        }
    }
}

/// `--fail-on-regression` (and `benchmark --compare-to`): each regression
/// on stderr.
pub(super) fn print_judged(j: &engine_ops::gate::Judged) {
    let (baseline, pct) = (&j.baseline, j.pct);
    if j.regressions.is_empty() {
        errln!(
            "no regressions against `{baseline}` (significantly worse by {pct} % or more); {} improvement(s), {} equivalent within ±{} %, {} undecided",
            j.improvements,
            j.equivalent,
            j.margin,
            j.undecided
        );
        return;
    }
    errln!("{} regression(s) against `{baseline}` (significantly worse by {pct} % or more):", j.regressions.len());
    for r in &j.regressions {
        errln!("  {}: {} ({}): {}, {}", r.title, r.what, r.identifier, r.ratio, r.verdict);
    }
}

/// `engine result show NAME`.
fn show(cx: &Context, name: &str, view: &ViewArgs, events: &TermEvents) -> Result<i32, Failure> {
    // A JSON export is the whole result: a fleet's bulk too.
    let whole = view.format.0 == present::Format::Json;
    let file = result::load_as(cx, name, events, whole)?.1;
    // Only the HTML page charts the series: other formats skip reading them.
    let monitors = if view.format.0 == present::Format::Html {
        engine_ops::monitor::readable(cx, name, &file)
    } else {
        Vec::new()
    };
    let code = render(&file, view, monitors);
    // A fleet's result is 680,000 entries: the process ends now and
    // frees them all at once (dropping them one by one took 5 %).
    std::mem::forget(file);
    code
}

pub fn run(cx: &Context, cmd: ResultCommand) -> Result<i32, Failure> {
    let events = TermEvents::new(false, Shown::Nothing, ui::width(), Prompts::new());
    let defaults = |mut v: ViewArgs| -> Result<ViewArgs, Failure> {
        v.equivalence = v.equivalence.or(super::config::Defaults::load(cx)?.equivalence());
        Ok(v)
    };
    match cmd {
        ResultCommand::Show { name, view } => show(cx, &name, &defaults(view)?, &events),
        ResultCommand::Compare { names, view } => {
            let view = defaults(view)?;
            let whole = view.format.0 == present::Format::Json;
            let files: Vec<(String, ResultFile)> =
                names.iter().map(|n| result::load_as(cx, n, &events, whole)).collect::<Result<_, _>>()?;
            let title = files.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" vs ");
            render(&edit::merge(files, &title), &view, Vec::new())
        }
        ResultCommand::Merge { names, save, strict, left_out, replace } => {
            let inputs = names.iter().map(|n| result::Input::from_word(cx, n)).collect();
            let m = result::merge(cx, &Merge { inputs, save: save.clone(), strict, left_out, replace }, &events)?;
            errln!(
                "merged {} result(s) into `{save}`: {} identifiers, {} results",
                m.inputs,
                m.file.systems.len(),
                m.file.results.len()
            );
            for l in &m.file.left_out {
                errln!("  left out {}: {}", l.source, l.reason);
            }
            Ok(m.exit_code())
        }
        ResultCommand::Edit { name, title, description } => {
            if title.is_none() && description.is_none() {
                return Err(Failure::usage("nothing to change").hint("give --title, --description or both"));
            }
            result::edit(cx, &name, &Edit::Describe { title, description }).map(|_| exit::OK)
        }
        ResultCommand::RenameIdentifier { name, from, to } => {
            result::edit(cx, &name, &Edit::RenameIdentifier { from, to }).map(|_| exit::OK)
        }
        ResultCommand::RemoveIdentifier { name, identifier } => {
            result::edit(cx, &name, &Edit::RemoveIdentifier(identifier)).map(|_| exit::OK)
        }
        ResultCommand::RemoveResult { name, what } => {
            let n = result::edit(cx, &name, &Edit::RemoveResult(what))?;
            errln!("removed {n} result(s)");
            Ok(exit::OK)
        }
        ResultCommand::Delete { name, yes } => {
            let (_, f) = result::load(cx, &name, &events)?;
            let q = format!(
                "delete result `{name}` ({} identifier(s), {} result(s)) and its logs?",
                f.systems.len(),
                f.results.len()
            );
            if !yes && std::io::stdin().is_terminal() && !events.confirm(&q) {
                errln!("kept `{name}`");
                return Ok(exit::OK);
            }
            result::delete(cx, &name)?;
            errln!("deleted result `{name}`");
            Ok(exit::OK)
        }
        ResultCommand::List { tags } => {
            super::list::run(cx, super::list::ListArgs { what: super::list::What::Results, tags })
        }
        ResultCommand::History(args) => super::history::run(cx, args),
        ResultCommand::Monitor(args) => super::monitor::run(cx, args),
        ResultCommand::Odd(args) => super::odd::run(cx, args),
        ResultCommand::Push(args) => super::push::run(cx, args),
        ResultCommand::Import { file, save } => {
            let (name, f) = result::import(cx, &file, save)?;
            imported(&name, &f);
            Ok(exit::OK)
        }
    }
}

/// What an import took in: how many results line up with engine's tests,
/// and each one kept as PTS's own with its reason.
fn imported(name: &str, f: &ResultFile) {
    use engine_sys::text::one_line;
    let own: Vec<_> = f.results.iter().filter_map(|r| r.not_runnable().map(|why| (r, why))).collect();
    errln!(
        "imported `{name}`: {} identifiers, {} results ({} matched to engine's profiles and can be re-run with `engine benchmark {name}`; {} kept as PTS's own)",
        f.systems.len(),
        f.results.len(),
        f.results.len() - own.len(),
        own.len()
    );
    for (r, why) in own {
        errln!(
            "  not runnable here: {}: {} ({}): {}",
            one_line(&r.title),
            one_line(&r.description),
            one_line(&r.unit),
            one_line(why)
        );
    }
    let converted = f.results.iter().filter(|r| r.pts.as_ref().is_some_and(|p| p.unit.is_some())).count();
    if converted > 0 {
        errln!("  {converted} result(s) relabelled to engine's exact unit (each records PTS's label and why)");
    }
}
