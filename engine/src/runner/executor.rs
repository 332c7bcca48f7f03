//! The seam between the runner and the ways a test can run. The runner
//! drives an [`Executor`] without knowing which one it is.

use super::process::Usage;
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Everything an executor needs about the test it runs.
pub struct TestEnv<'a> {
    /// Named values: the chosen entries plus the built-ins (`scratch_dir` …).
    pub bindings: &'a IndexMap<String, String>,
    /// Fresh directory the test runs in, inside the target directory.
    pub scratch: &'a Path,
    /// Folder for this test's logs.
    pub logs: &'a Path,
}

/// What one trial produced.
#[derive(Debug, Clone)]
pub struct TrialRun {
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
    pub usage: Usage,
    /// Where the trial's log belongs; the runner writes `log_text` there
    /// after the test, so no engine write hits the disk between trials.
    pub log: PathBuf,
    pub log_text: String,
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
    #[error("{0}")]
    Setup(String),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
}

/// Runs the trials of one test.
pub trait Executor {
    /// Once before the first trial.
    fn setup(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError>;
    /// One trial; `label` names its log (`1`, `2`, `warmup-1`); `first` is
    /// false for every trial after the first (so interim steps run before it).
    fn trial(&mut self, env: &TestEnv<'_>, label: &str, first: bool) -> Result<TrialRun, ExecError>;
    /// Once after the last trial, also after a failure.
    fn teardown(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError>;
}
