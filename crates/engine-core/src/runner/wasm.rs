//! The `wasm` executor: a workload plugin (a component built with `sdk/`)
//! run by wasmtime in a sandbox (`crate::plugin`). Setup loads the plugin
//! (from the compiled-code cache when it can), checks its interface, the
//! profile's results and the configuration — where a bad value fails the
//! test before its first trial — and each trial runs in a fresh instance
//! whose only directory is the trial's scratch directory. Values come back
//! directly: nothing is parsed.

use super::executor::{ExecError, Executor, TestEnv, TrialEnv, TrialRun};
use super::watchdog::InProcess;
use crate::model::profile::{LoadedProfile, WasmExecutor};
use crate::model::template;
use crate::plugin::cache::Cache;
use crate::plugin::host::Sandbox;
use crate::plugin::{Kind, Limits, Plugin, PluginError};
use crate::sys::interrupt;
use crate::sys::process::Usage;
use engine_sdk::ErrorKind;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Wasm<'a> {
    profile: Arc<LoadedProfile>,
    def: WasmExecutor,
    /// Result ids the profile takes from the plugin.
    results: Vec<String>,
    cache: &'a Cache,
    plugin: Option<Plugin>,
    config: Vec<(String, String)>,
    env: Vec<(String, String)>,
    limits: Limits,
    /// The results the plugin declares: a value for another is refused.
    declared: Vec<String>,
    /// The test's space, watched while its plugin runs, and the flag that
    /// stops the plugin's call when it is outgrown.
    space: Option<InProcess>,
}

impl<'a> Wasm<'a> {
    pub(crate) fn new(profile: Arc<LoadedProfile>, def: WasmExecutor, results: Vec<String>, cache: &'a Cache) -> Self {
        Wasm {
            profile,
            def,
            results,
            cache,
            plugin: None,
            config: Vec::new(),
            env: Vec::new(),
            limits: Limits::default(),
            declared: Vec::new(),
            space: None,
        }
    }

    /// `plugin sha256.wasm`: how messages name it.
    fn name(&self) -> String {
        format!("plugin {}", self.def.plugin)
    }

    fn error(&self, e: PluginError) -> ExecError {
        let message = match &e {
            PluginError::Config(_) => format!("{e} (profile {}, plugin {})", self.profile.profile.id, self.def.plugin),
            _ => e.to_string(),
        };
        // The plugin's words: kept on one line, its controls shown, wherever they go.
        ExecError::Workload { workload: self.name(), message: crate::sys::text::one_line(&message).into_owned() }
    }
}

/// Where the plugin's `configure` runs before the first trial: a directory
/// of its own, removed after.
const CHECK_DIR: &str = "configure";

/// Renders `{{placeholders}}` of a config or env map from the test's values.
pub(crate) fn render<'a>(
    pairs: impl Iterator<Item = (&'a String, &'a str)>,
    b: &indexmap::IndexMap<String, String>,
) -> Result<Vec<(String, String)>, ExecError> {
    pairs
        .map(|(k, v)| {
            template::render(v, |n| b.get(n).map(String::as_str), false)
                .map(|v| (k.clone(), v))
                .map_err(|e| ExecError::Setup(format!("config `{k}`: {e}")))
        })
        .collect()
}

/// CPU time of this thread (the plugin runs on it).
fn cpu_now() -> (Duration, Duration, u64) {
    let u = crate::sys::process::usage_now(libc::RUSAGE_THREAD);
    (u.user, u.system, u.max_rss_kib)
}

impl Wasm<'_> {
    /// What a trial's failed call `e` is for the run: an interrupt, or the
    /// test's failure, its log (`text`, the error, `streams`) written at `log`.
    fn failed_call(&self, e: PluginError, log: &std::path::Path, text: &str, streams: &str) -> ExecError {
        let message = match e {
            PluginError::Interrupted => return ExecError::Interrupted,
            PluginError::Failed(e) if e.kind == ErrorKind::Cancelled && interrupt::requested() => {
                return ExecError::Interrupted;
            }
            PluginError::Stopped if self.space.as_ref().and_then(InProcess::tripped).is_some() => {
                self.space.as_ref().and_then(InProcess::tripped).unwrap_or_default()
            }
            // A plugin that saw `cancelled()` at its deadline and stopped.
            PluginError::Failed(c) if c.kind == ErrorKind::Cancelled => {
                PluginError::TimeLimit(self.limits.time).to_string()
            }
            e => crate::sys::text::one_line(&e.to_string()).into_owned(),
        };
        let err = ExecError::Workload { workload: self.name(), message: format!("{message}; see {}", log.display()) };
        let _ = crate::sys::fs::write_new(log, format!("{text}# failed: {err}\n{streams}").as_bytes());
        err
    }

    /// The head of a trial's log: the plugin, its config, where it ran,
    /// how long and what it cost.
    fn log_header(&self, env: &TrialEnv<'_>, out: &crate::plugin::Output, usage: &Usage) -> String {
        let plugin = self.plugin.as_ref().expect("setup loaded the plugin");
        format!(
            "# plugin {} (sha256 {}, {:?}) {}\n# scratch: {} (seen as /scratch)\n# instantiate {:.3} ms, call {:.6} s (user {:.3} s, system {:.3} s, max RSS {} KiB)\n",
            self.def.plugin,
            plugin.sha256,
            plugin.loaded.source,
            self.config.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
            env.scratch.display(),
            out.instantiate.as_secs_f64() * 1e3,
            out.call.as_secs_f64(),
            usage.user.as_secs_f64(),
            usage.system.as_secs_f64(),
            usage.max_rss_kib,
        )
    }
}

impl Executor for Wasm<'_> {
    fn setup(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError> {
        let path = crate::plugin::file::plugin_path(&self.profile, &self.def.plugin)
            .map_err(|e| ExecError::Setup(e.to_string()))?;
        self.limits = crate::plugin::file::limits(&self.def.limits);
        self.config = render(self.def.config.iter().map(|(k, v)| (k, v.as_str())), env.bindings)?;
        self.env = render(self.def.env.iter().map(|(k, v)| (k, v.as_str())), env.bindings)?;
        let plugin = Plugin::load(&path, self.cache).map_err(|e| self.error(e))?;
        plugin.expect(Kind::Workload).map_err(|e| self.error(e))?;
        // Ask the plugin what it reads and returns, and hand it the
        // configuration once: a bad key or value fails here, not in trial 1.
        // Its directory is one of its own, removed after: nothing it
        // leaves (a link named `trial`) is ever used by engine.
        let io = |source| ExecError::Io { what: format!("cannot prepare {}", env.test_dir.display()), source };
        self.space = InProcess::start(env, self.profile.profile.requirements.free_space.as_deref())?;
        let own = env.dir.fresh_dir(CHECK_DIR, None).map_err(io)?;
        let sb = Sandbox {
            scratch: Some(&own),
            env: &self.env,
            limits: self.limits,
            interrupted: interrupt::requested,
            interval: None,
            stop: self.space.as_ref().map(InProcess::flag),
        };
        let (iface, _) = plugin.check(&self.config, &sb);
        drop(own);
        env.dir.remove(std::path::Path::new(CHECK_DIR)).map_err(io)?;
        let iface = iface.map_err(|e| self.error(e))?;
        self.declared = iface.results.clone();
        for (k, _) in &self.config {
            if !iface.keys.contains(k) {
                let known: Vec<&str> = iface.keys.iter().map(String::as_str).collect();
                let hint = crate::model::diag::did_you_mean(k, known.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                return Err(ExecError::Workload {
                    workload: self.name(),
                    message: format!(
                        "config `{k}`: the plugin reads no such key{hint} (it reads: {}) (profile {})",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") },
                        self.profile.profile.id
                    ),
                });
            }
        }
        for r in &self.results {
            if !iface.results.contains(r) {
                return Err(ExecError::Workload {
                    workload: self.name(),
                    message: format!(
                        "returns no result `{r}` (it returns: {}) (profile {})",
                        iface.results.join(", "),
                        self.profile.profile.id
                    ),
                });
            }
        }
        self.plugin = Some(plugin);
        Ok(())
    }

    fn trial(&mut self, env: &TrialEnv<'_>) -> Result<TrialRun, ExecError> {
        let plugin = self.plugin.as_ref().expect("setup loaded the plugin");
        let sb = Sandbox {
            scratch: Some(env.dir),
            env: &self.env,
            limits: self.limits,
            interrupted: interrupt::requested,
            interval: env.interval,
            stop: self.space.as_ref().map(InProcess::flag),
        };
        let start = Instant::now();
        let (u0, s0, _) = cpu_now();
        env.span.begin();
        let (r, out) = plugin.run(&self.config, &sb);
        env.span.end();
        let wall = start.elapsed();
        let (u1, s1, rss) = cpu_now();
        let log = env.logs.join(format!("trial-{}.log", env.label));
        let usage = Usage { user: u1 - u0, system: s1 - s0, max_rss_kib: rss };
        let mut text = self.log_header(env, &out, &usage);
        text.push_str(&out.log);
        let streams = super::trial_log::streams(
            &crate::sys::text::terminal(&out.stdout),
            &crate::sys::text::terminal(&out.stderr),
        );
        let report = match r {
            Ok(report) => report,
            Err(e) => return Err(self.failed_call(e, &log, &text, &streams)),
        };
        // Each of the plugin's lines is one record: a line break inside
        // cannot forge another, a control character cannot reach a terminal.
        for line in report.log.lines() {
            text.push_str(&format!("report: {}\n", crate::sys::text::one_line(line)));
        }
        for m in &report.measurements {
            text.push_str(&format!("# {} = {}\n", crate::sys::text::one_line(&m.result), crate::units::exact(m.value)));
        }
        if let Some(iv) = out.intervals.as_ref().filter(|iv| iv.refused > 0) {
            text.push_str(&format!(
                "# {} interval figure(s) refused (a bad name, unit or value, or a name past the 32 a trial keeps)\n",
                iv.refused
            ));
        }
        text.push_str(&streams);
        if let Some(m) = report.measurements.iter().find(|m| !self.declared.contains(&m.result)) {
            let e = PluginError::Undeclared(crate::sys::text::one_line(&m.result).into_owned());
            let err = ExecError::Workload { workload: self.name(), message: format!("{e}; see {}", log.display()) };
            let _ = crate::sys::fs::write_new(&log, format!("{text}# failed: {err}\n").as_bytes());
            return Err(err);
        }
        Ok(TrialRun {
            stdout: format!("{}{}", out.stdout, report.log),
            stderr: out.stderr,
            wall,
            usage,
            values: report.measurements.iter().map(|m| (m.result.clone(), m.value)).collect(),
            log,
            log_text: text,
            cgroup: None,
            intervals: out.intervals,
            servers: Default::default(),
        })
    }

    fn teardown(&mut self, _env: &TestEnv<'_>) -> Result<(), ExecError> {
        self.plugin = None;
        Ok(())
    }
}
