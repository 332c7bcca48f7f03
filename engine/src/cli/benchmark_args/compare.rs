//! The comparison's flags: the saved result a run is judged against
//! afterwards, the regression that fails it, and the margin called equal.

use super::super::args;
use super::super::line::Line;
use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// After the run, compare its result with saved result NAME (its first identifier is
    /// the baseline) and list the regressions and improvements
    #[arg(long, value_name = "NAME", value_parser = args::result_name)]
    pub compare_to: Option<engine_ops::benchmark::ResultName>,
    /// With --compare-to: exit 6 when a result is significantly worse than NAME's by at
    /// least PCT (default: the noise threshold)
    #[arg(long, value_name = "PCT", num_args = 0..=1, requires = "compare_to", value_parser = args::percent)]
    pub fail_on_regression: Option<Option<f64>>,
    /// The largest difference called `equivalent`, percent (the ratio's 90 % interval
    /// within ±PCT; default: config.toml's `equivalence`, else 2): what an interleaved
    /// sweep's verdict stop settles and --compare-to judges; otherwise `undecided`
    #[arg(long, value_name = "PCT", value_parser = args::margin)]
    pub equivalence: Option<f64>,
}

impl CompareArgs {
    /// The margin called `equivalent`, percent: the flag's, else engine's
    /// (config.toml's is filled in before).
    pub fn margin(&self) -> f64 {
        self.equivalence.unwrap_or(engine_ops::present::EQUIVALENCE_PCT)
    }

    pub fn render(&self, out: &mut Line) {
        out.opt("--compare-to", self.compare_to.as_deref());
        out.opt("--equivalence", self.equivalence);
        match self.fail_on_regression {
            Some(Some(pct)) => out.0.push(format!("--fail-on-regression={pct}")),
            Some(None) => out.0.push("--fail-on-regression".into()),
            None => {}
        }
    }
}
