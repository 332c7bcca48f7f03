//! Servers a test starts (a PostgreSQL cluster, nginx, Apache httpd): run in
//! the foreground in their own process group, journaled before they start
//! (so `engine recover` stops them after a `kill -9`), waited on until
//! ready, and always stopped afterwards — at the end of their scope, on a
//! failed trial, on Ctrl-C or SIGTERM, and on drop.

use super::executor::ExecError;
use crate::state::journal::{Change, Shared};
use crate::state::server::{ServerProcess, Servers};
use crate::sys::privilege::Unprivileged;
use crate::sys::safepath::Dir;
use crate::sys::{interrupt, process};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a server may take to become ready, unless the step says.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to stop before it is killed, unless it says.
pub(crate) use crate::model::profile::STOP_TIMEOUT;
const POLL: Duration = Duration::from_millis(50);
/// How long a server may take to stop after Ctrl-C before it is killed.
const INTERRUPTED_GRACE: Duration = Duration::from_millis(500);

/// When a server is ready (every condition given must hold).
#[derive(Debug, Clone, Default)]
pub struct Ready {
    pub socket: Option<PathBuf>,
    /// A port on 127.0.0.1 the server itself listens on.
    pub tcp: Option<u16>,
    /// A command that must succeed (program, arguments).
    pub command: Vec<String>,
}

/// Everything needed to start one server.
pub struct Spec<'a> {
    pub name: &'a str,
    pub program: &'a str,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: &'a Path,
    /// Its output goes here (`server-NAME.log` in the test's log folder).
    pub log: PathBuf,
    pub user: Option<Unprivileged>,
    pub ready: Ready,
    pub ready_timeout: Duration,
    pub signal: i32,
    pub stop_timeout: Duration,
    /// Its data, relative to the test's directory, removed once it stopped.
    pub remove: Vec<PathBuf>,
    /// The journal it is recorded in before it starts.
    pub journal: &'a Servers,
    /// What the test's logs may still take (its log is one of them).
    pub logs: &'a crate::sys::bounded::LogBudget,
    /// Run confined in the test's sandbox.
    pub sandbox: Option<&'a super::sandbox::Sandbox>,
    /// The test's directory, held open: its data is removed and its socket
    /// reached through it, never through a link a command planted.
    pub test_dir: &'a Dir,
}

/// A running server; stopped (and its data removed) by [`Server::stop`] or on drop.
pub(crate) struct Server {
    name: String,
    pid: i32,
    signal: i32,
    stop_timeout: Duration,
    remove: Vec<PathBuf>,
    /// Where `remove` is (the test's directory, held open).
    beneath: Option<Dir>,
    log: PathBuf,
    journal: Shared,
    id: u64,
    /// Reaped already (it exited, or was stopped).
    done: bool,
    /// Its cgroup when confined: what leaves its group is killed through it.
    cgroup: Option<crate::sys::cgroup::Cgroup>,
    /// When it was asked to stop (its stop timeout counts from then).
    asked: Option<Instant>,
    /// What copies its output into its log (bounded), until it stops.
    sink: Option<crate::sys::bounded::Sink>,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ExecError {
    let what = what.into();
    move |source| ExecError::Io { what, source }
}

/// The journal's record of the server `spec` starts, as process `pid` (0
/// before it runs) started at `start_ticks`.
fn journal_change(spec: &Spec<'_>, pid: i32, start_ticks: Option<u64>) -> Change {
    Change::Server(ServerProcess {
        name: spec.name.to_string(),
        pid,
        start_ticks,
        signal: spec.signal,
        remove: spec.remove.iter().map(|p| p.display().to_string()).collect(),
        beneath: Some(spec.test_dir.path().display().to_string()),
    })
}

/// The server's log, opened for appending, with its command line and
/// folder written first.
fn open_log(spec: &Spec<'_>) -> Result<File, ExecError> {
    let mut log = crate::sys::fs::append(&spec.log).map_err(io(format!("cannot write {}", spec.log.display())))?;
    let line = std::iter::once(spec.program.to_string())
        .chain(spec.args.iter().map(|a| crate::model::template::quote(a)))
        .collect::<Vec<_>>()
        .join(" ");
    let _ = write!(log, "{}{}", super::trial_log::header(&line, spec.cwd), super::trial_log::STDERR);
    Ok(log)
}

/// The server's command: its own session, output to `log`, as the
/// spec's user, and asked by the kernel to stop if engine dies.
fn command(spec: &Spec<'_>, log: &File) -> Result<std::process::Command, ExecError> {
    let mut cmd = std::process::Command::new(spec.program);
    process::own_session(&mut cmd);
    if spec.sandbox.is_some() {
        cmd.env_clear().envs(process::confined_environment(spec.env, spec.cwd));
    } else {
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    }
    cmd.args(spec.args)
        .current_dir(spec.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().map_err(io("cannot write the server log"))?)
        .stderr(log.try_clone().map_err(io("cannot write the server log"))?);
    if spec.sandbox.is_some() {
        // The sandbox switches user and sets the parent-death signal itself.
        return Ok(cmd);
    }
    if let Some(u) = spec.user {
        u.apply(&mut cmd);
    }
    // If engine dies without stopping it (kill -9), the kernel asks the
    // server to stop; `engine recover` removes its data.
    process::signalled_when_engine_dies(&mut cmd, spec.signal);
    Ok(cmd)
}

impl Server {
    /// Its process group, while it has not been reaped.
    pub(crate) fn group(&self) -> Option<i32> {
        (!self.done).then_some(self.pid)
    }

    fn fail(&self, what: String) -> ExecError {
        ExecError::Server { name: self.name.clone(), what, log: self.log.clone() }
    }

    /// Starts the server and waits until it is ready. On any failure it is
    /// stopped and its data removed before the error is returned.
    pub(crate) fn start(spec: Spec<'_>) -> Result<Server, ExecError> {
        let journal = spec
            .journal
            .journal()
            .map_err(|e| ExecError::Setup(format!("cannot journal server {}: {e}", spec.name)))?;
        // Journaled before it starts: a kill -9 from here on is recoverable.
        let id = journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(journal_change(&spec, 0, None))
            .map_err(|e| ExecError::Setup(e.to_string()))?;
        let mut server = Server {
            name: spec.name.to_string(),
            pid: 0,
            signal: spec.signal,
            stop_timeout: spec.stop_timeout,
            remove: spec.remove.clone(),
            beneath: spec.test_dir.open_dir(Path::new("")).ok(),
            log: spec.log.clone(),
            journal: journal.clone(),
            id,
            done: true,
            cgroup: None,
            asked: None,
            sink: None,
        };
        let (log, sink) = crate::sys::bounded::sink(
            open_log(&spec)?,
            crate::sys::bounded::LOG,
            spec.user.map(|u| (u.uid, u.gid)),
            spec.logs,
        )
        .map_err(io("cannot write the server log"))?;
        server.sink = Some(sink);
        let mut cmd = command(&spec, &log)?;
        if let Some(sb) = spec.sandbox {
            let c = sb.confined();
            let (g, procs) = c.cgroup().map_err(io("cannot make the server's cgroup"))?;
            server.cgroup = g;
            // A server is not timed: when it ended is not needed.
            c.apply(&mut cmd, spec.cwd, spec.user.is_some(), None, procs).map_err(io("cannot confine the server"))?;
        }
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                server.forget();
                return Err(ExecError::Spawn { program: spec.name.to_string(), source: e });
            }
        };
        server.pid = child.id() as i32;
        server.done = false;
        // The pipe's write end is the server's alone: it closes when it ends.
        drop((child, cmd, log));
        journal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .update(id, journal_change(&spec, server.pid, crate::sys::proc::start_ticks(server.pid)))
            .map_err(|e| ExecError::Setup(e.to_string()))?;
        server.wait_ready(&spec)?;
        Ok(server)
    }

    fn wait_ready(&mut self, spec: &Spec<'_>) -> Result<(), ExecError> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.try_reap() {
                let e = self.fail(format!("{} before it was ready", process::status_text(status)));
                self.stop_quietly();
                return Err(e);
            }
            if interrupt::requested() {
                self.stop_quietly();
                return Err(ExecError::Interrupted);
            }
            if self.is_ready(spec) {
                return Ok(());
            }
            if start.elapsed() >= spec.ready_timeout {
                let e = self.fail(format!(
                    "was not ready after {}",
                    humantime::format_duration(Duration::from_secs(spec.ready_timeout.as_secs()))
                ));
                self.stop_quietly();
                return Err(e);
            }
            std::thread::sleep(POLL);
        }
    }

    fn is_ready(&self, spec: &Spec<'_>) -> bool {
        let (r, cwd, env) = (&spec.ready, spec.cwd, spec.env);
        if let Some(s) = &r.socket
            && ready_socket(spec, s).is_err()
        {
            return false;
        }
        if let Some(port) = r.tcp {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
            let connect = || std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok();
            // A confined server listens in its test's network: probe it there.
            let up = match spec.sandbox {
                Some(sb) => sb.inside(connect).unwrap_or(false),
                None => connect(),
            };
            if !up {
                return false;
            }
            // Another program on the port must not pass for the server.
            if !group_listens_on(self.pid, port) {
                return false;
            }
        }
        if let Some((program, args)) = r.command.split_first() {
            let (Ok(out), Ok(err)) = (File::create("/dev/null"), File::create("/dev/null")) else { return false };
            let probe = process::run(process::Spec {
                program: std::ffi::OsStr::new(program),
                args,
                env,
                cwd,
                stdin: None,
                stdout: out,
                stderr: err,
                timeout: Some(Duration::from_secs(10)),
                confine: spec.sandbox.map(|s| s.confined()),
                stdin_inside: None,
            });
            if !probe.is_ok_and(|f| f.exit.success()) {
                return false;
            }
        }
        true
    }

    /// Reaps the server if it has exited; its wait status.
    fn try_reap(&mut self) -> Option<i32> {
        if self.done {
            return None;
        }
        let status = process::try_reap(self.pid)?;
        self.done = true;
        // Its group may hold workers that outlive it.
        process::kill_group(self.pid, libc::SIGKILL);
        Some(status)
    }

    /// Fails when the server is no longer running (it died during a trial).
    pub(crate) fn check_alive(&mut self) -> Result<(), ExecError> {
        match self.try_reap() {
            Some(status) => Err(self.fail(format!("{} while the test ran", process::status_text(status)))),
            None if self.done => Err(self.fail("is not running".into())),
            None => Ok(()),
        }
    }

    /// Stops the server (its signal, then SIGKILL after the stop timeout or
    /// at a second Ctrl-C) and removes its data.
    pub(crate) fn stop(mut self) -> Result<(), ExecError> {
        self.stop_inner()
    }

    fn stop_quietly(&mut self) {
        if let Err(e) = self.stop_inner() {
            eprintln!("engine: {}", crate::sys::text::terminal(&e.to_string()));
        }
    }

    /// Sends its stop signal now (a run stopping sends every server's at
    /// once: their grace runs side by side, not one after another).
    pub(crate) fn ask_to_stop(&mut self) {
        if !self.done && self.asked.is_none() {
            process::kill_group(self.pid, self.signal);
            self.asked = Some(Instant::now());
        }
    }

    fn stop_inner(&mut self) -> Result<(), ExecError> {
        if !self.done {
            self.ask_to_stop();
            // After Ctrl-C a server gets half a second, as a trial does.
            let grace =
                if interrupt::requested() { self.stop_timeout.min(INTERRUPTED_GRACE) } else { self.stop_timeout };
            let end = self.asked.unwrap_or_else(Instant::now) + grace;
            let fd = process::pidfd_open(self.pid);
            loop {
                if self.try_reap().is_some() {
                    break;
                }
                if Instant::now() >= end || interrupt::urgent() {
                    process::kill_group(self.pid, libc::SIGKILL);
                    // Our own child, just killed.
                    let _ = process::reap(self.pid);
                    self.done = true;
                    break;
                }
                match &fd {
                    Some(fd) => {
                        process::exited_within(fd, POLL);
                    }
                    None => std::thread::sleep(POLL),
                }
            }
            process::kill_group(self.pid, libc::SIGKILL);
            // SIGKILL is delivered asynchronously: members reparented to init
            // may still be running for a moment. Wait (bounded) until the
            // group is gone, so a stopped server no longer holds its files.
            let end = Instant::now() + Duration::from_secs(2);
            while crate::sys::proc::group_running(self.pid) && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        if let Some(g) = self.cgroup.take() {
            g.remove();
        }
        if let Some(sink) = self.sink.take() {
            sink.finish(crate::sys::bounded::GRACE);
        }
        let mut refused = None;
        for p in &self.remove {
            let r = match &self.beneath {
                Some(d) => d.remove(p),
                None => Err(std::io::Error::other("the test's directory is gone")),
            };
            match r {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // A link the test planted on the way: refused, and nothing
                // of engine's is left to undo, so the journal lets it go
                // (a refusal must not stop every later run).
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    refused.get_or_insert(ExecError::Io {
                        what: format!("refused to remove {} of server {}", p.display(), self.name),
                        source: e,
                    });
                }
                // Left in the journal for `engine recover`.
                Err(e) => {
                    return Err(ExecError::Io {
                        what: format!("cannot remove {} of server {}", p.display(), self.name),
                        source: e,
                    });
                }
            }
        }
        self.forget();
        refused.map_or(Ok(()), Err)
    }

    /// Drops the server's journal entry (nothing is left to undo).
    fn forget(&mut self) {
        let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        if j.forget(self.id).is_ok() {
            j.close();
        }
        self.remove.clear();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.done || !self.remove.is_empty() {
            self.stop_quietly();
        }
    }
}

/// Connects to a server's Unix socket: in the test's directory or, for a
/// confined server, its private /tmp — through a descriptor, never a link
/// a command planted; a local profile's server may name any socket.
fn ready_socket(spec: &Spec<'_>, s: &Path) -> std::io::Result<std::os::unix::net::UnixStream> {
    if s.starts_with(spec.test_dir.path()) {
        return spec.test_dir.connect(s);
    }
    match spec.sandbox {
        Some(sb) => {
            let rel = ["/tmp", "/var/tmp"].iter().find_map(|t| s.strip_prefix(t).ok()).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!("{} is neither in the test's directory nor in its /tmp", s.display()),
                )
            })?;
            Dir::open(sb.tmp())?.connect(rel)
        }
        None => crate::sys::safepath::connect_now(s),
    }
}

/// Whether a process of group `pgid` holds a socket listening on TCP `port`.
pub(crate) fn group_listens_on(pgid: i32, port: u16) -> bool {
    let mut inodes = Vec::new();
    // The server's own network's tables (a confined server has one of its own).
    for table in ["tcp", "tcp6"] {
        // The leader may be gone (a group outlives it): then engine's own network.
        let text = std::fs::read_to_string(format!("/proc/{pgid}/net/{table}"))
            .or_else(|_| std::fs::read_to_string(format!("/proc/net/{table}")));
        let Ok(text) = text else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            if f.len() < 10 || f[3] != "0A" {
                continue;
            }
            let local_port = f[1].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) {
                inodes.push(format!("socket:[{}]", f[9]));
            }
        }
    }
    if inodes.is_empty() {
        return false;
    }
    let Ok(rd) = std::fs::read_dir("/proc") else { return false };
    for pid in rd.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok())) {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        if rest.split_whitespace().nth(2).and_then(|g| g.parse::<i32>().ok()) != Some(pgid) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && inodes.iter().any(|i| target.as_os_str() == i.as_str())
            {
                return true;
            }
        }
    }
    false
}

/// A TCP port on 127.0.0.1 that nothing listens on now (the kernel picks it).
pub(crate) fn free_port() -> Option<u16> {
    std::net::TcpListener::bind(("127.0.0.1", 0)).ok().and_then(|l| l.local_addr().ok()).map(|a| a.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(
        dir: &'a Path,
        args: &'a [String],
        ready: Ready,
        remove: Vec<PathBuf>,
        journal: &'a Servers,
        test_dir: &'a Dir,
    ) -> Spec<'a> {
        Spec {
            name: "demo",
            program: "sh",
            args,
            env: &[],
            cwd: dir,
            log: dir.join("server-demo.log"),
            user: None,
            ready,
            ready_timeout: Duration::from_secs(5),
            signal: libc::SIGTERM,
            stop_timeout: Duration::from_secs(5),
            remove,
            journal,
            logs: Box::leak(Box::new(crate::sys::bounded::LogBudget::test())),
            sandbox: None,
            test_dir,
        }
    }

    #[test]
    fn a_server_that_exits_early_fails_quoting_its_log_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let data = d.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let args =
            vec!["-c".to_string(), "echo 'FATAL: could not bind: Address already in use' >&2; exit 1".to_string()];
        let ready = Ready { socket: Some(d.path().join("sock")), ..Ready::default() };
        let test = Dir::open(d.path()).unwrap();
        let e = Server::start(spec(d.path(), &args, ready, vec!["data".into()], &Servers::new(d.path()), &test))
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(msg.contains("server demo exited with code 1 before it was ready"), "{msg}");
        let log = std::fs::read_to_string(e.log().unwrap()).unwrap();
        assert!(log.contains("--- stderr ---\nFATAL: could not bind"), "{log}");
        assert!(!data.exists(), "its data must be removed");
        assert!(crate::state::journal::leftovers(d.path()).unwrap().is_empty(), "nothing may stay journaled");
    }

    #[test]
    fn a_server_is_ready_on_its_socket_and_stops_with_its_group() {
        let d = tempfile::tempdir().unwrap();
        let sock = d.path().join("s.sock");
        // A stand-in server: listens on a Unix socket (python3 is on every CI machine here).
        let script = format!(
            "python3 -c 'import socket,time; s=socket.socket(socket.AF_UNIX); s.bind(\"{}\"); s.listen(); time.sleep(100)' & sleep 100",
            sock.display()
        );
        let args = vec!["-c".to_string(), script];
        let ready = Ready { socket: Some(sock.clone()), ..Ready::default() };
        let servers = Servers::new(d.path());
        let test = Dir::open(d.path()).unwrap();
        let mut s = Server::start(spec(d.path(), &args, ready, vec!["s.sock".into()], &servers, &test)).unwrap();
        let pid = s.pid;
        s.check_alive().unwrap();
        assert_eq!(crate::state::journal::leftovers(d.path()).unwrap().len(), 1, "a running server is journaled");
        s.stop().unwrap();
        assert!(!crate::sys::proc::group_running(pid), "a member of the server's group survived");
        assert!(!sock.exists());
        assert!(crate::state::journal::leftovers(d.path()).unwrap().is_empty());
    }

    #[test]
    fn a_port_held_by_another_program_does_not_count_as_ready() {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        // Our own process group is not the one listening... we are, in fact:
        // the listener belongs to this test process.
        let mine = process::own_group();
        assert!(group_listens_on(mine, port));
        assert!(!group_listens_on(1_999_999, port));
        drop(l);
        assert!(!group_listens_on(mine, port));
    }
}
