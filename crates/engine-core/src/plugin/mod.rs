//! WASM plugins: components of the `engine:plugin` world (`sdk/wit`), built
//! for `wasm32-wasip2` from a [`engine_sdk::Workload`] or
//! [`engine_sdk::Parser`] and run by wasmtime in a sandbox.
//!
//! - `runtime`: the process's engine and the epoch ticker;
//! - `cache`: compiled code under `ENGINE_HOME/cache/wasm/`, checksummed;
//! - `version`: which interface a component exports, and its version;
//! - `limits`: memory cap and time limit;
//! - `host`: bindings, host imports and the WASI sandbox of one call;
//! - `bulk`: the plugins' bulk file I/O in their scratch directory.
//!
//! Every call gets a fresh instance in a fresh store: a trial cannot see
//! what the previous one left in memory, as it cannot see its files.

pub mod bindings;
pub mod bulk;
pub mod cache;
pub mod compile;
pub mod file;
pub mod host;
pub mod limits;
pub mod runtime;
pub mod version;

use bindings::{parser_world, wit, workload_world};
use engine_sdk::{Error as SdkError, ErrorKind, Report};
use host::{Call, Sandbox, State};
pub use limits::Limits;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
pub use version::{INTERFACE_VERSION, Kind};

/// Why a plugin could not be loaded or a call of it failed. Each message
/// says which of these happened; the caller names the plugin.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    #[error("not a WebAssembly file (it does not start with `\\0asm`)")]
    NotWasm,
    #[error("a core WebAssembly module, not a component: build it for the wasm32-wasip2 target")]
    CoreModule,
    #[error("truncated or corrupt WebAssembly: {0}")]
    Invalid(String),
    #[error("{0}")]
    Version(#[from] version::VersionError),
    #[error("it is a {found} plugin where a {expected} plugin is needed")]
    WrongKind { expected: Kind, found: Kind },
    #[error("its exports do not match engine:plugin@{INTERFACE_VERSION}: {0}")]
    Exports(String),
    #[error("it needs imports the sandbox does not offer: {0}")]
    Imports(String),
    #[error("cannot set up its sandbox: {0}")]
    Sandbox(std::io::Error),
    /// The plugin rejected its configuration (the key is named).
    #[error("{0}")]
    Config(SdkError),
    /// The plugin returned an error.
    #[error("{0}")]
    Failed(SdkError),
    /// The plugin's error says it reached for a file outside the sandbox.
    #[error("tried to open a file outside its scratch directory (a plugin sees only {scratch}): {0}", scratch = host::SCRATCH)]
    Escape(SdkError),
    #[error("trapped: {trap}{}", tail(.stderr))]
    Trap { trap: String, stderr: String },
    #[error("panicked: {0}")]
    Panic(String),
    #[error("ran past its time limit of {} and was stopped", humantime::format_duration(*.0))]
    TimeLimit(Duration),
    #[error(
        "allocated past its memory cap of {} (its memories and tables together would hold {}); raise `limits.memory` if it needs more",
        size(*.cap), size(*.desired)
    )]
    MemoryCap { cap: u64, desired: u64 },
    #[error("made tables of more than {limit} elements together (engine's limit for a plugin)")]
    TableLimit { limit: u64 },
    #[error(
        "held more than {} files, directories and streams open at once (engine's limit for a plugin)",
        host::MAX_RESOURCES
    )]
    Handles,
    #[error(
        "wrote more than {} MiB in all to its standard output, standard error, log, progress notes and report",
        host::OUTPUT_CAP >> 20
    )]
    OutputCap,
    #[error("returned a value for `{0}`, a result it does not declare")]
    Undeclared(String),
    #[error("{0}")]
    Compile(#[from] compile::CompileError),
    #[error("interrupted")]
    Interrupted,
    /// Engine stopped it: its test outgrew its space (the runner says how).
    #[error("was stopped by engine")]
    Stopped,
    #[error("returned no value for `{0}`")]
    Missing(String),
    #[error("{0}")]
    Host(String),
}

fn size(b: u64) -> String {
    if b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    }
}

fn tail(stderr: &str) -> String {
    let last: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    match last.last() {
        Some(l) => format!(" (its stderr: {l})"),
        None => String::new(),
    }
}

/// Most bytes of a plugin's own error message kept (a message is a line
/// or a few; the rest is counted in its place).
pub const MESSAGE_CAP: usize = 4096;

impl PluginError {
    /// Bytes of the plugin's own text in the error (its message and key).
    fn text_len(&self) -> usize {
        match self {
            PluginError::Config(e) | PluginError::Failed(e) | PluginError::Escape(e) => {
                e.message.len() + e.key.as_ref().map_or(0, String::len)
            }
            PluginError::Panic(m) => m.len(),
            PluginError::Trap { trap, stderr } => trap.len() + stderr.len(),
            _ => 0,
        }
    }

    /// The error with the plugin's text cut to [`MESSAGE_CAP`] bytes.
    fn shortened(self) -> PluginError {
        let cut = |mut e: SdkError| {
            e.message = crate::sys::text::cut(&e.message, MESSAGE_CAP);
            e.key = e.key.map(|k| crate::sys::text::cut(&k, 256));
            e
        };
        match self {
            PluginError::Config(e) => PluginError::Config(cut(e)),
            PluginError::Failed(e) => PluginError::Failed(cut(e)),
            PluginError::Escape(e) => PluginError::Escape(cut(e)),
            PluginError::Panic(m) => PluginError::Panic(crate::sys::text::cut(&m, MESSAGE_CAP)),
            PluginError::Trap { trap, stderr } => {
                PluginError::Trap { trap: crate::sys::text::cut(&trap, MESSAGE_CAP), stderr }
            }
            e => e,
        }
    }
}

/// What one call produced besides its result.
#[derive(Debug, Default, Clone)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    /// Lines from `host.log`.
    pub log: String,
    /// Making the instance (not counted in the plugin's time).
    pub instantiate: Duration,
    /// The call itself.
    pub call: Duration,
    /// Bytes it wrote to stdout, stderr, its log and notes (towards the cap).
    pub written: usize,
    /// The workload's own intervals, when they were asked for.
    pub intervals: Option<crate::model::series::Reported>,
}

enum Pre {
    Workload(workload_world::WorkloadPluginPre<State>),
    Parser(parser_world::ParserPluginPre<State>),
}

/// A loaded plugin: compiled (or taken from the cache), its interface
/// checked, ready to instantiate.
pub struct Plugin {
    pub path: PathBuf,
    pub sha256: String,
    pub kind: Kind,
    pub loaded: cache::Loaded,
    pre: Pre,
}

/// What a plugin declares, asked before the first trial.
#[derive(Debug, Clone)]
pub struct Interface {
    pub keys: Vec<String>,
    pub results: Vec<String>,
}

fn linker() -> Result<&'static wasmtime::component::Linker<State>, PluginError> {
    static LINKER: OnceLock<wasmtime::Result<wasmtime::component::Linker<State>>> = OnceLock::new();
    LINKER.get_or_init(host::linker).as_ref().map_err(|e| PluginError::Host(format!("{e:#}")))
}

impl Plugin {
    /// Loads `path`, compiling it or taking its compiled code from `cache`.
    pub fn load(path: &Path, cache: &cache::Cache) -> Result<Plugin, PluginError> {
        let bytes = crate::sys::fs::read_capped(path, compile::MAX_WASM_BYTES as u64).map_err(|e| match e.kind() {
            std::io::ErrorKind::FileTooLarge => {
                PluginError::Compile(compile::CompileError::TooLarge { size: compile::MAX_WASM_BYTES + 1 })
            }
            _ => PluginError::Read(e),
        })?;
        if !bytes.starts_with(b"\0asm") {
            return Err(PluginError::NotWasm);
        }
        // Bytes 4..8: version 1 layer 0 is a core module; components are layer 1.
        if bytes.get(4..8) == Some(&[1, 0, 0, 0]) {
            return Err(PluginError::CoreModule);
        }
        let sha256 = crate::sys::hash::sha256_hex(&bytes);
        let engine = runtime::engine();
        let (component, loaded) =
            cache.component(engine, &bytes, &sha256).map_err(|e| match e.downcast::<compile::CompileError>() {
                Ok(compile::CompileError::Interrupted) => PluginError::Interrupted,
                Ok(c) => PluginError::Compile(c),
                Err(e) => PluginError::Invalid(first_line(&e)),
            })?;
        let ty = component.component_type();
        let names: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
        let (kind, _) = version::check(names.iter().map(String::as_str))?;
        let pre = linker()?.instantiate_pre(&component).map_err(|e| PluginError::Imports(first_line(&e)))?;
        let pre = match kind {
            Kind::Workload => Pre::Workload(
                workload_world::WorkloadPluginPre::new(pre).map_err(|e| PluginError::Exports(first_line(&e)))?,
            ),
            Kind::Parser => {
                Pre::Parser(parser_world::ParserPluginPre::new(pre).map_err(|e| PluginError::Exports(first_line(&e)))?)
            }
        };
        Ok(Plugin { path: path.to_path_buf(), sha256, kind, loaded, pre })
    }

    /// Fails unless the plugin is of kind `expected`.
    pub(crate) fn expect(&self, expected: Kind) -> Result<(), PluginError> {
        if self.kind != expected {
            return Err(PluginError::WrongKind { expected, found: self.kind });
        }
        Ok(())
    }

    /// Instantiates the plugin, asks its keys and results, and hands it
    /// `config`: what is checked before the first trial.
    pub fn check(&self, config: &[(String, String)], sb: &Sandbox<'_>) -> (Result<Interface, PluginError>, Output) {
        self.with_instance(sb, async |store, inst| {
            let (keys, results) = match inst {
                Instance::Workload(w) => {
                    let g = w.engine_plugin_workload();
                    (g.call_keys(&mut *store).await?, g.call_results(&mut *store).await?)
                }
                Instance::Parser(p) => {
                    let g = p.engine_plugin_parser();
                    (g.call_keys(&mut *store).await?, g.call_results(&mut *store).await?)
                }
            };
            Ok(configure(store, inst, config).await?.map(|()| Interface { keys, results }))
        })
    }

    /// One trial of a workload plugin: configure, then run.
    pub fn run(&self, config: &[(String, String)], sb: &Sandbox<'_>) -> (Result<Report, PluginError>, Output) {
        let (r, out) = self.with_instance(sb, async |store, inst| {
            if let Err(e) = configure(store, inst, config).await? {
                return Ok(Err(e));
            }
            let Instance::Workload(w) = inst else { unreachable!("checked by expect") };
            Ok(w.engine_plugin_workload().call_run(&mut *store).await?.map(report).map_err(failed))
        });
        (within_cap(r, &out), out)
    }

    /// Reads one trial's output with a parser plugin.
    pub(crate) fn parse(
        &self,
        config: &[(String, String)],
        output: &engine_sdk::TrialOutput<'_>,
        sb: &Sandbox<'_>,
    ) -> (Result<Report, PluginError>, Output) {
        let out = wit::TrialOutput {
            stdout: output.stdout.to_string(),
            stderr: output.stderr.to_string(),
            exit_code: output.exit_code,
        };
        let (r, out) = self.with_instance(sb, async |store, inst| {
            if let Err(e) = configure(store, inst, config).await? {
                return Ok(Err(e));
            }
            let Instance::Parser(p) = inst else { unreachable!("checked by expect") };
            Ok(p.engine_plugin_parser().call_parse(&mut *store, &out).await?.map(report).map_err(failed))
        });
        (within_cap(r, &out), out)
    }

    /// A fresh store and instance, `f` run on them, and every way that can
    /// fail turned into a [`PluginError`] that says which it was. The call
    /// is watched: past its deadline or on Ctrl-C it is dropped even while
    /// the plugin waits in a host call.
    fn with_instance<T>(
        &self,
        sb: &Sandbox<'_>,
        f: impl AsyncFnOnce(&mut wasmtime::Store<State>, &Instance) -> Result<Result<T, PluginError>, wasmtime::Error>,
    ) -> (Result<T, PluginError>, Output) {
        let mut out = Output::default();
        let mut call = match Call::new(sb) {
            Ok(c) => c,
            Err(e) => return (Err(PluginError::Sandbox(e)), out),
        };
        let deadline = call.deadline();
        let (mut instantiate, mut took) = (Duration::ZERO, Duration::ZERO);
        let work = async {
            let t0 = Instant::now();
            let inst = match &self.pre {
                Pre::Workload(p) => p.instantiate_async(&mut call.store).await.map(Instance::Workload),
                Pre::Parser(p) => p.instantiate_async(&mut call.store).await.map(Instance::Parser),
            };
            instantiate = t0.elapsed();
            let inst = inst.map_err(|e| (e, false))?;
            call.restart_clock(sb.limits);
            let t1 = Instant::now();
            let r = f(&mut call.store, &inst).await;
            took = t1.elapsed();
            r.map_err(|e| (e, true))
        };
        let r = match runtime::watched(work, &deadline, sb.interrupted, sb.stop.as_deref()) {
            Ok(Ok(r)) => r,
            Ok(Err((e, called))) => {
                let stderr = if called { call.output().1 } else { String::new() };
                Err(classify(e, sb.limits, &stderr))
            }
            Err(runtime::Stopped::TimeUp) => Err(PluginError::TimeLimit(sb.limits.time)),
            Err(runtime::Stopped::Interrupted) => Err(PluginError::Interrupted),
            Err(runtime::Stopped::Engine) => Err(PluginError::Stopped),
        };
        (out.instantiate, out.call) = (instantiate, took);
        (out.stdout, out.stderr) = call.output();
        let overflowed = call.overflowed(0);
        out.written = out.stdout.len() + out.stderr.len() + call.store.data().written;
        let data = call.store.data_mut();
        // Whatever the plugin made of a full pipe (a "broken pipe" panic, an
        // ignored error), the test fails for what it was.
        let r = if data.log_overflow || overflowed { Err(PluginError::OutputCap) } else { r };
        // Its error's text is its output too: counted, and kept short.
        let r = match r {
            Err(e) if out.written + e.text_len() >= host::OUTPUT_CAP => Err(PluginError::OutputCap),
            Err(e) => Err(e.shortened()),
            ok => ok,
        };
        out.log = std::mem::take(&mut data.log);
        if data.interval.is_some() {
            let origin = data.intervals.origin;
            out.intervals = Some(std::mem::replace(&mut data.intervals, crate::model::series::Reported::new(origin)));
        }
        if let Some((fraction, note)) = data.progress.take() {
            out.log.push_str(&format!("# last progress: {:.0} % {note}\n", fraction * 100.0));
        }
        (r, out)
    }
}

/// A report whose lines take the call's output past the one cap is a
/// flood like any other.
fn within_cap(r: Result<Report, PluginError>, out: &Output) -> Result<Report, PluginError> {
    match r {
        Ok(rep) if out.written + rep.log.len() >= host::OUTPUT_CAP => Err(PluginError::OutputCap),
        r => r,
    }
}

enum Instance {
    Workload(workload_world::WorkloadPlugin),
    Parser(parser_world::ParserPlugin),
}

async fn configure(
    store: &mut wasmtime::Store<State>,
    inst: &Instance,
    config: &[(String, String)],
) -> Result<Result<(), PluginError>, wasmtime::Error> {
    let config = config.to_vec();
    let r = match inst {
        Instance::Workload(w) => w.engine_plugin_workload().call_configure(&mut *store, &config).await?,
        Instance::Parser(p) => p.engine_plugin_parser().call_configure(&mut *store, &config).await?,
    };
    Ok(r.map_err(|e| match sdk_error(e) {
        e if e.kind == ErrorKind::Config => PluginError::Config(e),
        e => failed_sdk(e),
    }))
}

fn sdk_error(e: wit::Error) -> SdkError {
    let kind = match e.kind {
        wit::ErrorKind::Config => ErrorKind::Config,
        wit::ErrorKind::Io => ErrorKind::Io,
        wit::ErrorKind::Unsupported => ErrorKind::Unsupported,
        wit::ErrorKind::Cancelled => ErrorKind::Cancelled,
        wit::ErrorKind::Failed => ErrorKind::Failed,
    };
    SdkError { kind, key: e.key, message: e.message }
}

fn failed(e: wit::Error) -> PluginError {
    failed_sdk(sdk_error(e))
}

/// Signs, in a plugin's own error, that the sandbox refused a path: Rust's
/// std when no preopen covers a path, and WASI's errno for a path that
/// climbs out of its directory.
const ESCAPE_SIGNS: &[&str] = &["pre-opened file descriptor", "Capabilities insufficient", "ENOTCAPABLE", bulk::ESCAPE];

/// An absolute path in `text` outside the scratch directory (after `..` is
/// resolved). The sandbox has no other directory, so an I/O error about
/// such a path is an attempt to reach out of it (the host never sees the
/// attempt: the guest's libc finds no preopen for it and gives up).
pub fn outside_path(text: &str) -> Option<String> {
    let words = text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '(' | ')'));
    for w in words {
        let w = w.trim_end_matches([':', '.', ';']);
        if !w.starts_with('/') || w.len() < 2 {
            continue;
        }
        let mut parts: Vec<&str> = Vec::new();
        for c in w.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                c => parts.push(c),
            }
        }
        if parts.first() != Some(&host::SCRATCH.trim_start_matches('/')) {
            return Some(w.to_string());
        }
    }
    None
}

fn failed_sdk(e: SdkError) -> PluginError {
    match e.kind {
        ErrorKind::Config => PluginError::Config(e),
        _ if ESCAPE_SIGNS.iter().any(|s| e.message.contains(s)) => PluginError::Escape(e),
        ErrorKind::Io if outside_path(&e.message).is_some() => PluginError::Escape(e),
        _ => PluginError::Failed(e),
    }
}

fn report(r: wit::Report) -> Report {
    Report {
        measurements: r
            .measurements
            .into_iter()
            .map(|m| engine_sdk::Measurement { result: m.result, value: m.value })
            .collect(),
        log: r.log,
    }
}

fn first_line(e: &wasmtime::Error) -> String {
    let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
    chain.join(": ")
}

/// Which of the ways a call can end abnormally this error is.
fn classify(e: wasmtime::Error, limits: Limits, stderr: &str) -> PluginError {
    if let Some(m) = e.downcast_ref::<limits::MemoryCapExceeded>() {
        return PluginError::MemoryCap { cap: m.cap, desired: m.desired };
    }
    if let Some(t) = e.downcast_ref::<limits::TableLimitExceeded>() {
        return PluginError::TableLimit { limit: t.limit };
    }
    if e.is::<limits::TimeUp>() {
        return PluginError::TimeLimit(limits.time);
    }
    if e.is::<limits::Interrupted>() {
        return PluginError::Interrupted;
    }
    if e.is::<limits::Stopped>() {
        return PluginError::Stopped;
    }
    let text = first_line(&e);
    if text.contains("write beyond capacity") {
        return PluginError::OutputCap;
    }
    // The resource table at its capacity (`MAX_RESOURCES`).
    if text.contains("resource table has no free keys") {
        return PluginError::Handles;
    }
    if let Some(trap) = e.downcast_ref::<wasmtime::Trap>() {
        // Rust guests abort on panic after printing the message to stderr.
        if let Some(i) = stderr.find("panicked at ") {
            let mut lines = stderr[i..].lines();
            let at = lines.next().unwrap_or("").trim_start_matches("panicked at ").trim_end_matches(':');
            let msg = lines.next().unwrap_or("").trim();
            // `File::open("/etc/passwd").unwrap()`: the panic names the path.
            if outside_path(msg).is_some() && msg.contains("os error") {
                return PluginError::Escape(SdkError::failed(format!("panicked: {msg}")));
            }
            return PluginError::Panic(format!("{msg} (at {at})"));
        }
        let trap = trap.to_string();
        let trap = trap.trim_start_matches("wasm trap: ").to_string();
        return PluginError::Trap { trap, stderr: stderr.to_string() };
    }
    PluginError::Host(text)
}

#[cfg(test)]
mod tests {
    use super::outside_path;

    #[test]
    fn paths_outside_the_scratch_directory() {
        assert_eq!(outside_path("open /etc/passwd: No such file or directory").as_deref(), Some("/etc/passwd"));
        assert_eq!(outside_path("open \"/scratch/../etc/shadow\": denied").as_deref(), Some("/scratch/../etc/shadow"));
        assert_eq!(outside_path("create /scratch/file-1: No space left on device (ENOSPC)"), None);
        assert_eq!(outside_path("write: Input/output error"), None);
    }
}
