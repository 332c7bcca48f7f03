//! The `builtin` executor: a workload compiled into engine, run in-process
//! on the workload contract (`sdk/`). Its configuration is filled from the
//! test's values once per test — where a bad value fails the test before its
//! first trial — and each trial returns its values directly: nothing is parsed.

use super::executor::{ExecError, Executor, TestEnv, TrialEnv, TrialRun};
use crate::model::profile::BuiltinExecutor;
use crate::model::template;
use crate::sys::interrupt;
use crate::sys::process::Usage;
use crate::workloads;
use engine_sdk::{Config, Context, DynWorkload, Error, ErrorKind};
use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

pub struct Builtin {
    def: BuiltinExecutor,
    profile: String,
    workload: Option<Box<dyn DynWorkload>>,
}

impl Builtin {
    pub fn new(def: BuiltinExecutor, profile: &str) -> Self {
        Builtin { def, profile: profile.to_string(), workload: None }
    }

    fn error(&self, e: Error) -> ExecError {
        let message = match e.kind {
            ErrorKind::Config => format!("{e} (profile {})", self.profile),
            _ => e.to_string(),
        };
        ExecError::Workload { workload: format!("workload {}", self.def.workload), message }
    }
}

/// The trial as the workload sees it.
struct Trial<'a> {
    scratch: &'a Path,
    target: &'a Path,
    start: Instant,
    deadline: Option<Instant>,
    log: RefCell<String>,
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
        interrupt::requested() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
    fn log(&self, line: &str) {
        let mut l = self.log.borrow_mut();
        l.push_str(line);
        l.push('\n');
    }
    fn drop_caches(&self) -> Result<(), Error> {
        if !crate::sys::is_root() {
            return Err(Error::unsupported("dropping the page cache needs root"));
        }
        crate::state::hygiene::drop_caches().map_err(Error::failed)
    }
}

/// CPU time of the whole process so far (workloads may run threads).
fn cpu_now() -> (Duration, Duration, u64) {
    let u = crate::sys::process::usage_now(libc::RUSAGE_SELF);
    (u.user, u.system, u.max_rss_kib)
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
        Ok(())
    }

    fn trial(&mut self, env: &TrialEnv<'_>) -> Result<TrialRun, ExecError> {
        let timeout = self
            .def
            .timeout
            .as_deref()
            .map(crate::units::parse_duration)
            .transpose()
            .map_err(|e| ExecError::Setup(e.to_string()))?;
        let target = env.bindings.get("target_dir").map(String::as_str).unwrap_or("");
        let start = Instant::now();
        let cx = Trial {
            scratch: env.scratch,
            target: Path::new(target),
            start,
            deadline: timeout.map(|t| start + t),
            log: RefCell::new(String::new()),
        };
        let (u0, s0, _) = cpu_now();
        let w = self.workload.as_mut().expect("setup made the workload");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.run(&cx)));
        let wall = start.elapsed();
        let (u1, s1, rss) = cpu_now();
        let log = env.logs.join(format!("trial-{}.log", env.label));
        let mut text = format!(
            "# workload {} {}\n# cwd: {}\n# after {:.6} s (user {:.3} s, system {:.3} s, max RSS {rss} KiB)\n",
            self.def.workload,
            self.def.config.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "),
            env.scratch.display(),
            wall.as_secs_f64(),
            (u1 - u0).as_secs_f64(),
            (s1 - s0).as_secs_f64(),
        );
        text.push_str(&cx.log.borrow());
        let fail = |e: ExecError, text: &str| -> ExecError {
            let _ = crate::sys::fs::write_new(&log, format!("{text}# failed: {e}\n").as_bytes());
            e
        };
        let report = match r {
            Ok(Ok(report)) => report,
            Ok(Err(e)) if e.kind == ErrorKind::Cancelled && interrupt::requested() => {
                return Err(ExecError::Interrupted);
            }
            Ok(Err(e)) if e.kind == ErrorKind::Cancelled => {
                let after = humantime::format_duration(timeout.unwrap_or_default()).to_string();
                return Err(fail(
                    ExecError::Workload {
                        workload: format!("workload {}", self.def.workload),
                        message: format!("timed out after {after}; see {}", log.display()),
                    },
                    &text,
                ));
            }
            Ok(Err(e)) => {
                let err = self.error(e);
                let err = ExecError::Workload {
                    workload: format!("workload {}", self.def.workload),
                    message: format!(
                        "{}; see {}",
                        err.to_string().split_once(": ").map(|x| x.1).unwrap_or(""),
                        log.display()
                    ),
                };
                return Err(fail(err, &text));
            }
            Err(p) => {
                let msg =
                    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
                let err = ExecError::Workload {
                    workload: format!("workload {}", self.def.workload),
                    message: format!("panicked: {}", msg.unwrap_or_default()),
                };
                return Err(fail(err, &text));
            }
        };
        text.push_str(&report.log);
        for m in &report.measurements {
            text.push_str(&format!("# {} = {}\n", m.result, m.value));
        }
        Ok(TrialRun {
            stdout: report.log.clone(),
            stderr: String::new(),
            wall,
            usage: Usage { user: u1 - u0, system: s1 - s0, max_rss_kib: rss },
            values: report.measurements.iter().map(|m| (m.result.clone(), m.value)).collect(),
            log,
            log_text: text,
        })
    }

    fn teardown(&mut self, _env: &TestEnv<'_>) -> Result<(), ExecError> {
        self.workload = None;
        Ok(())
    }
}
