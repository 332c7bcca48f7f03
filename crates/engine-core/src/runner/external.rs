//! The `external` executor: a program on the system, run in the scratch
//! directory in its own process group, stdout and stderr logged per trial.

use super::executor::{ExecError, Executor, Span, TestEnv, TrialEnv, TrialRun};
use super::sandbox::{Config, Sandbox};
use super::server::{self, Server};
use crate::model::profile::LoadedProfile;
use crate::model::profile::{ExternalExecutor, ServerDef, Step};
use crate::model::template;
use crate::state::server::Servers;
use crate::sys::privilege::{self, Unprivileged};
use crate::sys::process::{self, Exit, Finished};
use crate::units;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

const STEP_TIMEOUT: Duration = Duration::from_secs(600);

pub struct External<'a> {
    def: ExternalExecutor,
    /// In-memory files for stdout and stderr, reused across trials, and
    /// whether the last trial wrote to each.
    capture: Option<[(File, bool); 2]>,
    /// Directories added to PATH for every command (where a requirement's
    /// program was found off PATH).
    extra_path: Vec<std::path::PathBuf>,
    /// Who `unprivileged` steps run as (when engine is root).
    user: Option<Unprivileged>,
    /// Servers started by `pre_test` steps (stopped after `post_test`) and
    /// by `pre_trial` steps (stopped after `post_trial`).
    test_servers: Vec<Server>,
    trial_servers: Vec<Server>,
    /// What the test's step and server logs may still take.
    logs: crate::sys::bounded::LogBudget,
    /// The journal servers are recorded in before they start.
    servers: &'a Servers,
    /// The PATH engine was started with, which `extra_path` extends.
    path: Option<&'a str>,
    /// Run confined: the settings and the profile (the sandbox is made at setup).
    confine: Option<(&'a Config, std::sync::Arc<LoadedProfile>)>,
    sandbox: Option<Sandbox>,
}

/// Which scope a server a step starts belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Test,
    Trial,
    /// Steps after the trial or test: no server may start there.
    None,
}

impl<'a> External<'a> {
    pub(crate) fn new(def: ExternalExecutor, servers: &'a Servers) -> Self {
        External {
            def,
            capture: None,
            extra_path: Vec::new(),
            user: None,
            test_servers: Vec::new(),
            trial_servers: Vec::new(),
            logs: crate::sys::bounded::LogBudget::test(),
            servers,
            path: None,
            confine: None,
            sandbox: None,
        }
    }

    /// Runs every command of the test confined (see [`super::sandbox`]).
    pub(crate) fn confined(mut self, cfg: &'a Config, profile: std::sync::Arc<LoadedProfile>) -> Self {
        self.confine = Some((cfg, profile));
        self
    }

    /// Adds `dirs` to the PATH of every command this executor runs.
    pub(crate) fn with_extra_path(mut self, path: Option<&'a str>, dirs: Vec<std::path::PathBuf>) -> Self {
        self.path = path;
        self.extra_path = dirs;
        self
    }

    /// Whether some step or server asks to run unprivileged.
    fn wants_unprivileged(&self) -> bool {
        let d = &self.def;
        [&d.pre_test, &d.pre_trial, &d.post_trial, &d.post_test].iter().any(|l| l.iter().any(|s| s.unprivileged))
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

    /// What the last trial wrote to stdout (0) or stderr (1), as bounded text.
    fn captured(&mut self, which: usize) -> std::io::Result<String> {
        let Some(c) = self.capture.as_mut() else { return Ok(String::new()) };
        c[which].1 = c[which].0.metadata()?.len() > 0;
        crate::sys::bounded::read(&c[which].0, crate::sys::bounded::STREAM)
    }
}

/// Where steps and the program run: the bindings, the working directory, the log folder.
#[derive(Clone, Copy)]
struct Place<'a> {
    bindings: &'a indexmap::IndexMap<String, String>,
    cwd: &'a Path,
    logs: &'a Path,
    /// The test's directory, held open.
    test: &'a crate::sys::safepath::Dir,
    /// A measured trial's scratch directory, held open, and how often the
    /// program's own interval logs are written (under monitors).
    intervals: Option<(&'a crate::sys::safepath::Dir, std::time::Duration)>,
}

impl<'a> From<&'a TestEnv<'a>> for Place<'a> {
    fn from(e: &'a TestEnv<'a>) -> Self {
        Place { bindings: e.bindings, cwd: e.test_dir, logs: e.logs, test: e.dir, intervals: None }
    }
}

impl<'a> From<&'a TrialEnv<'a>> for Place<'a> {
    fn from(e: &'a TrialEnv<'a>) -> Self {
        Place {
            bindings: e.bindings,
            cwd: e.scratch,
            logs: e.logs,
            test: e.test,
            intervals: e.interval.map(|every| (e.dir, every)),
        }
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

impl External<'_> {
    fn run_steps(
        &mut self,
        which: &'static str,
        steps: &[Step],
        env: Place<'_>,
        log_name: &str,
        scope: Scope,
    ) -> Result<(), ExecError> {
        if steps.is_empty() {
            return Ok(());
        }
        let log = env.logs.join(log_name);
        for (i, step) in steps.iter().enumerate() {
            if let Some(def) = &step.server {
                let wrap = |cause| ExecError::Step { step: which, index: i + 1, cause: Box::new(cause) };
                if scope == Scope::None {
                    return Err(wrap(ExecError::Setup(format!("server {} cannot start in {which}", def.name))));
                }
                let s = self.start_server(def, step, env).map_err(wrap)?;
                match scope {
                    Scope::Test => self.test_servers.push(s),
                    _ => self.trial_servers.push(s),
                }
                continue;
            }
            let (program, args) = match (&step.program, &step.shell) {
                (Some(p), _) => (fill(p, env, false)?, fill_args(&step.args, env)?),
                (None, Some(sh)) => ("/bin/sh".to_string(), vec!["-c".to_string(), fill(sh, env, true)?]),
                (None, None) => return Err(ExecError::Setup(format!("{which} step {} has nothing to run", i + 1))),
            };
            let timeout = step.timeout.as_ref().map_or(STEP_TIMEOUT, units::Duration::get);
            let mut f = crate::sys::fs::append(&log).map_err(io(format!("cannot write {}", log.display())))?;
            writeln!(f, "$ {}", command_line(&program, &args)).map_err(io("cannot write log"))?;
            let user = if step.unprivileged { self.user } else { None };
            let (out, sink) = crate::sys::bounded::sink(
                f.try_clone().map_err(io("cannot write log"))?,
                crate::sys::bounded::LOG,
                user.map(|u| (u.uid, u.gid)),
                &self.logs,
            )
            .map_err(io("cannot write log"))?;
            let err = out.try_clone().map_err(io("cannot write log"))?;
            let fin = process::run_as(
                process::Spec {
                    program: OsStr::new(&program),
                    args: &args,
                    env: &self.env(env)?,
                    cwd: env.cwd,
                    stdin: None,
                    stdout: out,
                    stderr: err,
                    timeout: Some(timeout),
                    confine: self.sandbox.as_ref().map(Sandbox::confined),
                    stdin_inside: None,
                },
                user,
            )
            .map_err(|source| ExecError::Spawn { program: short(&program), source });
            sink.finish(crate::sys::bounded::GRACE);
            let fin = fin?;
            writeln!(f, "# exit: {} after {:.3} s", fin.exit, fin.wall.as_secs_f64())
                .map_err(io("cannot write log"))?;
            outcome(&short(&program), &fin, Some(timeout), &log)
                .map_err(|e| self.explain(e, &crate::sys::fs::read_tail(&log, 64 << 10), &fin))
                .map_err(|cause| ExecError::Step { step: which, index: i + 1, cause: Box::new(cause) })?;
        }
        Ok(())
    }

    fn env(&self, env: Place<'_>) -> Result<Vec<(String, String)>, ExecError> {
        let mut out: Vec<(String, String)> = self
            .def
            .env
            .iter()
            .map(|(k, v)| Ok((k.clone(), fill(v, env, false)?)))
            .collect::<Result<_, ExecError>>()?;
        if !self.extra_path.is_empty() && !out.iter().any(|(k, _)| k == "PATH") {
            let mut dirs: Vec<std::path::PathBuf> =
                self.path.map(|p| std::env::split_paths(p).collect()).unwrap_or_default();
            dirs.extend(self.extra_path.iter().cloned());
            if let Ok(p) = std::env::join_paths(dirs) {
                out.push(("PATH".into(), p.to_string_lossy().into_owned()));
            }
        }
        Ok(out)
    }

    /// Starts the server of a step and waits until it is ready.
    fn start_server(&self, def: &ServerDef, step: &Step, env: Place<'_>) -> Result<Server, ExecError> {
        let program = fill(&def.program, env, false)?;
        let args = fill_args(&def.args, env)?;
        let mut envs = self.env(env)?;
        for (k, v) in &def.env {
            envs.push((k.clone(), fill(v, env, false)?));
        }
        let duration = |s: &Option<units::Duration>, default| s.as_ref().map_or(default, units::Duration::get);
        let signal = match &def.stop_signal {
            Some(s) => crate::sys::proc::signal_by_name(s)
                .ok_or_else(|| ExecError::Setup(format!("server {}: unknown stop_signal `{s}`", def.name)))?,
            None => libc::SIGTERM,
        };
        let mut remove = Vec::new();
        for r in &def.remove {
            let p = std::path::PathBuf::from(fill(r, env, false)?);
            // Engine (and recover) delete these as root, through the test's
            // directory descriptor: never anything outside it.
            let rel = env.test.relative(&p).ok().filter(|r| !r.as_os_str().is_empty()).ok_or_else(|| {
                ExecError::Setup(format!(
                    "server {}: `remove` path {} is not inside the test's directory {}",
                    def.name,
                    p.display(),
                    env.test.path().display()
                ))
            })?;
            remove.push(rel);
        }
        let tcp = match &def.ready.tcp {
            Some(t) => {
                let t = fill(t, env, false)?;
                let port = t.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()).ok_or_else(|| {
                    ExecError::Setup(format!("server {}: ready.tcp `{t}` is not a port on 127.0.0.1", def.name))
                })?;
                Some(port)
            }
            None => None,
        };
        let ready = server::Ready {
            socket: def.ready.socket.as_ref().map(|s| fill(s, env, false).map(std::path::PathBuf::from)).transpose()?,
            tcp,
            command: fill_args(&def.ready.command, env)?,
        };
        Server::start(server::Spec {
            name: &def.name,
            program: &program,
            args: &args,
            env: &envs,
            cwd: env.cwd,
            log: env.logs.join(format!("server-{}.log", def.name)),
            user: if step.unprivileged { self.user } else { None },
            ready,
            ready_timeout: duration(&step.timeout, server::READY_TIMEOUT),
            signal,
            stop_timeout: duration(&def.stop_timeout, server::STOP_TIMEOUT),
            remove,
            journal: self.servers,
            logs: &self.logs,
            sandbox: self.sandbox.as_ref(),
            test_dir: env.test,
        })
    }

    /// Stops `servers` (all of them, whatever fails); the first error.
    fn stop_servers(servers: &mut Vec<Server>) -> Result<(), ExecError> {
        let mut first = Ok(());
        // After Ctrl-C order does not matter: every server is asked at once.
        if crate::sys::interrupt::requested() {
            servers.iter_mut().for_each(Server::ask_to_stop);
        }
        // Newest first: a server may depend on one started before it.
        while let Some(s) = servers.pop() {
            if let Err(e) = s.stop()
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }

    /// Fails when a server of the test died.
    fn check_servers(&mut self) -> Result<(), ExecError> {
        for s in self.test_servers.iter_mut().chain(self.trial_servers.iter_mut()) {
            s.check_alive()?;
        }
        Ok(())
    }

    /// Hands `dir` (held open: never a path a command could have swapped)
    /// to the sandbox's user, or to the unprivileged user when a step
    /// needs it.
    fn hand_over(&self, dir: &crate::sys::safepath::Dir) -> Result<(), ExecError> {
        let what = || format!("cannot hand {} to the test's user", dir.path().display());
        match (&self.sandbox, self.user) {
            (Some(sb), _) => sb.hand_over(dir).map_err(io(what())),
            (None, Some(u)) => dir.chown(u.uid, u.gid).map_err(io(what())),
            (None, None) => Ok(()),
        }
    }

    /// A confined command's failure, with what the sandbox most likely denied it.
    fn explain(&self, e: ExecError, stderr: &str, fin: &Finished) -> ExecError {
        let Some(sb) = &self.sandbox else { return e };
        match sb.denied(stderr, fin) {
            Some(denied) => ExecError::Denied { cause: Box::new(e), denied },
            None => e,
        }
    }

    /// The trial's time limit: the profile's; a confined command without
    /// one gets the sandbox's default (a shared profile's is checked
    /// against it before the run).
    fn timeout(&self) -> Option<Duration> {
        let own = self.def.timeout.as_ref().map(units::Duration::get);
        own.or_else(|| self.confine.as_ref().map(|(cfg, _)| cfg.defaults.time))
    }

    /// A command that could not start: with what its sandbox's set-up said
    /// on its standard error (the only way out of a child before exec).
    fn setup_failure(&mut self, program: String, source: std::io::Error) -> ExecError {
        let said = self.captured(1).unwrap_or_default();
        match said.lines().rev().find(|l| l.starts_with("engine sandbox: ")) {
            Some(l) => {
                ExecError::Spawn { program, source: std::io::Error::new(source.kind(), format!("{source} ({l})")) }
            }
            None => ExecError::Spawn { program, source },
        }
    }

    /// The test's declared free space, for the sandbox's scratch limit.
    fn space(env: &TestEnv<'_>, p: &LoadedProfile) -> Result<Option<u64>, ExecError> {
        let Some(s) = &p.profile.requirements.free_space else { return Ok(None) };
        let s = fill(s, Place::from(env), false)?;
        units::parse_size_expr(&s).map(Some).map_err(|e| ExecError::Setup(format!("requirements.free_space: {e}")))
    }
}

impl Executor for External<'_> {
    fn setup(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError> {
        // A set-up after the first (`--setups`): the previous sandbox goes
        // before the next is made (both use the folder beside the test's).
        self.sandbox = None;
        if let Some((cfg, profile)) = &self.confine {
            let install = env.bindings.get("install_dir").map(std::path::PathBuf::from).unwrap_or_default();
            let space = Self::space(env, profile)?;
            self.sandbox = Some(Sandbox::new(cfg, profile, env.dir, &install, space, self.wants_unprivileged())?);
        }
        if self.wants_unprivileged() {
            self.user = privilege::when_root().map_err(|e| ExecError::Setup(e.to_string()))?;
            self.hand_over(env.dir)?;
        }
        let steps = self.def.pre_test.clone();
        self.run_steps("pre_test", &steps, env.into(), "pre_test.log", Scope::Test)
    }

    fn trial(&mut self, env: &TrialEnv<'_>) -> Result<TrialRun, ExecError> {
        let place: Place<'_> = env.into();
        let label = env.label;
        self.hand_over(env.dir)?;
        let steps = self.def.pre_trial.clone();
        let run = match self.run_steps("pre_trial", &steps, place, &format!("pre_trial-{label}.log"), Scope::Trial) {
            Ok(()) => self.run_program(place, label, env.span),
            Err(e) => Err(e),
        };
        // After every trial, also a failed one; a failing post_trial step
        // fails a trial that went well.
        let steps = self.def.post_trial.clone();
        let post = self.run_steps("post_trial", &steps, place, &format!("post_trial-{label}.log"), Scope::None);
        // A server that died explains a failed trial better than the
        // client's complaint about it.
        let alive = self.check_servers();
        let stopped = Self::stop_servers(&mut self.trial_servers);
        if matches!(run, Err(ExecError::Interrupted)) {
            return run;
        }
        alive?;
        let run = run?;
        post?;
        stopped?;
        Ok(run)
    }

    fn teardown(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError> {
        let steps = self.def.post_test.clone();
        let post = self.run_steps("post_test", &steps, env.into(), "post_test.log", Scope::None);
        let trial = Self::stop_servers(&mut self.trial_servers);
        let test = Self::stop_servers(&mut self.test_servers);
        post?;
        trial?;
        test
    }
}

impl External<'_> {
    fn run_program(&mut self, env: Place<'_>, label: &str, span: &dyn Span) -> Result<TrialRun, ExecError> {
        let program = fill(&self.def.program, env, false)?;
        let mut args = fill_args(&self.def.args, env)?;
        let logs = env.intervals.filter(|_| self.def.interval_logs.is_some());
        if let Some((_, every)) = logs {
            args.extend(crate::parse::fio_log::args(every));
        }
        let envs = self.env(env)?;
        let stdin_path = self.def.stdin.as_ref().map(|s| fill(s, env, false).map(|f| env.cwd.join(f))).transpose()?;
        // A confined command opens it itself, with its own rights, inside its
        // sandbox: a link it planted leads only where it could go anyway.
        let stdin = match (&stdin_path, &self.sandbox) {
            (Some(p), None) => {
                Some(crate::sys::fs::open_regular(p).map_err(io(format!("cannot open stdin file {}", p.display())))?)
            }
            _ => None,
        };
        let stdin_inside = stdin_path.as_deref().filter(|_| self.sandbox.is_some());
        let log = env.logs.join(format!("trial-{label}.log"));
        let (out, err) = self.capture().map_err(io("cannot capture output"))?;
        let timeout = self.timeout();
        let servers = self.servers_cpu();
        span.begin();
        let origin = std::time::Instant::now();
        let fin = process::run(process::Spec {
            program: OsStr::new(&program),
            args: &args,
            env: &envs,
            cwd: env.cwd,
            stdin,
            stdout: out,
            stderr: err,
            timeout,
            confine: self.sandbox.as_ref().map(Sandbox::confined),
            stdin_inside,
        })
        .map_err(|source| ExecError::Spawn { program: short(&program), source });
        span.end();
        let (u1, s1) = self.servers_cpu();
        let servers = (u1.saturating_sub(servers.0), s1.saturating_sub(servers.1));
        let fin = match fin {
            Ok(f) => f,
            Err(ExecError::Spawn { program, source }) => return Err(self.setup_failure(program, source)),
            Err(e) => return Err(e),
        };
        let stdout = self.captured(0).map_err(io("cannot read output"))?;
        let stderr = self.captured(1).map_err(io("cannot read output"))?;
        let log_text = log_text(&program, &args, env.cwd, &fin, &stdout, &stderr);
        if let Err(e) = outcome(&short(&program), &fin, timeout, &log).map_err(|e| self.explain(e, &stderr, &fin)) {
            // A failed trial's log must exist when the message names it.
            crate::sys::fs::write_new(&log, log_text.as_bytes())
                .map_err(io(format!("cannot write {}", log.display())))?;
            return Err(e);
        }
        Ok(TrialRun {
            stdout,
            stderr,
            wall: fin.wall,
            usage: fin.usage,
            values: Vec::new(),
            log,
            log_text,
            cgroup: fin.cgroup,
            intervals: logs.map(|(dir, every)| crate::parse::fio_log::read(dir, origin, every)),
            servers,
        })
    }

    /// CPU time (user, system) the running servers have taken so far.
    fn servers_cpu(&self) -> (Duration, Duration) {
        // One pass over /proc for all of them.
        let groups: Vec<i32> = self.test_servers.iter().chain(&self.trial_servers).filter_map(Server::group).collect();
        crate::sys::proc::group_cpu(&groups)
    }
}

/// The text of a trial's log: command, exit, resources, stdout, stderr.
fn log_text(program: &str, args: &[String], cwd: &Path, fin: &Finished, stdout: &str, stderr: &str) -> String {
    let mut text = format!(
        "{}# exit: {} after {:.6} s (user {:.3} s, system {:.3} s, max RSS {} KiB)\n",
        super::trial_log::header(&command_line(program, args), cwd),
        fin.exit,
        fin.wall.as_secs_f64(),
        fin.usage.user.as_secs_f64(),
        fin.usage.system.as_secs_f64(),
        fin.usage.max_rss_kib,
    );
    // One allocation of the streams' size (they are up to 16 MiB).
    text.reserve(stdout.len() + stderr.len() + 40);
    super::trial_log::write_streams(&mut text, stdout, stderr);
    text
}
