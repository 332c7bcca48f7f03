//! `trials:`, `hygiene:` and `requirements:`: how many trials, what runs before them, what must be present.

use crate::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How many trials run (the statistics rule is in the book).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Trials {
    /// Trials scheduled (default 3): they run before anything is judged.
    #[serde(default = "default_times")]
    pub times: u32,
    /// Fewest trials when the budget is spent (default: `times`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    /// Most trials whatever the budget (default 1000): a safety cap for
    /// trials of a millisecond or less.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// Time the trials may take (`30s`, `10 min`; default 60 s). Trials are
    /// added while the target is not reached and the budget can reach it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Duration>,
    /// Trials are added while the 95 % confidence interval of the mean is
    /// wider than ± this percentage of the mean (default 5).
    #[serde(default = "default_target_ci", skip_serializing_if = "is_default_target_ci")]
    pub target_ci: f64,
    /// Trials run first and discarded.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub warmup: u32,
    /// How long one trial runs when its options fix it, for estimates before
    /// it has ever run: durations and numbers (seconds) joined by `*` and
    /// `+`, with placeholders (`{{iterations}} * {{frequency}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_time: Option<String>,
    /// How often the monitors sample during its trials (`250ms`; 100ms to
    /// 10s): a test of one-second trials wants more than the default 1 s
    /// gives. `--monitor-interval` overrides it; a suite's over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor_interval: Option<Duration>,
    /// Set-ups per run (default 1): the test's folder, `pre_test` and its
    /// workload's set-up (io's file layout) are made afresh this many times,
    /// trials in each; the interval of a mean then comes from the set-ups'
    /// means (the book, "Set-ups"). `--setups` overrides it; a suite's over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setups: Option<u32>,
}

fn default_times() -> u32 {
    3
}

fn is_default_target_ci(v: &f64) -> bool {
    *v == default_target_ci()
}

fn default_target_ci() -> f64 {
    crate::stats::adaptive::TARGET_CI
}

impl Default for Trials {
    fn default() -> Self {
        Trials {
            times: default_times(),
            min: None,
            max: None,
            budget: None,
            target_ci: default_target_ci(),
            warmup: 0,
            run_time: None,
            monitor_interval: None,
            setups: None,
        }
    }
}

impl Trials {
    /// The stopping rule for these trials; `forced` is `--runs N`, `budget`
    /// a budget that overrides the profile's (`--budget`, the suite's).
    pub fn plan(&self, forced: Option<u32>, budget: Option<std::time::Duration>) -> crate::stats::AdaptivePlan {
        let own = self.budget.as_ref().map(Duration::get);
        crate::stats::AdaptivePlan::new(self.times, self.min, self.max, self.target_ci, budget.or(own), forced)
    }
}

/// Between trials and tests (the command line can turn these on for every test).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HygieneDef {
    /// Sync and drop the page cache before every trial (needs root).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_caches: bool,
    /// `fstrim` the target's file system before the test (needs root).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fstrim: bool,
    /// Pause before the test (`5s`), to let the device settle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Duration>,
}

/// What must be present before the test runs.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// Programs that must be on PATH.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramReq>,
    /// The test must run as root.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub root: bool,
    /// Free space needed in the target directory (`512MiB`, `2GB`; exact units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_space: Option<String>,
    /// Files that must exist (data a package ships, such as a source tarball).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileReq>,
}

/// A file the test needs, and the package that provides it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileReq {
    /// Absolute path.
    pub path: String,
    /// Debian/Ubuntu package that provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apt: Option<String>,
    /// Fedora/RHEL package that provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dnf: Option<String>,
}

/// A program the test needs, and how to get it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProgramReq {
    pub name: String,
    /// Debian/Ubuntu package that provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apt: Option<String>,
    /// Fedora/RHEL package that provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dnf: Option<String>,
    /// Directories where the package puts it when not on PATH (`*` matches
    /// one path component: `/usr/lib/postgresql/*/bin`); found there, the
    /// directory is added to PATH for the test's commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// Generic package (from `packages.yaml`) that provides it, for every
    /// distribution family: `engine install-deps` installs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}
