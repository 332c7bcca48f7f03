//! The `external` executor: a program on the system, run in the scratch
//! directory in its own process group, stdout and stderr logged per trial.

use super::executor::{ExecError, Executor, TestEnv, TrialEnv, TrialRun};
use super::process::{self, Exit, Finished};
use crate::profile::model::{ExternalExecutor, Step};
use crate::profile::template;
use crate::units;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

const STEP_TIMEOUT: Duration = Duration::from_secs(600);

pub struct External {
    def: ExternalExecutor,
    /// In-memory files for stdout and stderr, reused across trials, and
    /// whether the last trial wrote to each.
    capture: Option<[(File, bool); 2]>,
}

impl External {
    pub fn new(def: ExternalExecutor) -> Self {
        External { def, capture: None }
    }

    /// The capture files, emptied; handles to give the child.
    fn capture(&mut self) -> std::io::Result<(File, File)> {
        use std::io::{Seek, SeekFrom};
        let mut c = match self.capture.take() {
            Some(c) => c,
            None => [(process::memfile("stdout")?, false), (process::memfile("stderr")?, false)],
        };
        for (f, written) in c.iter_mut() {
            // The child shares the file offset: rewind what it advanced.
            if *written {
                f.set_len(0)?;
                f.seek(SeekFrom::Start(0))?;
                *written = false;
            }
        }
        let pair = (c[0].0.try_clone()?, c[1].0.try_clone()?);
        self.capture = Some(c);
        Ok(pair)
    }

    /// What the last trial wrote to stdout (0) or stderr (1).
    fn captured(&mut self, which: usize) -> std::io::Result<Vec<u8>> {
        let Some(c) = self.capture.as_mut() else { return Ok(Vec::new()) };
        let bytes = process::read_back(&mut c[which].0)?;
        c[which].1 = !bytes.is_empty();
        Ok(bytes)
    }
}

/// Where steps and the program run: the bindings, the working directory, the log folder.
#[derive(Clone, Copy)]
struct Place<'a> {
    bindings: &'a indexmap::IndexMap<String, String>,
    cwd: &'a Path,
    logs: &'a Path,
}

impl<'a> From<&'a TestEnv<'a>> for Place<'a> {
    fn from(e: &'a TestEnv<'a>) -> Self {
        Place { bindings: e.bindings, cwd: e.test_dir, logs: e.logs }
    }
}

impl<'a> From<&'a TrialEnv<'a>> for Place<'a> {
    fn from(e: &'a TrialEnv<'a>) -> Self {
        Place { bindings: e.bindings, cwd: e.scratch, logs: e.logs }
    }
}

fn fill(s: &str, env: Place<'_>, shell: bool) -> Result<String, ExecError> {
    template::render(s, |n| env.bindings.get(n).map(String::as_str), shell).map_err(|e| ExecError::Setup(e.to_string()))
}

fn fill_args(args: &[String], env: Place<'_>) -> Result<Vec<String>, ExecError> {
    template::render_args(args, |n| env.bindings.get(n).map(String::as_str))
        .map_err(|e| ExecError::Setup(e.to_string()))
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ExecError {
    let what = what.into();
    move |source| ExecError::Io { what, source }
}

fn outcome(program: &str, f: &Finished, timeout: Option<Duration>, log: &Path) -> Result<(), ExecError> {
    let program = program.to_string();
    let log = log.to_path_buf();
    match f.exit {
        Exit::Code(0) => Ok(()),
        Exit::Code(code) => Err(ExecError::Exit { program, code, log }),
        Exit::Signal(signal) => Err(ExecError::Signal { program, signal, log }),
        Exit::TimedOut => Err(ExecError::Timeout {
            program,
            after: humantime::format_duration(timeout.unwrap_or_default()).to_string(),
            log,
        }),
        Exit::Interrupted => Err(ExecError::Interrupted),
    }
}

/// A printable command line.
fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program.to_string()).chain(args.iter().map(|a| template::quote(a))).collect::<Vec<_>>().join(" ")
}

/// Short program name for messages (`fio`, not `/usr/bin/fio`).
fn short(program: &str) -> String {
    Path::new(program).file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| program.to_string())
}

impl External {
    fn run_steps(&self, which: &'static str, steps: &[Step], env: Place<'_>, log_name: &str) -> Result<(), ExecError> {
        if steps.is_empty() {
            return Ok(());
        }
        let log = env.logs.join(log_name);
        for (i, step) in steps.iter().enumerate() {
            let (program, args) = match (&step.program, &step.shell) {
                (Some(p), _) => (fill(p, env, false)?, fill_args(&step.args, env)?),
                (None, Some(sh)) => ("/bin/sh".to_string(), vec!["-c".to_string(), fill(sh, env, true)?]),
                (None, None) => return Err(ExecError::Setup(format!("{which} step {} has nothing to run", i + 1))),
            };
            let timeout = match &step.timeout {
                Some(t) => units::parse_duration(t).map_err(|e| ExecError::Setup(e.to_string()))?,
                None => STEP_TIMEOUT,
            };
            let mut f = crate::fsutil::append(&log).map_err(io(format!("cannot write {}", log.display())))?;
            writeln!(f, "$ {}", command_line(&program, &args)).map_err(io("cannot write log"))?;
            let out = f.try_clone().map_err(io("cannot write log"))?;
            let err = f.try_clone().map_err(io("cannot write log"))?;
            let fin = process::run(process::Spec {
                program: OsStr::new(&program),
                args: &args,
                env: &self.env(env)?,
                cwd: env.cwd,
                stdin: None,
                stdout: out,
                stderr: err,
                timeout: Some(timeout),
            })
            .map_err(|source| ExecError::Spawn { program: short(&program), source })?;
            writeln!(f, "# exit: {:?} after {:.3} s", fin.exit, fin.wall.as_secs_f64())
                .map_err(io("cannot write log"))?;
            outcome(&short(&program), &fin, Some(timeout), &log).map_err(|cause| ExecError::Step {
                step: which,
                index: i + 1,
                cause: Box::new(cause),
            })?;
        }
        Ok(())
    }

    fn env(&self, env: Place<'_>) -> Result<Vec<(String, String)>, ExecError> {
        self.def.env.iter().map(|(k, v)| Ok((k.clone(), fill(v, env, false)?))).collect()
    }

    fn timeout(&self) -> Result<Option<Duration>, ExecError> {
        self.def.timeout.as_deref().map(units::parse_duration).transpose().map_err(|e| ExecError::Setup(e.to_string()))
    }
}

impl Executor for External {
    fn setup(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError> {
        self.run_steps("pre_test", &self.def.pre_test, env.into(), "pre_test.log")
    }

    fn trial(&mut self, env: &TrialEnv<'_>) -> Result<TrialRun, ExecError> {
        let place: Place<'_> = env.into();
        let label = env.label;
        self.run_steps("pre_trial", &self.def.pre_trial, place, &format!("pre_trial-{label}.log"))?;
        let run = self.run_program(place, label);
        // After every trial, also a failed one; a failing post_trial step
        // fails a trial that went well.
        let post = self.run_steps("post_trial", &self.def.post_trial, place, &format!("post_trial-{label}.log"));
        let run = run?;
        post?;
        Ok(run)
    }

    fn teardown(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError> {
        self.run_steps("post_test", &self.def.post_test, env.into(), "post_test.log")
    }
}

impl External {
    fn run_program(&mut self, env: Place<'_>, label: &str) -> Result<TrialRun, ExecError> {
        let program = fill(&self.def.program, env, false)?;
        let args = fill_args(&self.def.args, env)?;
        let envs = self.env(env)?;
        let stdin = match &self.def.stdin {
            Some(s) => {
                let p = env.cwd.join(fill(s, env, false)?);
                Some(File::open(&p).map_err(io(format!("cannot open stdin file {}", p.display())))?)
            }
            None => None,
        };
        let log = env.logs.join(format!("trial-{label}.log"));
        let (out, err) = self.capture().map_err(io("cannot capture output"))?;
        let timeout = self.timeout()?;
        let fin = process::run(process::Spec {
            program: OsStr::new(&program),
            args: &args,
            env: &envs,
            cwd: env.cwd,
            stdin,
            stdout: out,
            stderr: err,
            timeout,
        })
        .map_err(|source| ExecError::Spawn { program: short(&program), source })?;
        let stdout = String::from_utf8_lossy(&self.captured(0).map_err(io("cannot read output"))?).into_owned();
        let stderr = String::from_utf8_lossy(&self.captured(1).map_err(io("cannot read output"))?).into_owned();
        let log_text = log_text(&program, &args, env.cwd, &fin, &stdout, &stderr);
        if let Err(e) = outcome(&short(&program), &fin, timeout, &log) {
            // A failed trial's log must exist when the message names it.
            crate::fsutil::write_new(&log, log_text.as_bytes())
                .map_err(io(format!("cannot write {}", log.display())))?;
            return Err(e);
        }
        Ok(TrialRun { stdout, stderr, wall: fin.wall, usage: fin.usage, values: Vec::new(), log, log_text })
    }
}

/// The text of a trial's log: command, exit, resources, stdout, stderr.
fn log_text(program: &str, args: &[String], cwd: &Path, fin: &Finished, stdout: &str, stderr: &str) -> String {
    format!(
        "$ {}\n# cwd: {}\n# exit: {:?} after {:.6} s (user {:.3} s, system {:.3} s, max RSS {} KiB)\n--- stdout ---\n{}{}--- stderr ---\n{}",
        command_line(program, args),
        cwd.display(),
        fin.exit,
        fin.wall.as_secs_f64(),
        fin.usage.user.as_secs_f64(),
        fin.usage.system.as_secs_f64(),
        fin.usage.max_rss_kib,
        stdout,
        if stdout.is_empty() || stdout.ends_with('\n') { "" } else { "\n" },
        stderr,
    )
}
