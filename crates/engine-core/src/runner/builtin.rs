//! The `builtin` executor: a workload compiled into engine, run in-process
//! on the workload contract (`sdk/`). Its configuration is filled from the
//! test's values once per test — where a bad value fails the test before its
//! first trial — and each trial returns its values directly: nothing is parsed.

use super::executor::{ExecError, Executor, TestEnv, TrialEnv, TrialRun};
use super::watchdog::InProcess;
use crate::model::profile::BuiltinExecutor;
use crate::model::template;
use crate::sys::interrupt;
use crate::sys::process::Usage;
use crate::workloads;
use engine_sdk::{Config, Context, DynWorkload, Error, ErrorKind};
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub struct Builtin {
    def: BuiltinExecutor,
    profile: String,
    workload: Option<Box<dyn DynWorkload>>,
    /// The profile's `requirements.free_space`, for its space limit.
    free_space: Option<String>,
    /// The test's space, watched while the workload runs in engine.
    space: Option<InProcess>,
}

impl Builtin {
    pub(crate) fn new(def: BuiltinExecutor, profile: &str, free_space: Option<String>) -> Self {
        Builtin { def, profile: profile.to_string(), workload: None, free_space, space: None }
    }

    fn error(&self, e: Error) -> ExecError {
        let message = match e.kind {
            ErrorKind::Config => format!("{e} (profile {})", self.profile),
            _ => e.to_string(),
        };
        ExecError::Workload { workload: format!("workload {}", self.def.workload), message }
    }

    /// The head of a trial's log: the workload and its config, where it ran,
    /// how long and what it cost.
    fn log_header(&self, env: &TrialEnv<'_>, wall: Duration, usage: &Usage) -> String {
        format!(
            "# workload {} {}\n# cwd: {}\n# after {:.6} s (user {:.3} s, system {:.3} s, max RSS {} KiB)\n",
            self.def.workload,
            self.def.config.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
            env.scratch.display(),
            wall.as_secs_f64(),
            usage.user.as_secs_f64(),
            usage.system.as_secs_f64(),
            usage.max_rss_kib,
        )
    }

    /// The error of a workload that returned `e` (a timeout when it was
    /// cancelled after `timeout`), pointing at the trial's `log`.
    fn workload_failed(&self, e: Error, timeout: Option<Duration>, log: &Path) -> ExecError {
        let message = if e.kind == ErrorKind::Cancelled {
            let after = humantime::format_duration(timeout.unwrap_or_default()).to_string();
            format!("timed out after {after}; see {}", log.display())
        } else {
            let err = self.error(e).to_string();
            format!("{}; see {}", err.split_once(": ").map(|x| x.1).unwrap_or(""), log.display())
        };
        ExecError::Workload { workload: format!("workload {}", self.def.workload), message }
    }

    /// The error of a workload that panicked with `payload`.
    fn panicked(&self, payload: &(dyn std::any::Any + Send)) -> ExecError {
        let msg =
            payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned());
        ExecError::Workload {
            workload: format!("workload {}", self.def.workload),
            message: format!("panicked: {}", msg.unwrap_or_default()),
        }
    }
}

/// Writes the trial's log (`text`, then the error) and returns the error.
fn failed(log: &Path, text: &str, e: ExecError) -> ExecError {
    let _ = crate::sys::fs::write_new(log, format!("{text}# failed: {e}\n").as_bytes());
    e
}

/// The trial as the workload sees it.
struct Trial<'a> {
    scratch: &'a Path,
    target: &'a Path,
    start: Instant,
    deadline: Option<Instant>,
    /// Set when the test outgrew its space.
    stop: Option<Arc<AtomicBool>>,
    log: RefCell<String>,
    interval: Option<Duration>,
    intervals: RefCell<crate::model::series::Reported>,
}

impl Context for Trial<'_> {
    fn scratch_dir(&self) -> &Path {
        self.scratch
    }
    fn target_dir(&self) -> &Path {
        self.target
    }
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
    fn cancelled(&self) -> bool {
        interrupt::requested()
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.stop.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
    fn log(&self, line: &str) {
        let mut l = self.log.borrow_mut();
        l.push_str(line);
        l.push('\n');
    }
    fn interval_every(&self) -> Option<Duration> {
        self.interval
    }
    fn interval(&self, at: Duration, figures: &[engine_sdk::Figure]) {
        if self.interval.is_some() {
            self.intervals.borrow_mut().push(at, figures.iter().map(|f| (f.name, f.unit, f.value)));
        }
    }
    fn drop_caches(&self) -> Result<(), Error> {
        if !crate::sys::is_root() {
            return Err(Error::unsupported("dropping the page cache needs root"));
        }
        crate::state::hygiene::drop_caches().map_err(|e| Error::failed(e.to_string()))
    }
}

/// CPU time of the whole process so far (workloads may run threads).
/// CPU time of engine and the processes it waited for (io's job
/// processes), and engine's peak memory.
fn cpu_now() -> (Duration, Duration, u64) {
    let (user, system) = crate::sys::process::cpu_with_children();
    (user, system, crate::sys::process::usage_now(libc::RUSAGE_SELF).max_rss_kib)
}

impl Executor for Builtin {
    fn setup(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError> {
        let entry = workloads::find(&self.def.workload).ok_or_else(|| {
            ExecError::Setup(format!(
                "no built-in workload `{}` (known: {})",
                self.def.workload,
                workloads::names().join(", ")
            ))
        })?;
        let mut config = Config::new();
        for (k, v) in &self.def.config {
            let v = template::render(v.as_str(), |n| env.bindings.get(n).map(String::as_str), false)
                .map_err(|e| ExecError::Setup(format!("config `{k}`: {e}")))?;
            config.set(k.clone(), v);
        }
        self.workload = Some((entry.make)(&config).map_err(|e| self.error(e))?);
        self.space = InProcess::start(env, self.free_space.as_deref())?;
        Ok(())
    }

    fn trial(&mut self, env: &TrialEnv<'_>) -> Result<TrialRun, ExecError> {
        let timeout = self.def.timeout.as_ref().map(crate::units::Duration::get);
        let target = env.bindings.get("target_dir").map(String::as_str).unwrap_or("");
        let start = Instant::now();
        let cx = Trial {
            scratch: env.scratch,
            target: Path::new(target),
            start,
            deadline: timeout.map(|t| start + t),
            stop: self.space.as_ref().map(InProcess::flag),
            log: RefCell::new(String::new()),
            interval: env.interval,
            intervals: RefCell::new(crate::model::series::Reported::new(start)),
        };
        let (u0, s0, _) = cpu_now();
        let w = self.workload.as_mut().expect("setup made the workload");
        env.span.begin();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.run(&cx)));
        env.span.end();
        let wall = start.elapsed();
        let (u1, s1, rss) = cpu_now();
        let usage = Usage { user: u1 - u0, system: s1 - s0, max_rss_kib: rss };
        let log = env.logs.join(format!("trial-{}.log", env.label));
        let mut text = self.log_header(env, wall, &usage);
        text.push_str(&cx.log.borrow());
        let outgrown = self.space.as_ref().and_then(InProcess::tripped);
        let report = match r {
            Ok(Ok(_)) | Ok(Err(_)) if outgrown.is_some() => {
                let message = format!("{}; see {}", outgrown.unwrap_or_default(), log.display());
                let e = ExecError::Workload { workload: format!("workload {}", self.def.workload), message };
                return Err(failed(&log, &text, e));
            }
            Ok(Ok(report)) => report,
            Ok(Err(e)) if e.kind == ErrorKind::Cancelled && interrupt::requested() => {
                return Err(ExecError::Interrupted);
            }
            Ok(Err(e)) => return Err(failed(&log, &text, self.workload_failed(e, timeout, &log))),
            Err(p) => return Err(failed(&log, &text, self.panicked(p.as_ref()))),
        };
        text.push_str(&report.log);
        for m in &report.measurements {
            text.push_str(&format!("# {} = {}\n", m.result, m.value));
        }
        let intervals = cx.intervals.into_inner();
        if intervals.refused > 0 {
            text.push_str(&format!(
                "# {} interval figure(s) refused (a bad name, unit or value, or a name past the 32 a trial keeps)\n",
                intervals.refused
            ));
        }
        Ok(TrialRun {
            stdout: report.log.clone(),
            stderr: String::new(),
            wall,
            usage,
            values: report.measurements.iter().map(|m| (m.result.clone(), m.value)).collect(),
            log,
            log_text: text,
            cgroup: None,
            intervals: env.interval.map(|_| intervals),
            servers: Default::default(),
        })
    }

    fn teardown(&mut self, _env: &TestEnv<'_>) -> Result<(), ExecError> {
        self.workload = None;
        self.space = None;
        Ok(())
    }
}
