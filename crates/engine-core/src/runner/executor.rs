//! The seam between the runner and the ways a test can run. The runner
//! drives an [`Executor`] without knowing which one it is.

use crate::sys::process::Usage;
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// What an executor needs about the test it runs (once per test).
pub struct TestEnv<'a> {
    /// Named values: the chosen entries plus the built-ins (`test_dir` …);
    /// `scratch_dir` is the test's directory here.
    pub bindings: &'a IndexMap<String, String>,
    /// The test's directory, inside the target directory; it holds the
    /// trials' scratch directories and outlives them.
    pub test_dir: &'a Path,
    /// The same directory, held open: what engine does inside it goes
    /// through this (its commands may have planted links under the path).
    pub dir: &'a crate::sys::safepath::Dir,
    /// Folder for this test's logs.
    pub logs: &'a Path,
}

/// What an executor needs about one trial.
pub struct TrialEnv<'a> {
    /// The test's bindings with `scratch_dir` set to this trial's directory.
    pub bindings: &'a IndexMap<String, String>,
    /// The directory the trial runs in: fresh for each trial unless the
    /// profile says `scratch: per_test`.
    pub scratch: &'a Path,
    /// The same directory, held open (see [`TestEnv::dir`]).
    pub dir: &'a crate::sys::safepath::Dir,
    /// The test's directory, held open.
    pub test: &'a crate::sys::safepath::Dir,
    pub logs: &'a Path,
    /// Names the trial's log: `1`, `2`, `warmup-1`.
    pub label: &'a str,
    /// How often the workload's own figures are recorded (a measured
    /// trial under monitors); `None`: they are not.
    pub interval: Option<Duration>,
    /// Told when the measured part of the trial begins and ends.
    pub span: &'a dyn Span,
}

/// The measured part of a trial: what its wall time covers, and so what
/// the monitors' slice and the device counters cover. An executor calls
/// [`Span::begin`] just before its workload starts and [`Span::end`] just
/// after it stops, so that what it does around the workload (a profile's
/// `pre_trial` and `post_trial` steps, a plugin's loading) is outside.
pub trait Span {
    fn begin(&self);
    fn end(&self);
}

/// What one trial produced.
#[derive(Debug, Clone, Default)]
pub struct TrialRun {
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
    pub usage: Usage,
    /// Values the workload measured itself (result id, value): built-in and
    /// WASM workloads return these; parsers read the others from the output.
    pub values: Vec<(String, f64)>,
    /// Where the trial's log belongs; the runner writes `log_text` there
    /// after the test, so no engine write hits the disk between trials.
    pub log: PathBuf,
    pub log_text: String,
    /// A confined trial's cgroup figures.
    pub cgroup: Option<crate::sys::cgroup::Usage>,
    /// The workload's own intervals, when it reported any.
    pub intervals: Option<crate::model::series::Reported>,
    /// CPU time (user, system) the test's servers took during the measured
    /// part: they serve the workload, so their time is the test's.
    pub servers: (Duration, Duration),
}

#[derive(Debug, Error)]
pub enum ExecError {
    #[error("{program} exited {code}; see {}", log.display())]
    Exit { program: String, code: i32, log: PathBuf },
    #[error("{program} was killed by signal {signal}; see {}", log.display())]
    Signal { program: String, signal: i32, log: PathBuf },
    #[error("{program} timed out after {after}; its process group was killed; see {}", log.display())]
    Timeout { program: String, after: String, log: PathBuf },
    #[error("interrupted")]
    Interrupted,
    #[error("cannot start {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("{step} step {index} failed: {cause}")]
    Step { step: &'static str, index: usize, cause: Box<ExecError> },
    /// A result could not be read from a trial, or its value is impossible.
    #[error("result `{result}` of trial {trial}: {cause}; see {}", log.display())]
    /// `tail`: the last lines of the stream the parser read (not in the message).
    Parse { result: String, trial: String, cause: String, log: PathBuf, tail: Vec<String> },
    /// A workload (built-in or plugin) reported an error.
    #[error("{workload}: {message}")]
    Workload { workload: String, message: String },
    /// A server a step started failed to start, or stopped while the test ran.
    #[error("server {name} {what}; see {}", log.display())]
    Server { name: String, what: String, log: PathBuf },
    /// A confined command failed, most likely for what the sandbox denied it.
    #[error("{cause}; denied by the sandbox: {denied}")]
    Denied { cause: Box<ExecError>, denied: String },
    #[error("{0}")]
    Setup(String),
    /// The machine could not be put in a sweep's state.
    #[error(transparent)]
    Switch(#[from] crate::state::switch::SwitchError),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
}

impl ExecError {
    /// Whether it is, or wraps, an interrupt (Ctrl-C in a step or a
    /// server's start is the run's interrupt, not the test's failure).
    pub(crate) fn interrupted(&self) -> bool {
        match self {
            ExecError::Interrupted => true,
            ExecError::Step { cause, .. } | ExecError::Denied { cause, .. } => cause.interrupted(),
            _ => false,
        }
    }

    /// The log that explains the failure, when there is one.
    pub(crate) fn log(&self) -> Option<&Path> {
        match self {
            ExecError::Exit { log, .. }
            | ExecError::Signal { log, .. }
            | ExecError::Timeout { log, .. }
            | ExecError::Parse { log, .. }
            | ExecError::Server { log, .. } => Some(log),
            ExecError::Step { cause, .. } | ExecError::Denied { cause, .. } => cause.log(),
            _ => None,
        }
    }
}

/// Runs the trials of one test.
pub trait Executor {
    /// Once before the first trial.
    fn setup(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError>;
    /// One trial in `env.scratch`.
    fn trial(&mut self, env: &TrialEnv<'_>) -> Result<TrialRun, ExecError>;
    /// Once after the last trial, also after a failure.
    fn teardown(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError>;
}

/// Which executor a test gets: the seam a test of the whole pipeline replaces
/// with a fake.
pub trait Executors {
    fn executor<'a>(&'a self, test: &crate::expand::Test, env: &super::Env<'a>) -> Box<dyn Executor + 'a>;
}
