//! The result file: systems (one per identifier) and results (one per test
//! and result id), each with every identifier's trials and statistics.
//! `schemas/result.schema.json` is generated from these types.

use crate::model::facts::{Identifier, Timestamp, Unit};
use crate::model::profile::{Proportion, RepositoryRef};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of this format; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultFile {
    pub schema_version: u32,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// A fleet's result (30 identifiers or more) keeps its trials' counters
    /// (`trial_io`) and its systems' `details` in this file beside it
    /// (the book, "Fleets"); engine attaches them when a command needs them.
    /// Near the top, so a saved result's bulk is found without parsing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk: Option<String>,
    /// One per identifier, in the order they were added.
    pub systems: Vec<System>,
    /// One per (test, result id), in the order they were first run.
    #[serde(deserialize_with = "split::results")]
    pub results: Vec<TestResult>,
    /// Tests that failed for an identifier (and have not succeeded since).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailedTest>,
    /// What a merge could not take in (a host that failed, a file that is not
    /// a valid result), with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// What loading repaired (values that were not numbers), for the reader.
    #[serde(skip)]
    pub repaired: Vec<String>,
    /// Each identifier against the baseline, as `--format json` adds it for
    /// readers; recomputed from the trials, so dropped when a file is loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<ComparisonRecord>,
}

/// One identifier's result against the baseline's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComparisonRecord {
    pub test: String,
    pub result: String,
    pub identifier: Identifier,
    pub baseline: String,
    /// Mean over the baseline's mean.
    pub ratio: f64,
    /// 95 % interval of the ratio (Fieller); absent with a single trial on
    /// a side or a baseline mean too uncertain to bound it.
    #[serde(default)]
    pub ratio_ci: Option<[f64; 2]>,
    /// Change of the mean, percent of the baseline's.
    pub change_pct: f64,
    /// Welch's two-sided p-value.
    #[serde(default)]
    pub p_value: Option<f64>,
    /// `better`, `worse`, `equivalent` (within the equivalence margin),
    /// `undecided`, `not enough trials to tell`, `cannot tell: at the tool's
    /// resolution`.
    pub verdict: String,
}

/// The system state behind one identifier.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct System {
    /// Label of this system state (`vda: BFQ`, `ext4-nobarrier`).
    pub identifier: Identifier,
    /// `Processor`, `Memory`, `Disk` … in display order.
    #[serde(default)]
    pub hardware: IndexMap<String, String>,
    /// `OS`, `Kernel`, `File-System` … in display order.
    #[serde(default)]
    pub software: IndexMap<String, String>,
    /// `Disk Notes`, `Processor Notes` …
    #[serde(default)]
    pub notes: IndexMap<String, String>,
    /// Directory the tests ran in.
    #[serde(default)]
    pub target_dir: Option<String>,
    /// When this identifier's first test started (RFC 3339, UTC).
    pub started: Timestamp,
    /// When this identifier's last test finished.
    #[serde(default)]
    pub finished: Option<Timestamp>,
    /// Version of engine that ran the tests.
    pub engine_version: String,
    /// Everything captured, as data (hardware, software, the devices under the target directory).
    #[serde(default)]
    pub details: Option<crate::model::system::SystemInfo>,
    /// Labels of the run (`kernel`, `engine`, and `--tag KEY=VALUE`: a commit, a firmware).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub tags: IndexMap<String, String>,
    /// The sweep state this identifier was measured in, as the flags that
    /// make it again (`--only-unsettled` re-creates it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateRecipe>,
}

/// A sweep state as the `engine benchmark` flags that make it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateRecipe {
    /// `--device`: `loop:2G` or `/dev/sdb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// `--filesystem`: `ext4:noatime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    /// `--scheduler`: `bfq:low_latency=0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// `--set`: `queue/read_ahead_kb=128`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// `--identifier` given to the sweep (its identifiers' prefix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

impl std::fmt::Display for StateRecipe {
    /// As flags: `--device loop:2G --filesystem ext4 --scheduler none`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::model::template::quote;
        let mut parts = Vec::new();
        for (flag, v) in
            [("--device", &self.device), ("--filesystem", &self.filesystem), ("--scheduler", &self.scheduler)]
        {
            if let Some(v) = v {
                parts.push(format!("{flag} {}", quote(v)));
            }
        }
        parts.extend(self.settings.iter().map(|s| format!("--set {}", quote(s))));
        if let Some(p) = &self.prefix {
            parts.push(format!("--identifier {}", quote(p)));
        }
        f.write_str(&parts.join(" "))
    }
}

/// One option choice of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionChoice {
    /// Option id (`block_size`).
    pub option: String,
    /// Option display name (`Block Size`).
    pub name: String,
    /// Chosen entry label (`4KB`).
    pub entry: String,
    /// The named values the entry set (`{bs: 4k}`).
    pub values: IndexMap<String, String>,
}

/// One result of one test, with a value per identifier.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestResult {
    /// Identity of the test: profile id, major.minor version and option values.
    pub test: String,
    /// Profile id (`fio`).
    pub profile: String,
    /// Full profile version that first produced this result.
    pub profile_version: String,
    /// Result id within the profile (`bandwidth`).
    pub result: String,
    /// Title of the test (`Flexible IO Tester`).
    pub title: String,
    #[serde(default)]
    pub app_version: Option<String>,
    /// `Type: Random Read - Block Size: 4KB`.
    pub description: String,
    pub options: Vec<OptionChoice>,
    /// Exact unit (`MB/s` = 10^6 B/s).
    pub unit: Unit,
    pub proportion: Proportion,
    pub entries: Vec<ResultEntry>,
    /// Where an imported result came from in PTS (kept for `--format pts-xml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pts: Option<PtsOrigin>,
    /// The profile repository the profile came from (none: a local or built-in profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<RepositoryRef>,
    /// What the test measures: its profile's description, shown once above
    /// the test's results in HTML (as PTS pages do).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub about: String,
}

/// A test that failed for one identifier: why, and where to look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailedTest {
    /// Identity of the test (as in `results[].test`).
    pub test: String,
    pub profile: String,
    pub title: String,
    pub description: String,
    pub identifier: Identifier,
    /// `failed`, or `skipped` when it could not run here (a missing program, not root).
    pub status: FailureStatus,
    pub reason: String,
    /// The log that explains it, relative to the result folder.
    #[serde(default)]
    pub log: Option<String>,
    /// The last lines of the tool's standard error.
    #[serde(default)]
    pub stderr_tail: Vec<String>,
    pub timestamp: Timestamp,
}

/// Why a test has no results for an identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureStatus {
    /// It ran and failed.
    Failed,
    /// It could not run here (a missing program, not root).
    Skipped,
}

impl FailureStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureStatus::Failed => "failed",
            FailureStatus::Skipped => "skipped",
        }
    }
}

impl std::fmt::Display for FailureStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A source a merge left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    /// The host, result name or file it would have come from.
    pub source: String,
    pub reason: String,
}

/// A PTS result's own identity, and how import lined it up with engine's
/// tests (the book, "PTS compatibility").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PtsOrigin {
    /// `pts/fio-2.1.0`, `local/fs-mark-sys`.
    pub identifier: Identifier,
    /// The test's arguments as PTS ran it.
    pub arguments: String,
    /// Set when no engine test does this result's work: the result is kept
    /// as PTS's own (values as PTS measured them), is not re-run by `engine
    /// benchmark NAME`, and no identifier engine runs lands in its row.
    /// `no faithful profile: PTS's option `Engine` has no counterpart in `fio``.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_runnable: Option<String>,
    /// The unit PTS labelled the result with, when engine stores it under
    /// another (`MB/s` for fio's MiB/s); `unit` is the exact one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    /// What import did to line the result up with engine's test: a unit
    /// relabelled, a tool version that differs within its major version,
    /// PTS's generated `Disk Target`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl TestResult {
    /// Why the result is PTS's own and not runnable here (none: engine's test).
    pub fn not_runnable(&self) -> Option<&str> {
        self.pts.as_ref().and_then(|p| p.not_runnable.as_deref())
    }

    /// Result `result` of test `test` (profile `p`, unit `U`, higher is
    /// better), without entries: what unit tests build on (engine's too,
    /// so not behind `cfg(test)`).
    #[doc(hidden)]
    pub fn sample(test: &str, result: &str) -> TestResult {
        TestResult {
            test: test.into(),
            profile: "p".into(),
            profile_version: "1.0.0".into(),
            result: result.into(),
            title: "T".into(),
            app_version: None,
            description: String::new(),
            options: vec![],
            unit: "U".into(),
            proportion: Proportion::Hib,
            entries: vec![],
            pts: None,
            repository: None,
            about: String::new(),
        }
    }
}

/// What bounded a result, and the numbers that show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bound {
    pub by: BoundBy,
    /// `vda busy 98 % of the time, 1.9 requests queued on average`.
    pub evidence: String,
}

/// The resource at its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BoundBy {
    /// The device: busy nearly all the time with requests queued, the CPU not saturated.
    Device,
    /// The CPU: a core (or every core) saturated by the test.
    Cpu,
    /// The page cache: the device saw far less than the result claims.
    Memory,
    /// Others: the hypervisor's steal, or tasks waiting for a CPU others held.
    Contention,
    /// The device at its limit while the CPU was nearly so too.
    Mixed,
}

impl BoundBy {
    pub fn name(self) -> &'static str {
        match self {
            BoundBy::Device => "device",
            BoundBy::Cpu => "cpu",
            BoundBy::Memory => "memory",
            BoundBy::Contention => "contention",
            BoundBy::Mixed => "mixed",
        }
    }
}

/// What one trial cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrialIo {
    /// What reached each counted device: the one the file system is on,
    /// then (for a loop device) the one its backing file lives on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceIo>,
    /// CPU time in user mode of engine and the trial's processes, seconds.
    pub user_seconds: f64,
    /// CPU time in the kernel, seconds.
    pub system_seconds: f64,
    /// A confined trial's whole process tree, from its cgroup: CPU time,
    /// peak memory, block I/O, forks the process limit refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<engine_sys::cgroup::Usage>,
}

/// The share of their time a confined test's own processes stalled
/// (`some`: at least one of them waited) for I/O, a CPU and memory, in per
/// cent, over the trials whose cgroup counted it (`walls`: the trials'
/// seconds, in the order of `io`); `None` when no trial's did.
pub fn own_pressure(io: &[TrialIo], walls: &[f64]) -> Option<[f64; 3]> {
    let (mut us, mut seconds) = ([0u64; 3], 0.0);
    for (p, wall) in io.iter().zip(walls).filter_map(|(t, w)| Some((t.cgroup?.pressure?, w))) {
        for (sum, x) in us.iter_mut().zip([p.io_some_us, p.cpu_some_us, p.memory_some_us]) {
            *sum = sum.saturating_add(x);
        }
        seconds += wall;
    }
    (seconds > 0.0).then(|| us.map(|x| (x as f64 / 1e6 / seconds * 100.0).min(100.0)))
}

/// One device's block-layer counters over one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceIo {
    /// `loop0`, `sda1`, `dm-0`.
    pub device: String,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Read and write requests completed.
    pub reads: u64,
    pub writes: u64,
    /// Milliseconds the device had requests in flight.
    pub busy_ms: u64,
}

/// The trials and statistics of one identifier for one result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultEntry {
    pub identifier: Identifier,
    /// Arithmetic mean of the trials.
    #[serde(deserialize_with = "lenient::number")]
    #[schemars(with = "f64")]
    pub value: f64,
    /// Every trial value, in run order.
    #[serde(deserialize_with = "lenient::numbers")]
    #[schemars(with = "Vec<f64>")]
    pub trials: Vec<f64>,
    /// Sample standard deviation (null with one trial).
    pub sd: Option<f64>,
    /// Standard error of the mean, SD/√N (null with one trial).
    pub se: Option<f64>,
    pub n: usize,
    #[serde(deserialize_with = "lenient::number")]
    #[schemars(with = "f64")]
    pub min: f64,
    #[serde(deserialize_with = "lenient::number")]
    #[schemars(with = "f64")]
    pub max: f64,
    #[serde(deserialize_with = "lenient::number")]
    #[schemars(with = "f64")]
    pub median: f64,
    /// Why trials were added beyond the scheduled ones, one line per added trial.
    #[serde(default)]
    pub added_trials: Vec<String>,
    /// Why the trials stopped before the target precision was reached
    /// (noise, drift, two groups of values, the budget, the cap).
    #[serde(default)]
    pub warning: Option<String>,
    /// Why the trials stopped (absent in files from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<crate::stats::adaptive::Stop>,
    /// The time budget of the trials, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
    /// `--rounds N`: how many blocks of trials (one per round) the trials came in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// `--setups N`: each trial's set-up (1, 2, …), one per trial; absent
    /// when the test was set up once. With two or more set-ups, `value` is
    /// the mean of the set-ups' means and `se` their SE (two levels).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setups: Vec<u32>,
    /// In an interleaved run, each trial's round (1, 2, …; one trial per
    /// state a round): the states' trials of one round are compared as a
    /// pair (`analysis::paired`). Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trial_rounds: Vec<u32>,
    /// The interleaved run the trials came from, a token its states share:
    /// only entries with the same token are paired by round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<String>,
    /// What the trial values show that more trials cannot fix: a warm-up
    /// first trial, outliers, two groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Values of the warm-up trials that ran first and were discarded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup_trials: Vec<f64>,
    /// Wall time of each trial, seconds.
    #[serde(default)]
    pub trial_seconds: Vec<f64>,
    /// Per trial: what reached the device(s) under the target directory and
    /// the CPU time it took.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trial_io: Vec<TrialIo>,
    /// Why no device counters were recorded (a target on tmpfs …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_counters: Option<String>,
    /// A disk result whose device saw far less traffic than the result
    /// claims: `served from memory: the device read 12 MB while …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_from_memory: Option<String>,
    /// What bounded the result during its trials, from the monitors and the
    /// counters (the book, "Monitors"); absent when nothing was at its limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// When the test finished (RFC 3339, UTC).
    pub timestamp: Timestamp,
    /// Folder of the per-trial logs, relative to the result folder.
    #[serde(default)]
    pub logs: Option<String>,
    /// The time series of the devices and the system around the trials
    /// (`monitor.json.gz`, relative to the result folder; the book, "Monitors").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<String>,
}

impl ResultEntry {
    /// An entry for `identifier` with its statistics computed from `trials`
    /// (`None` when there are none); `value` is the mean unless given.
    pub fn from_trials(
        identifier: &str,
        trials: Vec<f64>,
        value: Option<f64>,
        trial_seconds: Vec<f64>,
        timestamp: Timestamp,
    ) -> Option<Self> {
        // A value that is not a number cannot be stored (JSON has no NaN).
        let trials: Vec<f64> = trials.into_iter().filter(|v| v.is_finite()).collect();
        let value = value.filter(|v| v.is_finite());
        let s = crate::stats::Summary::of(&trials)?;
        Some(ResultEntry {
            identifier: identifier.into(),
            value: value.unwrap_or(s.mean),
            trials,
            sd: s.sd,
            se: s.se,
            n: s.n,
            min: s.min,
            max: s.max,
            median: s.median,
            added_trials: Vec::new(),
            warning: None,
            stopped: None,
            budget: None,
            rounds: None,
            setups: Vec::new(),
            trial_rounds: Vec::new(),
            interleave: None,
            notes: Vec::new(),
            warmup_trials: Vec::new(),
            trial_seconds,
            trial_io: Vec::new(),
            no_counters: None,
            served_from_memory: None,
            timestamp,
            logs: None,
            monitor: None,
            bound: None,
        })
    }
}

impl ResultEntry {
    /// Records each trial's set-up; with two or more, the mean and its SE
    /// are the two-level ones (the set-ups' means). Indices that do not
    /// match the trials one to one are not kept.
    pub fn with_setups(mut self, setups: Vec<u32>) -> Self {
        if setups.len() != self.trials.len() {
            return self;
        }
        if let Some(l) = crate::stats::levels::Levels::of(&self.trials, &setups) {
            (self.value, self.se) = (l.mean, Some(l.se));
        }
        self.setups = setups;
        self
    }

    /// The values an interval is computed from: the set-ups' means when
    /// the trials came from two or more set-ups, else the trials.
    pub fn units(&self) -> std::borrow::Cow<'_, [f64]> {
        if self.setups.len() == self.trials.len() && self.setup_count() > 1 {
            return std::borrow::Cow::Owned(crate::stats::levels::means(&self.trials, &self.setups));
        }
        std::borrow::Cow::Borrowed(&self.trials)
    }

    /// How many set-ups the trials came from (1 for a test set up once).
    pub fn setup_count(&self) -> usize {
        if self.setups.is_empty() {
            return 1;
        }
        let mut s = self.setups.clone();
        s.sort_unstable();
        s.dedup();
        s.len().max(1)
    }
}

impl ResultFile {
    pub fn new(title: &str) -> Self {
        ResultFile { schema_version: SCHEMA_VERSION, title: title.to_string(), ..Default::default() }
    }

    pub fn system(&self, identifier: &str) -> Option<&System> {
        self.systems.iter().find(|s| s.identifier == identifier)
    }

    /// Adds or replaces `entry` in the result (`test`, `result`), creating the
    /// result from `template` when it is new.
    pub fn upsert(&mut self, template: &TestResult, entry: ResultEntry) {
        let r = match self.results.iter_mut().position(|r| r.test == template.test && r.result == template.result) {
            Some(i) => &mut self.results[i],
            None => {
                let mut t = template.clone();
                t.entries.clear();
                self.results.push(t);
                self.results.last_mut().unwrap()
            }
        };
        let (test, id) = (r.test.clone(), entry.identifier.clone());
        match r.entries.iter_mut().find(|e| e.identifier == entry.identifier) {
            Some(e) => *e = entry,
            None => r.entries.push(entry),
        }
        // It ran: an earlier failure of it no longer stands.
        self.failures.retain(|f| !(f.test == test && f.identifier == id));
    }

    /// Records that `failed.test` failed for `failed.identifier` (replacing an earlier record).
    pub fn record_failure(&mut self, failed: FailedTest) {
        self.failures.retain(|f| !(f.test == failed.test && f.identifier == failed.identifier));
        self.failures.push(failed);
    }
}

impl TestResult {
    /// `Title: description`, or the title alone when the test has no
    /// options to describe (never `Title: `).
    pub fn heading(&self, title: &str) -> String {
        if self.description.is_empty() { title.to_string() } else { format!("{title}: {}", self.description) }
    }

    /// What the result is, for a line of its own: its description, else its id.
    pub fn what(&self) -> &str {
        if self.description.is_empty() { &self.result } else { &self.description }
    }

    /// Whether `what` names this result: its test identity (with `#result`
    /// or without), its profile id, its description, or `profile:
    /// description` as reports print it.
    pub fn matches(&self, what: &str) -> bool {
        self.test == what
            || format!("{}#{}", self.test, self.result) == what
            || self.profile == what
            || self.description == what
            || format!("{}: {}", self.profile, self.description) == what
    }
}

impl ResultFile {
    /// How many rounds of `test` `identifier` has (0: none; 1 for a test run
    /// without `--rounds`).
    pub fn rounds_of(&self, test: &str, identifier: &str) -> u32 {
        self.results
            .iter()
            .filter(|r| r.test == test)
            .flat_map(|r| r.entries.iter().filter(|e| e.identifier == identifier))
            .map(|e| e.rounds.unwrap_or(1))
            .max()
            .unwrap_or(0)
    }

    /// Adds the trials of `entry` (round `round`) to the entry it continues,
    /// recomputing the statistics; a first round is stored as it is.
    pub fn add_round(&mut self, template: &TestResult, mut entry: ResultEntry, round: u32) {
        let old = self
            .results
            .iter()
            .find(|r| r.test == template.test && r.result == template.result)
            .and_then(|r| r.entries.iter().find(|e| e.identifier == entry.identifier))
            .filter(|_| round > 1)
            .cloned();
        if let Some(old) = old {
            // Set-ups continue the old ones' numbering (an old entry without
            // any was one set-up).
            let setups = (!old.setups.is_empty() || !entry.setups.is_empty()).then(|| {
                let mut s =
                    if old.setups.len() == old.trials.len() { old.setups.clone() } else { vec![1; old.trials.len()] };
                let base = s.iter().copied().max().unwrap_or(0);
                let first = entry.setups.iter().copied().min().unwrap_or(1);
                s.extend(entry.setups.iter().map(|x| base + x + 1 - first));
                s.extend(std::iter::repeat_n(base + 1, entry.trials.len().saturating_sub(entry.setups.len())));
                s
            });
            let mut trials = old.trials;
            trials.extend(&entry.trials);
            let mut seconds = old.trial_seconds;
            seconds.extend(&entry.trial_seconds);
            if let Some(mut e) =
                ResultEntry::from_trials(&entry.identifier, trials, None, seconds, entry.timestamp.clone())
            {
                e.added_trials = old.added_trials.into_iter().chain(entry.added_trials).collect();
                e.trial_io = old.trial_io.into_iter().chain(entry.trial_io).collect();
                e.warmup_trials = old.warmup_trials.into_iter().chain(entry.warmup_trials).collect();
                e.notes = crate::stats::shape::notes(&e.trials);
                if let Some(s) = setups {
                    e = e.with_setups(s);
                }
                e.served_from_memory = entry.served_from_memory.or(old.served_from_memory);
                (e.warning, e.stopped, e.budget, e.no_counters, e.logs) =
                    (entry.warning, entry.stopped, entry.budget, entry.no_counters, entry.logs);
                entry = e;
            }
        }
        entry.rounds = (round > 1 || entry.rounds.is_some()).then_some(round);
        self.upsert(template, entry);
    }

    /// Whether `identifier` has a value for any result of `test`.
    pub fn has_any(&self, test: &str, identifier: &str) -> bool {
        self.results.iter().any(|r| r.test == test && r.entries.iter().any(|e| e.identifier == identifier))
    }
}

/// Reading numbers that a damaged or hand-edited file may hold as `null`
/// (serde_json writes NaN and infinities so): they load as NaN, and
/// [`ResultFile::repair`] drops them and says where they were.
mod lenient {
    use serde::{Deserialize, Deserializer};

    pub fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }

    pub fn numbers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Option<f64>>::deserialize(d)?.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
    }
}

/// `results` parsed on two threads, for a fleet's `result.json` (hundreds of
/// MiB, most of `result show`'s time): the store turns it on around a parse
/// of bytes in memory, which the results' raw text is borrowed from. Off
/// (the default), or under [`split::FROM_BYTES`], one thread parses as
/// serde always does. A parse error's position is relative to its result:
/// the store parses a refused file again without it to name the byte.
pub mod split {
    use super::TestResult;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;
    use std::cell::Cell;

    thread_local! {
        /// From how many bytes of results a second thread parses half.
        static FROM: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// Below this many bytes of results, one thread.
    pub const FROM_BYTES: usize = 16 << 20;

    /// Runs `parse` (of a slice or str) with `results` of `from_bytes` or
    /// more parsed on two threads.
    pub fn with<T>(from_bytes: usize, parse: impl FnOnce() -> T) -> T {
        let before = FROM.with(|f| f.replace(Some(from_bytes)));
        let out = parse();
        FROM.with(|f| f.set(before));
        out
    }

    type Parsed = Result<Vec<TestResult>, serde_json::Error>;

    fn parse(part: &[&RawValue]) -> Parsed {
        part.iter().map(|r| serde_json::from_str::<TestResult>(r.get())).collect()
    }

    pub fn results<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<TestResult>, D::Error> {
        let Some(from_bytes) = FROM.with(Cell::get) else {
            return Vec::deserialize(d);
        };
        let raw: Vec<&'de RawValue> = Vec::deserialize(d)?;
        let total: usize = raw.iter().map(|r| r.get().len()).sum();
        let mut sum = 0;
        let cut = raw.iter().take_while(|r| {
            sum += r.get().len();
            sum <= total / 2
        });
        let (first, second) = raw.split_at(cut.count());
        let (a, b): (Parsed, Option<Parsed>) = std::thread::scope(|s| {
            let other = (total >= from_bytes)
                .then(|| std::thread::Builder::new().name("parse".into()).spawn_scoped(s, || parse(second)).ok())
                .flatten();
            let a = parse(first);
            let b =
                other.map(|h| h.join().unwrap_or_else(|_| Err(serde_json::Error::custom("a parsing thread stopped"))));
            (a, b)
        });
        let mut out = a.map_err(D::Error::custom)?;
        out.extend(b.unwrap_or_else(|| parse(second)).map_err(D::Error::custom)?);
        Ok(out)
    }
}

impl ResultFile {
    /// Drops trial values that are not numbers and recomputes what depends
    /// on them; entries left without a trial are removed. Returns one line
    /// per repaired entry.
    pub fn repair(&mut self) -> Vec<String> {
        let mut said = Vec::new();
        for r in &mut self.results {
            let (test, result) = (r.test.clone(), r.result.clone());
            r.entries.retain_mut(|e| {
                let bad = e.trials.iter().filter(|v| !v.is_finite()).count();
                let stats_bad = !(e.value.is_finite() && e.min.is_finite() && e.max.is_finite() && e.median.is_finite());
                if bad == 0 && !stats_bad {
                    return true;
                }
                let keep: Vec<f64> = e.trials.iter().copied().filter(|v| v.is_finite()).collect();
                let setups: Vec<u32> = if e.setups.len() == e.trials.len() {
                    e.trials.iter().zip(&e.setups).filter(|(v, _)| v.is_finite()).map(|(_, s)| *s).collect()
                } else {
                    Vec::new()
                };
                match ResultEntry::from_trials(&e.identifier, keep, None, e.trial_seconds.clone(), e.timestamp.clone())
                    .map(|f| f.with_setups(setups))
                {
                    Some(fixed) => {
                        said.push(format!(
                            "{test} ({result}), {}: {bad} trial value(s) were not numbers and were dropped; statistics recomputed from the other {}",
                            e.identifier, fixed.n
                        ));
                        let old = std::mem::replace(e, fixed);
                        e.added_trials = old.added_trials;
                        e.warning = old.warning;
                        e.stopped = old.stopped;
                        e.budget = old.budget;
                        e.rounds = old.rounds;
                        e.notes = old.notes;
                        e.logs = old.logs;
                        e.trial_io = old.trial_io;
                        e.no_counters = old.no_counters;
                        e.served_from_memory = old.served_from_memory;
                        true
                    }
                    None => {
                        said.push(format!(
                            "{test} ({result}), {}: no trial value is a number; the entry was dropped",
                            e.identifier
                        ));
                        false
                    }
                }
            });
        }
        said
    }
}
/// `$id` of the result file's schema (`schemas/result.schema.json`).
pub const SCHEMA_ID: &str = "https://engine.invalid/schemas/result.schema.json";

/// The result file's schema: the content of `schemas/result.schema.json`
/// (a test keeps the committed file equal to it).
pub fn schema() -> serde_json::Value {
    serde_json::from_str(&super::schema_json::<ResultFile>(SCHEMA_ID)).expect("schemas parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(results: usize, hosts: usize) -> ResultFile {
        let mut f = ResultFile::new("split");
        for k in 0..results {
            let entries = (0..hosts)
                .map(|h| {
                    let trials = vec![k as f64 + h as f64 * 0.5, 1.25, 1e-7 * (h + 1) as f64];
                    ResultEntry::from_trials(&format!("h\"{h}\u{e9}"), trials, None, vec![0.5; 3], Default::default())
                        .unwrap()
                })
                .collect();
            f.results.push(TestResult {
                title: "T \\ \n".into(),
                unit: "MB/s".into(),
                entries,
                ..TestResult::sample(&format!("t{k}"), "r")
            });
        }
        f
    }

    #[test]
    fn results_parsed_on_two_threads_are_the_results_parsed_on_one() {
        let text = serde_json::to_string(&file(7, 40)).unwrap();
        let one: ResultFile = serde_json::from_str(&text).unwrap();
        let two: ResultFile = split::with(0, || serde_json::from_slice(text.as_bytes())).unwrap();
        assert_eq!(serde_json::to_string(&two).unwrap(), serde_json::to_string(&one).unwrap());
        assert_eq!(two.results.len(), 7);
        // A damaged value in the second half is refused either way.
        let at = text.rfind("\"unit\":\"MB/s\"").unwrap();
        let bad = format!("{}\"unit\":7{}", &text[..at], &text[at + "\"unit\":\"MB/s\"".len()..]);
        assert!(serde_json::from_str::<ResultFile>(&bad).is_err());
        assert!(split::with(0, || serde_json::from_str::<ResultFile>(&bad)).is_err());
        // Off again after `with`: a reader (nothing to borrow) still parses.
        assert!(serde_json::from_reader::<_, ResultFile>(text.as_bytes()).is_ok());
    }
}
