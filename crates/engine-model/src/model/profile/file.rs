//! The profile file's top level: what to run, how to read its result, the options a user can pick.

use super::executor::ExecutorDef;
use super::install::Install;
use super::options::{OptionDef, Scalar};
use super::results::{ParserDef, ResultDef};
use super::sandbox::SandboxDef;
use super::trials::{HygieneDef, Requirements, Trials};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A test profile: what to run, how to read its result, and the options a user can pick.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name used on the command line (`fio`, `fs-mark`): lower case, digits and `-`.
    pub id: String,
    /// Version of the profile itself (semver). Results stay comparable while major.minor is unchanged.
    pub version: String,
    /// Title shown above every result (`Flexible IO Tester`).
    pub title: String,
    /// What the test measures.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub description: String,
    /// Version of the tool the profile runs, shown after the title (`3.33`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<Scalar>,
    /// Kind of test.
    pub test_type: TestType,
    /// Home page of the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_url: Option<String>,
    /// License of the tool (SPDX).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// Menus the user picks from; the chosen entries expand into tests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionDef>,
    /// How one trial runs.
    pub executor: ExecutorDef,
    /// What one trial yields: each result has its own unit and proportion.
    pub results: Vec<ResultDef>,
    /// How each result is read from a trial's output.
    pub parsers: Vec<ParserDef>,
    /// How many trials to run.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub trials: Trials,
    /// Whether every trial gets a fresh scratch directory (`per_trial`, the
    /// default: state one trial leaves cannot bias the next) or all trials of
    /// a test share one (`per_test`: for data prepared once by `pre_test`).
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub scratch: ScratchScope,
    /// What must be present before the test can run.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub requirements: Requirements,
    /// What to do between trials and tests.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub hygiene: HygieneDef,
    /// Environment variables that change this test's results (`CC`, `CFLAGS`);
    /// their values are recorded in the system's Environment Notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relevant_env: Vec<String>,
    /// What to install before the test can run: system packages by generic
    /// name, downloads verified by sha256, and build steps run in the
    /// profile's install directory (`{{install_dir}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<Install>,
    /// Run the external executor, its steps and servers confined (the book,
    /// "Sandbox"): `true`, or what the test needs beyond the sandbox's
    /// defaults. Profiles from a repository run confined whatever this says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxDef>,
    /// The PTS test profile `engine profile import-pts` converted this one
    /// from (`pts/fs-mark-1.0.0`). Such a profile runs confined and, like
    /// one from a repository, cannot give itself more than the sandbox's
    /// defaults unless the user grants it (`--grant`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
}

/// How long a scratch directory lives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScratchScope {
    /// An empty directory for every trial: what a trial leaves is removed
    /// after it (an emptied directory is reused by the next trial).
    #[default]
    PerTrial,
    /// One directory for all trials of a test, removed after the test.
    PerTest,
}

/// Kind of test, as in the result viewers' groupings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestType {
    Disk,
    Processor,
    System,
    Memory,
    Network,
    Graphics,
    Other,
}
