//! `executor:`: how a trial runs (external program, built-in workload, WASM plugin), its steps and servers.

use super::options::Scalar;
use crate::units::{Duration, Size};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub config: IndexMap<String, Scalar>,
    /// What one trial may use.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub limits: PluginLimits,
    /// Environment variables the plugin sees; it sees no others.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub env: IndexMap<String, String>,
}

/// Limits of one plugin call (a trial, or a parse).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PluginLimits {
    /// Linear memory of the instance (`256MiB`, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Size>,
    /// Wall-clock time of one call (`60s`; default 10m); the plugin is stopped after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Duration>,
}

/// A parser plugin: a component that reads a trial's output.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginParserDef {
    /// The plugin's `.wasm` file, relative to the profile's folder and inside it.
    pub path: String,
    /// Its configuration (the keys the parser reads); values may hold placeholders.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub config: IndexMap<String, Scalar>,
    /// Which of the values the plugin returns this parser takes (default:
    /// the one named like the parser's `result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// What one parse may use.
    #[serde(default, skip_serializing_if = "crate::model::is_default")]
    pub limits: PluginLimits,
}

/// A built-in workload and its configuration.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuiltinExecutor {
    /// The workload: `io`, `files`, `compile`, `sqlite`, `startup-time`.
    pub workload: String,
    /// Its configuration (the workload's keys); values may hold placeholders.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub config: IndexMap<String, Scalar>,
    /// Longest a trial may take (`90s`, `10m`); the workload is asked to stop after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables (values may hold placeholders).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub env: IndexMap<String, String>,
    /// File (relative to the scratch directory) fed to the program's standard input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Longest a trial may take (`90s`, `10m`); the whole process group is killed after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// The program's own interval logs, recorded beside the monitors as
    /// the workload's intervals: `fio` adds `--write_bw_log`,
    /// `--write_iops_log` and `--log_avg_msec` (the monitors' interval) to
    /// a measured trial's arguments and reads the logs fio writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_logs: Option<IntervalLogs>,
    /// Steps run once per test, before its first trial, in the test's directory
    /// (`{{test_dir}}`): prepare data every trial shares (with `scratch: per_test`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_test: Vec<Step>,
    /// Steps run before every trial (warm-ups included), in the trial's scratch
    /// directory; not timed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_trial: Vec<Step>,
    /// Steps run after every trial, also a failed one; not timed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_trial: Vec<Step>,
    /// Steps run once per test, after its last trial, also after a failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub post_test: Vec<Step>,
}

/// Interval logs engine knows how to ask for and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntervalLogs {
    /// fio's bandwidth and IOPS logs.
    Fio,
}

/// A helper command: either `program` + `args`, or a `shell` line run by `/bin/sh -c`
/// (placeholders in a shell line are quoted for the shell).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Longest the step may take (default 10m); for a `server` step, how
    /// long it may take to become ready (default 60s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// When engine runs as root, run this step (or server) as an
    /// unprivileged user (`nobody`) that keeps only the right to traverse
    /// directories; engine hands it the test's directories. Programs that
    /// refuse root (PostgreSQL's `initdb`, `postgres`) need this. Without
    /// root it changes nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unprivileged: bool,
    /// Start a server (a database, a web server) that runs until the end of
    /// the step's scope: a `pre_test` server until after `post_test`, a
    /// `pre_trial` one until after `post_trial`. It is journaled, so
    /// `engine recover` stops it after a `kill -9`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables (values may hold placeholders).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub env: IndexMap<String, String>,
    /// When the server counts as ready; every condition given must hold.
    pub ready: ReadyDef,
    /// Signal that asks it to stop (`TERM`, the default; `INT` is
    /// PostgreSQL's fast shutdown; `QUIT`, `HUP`, `WINCH`, `USR1`, `USR2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_signal: Option<String>,
    /// How long it may take to stop before it is killed (default 30s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_timeout: Option<Duration>,
    /// Paths removed once it stopped (a database cluster); `engine recover`
    /// removes them too. They must lie inside the test's directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
}

/// How long a server may take to stop before it is killed, when its
/// profile does not say.
pub const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// When a server is ready.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadyDef {
    /// A Unix socket it listens on (accepts a connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    /// A TCP port on 127.0.0.1 that it (not another process) listens on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<String>,
    /// A command (program, then arguments) that must succeed, tried until it
    /// does (`[pg_isready, -h, "{{test_dir}}"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}
