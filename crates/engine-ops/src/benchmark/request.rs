//! What `engine benchmark` (and `engine run`) is asked to do, and how it ended.

use crate::exit;
use engine::model::facts::Identifier;
use engine::model::result::FailedTest;
use engine::runner::LogPolicy;
use std::path::PathBuf;
use std::time::Duration;

pub use engine::state::sweep::SweepRequest;

/// One `engine benchmark`.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Profiles, suites, saved results or paths.
    pub refs: Vec<String>,
    /// `--option KEY=A,B`.
    pub options: Vec<engine::expand::Preset>,
    /// The result to save to (default: a new name from the references and the time).
    pub save: Option<engine::store::ResultName>,
    /// The label of this system state (default: the host name, or the resumed one).
    pub identifier: Option<Identifier>,
    /// Exactly this many trials per test.
    pub runs: Option<u32>,
    /// Time each test's trials may take, over the suite's and the profile's.
    pub budget: Option<Duration>,
    /// Warm-up trials, overriding the profile's.
    pub warmup: Option<u32>,
    /// List the tests and an estimate; run nothing.
    pub dry_run: bool,
    /// Batch mode: no menus, install without asking.
    pub yes: bool,
    /// Install what is missing (`benchmark`); `run` never installs.
    pub install: bool,
    /// Where downloads show their progress.
    pub progress: Option<engine::install::download::ProgressSink>,
    /// Where tests run (default: ENGINE_HOME/scratch).
    pub target_dir: Option<PathBuf>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub logs: LogPolicy,
    pub sweep: SweepRequest,
    /// `--drop-caches`, `--fstrim`, `--settle`.
    pub hygiene: engine::state::hygiene::Hygiene,
    /// Run although another benchmark runs on this machine (a warning, not a refusal).
    pub allow_concurrent: bool,
    /// `--wait`: wait for another run's locks instead of refusing.
    pub wait: bool,
    /// `--only-unsettled`: of a saved result, only the tests that stopped for
    /// time wider than ±5 %, their entries replaced.
    pub only_unsettled: bool,
    /// `--tag KEY=VALUE`: labels recorded with each identifier's system.
    pub tags: Vec<(String, String)>,
    /// `--sandbox` / `--no-sandbox`.
    pub sandbox: engine::runner::sandbox::Mode,
    /// `--grant KEY=VALUE`: what shared profiles get beyond the defaults.
    pub grants: engine::model::grant::Grants,
    /// `--monitor`, `--monitor-interval`: whether and how often the devices
    /// and the system are sampled around every trial.
    pub monitor: engine::monitor::Monitoring,
    /// `--setups N`: each test set up afresh N times (the book, "Statistics": set-ups).
    pub setups: Option<u32>,
    /// `--equivalence PCT` (or config.toml's): the margin an interleaved
    /// run's verdict stop settles "equivalent" within; `None`: 2.
    pub equivalence: Option<f64>,
    /// The command as the user would type it (rendered from its flags): the
    /// host lock names it.
    pub command: String,
}

/// How a benchmark that ran ended.
#[derive(Debug, Clone, Default)]
pub struct Ran {
    /// The result saved to and its file, when it exists.
    pub result: Option<(String, PathBuf)>,
    /// That result as saved (the report and the gate read it from here, not
    /// from disk again).
    pub file: Option<Box<engine::model::result::ResultFile>>,
    /// Tests saved by this run.
    pub saved: usize,
    pub failed: Vec<FailedTest>,
    /// Tests whose requirements were not met.
    pub skipped: Vec<FailedTest>,
    /// Tests of a saved result that cannot run here.
    pub not_runnable: Vec<String>,
    /// Stopped by Ctrl-C or SIGTERM: what the command that resumes it saves to.
    pub interrupted: Option<Box<Resume>>,
    /// How exact the results saved this run are.
    pub precision: engine::analysis::precision::Precision,
}

/// The result an interrupted run saved to, and the identifier to pin when
/// resuming (`None`: its identifiers come from a sweep's states).
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    pub name: String,
    pub identifier: Option<Identifier>,
}

/// One test of a dry run.
#[derive(Debug, Clone)]
pub struct Scheduled {
    pub label: String,
    /// Trials scheduled (warm-ups included) and the most the stopping rule runs.
    pub trials: u32,
    pub most: u32,
    /// The time budget of its trials.
    pub budget: Duration,
    /// Seconds the scheduled trials take (in every sweep state), when known.
    pub seconds: Option<f64>,
    /// Where `seconds` comes from.
    pub timing: Timing,
    /// What it runs, one command a line (`runner::commands`).
    pub commands: Vec<String>,
}

/// Where a dry run's time of a test comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Timing {
    /// An earlier run of the same test, in this saved result.
    Earlier(String),
    /// The profile's fixed run time × trials.
    RunTime,
    Unknown,
}

/// The tests a dry run lists, with an estimate.
#[derive(Debug, Clone, Default)]
pub struct Estimate {
    pub tests: Vec<Scheduled>,
    pub not_runnable: Vec<String>,
    /// Where the tests would run: `in DIR`, a sweep, or the states an
    /// `--only-unsettled` re-run makes again.
    pub place: Option<String>,
}

impl Estimate {
    /// Seconds of the scheduled trials of the tests with a timing, and how
    /// many tests have none.
    pub fn known(&self) -> (f64, usize) {
        let secs = self.tests.iter().filter_map(|t| t.seconds).sum();
        (secs, self.tests.iter().filter(|t| t.seconds.is_none()).count())
    }

    /// The longest the tests can take: trials stop at the target or when the
    /// budget is spent, but never before the scheduled ones, so each test
    /// takes at most the larger.
    pub fn most(&self) -> f64 {
        self.tests.iter().map(|t| t.budget.as_secs_f64().max(t.seconds.unwrap_or(0.0))).sum()
    }

    /// One line: "about 1m 20s, at most 3m (12 of 28 tests timed)".
    pub fn summary(&self) -> String {
        let (secs, unknown) = self.known();
        let fmt = |s: f64| humantime::format_duration(Duration::from_secs(s.ceil() as u64)).to_string();
        let n = self.tests.len();
        let most = fmt(self.most());
        match unknown {
            0 => format!("about {}, at most {most}", fmt(secs)),
            u if u == n => format!("time unknown, at most {most}"),
            u => format!("over {}, at most {most} ({} of {n} tests timed)", fmt(secs), n - u),
        }
    }
}

/// How `engine benchmark` ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    DryRun(Estimate),
    /// Ctrl-C while installing: nothing ran.
    InterruptedInstall,
    Ran(Ran),
}

impl Outcome {
    /// The exit code the book documents for it.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::DryRun(_) => exit::OK,
            Outcome::InterruptedInstall => exit::INTERRUPTED,
            Outcome::Ran(r) if r.interrupted.is_some() => exit::INTERRUPTED,
            Outcome::Ran(r) if !r.failed.is_empty() || !r.skipped.is_empty() || !r.not_runnable.is_empty() => {
                exit::TESTS_FAILED
            }
            Outcome::Ran(_) => exit::OK,
        }
    }
}
