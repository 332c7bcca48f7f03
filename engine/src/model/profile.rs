//! The profile and suite file formats: these serde types are the one source of
//! truth; `schemas/*.schema.json` are generated from them.

use crate::units::{Duration, Size};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    #[serde(default)]
    pub description: String,
    /// Version of the tool the profile runs, shown after the title (`3.33`).
    #[serde(default)]
    pub app_version: Option<Scalar>,
    /// Kind of test.
    pub test_type: TestType,
    /// Home page of the tool.
    #[serde(default)]
    pub project_url: Option<String>,
    /// License of the tool (SPDX).
    #[serde(default)]
    pub license: Option<String>,
    /// Menus the user picks from; the chosen entries expand into tests.
    #[serde(default)]
    pub options: Vec<OptionDef>,
    /// How one trial runs.
    pub executor: ExecutorDef,
    /// What one trial yields: each result has its own unit and proportion.
    pub results: Vec<ResultDef>,
    /// How each result is read from a trial's output.
    pub parsers: Vec<ParserDef>,
    /// How many trials to run.
    #[serde(default)]
    pub trials: Trials,
    /// Whether every trial gets a fresh scratch directory (`per_trial`, the
    /// default: state one trial leaves cannot bias the next) or all trials of
    /// a test share one (`per_test`: for data prepared once by `pre_test`).
    #[serde(default)]
    pub scratch: ScratchScope,
    /// What must be present before the test can run.
    #[serde(default)]
    pub requirements: Requirements,
    /// What to do between trials and tests.
    #[serde(default)]
    pub hygiene: HygieneDef,
    /// Environment variables that change this test's results (`CC`, `CFLAGS`);
    /// their values are recorded in the system's Environment Notes.
    #[serde(default)]
    pub relevant_env: Vec<String>,
    /// What to install before the test can run: system packages by generic
    /// name, downloads verified by sha256, and build steps run in the
    /// profile's install directory (`{{install_dir}}`).
    #[serde(default)]
    pub install: Option<Install>,
    /// Run the external executor, its steps and servers confined (README,
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

/// `sandbox: true`, or `sandbox: {writable: [...], processes: N}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SandboxDef {
    On(bool),
    With(SandboxSpec),
}

// By hand rather than untagged: an error inside the mapping (a bad
// `memory`) keeps its own words and place instead of "no variant matched".
impl<'de> Deserialize<'de> for SandboxDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SandboxDef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("`true`, `false` or a mapping such as `{processes: 64}`")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<SandboxDef, E> {
                Ok(SandboxDef::On(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<SandboxDef, A::Error> {
                SandboxSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(SandboxDef::With)
            }
        }
        d.deserialize_any(V)
    }
}

/// What a confined test may have beyond the defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// Directories it may also write (they must exist).
    #[serde(default)]
    pub writable: Vec<String>,
    /// Most processes each command's tree may have (default 4096).
    #[serde(default)]
    pub processes: Option<u64>,
    /// Most memory each command's tree may use (`4GiB`; default an eighth
    /// of the machine's, at least 1 GiB).
    #[serde(default)]
    pub memory: Option<Size>,
}

impl SandboxDef {
    /// Whether the profile asks to run confined.
    pub fn on(&self) -> bool {
        matches!(self, SandboxDef::On(true) | SandboxDef::With(_))
    }

    pub fn writable(&self) -> Vec<String> {
        match self {
            SandboxDef::With(s) => s.writable.clone(),
            SandboxDef::On(_) => Vec::new(),
        }
    }

    pub fn processes(&self) -> Option<u64> {
        match self {
            SandboxDef::With(s) => s.processes,
            SandboxDef::On(_) => None,
        }
    }

    /// What it asks for beyond the sandbox's defaults, in words (empty: nothing).
    pub fn extras(&self) -> Vec<String> {
        let mut v = Vec::new();
        if !self.writable().is_empty() {
            v.push(format!("also writable: {}", self.writable().join(", ")));
        }
        if let Some(n) = self.processes() {
            v.push(format!("up to {n} processes"));
        }
        if let SandboxDef::With(SandboxSpec { memory: Some(m), .. }) = self {
            v.push(format!("up to {m} of memory"));
        }
        v
    }
}

/// The `install:` section: what `engine install` (and `engine benchmark`,
/// before the first test) puts in `$ENGINE_HOME/installed/<id>@<version>/`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Install {
    /// System packages by generic name (`build-utilities`, `flex`), mapped per
    /// distribution family in `packages.yaml`; each has a check that skips it
    /// when present.
    #[serde(default)]
    pub packages: Vec<PackageItem>,
    /// Files to fetch into the download cache, verify, and extract (archives)
    /// or copy into the install directory.
    #[serde(default)]
    pub downloads: Vec<Download>,
    /// Steps run in the install directory after the downloads, with
    /// `NUM_CPU_CORES` and the like set, logged to `install.log`.
    #[serde(default)]
    pub build: Vec<BuildStep>,
}

/// A generic package name, or one that only some tests need.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PackageItem {
    /// A generic name from `packages.yaml`.
    Name(String),
    /// A generic name needed only by tests whose values match `when`.
    When {
        name: String,
        /// Only for tests whose option values match (`{source: debian}`).
        when: IndexMap<String, Scalar>,
    },
}

impl PackageItem {
    pub fn name(&self) -> &str {
        match self {
            PackageItem::Name(n) | PackageItem::When { name: n, .. } => n,
        }
    }
    pub fn when(&self) -> Option<&IndexMap<String, Scalar>> {
        match self {
            PackageItem::Name(_) => None,
            PackageItem::When { when, .. } => Some(when),
        }
    }
}

impl<'de> Deserialize<'de> for PackageItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Detailed {
            name: String,
            #[serde(default)]
            when: IndexMap<String, Scalar>,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PackageItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a generic package name, or `{name: …, when: {…}}`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PackageItem, E> {
                Ok(PackageItem::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<PackageItem, A::Error> {
                let d = Detailed::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(PackageItem::When { name: d.name, when: d.when })
            }
        }
        d.deserialize_any(V)
    }
}

/// One file to download: verified by size and sha256 before it is used.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Download {
    /// File name in the install directory (and in `ENGINE_DOWNLOAD_CACHE`
    /// folders): `tiobench-0.4.2.tar.gz`.
    pub file: String,
    /// Its SHA-256 (64 hex digits). Required: a download is never used unverified.
    #[serde(default)]
    pub sha256: Option<String>,
    /// Its size in bytes (checked before and after the transfer).
    #[serde(default)]
    pub size: Option<u64>,
    /// Mirrors, tried in order (`https://`; `http://` only with `insecure: true`).
    #[serde(default)]
    pub urls: Vec<String>,
    /// Allow `http://` mirrors (the sha256 still guards the content).
    #[serde(default)]
    pub insecure: bool,
    /// Only on these platforms: `linux`, `x86_64`, `linux-aarch64`, or a
    /// comma-separated list; elsewhere the download is left out.
    #[serde(default)]
    pub platform: Option<String>,
    /// Unpack an archive (`.tar.gz`, `.tgz`, `.tar.xz`, `.tar.bz2`, `.tar.zst`,
    /// `.zip`) into the install directory (the default for those names);
    /// `false` copies the file as it is.
    #[serde(default)]
    pub extract: Option<bool>,
    /// Only for tests whose option values match (`{source: kernel-org}`).
    #[serde(default)]
    pub when: IndexMap<String, Scalar>,
}

/// A build step: `shell` (run by `/bin/sh -e -c`) or `program` + `args`, run
/// in the install directory.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildStep {
    #[serde(default)]
    pub shell: Option<String>,
    #[serde(default)]
    pub program: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Longest the step may take (default 60m).
    #[serde(default)]
    pub timeout: Option<Duration>,
    /// Only for tests whose option values match.
    #[serde(default)]
    pub when: IndexMap<String, Scalar>,
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

/// A menu: one entry is chosen per test.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionDef {
    /// Name used in `--option ID=…` and, with `value`, as the placeholder `{{ID}}`.
    pub id: String,
    /// Name shown in descriptions (`Block Size` → `Block Size: 4KB`).
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The menu entries.
    pub entries: Vec<Entry>,
    /// Labels of the entries that run in batch mode; empty means every entry.
    #[serde(default)]
    pub default: Vec<String>,
}

/// One menu entry: a label for people and named values for the run step.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// What people see (`4KB`, `Random Read`).
    pub label: String,
    /// The value of the placeholder named after the option's id.
    #[serde(default)]
    pub value: Option<Scalar>,
    /// Further named values: `{rw: randread, direction: read}` fills `{{rw}}` and `{{direction}}`.
    #[serde(default)]
    pub values: IndexMap<String, Scalar>,
}

/// A scalar written as a string, number or boolean; kept as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Scalar(pub String);

struct ScalarVisitor;

impl serde::de::Visitor<'_> for ScalarVisitor {
    type Value = Scalar;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string, number or boolean")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Asked for a string, the YAML reader hands over the scalar's text as
        // written (`010` stays `010`, `yes` stays `yes`).
        d.deserialize_str(ScalarVisitor)
    }
}

impl Scalar {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl JsonSchema for Scalar {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Scalar".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A string, number or boolean, kept as its text.",
            "type": ["string", "number", "boolean"]
        })
    }
}

/// How a trial runs.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Executor")]
pub enum ExecutorDef {
    /// A program on the system (or installed by the profile).
    External(ExternalExecutor),
    /// A workload built into engine, written against the workload contract
    /// in `sdk/`; it returns its values itself (no parsers needed).
    Builtin(BuiltinExecutor),
    /// A WASM plugin (a component built with `sdk/` for `wasm32-wasip2`) run
    /// by wasmtime in a sandbox; it returns its values itself.
    Wasm(WasmExecutor),
}

/// A WASM plugin workload, its configuration and its limits.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WasmExecutor {
    /// The plugin's `.wasm` file, relative to the profile's folder and inside it.
    pub plugin: String,
    /// Its configuration (the keys the plugin reads); values may hold placeholders.
    #[serde(default)]
    pub config: IndexMap<String, Scalar>,
    /// What one trial may use.
    #[serde(default)]
    pub limits: PluginLimits,
    /// Environment variables the plugin sees; it sees no others.
    #[serde(default)]
    pub env: IndexMap<String, String>,
}

/// Limits of one plugin call (a trial, or a parse).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginLimits {
    /// Linear memory of the instance (`256MiB`, the default).
    #[serde(default)]
    pub memory: Option<Size>,
    /// Wall-clock time of one call (`60s`; default 10m); the plugin is stopped after it.
    #[serde(default)]
    pub time: Option<Duration>,
}

/// A parser plugin: a component that reads a trial's output.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginParserDef {
    /// The plugin's `.wasm` file, relative to the profile's folder and inside it.
    pub path: String,
    /// Its configuration (the keys the parser reads); values may hold placeholders.
    #[serde(default)]
    pub config: IndexMap<String, Scalar>,
    /// Which of the values the plugin returns this parser takes (default:
    /// the one named like the parser's `result`).
    #[serde(default)]
    pub value: Option<String>,
    /// What one parse may use.
    #[serde(default)]
    pub limits: PluginLimits,
}

/// A built-in workload and its configuration.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuiltinExecutor {
    /// The workload: `io`, `files`, `compile`, `sqlite`, `startup-time`.
    pub workload: String,
    /// Its configuration (the workload's keys); values may hold placeholders.
    #[serde(default)]
    pub config: IndexMap<String, Scalar>,
    /// Longest a trial may take (`90s`, `10m`); the workload is asked to stop after it.
    #[serde(default)]
    pub timeout: Option<Duration>,
}

impl ExecutorDef {
    /// The kind, as written in a profile (`external`).
    pub fn kind(&self) -> &'static str {
        match self {
            ExecutorDef::External(_) => "external",
            ExecutorDef::Builtin(_) => "builtin",
            ExecutorDef::Wasm(_) => "wasm",
        }
    }

    /// Programs that must be on PATH for this executor (besides
    /// `requirements.programs`): a program given by name, not by path or placeholder.
    pub fn programs(&self) -> Vec<String> {
        match self {
            ExecutorDef::External(x) => {
                let plain = !x.program.contains('/') && !x.program.contains("{{");
                if plain { vec![x.program.clone()] } else { Vec::new() }
            }
            ExecutorDef::Builtin(_) | ExecutorDef::Wasm(_) => Vec::new(),
        }
    }

    /// One line for `engine info`: what runs.
    pub fn describe(&self) -> String {
        match self {
            ExecutorDef::External(x) => format!("{} {}", x.program, x.args.join(" ")),
            ExecutorDef::Builtin(b) => {
                let cfg: Vec<String> = b.config.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("workload {} {}", b.workload, cfg.join(" "))
            }
            ExecutorDef::Wasm(w) => {
                let cfg: Vec<String> = w.config.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("plugin {} {}", w.plugin, cfg.join(" "))
            }
        }
    }

    /// Whether the executor returns values itself (built-in and WASM
    /// workloads), so results need no parser.
    pub fn returns_values(&self) -> bool {
        match self {
            ExecutorDef::External(_) => false,
            ExecutorDef::Builtin(_) | ExecutorDef::Wasm(_) => true,
        }
    }
}

/// Runs a program in the trial's scratch directory, in its own process group.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalExecutor {
    /// Program name (looked up on PATH) or path.
    pub program: String,
    /// Arguments; `{{name}}` placeholders are filled by name from the chosen entries
    /// and the built-ins `scratch_dir`, `test_dir`, `target_dir`, `profile_dir`, `num_cpus`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables (values may hold placeholders).
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// File (relative to the scratch directory) fed to the program's standard input.
    #[serde(default)]
    pub stdin: Option<String>,
    /// Longest a trial may take (`90s`, `10m`); the whole process group is killed after it.
    #[serde(default)]
    pub timeout: Option<Duration>,
    /// Steps run once per test, before its first trial, in the test's directory
    /// (`{{test_dir}}`): prepare data every trial shares (with `scratch: per_test`).
    #[serde(default)]
    pub pre_test: Vec<Step>,
    /// Steps run before every trial (warm-ups included), in the trial's scratch
    /// directory; not timed.
    #[serde(default)]
    pub pre_trial: Vec<Step>,
    /// Steps run after every trial, also a failed one; not timed.
    #[serde(default)]
    pub post_trial: Vec<Step>,
    /// Steps run once per test, after its last trial, also after a failure.
    #[serde(default)]
    pub post_test: Vec<Step>,
}

/// A helper command: either `program` + `args`, or a `shell` line run by `/bin/sh -c`
/// (placeholders in a shell line are quoted for the shell).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[serde(default)]
    pub program: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub shell: Option<String>,
    /// Longest the step may take (default 10m); for a `server` step, how
    /// long it may take to become ready (default 60s).
    #[serde(default)]
    pub timeout: Option<Duration>,
    /// When engine runs as root, run this step (or server) as an
    /// unprivileged user (`nobody`) that keeps only the right to traverse
    /// directories; engine hands it the test's directories. Programs that
    /// refuse root (PostgreSQL's `initdb`, `postgres`) need this. Without
    /// root it changes nothing.
    #[serde(default)]
    pub unprivileged: bool,
    /// Start a server (a database, a web server) that runs until the end of
    /// the step's scope: a `pre_test` server until after `post_test`, a
    /// `pre_trial` one until after `post_trial`. It is journaled, so
    /// `engine recover` stops it after a `kill -9`.
    #[serde(default)]
    pub server: Option<ServerDef>,
}

/// A server a step starts. It must stay in the foreground (`postgres -D …`,
/// `nginx -g 'daemon off;'`, `apache2 -DFOREGROUND`); engine runs it in its
/// own process group with its output in the test's log folder
/// (`server-NAME.log`), waits until it is ready, and stops it afterwards
/// with `stop_signal`, then SIGKILL. A server that exits or is not ready in
/// time fails the test, quoting the last lines of its log.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerDef {
    /// Name in messages, logs and the journal (`postgres`).
    pub name: String,
    /// Program name (looked up on PATH) or path.
    pub program: String,
    /// Arguments; placeholders as in `args`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables (values may hold placeholders).
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// When the server counts as ready; every condition given must hold.
    pub ready: ReadyDef,
    /// Signal that asks it to stop (`TERM`, the default; `INT` is
    /// PostgreSQL's fast shutdown; `QUIT`, `HUP`, `WINCH`, `USR1`, `USR2`).
    #[serde(default)]
    pub stop_signal: Option<String>,
    /// How long it may take to stop before it is killed (default 30s).
    #[serde(default)]
    pub stop_timeout: Option<Duration>,
    /// Paths removed once it stopped (a database cluster); `engine recover`
    /// removes them too. They must lie inside the test's directory.
    #[serde(default)]
    pub remove: Vec<String>,
}

/// When a server is ready.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadyDef {
    /// A Unix socket it listens on (accepts a connection).
    #[serde(default)]
    pub socket: Option<String>,
    /// A TCP port on 127.0.0.1 that it (not another process) listens on.
    #[serde(default)]
    pub tcp: Option<String>,
    /// A command (program, then arguments) that must succeed, tried until it
    /// does (`[pg_isready, -h, "{{test_dir}}"]`).
    #[serde(default)]
    pub command: Vec<String>,
}

/// Higher or lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Proportion {
    /// Higher is better.
    #[serde(rename = "HIB")]
    Hib,
    /// Lower is better.
    #[serde(rename = "LIB")]
    Lib,
}

impl Proportion {
    pub fn phrase(self) -> &'static str {
        match self {
            Proportion::Hib => "> Higher Is Better",
            Proportion::Lib => "< Lower Is Better",
        }
    }
}

/// One value a trial yields.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultDef {
    /// Name parsers refer to (`bandwidth`, `iops`).
    pub id: String,
    /// Exact unit (`MB/s` = 10^6 bytes/s, `MiB/s` = 2^20 bytes/s, `IOPS`, `Seconds`).
    pub unit: String,
    /// `HIB` (higher is better) or `LIB` (lower is better).
    pub proportion: Proportion,
    /// Text added to the test description for this result (`Read Latency`).
    #[serde(default)]
    pub description: Option<String>,
    /// Values may be negative (a difference, a temperature). Otherwise a
    /// negative value fails its trial, as does a value that is not finite.
    #[serde(default)]
    pub signed: bool,
}

/// How one result is read from a trial. Exactly one of `regex`, `json_pointer`,
/// `template`, `wall_time`, `rate` or `plugin` is set.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParserDef {
    /// The result (by id) this parser yields.
    pub result: String,
    /// A regular expression with a named capture `value`.
    #[serde(default)]
    pub regex: Option<String>,
    /// A JSON pointer into the output (`/jobs/0/read/bw_bytes`); may hold placeholders.
    #[serde(default)]
    pub json_pointer: Option<String>,
    /// A PTS-style sample line with `#_RESULT_#` where the value is.
    #[serde(default)]
    pub template: Option<String>,
    /// With `template`: only lines containing this text.
    #[serde(default)]
    pub line_hint: Option<String>,
    /// With `template`: only the line right after a line containing this text.
    #[serde(default)]
    pub line_before_hint: Option<String>,
    /// With `template`: only the line right before a line containing this text.
    #[serde(default)]
    pub line_after_hint: Option<String>,
    /// The trial's wall time in seconds.
    #[serde(default)]
    pub wall_time: bool,
    /// An amount over the trial's wall time: `{amount: "{{size}}", per:
    /// wall_time}` gives a size per second in the result's byte-rate unit
    /// (`MB/s`, `MiB/s`), a plain number per second otherwise.
    #[serde(default)]
    pub rate: Option<RateDef>,
    /// A parser plugin (WASM) that reads the trial's stdout, stderr and exit
    /// status and returns values by result id; this parser takes the one
    /// named by `result`.
    #[serde(default)]
    pub plugin: Option<PluginParserDef>,
    /// Which match to use when there are several: `last` (default), `first`, `mean`, `sum`.
    #[serde(default)]
    pub pick: Pick,
    /// Read standard error instead of standard output.
    #[serde(default)]
    pub stream: Stream,
    /// Multiply the value (unit conversion).
    #[serde(default)]
    pub multiply_by: Option<f64>,
    /// Divide the value (unit conversion: bytes/s ÷ 1000000 = MB/s).
    #[serde(default)]
    pub divide_by: Option<f64>,
    /// Use this parser only for tests whose values match (`{direction: read}`).
    #[serde(default)]
    pub when: IndexMap<String, Scalar>,
}

/// A rate computed from the trial rather than read from its output.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateDef {
    /// A size (`1GiB`, `{{size}}`) or a count (`2500`); may hold placeholders.
    pub amount: String,
    /// What the amount is divided by.
    pub per: RatePer,
}

/// The time a [`RateDef`] divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RatePer {
    /// The trial's wall time, as `wall_time` reads it.
    WallTime,
}

/// Which of several matches a parser keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    #[default]
    Last,
    First,
    Mean,
    Sum,
}

/// Output stream a parser reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    #[default]
    Stdout,
    Stderr,
}

/// How many trials run (the statistics rule is in the README).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trials {
    /// Trials scheduled (default 3): they run before anything is judged.
    #[serde(default = "default_times")]
    pub times: u32,
    /// Fewest trials when the budget is spent (default: `times`).
    #[serde(default)]
    pub min: Option<u32>,
    /// Most trials whatever the budget (default 1000): a safety cap for
    /// trials of a millisecond or less.
    #[serde(default)]
    pub max: Option<u32>,
    /// Time the trials may take (`30s`, `10 min`; default 60 s). Trials are
    /// added while the target is not reached and the budget can reach it.
    #[serde(default)]
    pub budget: Option<Duration>,
    /// Trials are added while the 95 % confidence interval of the mean is
    /// wider than ± this percentage of the mean (default 5).
    #[serde(default = "default_target_ci")]
    pub target_ci: f64,
    /// Trials run first and discarded.
    #[serde(default)]
    pub warmup: u32,
    /// How long one trial runs when its options fix it, for estimates before
    /// it has ever run: durations and numbers (seconds) joined by `*` and
    /// `+`, with placeholders (`{{iterations}} * {{frequency}}`).
    #[serde(default)]
    pub run_time: Option<String>,
}

fn default_times() -> u32 {
    3
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
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HygieneDef {
    /// Sync and drop the page cache before every trial (needs root).
    #[serde(default)]
    pub drop_caches: bool,
    /// `fstrim` the target's file system before the test (needs root).
    #[serde(default)]
    pub fstrim: bool,
    /// Pause before the test (`5s`), to let the device settle.
    #[serde(default)]
    pub settle: Option<Duration>,
}

/// What must be present before the test runs.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// Programs that must be on PATH.
    #[serde(default)]
    pub programs: Vec<ProgramReq>,
    /// The test must run as root.
    #[serde(default)]
    pub root: bool,
    /// Free space needed in the target directory (`512MiB`, `2GB`; exact units).
    #[serde(default)]
    pub free_space: Option<String>,
    /// Files that must exist (data a package ships, such as a source tarball).
    #[serde(default)]
    pub files: Vec<FileReq>,
}

/// A file the test needs, and the package that provides it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileReq {
    /// Absolute path.
    pub path: String,
    /// Debian/Ubuntu package that provides it.
    #[serde(default)]
    pub apt: Option<String>,
    /// Fedora/RHEL package that provides it.
    #[serde(default)]
    pub dnf: Option<String>,
}

/// A program the test needs, and how to get it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgramReq {
    pub name: String,
    /// Debian/Ubuntu package that provides it.
    #[serde(default)]
    pub apt: Option<String>,
    /// Fedora/RHEL package that provides it.
    #[serde(default)]
    pub dnf: Option<String>,
    /// Directories where the package puts it when not on PATH (`*` matches
    /// one path component: `/usr/lib/postgresql/*/bin`); found there, the
    /// directory is added to PATH for the test's commands.
    #[serde(default)]
    pub dirs: Vec<String>,
    /// Generic package (from `packages.yaml`) that provides it, for every
    /// distribution family: `engine install-deps` installs it.
    #[serde(default)]
    pub package: Option<String>,
}

/// A suite: a list of tests (profiles with option presets) and other suites.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub title: String,
    /// Version of the suite (semver), for repositories (`NAME/suite/disk@1.2`); 1.0.0 when absent.
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub description: String,
    /// Time each test's trials may take (`5s`), over the profiles' own
    /// budgets; `--budget` overrides it. The outermost suite that sets one wins.
    #[serde(default)]
    pub budget: Option<Duration>,
    pub tests: Vec<SuiteItem>,
}

/// One suite item: exactly one of `profile` or `suite`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteItem {
    /// A profile reference (`fio`, `fio@1.0`).
    #[serde(default)]
    pub profile: Option<String>,
    /// Another suite (`disk-quick`).
    #[serde(default)]
    pub suite: Option<String>,
    /// Entries to run, by option id and entry label or value.
    #[serde(default)]
    pub options: IndexMap<String, OneOrMany>,
    /// Run where its requirements are met (its program installed, root when
    /// it needs root) and skip it quietly elsewhere: the run still succeeds.
    #[serde(default)]
    pub optional: bool,
}

/// One entry or a list of entries.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(Scalar),
    Many(Vec<Scalar>),
}

impl OneOrMany {
    pub fn items(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(Scalar::as_str).collect(),
        }
    }
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an entry or a list of entries")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_str(v).map(OneOrMany::One)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_u64(v).map(OneOrMany::One)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_i64(v).map(OneOrMany::One)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_f64(v).map(OneOrMany::One)
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<OneOrMany, E> {
                ScalarVisitor.visit_bool(v).map(OneOrMany::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut items = Vec::new();
                while let Some(s) = seq.next_element::<Scalar>()? {
                    items.push(s);
                }
                Ok(OneOrMany::Many(items))
            }
        }
        d.deserialize_any(V)
    }
}

/// Where a profile or suite file came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled into the binary from the repository's `test-profiles/` and `suites/`.
    Builtin,
    /// A file on disk (user dir, `ENGINE_PROFILE_PATH`, or a path given on the command line).
    File(PathBuf),
}

/// A profile that loaded and passed every check.
#[derive(Debug, Clone)]
pub struct LoadedProfile {
    pub profile: Profile,
    /// What to show in messages (`test-profiles/fio/profile.yaml`).
    pub display: String,
    pub origin: Origin,
    /// The profile repository it came from (none: local or built-in).
    pub source: Option<RepositoryRef>,
}

impl LoadedProfile {
    /// `fio@1.0.0`.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.profile.id, self.profile.version)
    }

    /// The folder its file is in, where its helper files and plugins are:
    /// `.` for a bare `profile.yaml`; none for a built-in profile.
    /// Whether it runs confined unless `--sandbox`/`--no-sandbox` say
    /// otherwise: a repository's profile always (its publisher is not
    /// trusted with the machine), another when it asks (`sandbox:`).
    pub fn confined_by_default(&self) -> bool {
        self.shared() || self.profile.sandbox.as_ref().is_some_and(SandboxDef::on)
    }

    /// Whether someone other than its user wrote it: from a repository, or
    /// imported from PTS. Such a profile gets the sandbox's defaults at
    /// most, unless the user grants more.
    pub fn shared(&self) -> bool {
        self.source.is_some() || self.profile.imported_from.is_some()
    }

    pub fn dir(&self) -> Option<&Path> {
        match &self.origin {
            Origin::File(f) => Some(f.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))),
            Origin::Builtin => None,
        }
    }
}

/// A profile repository, as a result records it: re-running the result
/// takes the same profile version from the same repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepositoryRef {
    /// The name it was added under (`team`).
    pub name: String,
    /// Its URL.
    pub url: String,
    /// SHA-256 of the signed index the profile was taken from.
    pub index_sha256: String,
}
