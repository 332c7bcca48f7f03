//! The flags of `engine benchmark` and `engine run`, typed where they are
//! given (clap checks each value: the flag named, exit 2).

use super::args::{self, Logs, Progress, RunFormat};
use clap::Args;
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
    pub identifier: Option<String>,
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
    /// Run every test under each I/O scheduler of the device under the target directory:
    /// `none,mq-deadline,kyber,bfq,bfq:low_latency=0`, or `all`; each state is its own identifier
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub scheduler: Option<engine_ops::benchmark::Schedulers>,
    /// Run every test on each file system made fresh on --device: `ext4,xfs,btrfs`,
    /// with mount options as `ext4:nobarrier` or `ext4:data=writeback,noatime`
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub filesystem: Vec<engine_ops::benchmark::FsList>,
    /// The device file systems are made on (ext4 unless --filesystem says): a spare `/dev/X` (refused if mounted, part of the
    /// root disk, or holding data without --force-destroy-data), or `loop:SIZE` (e.g. `loop:4G`)
    /// for a loop device over a file engine creates and removes, with direct I/O on the file
    /// (`loop:4G,cached` keeps the page cache)
    #[arg(long, value_name = "DEV", help_heading = "System-state sweeps (root)")]
    pub device: Option<engine_ops::benchmark::DeviceSpec>,
    /// Directory for the backing file of `--device loop:SIZE` (default: ENGINE_HOME/loop)
    #[arg(long, value_name = "DIR", help_heading = "System-state sweeps (root)")]
    pub loop_dir: Option<PathBuf>,
    /// Erase a --device that has a partition table or file system
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub force_destroy_data: bool,
    /// Set a queue attribute or scheduler tunable for the run: `queue/read_ahead_kb=128`,
    /// `iosched/slice_idle=0` (restored afterwards)
    #[arg(long = "set", value_name = "ATTR=VALUE", help_heading = "System-state sweeps (root)")]
    pub set: Vec<engine_ops::benchmark::Setting>,
    /// Run the states of each test in random order, to decorrelate drift
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub shuffle: bool,
    /// Run each test's trials round-robin across the scheduler states (set up once, a
    /// fresh random order each round), so drift hits every state alike; the default
    /// for scheduler sweeps, on one file system or inside each of --filesystem's blocks
    #[arg(long, overrides_with = "no_interleave", help_heading = "System-state sweeps (root)")]
    pub interleave: bool,
    /// The scheduler state the others are compared with, and the interleaved run stops on
    /// the verdicts against (`kyber`, `bfq low_latency=0`); listed first. Default: the first
    #[arg(long, value_name = "STATE", requires = "scheduler", help_heading = "System-state sweeps (root)")]
    pub baseline: Option<String>,
    /// Run each state's trials in one block instead
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub no_interleave: bool,
    /// Run the blocks of states N times, in a new order each round, each round adding
    /// its trials (a share of the budget) to the same identifiers: for file-system sweeps
    #[arg(long, value_name = "N", help_heading = "System-state sweeps (root)")]
    pub rounds: Option<u32>,
    /// Sync and drop the page cache before every trial
    #[arg(long, help_heading = "Hygiene")]
    pub drop_caches: bool,
    /// Run even while another engine benchmark runs on this machine (with any
    /// ENGINE_HOME): a warning instead of a refusal; the two measure each other
    #[arg(long, help_heading = "Hygiene")]
    pub allow_concurrent: bool,
    /// When another engine benchmark runs on this machine, wait for it to
    /// finish (saying for whom) instead of refusing
    #[arg(long, help_heading = "Hygiene", conflicts_with = "allow_concurrent")]
    pub wait: bool,
    /// fstrim the target file system before every test
    #[arg(long, help_heading = "Hygiene")]
    pub fstrim: bool,
    /// Run every external profile confined (namespaces, read-only root, a cgroup;
    /// the book, "The sandbox"); profiles from a repository and `sandbox: true` ones always are
    #[arg(long, conflicts_with = "no_sandbox", help_heading = "Sandbox")]
    pub sandbox: bool,
    /// Run no profile confined, repository profiles included (asks on a terminal,
    /// elsewhere needs -y; the result file says so)
    #[arg(long, help_heading = "Sandbox")]
    pub no_sandbox: bool,
    /// Give a profile from a repository (or imported from PTS) more than the sandbox's
    /// defaults, by name (repeatable): `writable=DIR`, `processes=N`, `memory=SIZE`,
    /// `scratch=SIZE`, `time=DURATION` (a plugin's memory and time, a test's trial budget too),
    /// `trials=N` (trials forced whatever the budget); the result's
    /// Sandbox Notes record it. Without it such a profile asking for more is refused
    #[arg(long = "grant", value_name = "KEY=VALUE", value_parser = args::grant, help_heading = "Sandbox")]
    pub grants: Vec<engine_model::model::grant::Grants>,
    /// Pause before every test (`5s`)
    #[arg(long, value_name = "DURATION", value_parser = args::duration, help_heading = "Hygiene")]
    pub settle: Option<Duration>,
    /// Sample the devices under test and the system around every trial (`on`, the
    /// default, or config.toml's `monitor`) or not (`none`); `engine result monitor NAME` shows the series
    #[arg(long, value_enum, help_heading = "Monitors")]
    pub monitor: Option<args::Monitor>,
    /// How often the monitors sample, from 100ms to 10s (default: config.toml's
    /// `monitor-interval`, else 1s)
    #[arg(long, value_name = "DURATION", value_parser = args::monitor_interval, help_heading = "Monitors")]
    pub monitor_interval: Option<Duration>,
    /// Rows of the series a trial keeps on average, from 16 to 1000000 (default 8192):
    /// past that, every other row is dropped (counters' rates stay exact)
    #[arg(long, value_name = "N", value_parser = args::monitor_points, help_heading = "Monitors")]
    pub monitor_points: Option<usize>,
    /// A label recorded with the run (repeatable): `--tag commit=abc123 --tag firmware=2.1`;
    /// `kernel` and `engine` are recorded by themselves; `list results --tag K=V` filters
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = args::tag)]
    pub tags: Vec<(String, String)>,
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
