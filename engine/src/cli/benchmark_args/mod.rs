//! The flags of `engine benchmark` and `engine run`, typed where they are
//! given (clap checks each value: the flag named, exit 2). The flags of
//! each part of the request — the sweep, hygiene, the sandbox, the
//! monitors, the comparison — are a struct of their own in a file of its
//! own, flattened into these (ripgrep's low-level args): there each part's
//! flags are declared, turned into the part the request holds, and written
//! back into a command line (what the host lock shows and an interrupted
//! run prints to resume it).

mod compare;
mod hygiene;
mod monitor;
mod sandbox;
mod sweep;

pub use compare::CompareArgs;
pub use hygiene::HygieneArgs;
pub use monitor::MonitorArgs;
pub use sandbox::SandboxArgs;
pub use sweep::SweepArgs;

use super::args::{self, Logs, Progress, RunFormat};
use clap::Args;
use engine_model::model::facts::Identifier;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct BenchmarkArgs {
    /// What to run: a profile (`fio`, `fio@1.0`), a suite (`suite/disk`), a saved
    /// result (re-runs its tests for a new identifier), or a path to a profile or suite file
    #[arg(required = true, value_name = "REF")]
    pub refs: Vec<String>,
    /// Name of the result to save to (appends when it exists); `/` and `..` are refused
    #[arg(long, value_name = "NAME", value_parser = args::result_name)]
    pub save: Option<engine_ops::benchmark::ResultName>,
    /// Label of this system state in the result (`vda: BFQ`); an existing one resumes its
    /// missing tests. Default: config.toml's `identifier`, else the host name
    #[arg(long, value_name = "ID", value_parser = args::identifier)]
    pub identifier: Option<Identifier>,
    /// Entries to run, by option id or name and entry label or value: `--option block_size=4KB,2MB`
    #[arg(long = "option", short = 'o', value_name = "KEY=A,B")]
    pub options: Vec<engine_ops::benchmark::Preset>,
    /// Run exactly N trials per test (no trials added for noise)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Time each test's trials may take (`30s`, `5m`; default: config.toml's `budget`, the
    /// suite's, the profile's, else 60 s): trials are added while the 95 % CI is wider than the target
    #[arg(long, value_name = "DURATION", value_parser = args::positive_duration)]
    pub budget: Option<Duration>,
    /// Set each test up afresh N times (its folder, `pre_test`, io's file layout; on
    /// --device the file system too), trials in each set-up, so the interval covers what
    /// changes between set-ups (the book, "Statistics": set-ups); --runs N splits N trials among them
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub setups: Option<u32>,
    /// Run N trials first and discard them (overrides the profile's `trials.warmup`)
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// With a saved result: re-run only its tests that stopped for time wider
    /// than ±5 % (their entries are replaced); give them a larger --budget
    #[arg(long)]
    pub only_unsettled: bool,
    /// List the tests, trials and an estimated time, and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Batch mode: no menus; every entry (or the profile's defaults) runs
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Directory the tests run in; it must exist (each trial gets a fresh scratch directory
    /// inside it). Default: config.toml's `target-dir`, else the current directory
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Title of a new result file
    #[arg(long)]
    pub title: Option<String>,
    /// Description of a new result file
    #[arg(long)]
    pub description: Option<String>,
    /// Trial logs to keep under the result folder: `all`, or only those of `failed` trials
    #[arg(long, value_enum, default_value_t = Logs::All)]
    pub logs: Logs,
    #[command(flatten)]
    pub sweep: SweepArgs,
    #[command(flatten)]
    pub hygiene: HygieneArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    #[command(flatten)]
    pub monitor: MonitorArgs,
    /// A label recorded with the run (repeatable): `--tag commit=abc123 --tag firmware=2.1`;
    /// `kernel` and `engine` are recorded by themselves; `list results --tag K=V` filters
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = args::tag)]
    pub tags: Vec<(String, String)>,
    #[command(flatten)]
    pub compare: CompareArgs,
    /// What is printed: `text` (on a terminal a compact table per test as it finishes —
    /// value, ±CI, N, marks — then the comparison; piped, the whole report once at the
    /// end), `bars` (each test's bar charts as it finishes), or a report format at the end
    /// (default: config.toml's `format`, else `text`)
    #[arg(long, value_enum)]
    pub format: Option<RunFormat>,
    /// How progress is shown: `text` (a progress line on a terminal, a line per test
    /// otherwise) or `json` (one JSON object per line on standard output, for
    /// orchestrators: schemas/progress.schema.json)
    #[arg(long, value_enum, default_value_t = Progress::Text)]
    pub progress: Progress,
}
