//! Running one command: its own process group, output to files, a timeout
//! that kills the whole group, and resource usage from `wait4`.

use super::interrupt;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    Interrupted,
}

/// As a log shows it: `0`, `signal 9 (SIGKILL)`, `timed out`, `interrupted`
/// (the signals a trial's death names most often).
impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "{c}"),
            Exit::Signal(s) => {
                let name = match *s {
                    libc::SIGINT => " (SIGINT)",
                    libc::SIGKILL => " (SIGKILL)",
                    libc::SIGSEGV => " (SIGSEGV)",
                    libc::SIGTERM => " (SIGTERM)",
                    libc::SIGABRT => " (SIGABRT)",
                    libc::SIGBUS => " (SIGBUS)",
                    libc::SIGSYS => " (SIGSYS)",
                    _ => "",
                };
                write!(f, "signal {s}{name}")
            }
            Exit::TimedOut => f.write_str("timed out"),
            Exit::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

/// CPU time and peak memory of the command (and the children it waited for).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub user: Duration,
    pub system: Duration,
    pub max_rss_kib: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct Finished {
    pub exit: Exit,
    pub wall: Duration,
    pub usage: Usage,
    /// What the confined command's whole tree used (its cgroup).
    pub cgroup: Option<super::cgroup::Usage>,
}

/// How a command is confined (see [`super::confine`]).
#[derive(Clone, Copy)]
pub struct Confined<'a> {
    pub plan: &'a super::confine::Plan,
    pub shared: &'a super::confine::Shared,
    /// Where its cgroup is made (none: no cgroup).
    pub cgroups: Option<&'a super::cgroup::Layout>,
    pub limits: super::cgroup::Limits,
    /// Largest file it may write (RLIMIT_FSIZE).
    pub file_size: Option<u64>,
}

impl Confined<'_> {
    /// A cgroup for one command, and the `cgroup.procs` files it joins.
    pub fn cgroup(&self) -> std::io::Result<(Option<super::cgroup::Cgroup>, Vec<OwnedFd>)> {
        match self.cgroups {
            Some(l) => {
                let g = super::cgroup::Cgroup::create(l, &self.limits)?;
                let fds = g.procs()?;
                Ok((Some(g), fds))
            }
            None => Ok((None, Vec::new())),
        }
    }

    /// `cmd` confined: run in `cwd` as root inside or, with `unprivileged`,
    /// as nobody inside; `stdin` opened inside with its rights; in the
    /// cgroup whose `cgroup.procs` files are `procs`; with only the
    /// environment the sandbox allows. Returns what becomes readable when
    /// the command has ended (see `confine::Prepared::apply`).
    pub fn apply(
        &self,
        cmd: &mut Command,
        cwd: &Path,
        unprivileged: bool,
        stdin: Option<&Path>,
        procs: Vec<OwnedFd>,
    ) -> std::io::Result<OwnedFd> {
        use super::confine::{Identity, Prepared};
        let identity = if unprivileged { Identity::Nobody } else { Identity::Root };
        let c = super::confine::Command { cwd, identity, stdin, file_size: self.file_size };
        let p = Prepared::new(self.plan, self.shared, procs, c).map_err(std::io::Error::other)?;
        p.apply(cmd)
    }
}

/// Whether engine's variable `name` reaches a confined command (and may be
/// recorded for a shared profile): the locale, the terminal, the time zone,
/// the search path and the compiler settings a build honours.
pub fn sandbox_variable(name: &str) -> bool {
    const KEEP: [&str; 11] =
        ["PATH", "LANG", "LANGUAGE", "TERM", "TZ", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS"];
    KEEP.contains(&name) || name.starts_with("LC_")
}

/// The environment a confined command gets: these variables of engine's
/// (the locale, the terminal, the time zone, the search path and the
/// compiler settings a build honours) and nothing else of the user's —
/// tokens and keys stay out — then the profile's own, then `HOME` set to
/// its working directory.
pub fn confined_environment(env: &[(String, String)], cwd: &Path) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut out: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        std::env::vars_os().filter(|(k, _)| k.to_str().is_some_and(sandbox_variable)).collect();
    out.retain(|(k, _)| !env.iter().any(|(e, _)| k == e.as_str()));
    out.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    out.retain(|(k, _)| k != "HOME");
    out.push(("HOME".into(), cwd.as_os_str().to_os_string()));
    out
}

/// What to run.
pub struct Spec<'a> {
    pub program: &'a OsStr,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: &'a Path,
    pub stdin: Option<File>,
    pub stdout: File,
    pub stderr: File,
    pub timeout: Option<Duration>,
    /// Run in a sandbox (namespaces, read-only root, its own cgroup).
    pub confine: Option<Confined<'a>>,
    /// A confined command's standard input: a file it opens itself,
    /// with its own rights, inside its sandbox.
    pub stdin_inside: Option<&'a Path>,
}

/// Grace period between SIGTERM and SIGKILL at a timeout.
const GRACE: Duration = Duration::from_secs(2);
/// The same after Ctrl-C or SIGTERM to engine: the person is waiting, and
/// the run must end within a second whatever the command does.
const GRACE_INTERRUPTED: Duration = Duration::from_millis(500);

fn grace(why: Exit) -> Duration {
    if why == Exit::Interrupted { GRACE_INTERRUPTED } else { GRACE }
}
/// How often a waiting run looks at the interrupt flag.
const POLL: Duration = Duration::from_millis(50);

pub fn kill_group(pgid: i32, sig: i32) {
    // SAFETY: plain syscall; a negative pid names the process group.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// CPU time and peak memory of this process (`libc::RUSAGE_SELF`) or of the
/// calling thread (`libc::RUSAGE_THREAD`) so far.
pub fn usage_now(who: i32) -> Usage {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to our own rusage.
    unsafe { libc::getrusage(who, &mut ru) };
    Usage { user: tv(ru.ru_utime), system: tv(ru.ru_stime), max_rss_kib: ru.ru_maxrss.max(0) as u64 }
}

/// CPU time (user, system) of this process and the children it has waited
/// for: with an in-process workload or a spawned one alike, the difference
/// across a trial is what the trial cost.
pub fn cpu_with_children() -> (Duration, Duration) {
    let (s, c) = (usage_now(libc::RUSAGE_SELF), usage_now(libc::RUSAGE_CHILDREN));
    (s.user + c.user, s.system + c.system)
}

fn tv(t: libc::timeval) -> Duration {
    Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000)
}

/// An in-memory file for a child's output: no file-system work per trial.
pub fn memfile(name: &str) -> std::io::Result<File> {
    let c = std::ffi::CString::new(name).map_err(std::io::Error::other)?;
    // SAFETY: valid C string; a non-negative result is a new descriptor we own.
    let fd = unsafe { libc::memfd_create(c.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        // No memfd (old kernel, seccomp): an unnamed temporary file instead.
        return tempfile::tempfile();
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// /dev/null opened once (read-only, close-on-exec), for children's stdin.
fn dev_null() -> std::io::Result<std::os::fd::RawFd> {
    static NULL: std::sync::OnceLock<File> = std::sync::OnceLock::new();
    if let Some(f) = NULL.get() {
        return Ok(f.as_raw_fd());
    }
    let f = File::open("/dev/null")?;
    Ok(NULL.get_or_init(|| f).as_raw_fd())
}

/// Runs `spec` to completion, timeout or interrupt.
pub fn run(spec: Spec<'_>) -> std::io::Result<Finished> {
    run_as(spec, None)
}

/// Runs `spec` as `user` (see [`super::privilege`]), or as engine's user.
pub fn run_as(spec: Spec<'_>, user: Option<super::privilege::Unprivileged>) -> std::io::Result<Finished> {
    let stdin = match &spec.stdin {
        Some(f) => f.as_raw_fd(),
        None => dev_null()?,
    };
    let (mut group, mut ended) = (None, None);
    let (start, pid) = match (&spec.confine, user) {
        (Some(c), user) => {
            let (g, procs) = c.cgroup()?;
            group = g;
            let mut cmd = command(&spec)?;
            ended = Some(c.apply(&mut cmd, spec.cwd, user.is_some(), spec.stdin_inside, procs)?);
            // spawn returns when the command execs (the sandbox's other
            // processes hold no copy of std's exec pipe): the clock starts
            // there, so the sandbox's set-up — joining the cgroups (a
            // migration can wait a grace period of RCU, 15 ms here), the
            // mounts, the filter — is engine's time, not the trial's; it
            // stops when the namespace's init has reaped the command
            // (`ended`), before the namespaces are torn down.
            let pid = cmd.spawn()?.id() as i32;
            (Instant::now(), pid)
        }
        // The common case without fork (see super::spawn), prepared before the clock starts.
        (None, None) => {
            let fds = [stdin, spec.stdout.as_raw_fd(), spec.stderr.as_raw_fd()];
            let launch = super::spawn::Launch::new(spec.program, spec.args, spec.env, spec.cwd, fds)?;
            (Instant::now(), launch.start()?)
        }
        (None, Some(u)) => spawn_as(&spec, u)?,
    };
    interrupt::set_child(pid);
    let timeout = spec.timeout;
    let (status, ru, end, forced) = match pidfd_open(pid) {
        Some(fd) => wait_pidfd(pid, &fd, ended.as_ref(), start, timeout, [&spec.stdout, &spec.stderr]),
        None => wait_thread(pid, start, timeout),
    };
    // Leave no stray members of the group behind (PTS's hung children).
    kill_group(pid, libc::SIGKILL);
    interrupt::set_child(0);
    // The cgroup reaches what left the group (and what a PID namespace holds).
    let cgroup = group.map(|g| {
        let u = g.usage();
        g.remove();
        u
    });
    let exit = forced.unwrap_or(if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(-1)
    });
    Ok(Finished {
        exit,
        wall: end - start,
        usage: Usage { user: tv(ru.ru_utime), system: tv(ru.ru_stime), max_rss_kib: ru.ru_maxrss.max(0) as u64 },
        cgroup,
    })
}

/// `spec` as std's `Command`: its own session, its files.
fn command(spec: &Spec<'_>) -> std::io::Result<Command> {
    let mut cmd = Command::new(spec.program);
    own_session(&mut cmd);
    if spec.confine.is_some() {
        cmd.env_clear().envs(confined_environment(spec.env, spec.cwd));
    } else {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    }
    cmd.args(spec.args)
        .current_dir(spec.cwd)
        .stdin(spec.stdin.as_ref().map(|f| f.try_clone()).transpose()?.map(Stdio::from).unwrap_or_else(Stdio::null))
        .stdout(spec.stdout.try_clone()?)
        .stderr(spec.stderr.try_clone()?);
    Ok(cmd)
}

/// `spec` started as `user`: std's `Command` with hooks between fork and
/// exec (dropping privileges, and the parent-death signal of
/// super::spawn).
fn spawn_as(spec: &Spec<'_>, user: super::privilege::Unprivileged) -> std::io::Result<(Instant, i32)> {
    let mut cmd = command(spec)?;
    user.apply(&mut cmd);
    // A trial does not outlive engine: after a kill -9 of engine its tool
    // is killed too, not left running.
    dies_with_engine(&mut cmd);
    let start = Instant::now();
    Ok((start, cmd.spawn()?.id() as i32))
}

/// `cmd` starts in a session of its own (`setsid`), which also makes it the
/// leader of its own process group: it has no controlling terminal, so it
/// cannot open `/dev/tty`, push input into the user's terminal (TIOCSTI),
/// take its foreground (`tcsetpgrp`) or receive the user's Ctrl-C — that
/// reaches engine alone, which stops the group. Register it before any
/// other `pre_exec` hook (a sandbox's forks inherit the session).
pub fn own_session(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid and close_range are async-signal-safe and allocate nothing.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            super::spawn::no_inherited_descriptors();
            Ok(())
        })
    }
}

/// `cmd` is killed with engine (the kernel's parent-death signal): a trial's
/// tool is not left running after a kill -9 of engine, and a system-state
/// command (mkfs, mount, losetup) cannot finish behind `engine recover`'s back.
pub fn dies_with_engine(cmd: &mut Command) -> &mut Command {
    signalled_when_engine_dies(cmd, libc::SIGKILL)
}

/// `cmd` gets `signal` when engine dies (a server its stop signal: it may
/// stop cleanly, and `engine recover` removes its data).
pub fn signalled_when_engine_dies(cmd: &mut Command, signal: i32) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid before the fork; prctl and getppid are async-signal-safe.
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::other("engine exited"));
            }
            Ok(())
        })
    }
}

/// A wait status in words: "exited with code N", "was killed by signal N".
pub fn status_text(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exited with code {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("was killed by signal {}", libc::WTERMSIG(status))
    } else {
        "ended".to_string()
    }
}

/// Reaps child `pid` if it has exited: its wait status.
pub fn try_reap(pid: i32) -> Option<i32> {
    let mut status = 0;
    // SAFETY: waiting for a child without blocking.
    (unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid).then_some(status)
}

/// Waits up to `timeout` for `pidfd` (from [`pidfd_open`]) to say its
/// process exited; whether it did.
pub fn exited_within(pidfd: &OwnedFd, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut pfd, 1, timeout.as_millis().min(i32::MAX as u128) as i32) > 0 }
}

/// This process's process group.
pub fn own_group() -> i32 {
    // SAFETY: getpgrp cannot fail.
    unsafe { libc::getpgrp() }
}

type Reaped = (i32, libc::rusage, Instant, Option<Exit>);

pub fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: plain syscall; a non-negative result is a new file descriptor we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Reaps `pid`, which has exited or is about to; returns status and usage.
pub fn reap(pid: i32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter for wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return (status, ru);
    }
}

/// Waits on a pidfd with poll: no helper thread, and a signal (Ctrl-C)
/// wakes the wait at once. With `ended` (a confined command), the clock
/// stops when that is readable or hung up — the command reaped inside —
/// and the wait goes on for the processes outside.
fn wait_pidfd(
    pid: i32,
    fd: &OwnedFd,
    ended: Option<&OwnedFd>,
    start: Instant,
    timeout: Option<Duration>,
    outputs: [&File; 2],
) -> Reaped {
    let deadline = timeout.map(|t| start + t);
    let mut stopped: Option<Instant> = None;
    loop {
        outputs.iter().for_each(|f| super::bounded::trim_memfile(f));
        let now = Instant::now();
        let wait = match deadline {
            Some(d) if d <= now => return stop_pidfd(pid, fd, Exit::TimedOut),
            Some(d) => (d - now).min(POLL),
            None => POLL,
        };
        let watch = ended.filter(|_| stopped.is_none());
        let mut pfds = [
            libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: watch.map_or(-1, |e| e.as_raw_fd()), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: two valid pollfds (a negative descriptor is skipped).
        let r = unsafe { libc::poll(pfds.as_mut_ptr(), 2, wait.as_millis().max(1) as i32) };
        let now = Instant::now();
        if r > 0 && pfds[1].revents != 0 {
            stopped = Some(now);
        }
        if r > 0 && pfds[0].revents != 0 {
            let (status, ru) = reap(pid);
            return (status, ru, stopped.unwrap_or(now), None);
        }
        if interrupt::requested() {
            return stop_pidfd(pid, fd, Exit::Interrupted);
        }
    }
}

fn stop_pidfd(pid: i32, fd: &OwnedFd, why: Exit) -> Reaped {
    kill_group(pid, libc::SIGTERM);
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let grace_end = Instant::now() + grace(why);
    loop {
        let left = grace_end.saturating_duration_since(Instant::now());
        // A second Ctrl-C cuts the grace period short.
        if left.is_zero() || interrupt::urgent() {
            kill_group(pid, libc::SIGKILL);
            break;
        }
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut pfd, 1, left.min(POLL).as_millis().max(1) as i32) } > 0 {
            break;
        }
    }
    let (status, ru) = reap(pid);
    (status, ru, Instant::now(), Some(why))
}

/// Fallback for kernels without pidfd (before 5.3): reap on a helper thread.
fn wait_thread(pid: i32, start: Instant, timeout: Option<Duration>) -> Reaped {
    let (tx, rx) = mpsc::channel::<(i32, libc::rusage, Instant)>();
    std::thread::spawn(move || {
        let (status, ru) = reap(pid);
        let _ = tx.send((status, ru, Instant::now()));
    });
    let deadline = timeout.map(|t| start + t);
    loop {
        let now = Instant::now();
        let wait = match deadline {
            Some(d) if d <= now => {
                let (s, r, e) = stop(pid, &rx, GRACE);
                return (s, r, e, Some(Exit::TimedOut));
            }
            Some(d) => (d - now).min(POLL),
            None => POLL,
        };
        match rx.recv_timeout(wait) {
            Ok((s, r, e)) => return (s, r, e, None),
            Err(mpsc::RecvTimeoutError::Timeout) if interrupt::requested() => {
                let (s, r, e) = stop(pid, &rx, GRACE_INTERRUPTED);
                return (s, r, e, Some(Exit::Interrupted));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // SAFETY: zeroed rusage is a valid value.
                return (0, unsafe { std::mem::zeroed() }, Instant::now(), Some(Exit::Code(-1)));
            }
        }
    }
}

/// SIGTERM to the group, then SIGKILL after the grace period.
fn stop(pid: i32, rx: &mpsc::Receiver<(i32, libc::rusage, Instant)>, grace: Duration) -> (i32, libc::rusage, Instant) {
    kill_group(pid, libc::SIGTERM);
    if let Ok(done) = rx.recv_timeout(grace) {
        return done;
    }
    kill_group(pid, libc::SIGKILL);
    rx.recv().unwrap_or_else(|_| {
        // SAFETY: zeroed rusage is a valid value.
        (0, unsafe { std::mem::zeroed() }, Instant::now())
    })
}

/// Raises this process's limit of open files to `want` (or its hard limit,
/// if lower); returns the limit now. A server holds a descriptor per
/// connection, and the usual soft limit (1024) is below what it accepts.
pub fn raise_open_files(want: u64) -> u64 {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 0;
    }
    let target = want.min(lim.rlim_max);
    if lim.rlim_cur < target {
        let raised = libc::rlimit { rlim_cur: target, rlim_max: lim.rlim_max };
        // SAFETY: a valid pointer to a limit within the hard one.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return target;
        }
    }
    lim.rlim_cur
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(dir: &'a Path, program: &'a str, args: &'a [String], timeout: Option<Duration>) -> Spec<'a> {
        Spec {
            program: OsStr::new(program),
            args,
            env: &[],
            cwd: dir,
            stdin: None,
            stdout: File::create(dir.join("out")).unwrap(),
            stderr: File::create(dir.join("err")).unwrap(),
            timeout,
            confine: None,
            stdin_inside: None,
        }
    }

    #[test]
    fn exit_codes_and_output() {
        let d = tempfile::tempdir().unwrap();
        let args = vec!["-c".to_string(), "echo hi; echo oops >&2; exit 3".to_string()];
        let f = run(spec(d.path(), "sh", &args, None)).unwrap();
        assert_eq!(f.exit, Exit::Code(3));
        assert_eq!(std::fs::read_to_string(d.path().join("out")).unwrap(), "hi\n");
        assert_eq!(std::fs::read_to_string(d.path().join("err")).unwrap(), "oops\n");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let d = tempfile::tempdir().unwrap();
        // The background sleep would outlive a kill of `sh` alone.
        let marker = d.path().join("survivor");
        let script = format!("(sleep 3; touch {}) & sleep 30", marker.display());
        let args = vec!["-c".to_string(), script];
        let t0 = Instant::now();
        let f = run(spec(d.path(), "sh", &args, Some(Duration::from_millis(300)))).unwrap();
        assert_eq!(f.exit, Exit::TimedOut);
        assert!(t0.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(3500));
        assert!(!marker.exists(), "a member of the group survived the timeout");
    }

    #[test]
    fn missing_program_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        assert!(run(spec(d.path(), "/nonexistent/prog", &[], None)).is_err());
    }
}
