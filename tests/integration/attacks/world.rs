//! No way out, round 2 (issue 52): the classes a hostile publisher used
//! after the first sandbox — the user's terminal, sockets a read-only view
//! does not stop, and limits that added up per command. Each test runs a
//! signed repository profile as a user would and asserts both that the
//! attempt was denied (named in the trial's log) and that nothing outside
//! changed.

use super::{Hostile, UNCHARGED_SOCKETS, all_text, failures, result_text, script_profile, walk};
use crate::common::*;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

fn tag(what: &str) -> String {
    format!("{what}-{}", std::process::id())
}

/// Paths a test placed outside its own folders, removed when it ends,
/// passed or failed.
struct Placed(Vec<std::path::PathBuf>);

impl Drop for Placed {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p).or_else(|_| std::fs::remove_dir_all(p));
        }
    }
}

/// (Its markers of success are written split, so the probe's own text, which
/// engine keeps with the repository, never matches them.)
/// What a trial (and a step) tries on the terminal: open every terminal
/// device name, push a command with TIOCSTI into fds 0–2 and whatever
/// opened, take the foreground with `tcsetpgrp`, write a raw OSC title.
const TTY_PROBE: &str = r#"
import os, fcntl, termios, signal, sys
out = []
fds = [0, 1, 2]
for name in ["/dev/tty", "/dev/console", "/dev/pts/0", "/dev/pts/1", "/dev/ptmx", "/dev/tty0"]:
    try:
        fds.append(os.open(name, os.O_RDWR))
        out.append(name + " OPEN" + "ED")
    except OSError as e:
        out.append(name + " " + e.strerror)
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
for fd in fds:
    for c in "touch /tmp/ENGINE-TIOCSTI-MARKER\n":
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, c.encode())
        except OSError as e:
            out.append("sti %d %s" % (fd, e.strerror))
            break
    else:
        out.append("sti %d INJ" + "ECTED" % fd)
    try:
        os.tcsetpgrp(fd, os.getpgrp())
        out.append("tcsetpgrp %d TO" + "OK" % fd)
    except OSError as e:
        out.append("tcsetpgrp %d %s" % (fd, e.strerror))
sys.stderr.write("\x1b]0;PWNED-TITLE\x07")
print("\n".join(out))
"#;

/// A pseudo-terminal pair: (master, slave).
fn pty() -> (OwnedFd, OwnedFd) {
    let (mut m, mut s) = (0, 0);
    // SAFETY: two out-parameters; null name, termios and winsize.
    let r = unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: two new descriptors we own.
    unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) }
}

/// Whatever sits in `slave`'s input queue (raw mode, no waiting): what a
/// shell reading the terminal after engine returned would have run.
fn pending_input(slave: &OwnedFd) -> Vec<u8> {
    // SAFETY: termios of our own descriptor; a non-blocking read into our buffer.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        libc::tcgetattr(slave.as_raw_fd(), &mut t);
        libc::cfmakeraw(&mut t);
        libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t);
        let fl = libc::fcntl(slave.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(slave.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
        let mut buf = [0u8; 4096];
        let n = libc::read(slave.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len());
        buf[..n.max(0) as usize].to_vec()
    }
}

/// A trial and a `pre_test` step of a repository profile try to inject a
/// root command into the user's terminal, take its foreground and write
/// raw escapes; a second test then sleeps. engine runs in a real
/// pseudo-terminal as its controlling terminal: nothing reached the
/// terminal's input queue, no terminal device could be opened, the escape
/// arrived shown, not sent, and the person's Ctrl-C stopped the run (130).
#[test]
#[ignore = "needs root"]
fn a_test_never_reaches_the_users_terminal() {
    require_root();
    let env = Env::new();
    let marker = std::path::Path::new("/tmp/ENGINE-TIOCSTI-MARKER");
    let _ = std::fs::remove_file(marker);
    let h = Hostile::new(&env);
    let step = "    pre_test:\n      - shell: \"python3 {{profile_dir}}/probe.py > step-probe.txt 2>&1; cat step-probe.txt\"\n";
    h.profile("tty", &script_profile("tty", "sh", "python3 {{profile_dir}}/probe.py", "", step))
        .file("tty", "probe.py", TTY_PROBE.as_bytes())
        .profile("hold", &script_profile("hold", "sh", "trap '' TERM INT; touch engine-hold-ready; sleep 60", "", ""))
        .suite("term", "title: Terminal\ntests:\n  - profile: tty\n  - profile: hold\n");
    assert_eq!(h.add(&env, "evil").code, 0);

    let (master, slave) = pty();
    let as_file = |fd: &OwnedFd| std::process::Stdio::from(std::fs::File::from(fd.try_clone().unwrap()));
    let mut cmd = env.cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()]);
    cmd.args(["evil/suite/term", "--runs", "1", "--save", "t", "--logs", "all"])
        .stdin(as_file(&slave))
        .stdout(as_file(&slave))
        .stderr(as_file(&slave));
    // engine leads a session whose controlling terminal is the pty, in its
    // foreground, as a login shell's command would be.
    // SAFETY: setsid and ioctl are async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    // The Command holds its copies of the slave until dropped: the master
    // reads end of file only when every copy is closed.
    drop(cmd);
    // What engine shows, read as it comes so it never blocks on the pty.
    let reader = {
        let mut m = std::fs::File::from(master.try_clone().unwrap());
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = m.read(&mut buf) {
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            out
        })
    };
    // The second test is in its trial: its file is in the target dir.
    let deadline = Instant::now() + Duration::from_secs(180);
    while !walk(env.target.path()).iter().any(|p| p.ends_with("engine-hold-ready")) {
        assert!(Instant::now() < deadline, "the sleeping trial never started");
        assert!(child.try_wait().unwrap().is_none(), "engine ended before the sleeping trial");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The person presses Ctrl-C.
    let ctrl_c = Instant::now();
    // SAFETY: one byte written to our own descriptor.
    assert_eq!(unsafe { libc::write(master.as_raw_fd(), b"\x03".as_ptr().cast(), 1) }, 1);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(ctrl_c.elapsed() < Duration::from_secs(20), "Ctrl-C did not stop engine");
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = ctrl_c.elapsed();
    eprintln!("Ctrl-C to engine's exit: {took:?}");
    let injected = pending_input(&slave);
    drop(slave);
    drop(master);
    let shown = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(130), "Ctrl-C gives 130:\n{shown}");
    // The trial ignores SIGTERM (and its sleep inherits that): the grace
    // period after a Ctrl-C is half a second, then SIGKILL.
    assert!(took < Duration::from_millis(1500), "Ctrl-C took {took:?}");
    assert!(injected.is_empty(), "the terminal's input queue holds {:?}", String::from_utf8_lossy(&injected));
    assert!(!marker.exists(), "an injected command ran");
    assert!(!shown.contains("\x1b]0;PWNED"), "a raw OSC sequence reached the terminal");

    let text = all_text(&env);
    assert!(
        !text.contains("OPENED") && !text.contains("INJECTED") && !text.contains("TOOK"),
        "a terminal was reached:\n{text}"
    );
    // Both the step and the trial probed, and were answered so.
    assert!(
        text.matches("/dev/tty No such file or directory").count() >= 2,
        "/dev/tty is in the sandbox's /dev:\n{text}"
    );
    assert!(text.matches("sti 0 Operation not permitted").count() >= 2, "the filter answers TIOCSTI:\n{text}");
    assert_eq!(failures(&env, "t").iter().filter(|(p, _)| p == "tty").count(), 0, "the probing test itself ran");
}

/// Sockets outside the sandbox: a Unix socket of a daemon under /var/lib
/// and /run (a read-only view would still let `connect` through), an
/// abstract Unix socket in the host's network namespace, and AF_VSOCK
/// (no network namespace confines it). None is reached; the log names why.
#[test]
#[ignore = "needs root"]
fn no_socket_outside_is_reached() {
    require_root();
    let env = Env::new();
    let t = tag("sock");
    let dir = std::path::PathBuf::from(format!("/var/lib/engine-bait-{t}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let paths = [dir.join("mysqld.sock"), std::path::PathBuf::from(format!("/run/engine-bait-{t}.sock"))];
    let _placed = Placed(vec![dir.clone(), paths[1].clone()]);
    let listeners: Vec<std::os::unix::net::UnixListener> = paths
        .iter()
        .map(|p| {
            let l = std::os::unix::net::UnixListener::bind(p).unwrap();
            l.set_nonblocking(true).unwrap();
            l
        })
        .collect();
    let abstract_name = format!("engine-bait-{t}");
    let abs = {
        use std::os::linux::net::SocketAddrExt;
        let a = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let l = std::os::unix::net::UnixListener::bind_addr(&a).unwrap();
        l.set_nonblocking(true).unwrap();
        l
    };
    let probe = format!(
        r#"
import socket, os
for p in {paths:?}:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p); s.sendall(b"DROP TABLE"); print(p, "CONN" + "ECTED")
    except OSError as e:
        print(p, e.strerror)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0{abstract_name}"); s.sendall(b"x"); print("abstract CONN" + "ECTED")
except OSError as e:
    print("abstract", e.strerror)
for fam, name in [(40, "vsock"), (38, "alg"), (31, "bluetooth"), (17, "packet")]:
    try:
        socket.socket(fam, socket.SOCK_STREAM if fam != 17 else socket.SOCK_RAW); print(name, "OPEN" + "ED")
    except OSError as e:
        print(name, e.strerror)
for p in ["/var/lib", "/run/dbus", "/srv", "/var/log", "/etc/shadow", "/etc/ssh", "/mnt", "/opt", "/boot"]:
    print(p, "PRES" + "ENT" if os.path.lexists(p) else "absent")
for p in ["/home", "/root", "/run"]:
    print(p, "empty" if not os.listdir(p) else "HAS " + "FILES")
"#,
        paths = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()
    );
    let h = Hostile::new(&env);
    h.profile("sock", &script_profile("sock", "sh", "python3 {{profile_dir}}/probe.py", "", "")).file(
        "sock",
        "probe.py",
        probe.as_bytes(),
    );
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/sock", "--runs", "1", "--save", "s", "--logs", "all"]);
    assert_eq!(r.code, 0, "{r:?}");
    for l in listeners.iter().chain([&abs]) {
        assert!(l.accept().is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock), "a socket outside was reached");
    }
    let text = all_text(&env);
    let reached = ["CONNECTED", "OPENED", "PRESENT", "HAS FILES"];
    assert!(!reached.iter().any(|w| text.contains(w)), "{text}");
    assert!(text.contains("/home empty") && text.contains("/run empty"), "{text}");
    for p in &paths {
        assert!(text.contains(&format!("{} No such file or directory", p.display())), "{text}");
    }
    assert!(text.contains("abstract Connection refused"), "{text}");
    assert!(text.contains("vsock Address family not supported by protocol"), "{text}");
    assert!(text.contains("/var/lib absent") && text.contains("/etc/shadow absent"), "{text}");
    drop(listeners);
}

/// Shared memory past the test's limit, spread over its steps: six
/// `pre_test` steps each leave a 100 MiB SysV segment under a test limit of
/// 256 MiB. The test's one budget stops it (not six budgets), the reason names the limit, and nothing
/// outlives the test: the host's Shmem is back where it was.
#[test]
#[ignore = "needs root"]
fn one_memory_budget_holds_across_a_tests_steps() {
    require_root();
    let env = Env::new();
    let shm = || -> u64 {
        let m = std::fs::read_to_string("/proc/meminfo").unwrap();
        m.lines().find_map(|l| l.strip_prefix("Shmem:")).unwrap().trim().trim_end_matches(" kB").parse().unwrap()
    };
    let before = shm();
    // shmget(key, 100 MiB, IPC_CREAT|0600), attached and written through;
    // not removed, so it outlives the step (in the test's IPC namespace).
    let seg = r#"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
n = 100 << 20
i = libc.shmget(int(sys.argv[1]), n, 0o1000 | 0o600)
if i < 0:
    sys.exit("shmget: errno %d" % ctypes.get_errno())
p = libc.shmat(i, None, 0)
ctypes.memset(p, 1, n)
print("segment", sys.argv[1], "held")
"#;
    let mut steps = String::from("    pre_test:\n");
    for k in 1..=6 {
        steps.push_str(&format!("      - shell: \"python3 {{{{profile_dir}}}}/seg.py {k}\"\n"));
    }
    let h = Hostile::new(&env);
    h.profile("shm", &script_profile("shm", "sh", "true", "sandbox: {memory: 256MiB}\n", &steps)).file(
        "shm",
        "seg.py",
        seg.as_bytes(),
    );
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/shm", "--runs", "1", "--save", "m", "--logs", "all"]);
    assert_eq!(r.code, 4, "the test fails: {r:?}");
    let f = failures(&env, "m");
    let reason = f.iter().find(|(p, _)| p == "shm").map(|(_, r)| r.clone()).unwrap_or_default();
    assert!(reason.contains("256 MiB of memory") || reason.contains("memory"), "{reason}\n{r:?}");
    let text = all_text(&env);
    let held = (1..=6).filter(|k| text.contains(&format!("segment {k} held"))).count();
    assert!(held <= 2, "{held} segments of 100 MiB held under a 256 MiB test limit:\n{text}");
    // Nothing a step left outlives the test: its IPC namespace is gone
    // (the kernel frees a namespace's segments from a work queue, soon).
    let deadline = Instant::now() + Duration::from_secs(10);
    while shm() >= before + 50 * 1024 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let after = shm();
    assert!(after < before + 50 * 1024, "the host's Shmem rose from {before} kB to {after} kB");
}

/// A tool that insists on a terminal: a profile that declares `pty` gets
/// a devpts instance of its own — it opens a pseudo-terminal and sees only
/// its own — and one that does not gets none.
#[test]
#[ignore = "needs root"]
fn a_pty_is_a_fresh_one_of_its_own_or_none() {
    require_root();
    let env = Env::new();
    let probe = r#"python3 -c 'import os; m, s = os.openpty(); print("own pty", os.ttyname(s), "of", sorted(os.listdir("/dev/pts")))'"#;
    let h = Hostile::new(&env);
    h.profile("pty", &script_profile("pty", "sh", probe, "sandbox: {pty: true}\n", ""))
        .profile("nopty", &script_profile("nopty", "sh", probe, "", ""))
        .suite("ptys", "title: Terminals\ntests:\n  - profile: pty\n  - profile: nopty\n");
    assert_eq!(h.add(&env, "evil").code, 0);
    // Terminals of the host, which the sandbox's instance must not show.
    let (_m, _s) = pty();
    let r = env.bench(&["evil/suite/ptys", "--runs", "1", "--save", "p", "--logs", "all"]);
    assert_eq!(r.code, 4, "only nopty fails: {r:?}");
    let f = failures(&env, "p");
    assert_eq!(f.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["nopty"], "{f:?}");
    let text = all_text(&env);
    assert!(text.contains("own pty /dev/pts/0 of ['0', 'ptmx']"), "a devpts of its own holds only its pty:\n{text}");
}

/// io_uring and more read paths are a shared profile's to ask and the
/// user's to grant: undeclared, io_uring is ENOSYS (no filter sees its
/// operations, sockets among them); declared without the grant, or a read
/// path outside the allowlist, the run stops at the field with the grant
/// that would allow it; granted, both work — and a read path through a
/// symbolic link is refused even then.
#[test]
#[ignore = "needs root"]
fn io_uring_and_read_paths_need_the_users_grant() {
    require_root();
    let env = Env::new();
    let t = tag("read");
    let dir = std::path::PathBuf::from(format!("/srv/engine-bait-{t}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data.txt"), format!("readable {t}\n")).unwrap();
    let link = std::path::PathBuf::from(format!("/srv/engine-bait-link-{t}"));
    let _ = std::fs::remove_file(&link);
    let _placed = Placed(vec![dir.clone(), link.clone()]);
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    let uring = r#"python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); b = ctypes.create_string_buffer(120); r = l.syscall(425, 4, b); print("io_uring_setup", r, ctypes.get_errno())'"#;
    let d = dir.display();
    let h = Hostile::new(&env);
    h.profile("uring", &script_profile("uring", "sh", &format!("{uring}; test $? = 0"), "", ""))
        .profile("uring2", &script_profile("uring2", "sh", uring, "sandbox: {io_uring: true}\n", ""))
        .profile(
            "read",
            &script_profile("read", "sh", &format!("cat {d}/data.txt"), &format!("sandbox: {{read: [{d}]}}\n"), ""),
        )
        .profile(
            "vialink",
            &script_profile("vialink", "sh", "true", &format!("sandbox: {{read: [{}]}}\n", link.display()), ""),
        );
    assert_eq!(h.add(&env, "evil").code, 0);
    // Undeclared: ENOSYS (38), whatever the user grants.
    let r = env.bench(&["evil/uring", "--runs", "1", "--save", "u", "--logs", "all", "--grant", "io_uring=yes"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(all_text(&env).contains("io_uring_setup -1 38"), "io_uring reached a shared profile");
    for (id, field, grant) in [
        ("uring2", "uring2/profile.yaml:5:21", "--grant io_uring=yes".to_string()),
        ("read", "read/profile.yaml:5:18", format!("--grant read={d}")),
    ] {
        let r = env.bench(&[&format!("evil/{id}"), "--runs", "1", "--save", id]);
        assert_eq!(r.code, 1, "{id}: {r:?}");
        assert!(r.stderr.contains(field), "{id}: no {field} in {r:?}");
        assert!(r.stderr.contains(&grant), "{id}: no `{grant}` hint in {r:?}");
        assert!(!env.result_path(id).exists(), "{id}: a refused run wrote a result");
    }
    let r = env.bench(&["evil/uring2", "--runs", "1", "--save", "u2", "--logs", "all", "--grant", "io_uring=yes"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(all_text(&env).contains("io_uring_setup 3 0") || all_text(&env).contains("io_uring_setup 4 0"));
    let r = env.bench(&["evil/read", "--runs", "1", "--save", "r", "--logs", "all", "--grant", &format!("read={d}")]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(all_text(&env).contains(&format!("readable {t}")));
    let granted = format!("read={}", link.display());
    let r = env.bench(&["evil/vialink", "--runs", "1", "--save", "l", "--grant", &granted]);
    assert_ne!(r.code, 0, "{r:?}");
    let f = failures(&env, "l");
    assert!(f.iter().any(|(_, why)| why.contains("goes through a symbolic link")), "{f:?} {r:?}");
}

/// io_uring never beside a directory of the host's the command can write
/// (red team, 2026-12-07): io_uring's open passes no filter, so with both
/// granted a trial made an empty mode-6755 file of the host's root in the
/// granted directory where `open(2)` with that mode is denied. Declaring
/// both is refused at the field before anything runs; a command that can
/// write a host directory gets ENOSYS from io_uring, local profiles too.
#[test]
#[ignore = "needs root"]
fn io_uring_never_beside_a_writable_host_directory() {
    require_root();
    let env = Env::new();
    let t = tag("uw");
    let granted = std::path::PathBuf::from(format!("/var/lib/engine-granted-{t}"));
    let _placed = Placed(vec![granted.clone()]);
    std::fs::create_dir_all(&granted).unwrap();
    let g = granted.display().to_string();
    let uring = r#"python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); b = ctypes.create_string_buffer(120); r = l.syscall(425, 4, b); print("io_uring_setup", r, ctypes.get_errno())'"#;
    let h = Hostile::new(&env);
    h.profile(
        "both",
        &script_profile("both", "sh", uring, &format!("sandbox: {{io_uring: true, writable: [{g}]}}\n"), ""),
    )
    .profile("w", &script_profile("w", "sh", uring, &format!("sandbox: {{writable: [{g}]}}\n"), ""));
    assert_eq!(h.add(&env, "evil").code, 0);
    let grants = ["--grant", "io_uring=yes", "--grant", &format!("writable={g}")];
    let mut args = vec!["evil/both", "--runs", "1", "--save", "b"];
    args.extend(grants);
    let r = env.bench(&args);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("both/profile.yaml:5:21"), "not placed at the field: {r:?}");
    assert!(r.stderr.contains("`sandbox.io_uring` and `sandbox.writable` are not given together"), "{r:?}");
    assert!(!env.result_path("b").exists(), "a refused run wrote a result");
    // Writable granted, io_uring granted but not declared: ENOSYS (38).
    let mut args = vec!["evil/w", "--runs", "1", "--save", "w", "--logs", "all"];
    args.extend(grants);
    let r = env.bench(&args);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(all_text(&env).contains("io_uring_setup -1 38"), "io_uring beside a writable host directory");
    // A local profile (io_uring allowed unless host-writable), confined by
    // its `sandbox:`: the same.
    env.profile("mine", &script_profile("mine", "sh", uring, &format!("sandbox: {{writable: [{g}]}}\n"), ""));
    let r = env.bench(&["mine", "--runs", "1", "--save", "m", "--logs", "all"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        result_text(&env, "m").contains("io_uring_setup -1 38"),
        "a local profile's host-writable command had io_uring"
    );
    env.profile("mine2", &script_profile("mine2", "sh", uring, "sandbox: true\n", ""));
    let r = env.bench(&["mine2", "--runs", "1", "--save", "m2", "--logs", "all"]);
    assert_eq!(r.code, 0, "{r:?}");
    let m2 = result_text(&env, "m2");
    assert!(
        m2.contains("io_uring_setup 3 0") || m2.contains("io_uring_setup 4 0"),
        "a local profile lost io_uring: {m2}"
    );
}

/// Nothing privileged is left in a granted directory of the host's (red
/// team, 2026-12-07, the class behind io_uring's setuid file): no setuid or
/// setgid file by open, O_TMPFILE, mknod, chmod or fchmodat; no device; no
/// capability, ACL or other extended attribute; no link or rename of a
/// setuid binary or of a test file into it; no mount; no immutable flag;
/// and io_uring is off. Each refusal is checked by its errno, then the
/// directory itself is walked.
#[test]
#[ignore = "needs root"]
fn no_privileged_file_in_a_granted_directory() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    require_root();
    let env = Env::new();
    let t = tag("pc");
    let granted = std::path::PathBuf::from(format!("/var/lib/engine-granted-{t}"));
    let _placed = Placed(vec![granted.clone()]);
    std::fs::create_dir_all(&granted).unwrap();
    let g = granted.display().to_string();
    let h = Hostile::new(&env);
    h.profile(
        "pc",
        &script_profile(
            "pc",
            "sh",
            &format!("python3 {{{{profile_dir}}}}/probe.py {g}"),
            &format!("sandbox: {{writable: [{g}]}}\n"),
            "",
        ),
    )
    .file("pc", "probe.py", PRIVILEGED_FILE_PROBE.as_bytes());
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/pc", "--runs", "1", "--save", "p", "--logs", "all", "--grant", &format!("writable={g}")]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = result_text(&env, "p");
    assert!(text.contains("PROBE done"), "the probe did not finish: {text}");
    for (what, errno) in [
        ("io_uring_setup", libc::ENOSYS),
        ("open6755", libc::EPERM),
        ("otmpfile6755", libc::EPERM),
        ("mknod_reg_4755", libc::EPERM),
        ("mknod_chr", libc::EPERM),
        ("chmod4755", libc::EPERM),
        ("fchmodat_2755", libc::EPERM),
        ("setxattr_cap", libc::EPERM),
        ("setxattr_acl", libc::EPERM),
        ("setxattr_user", libc::EPERM),
        ("link_su", libc::EXDEV),
        ("link_testdir", libc::EXDEV),
        ("rename_testdir", libc::EXDEV),
        ("link_procfd", libc::EXDEV),
        ("mount", libc::EPERM),
    ] {
        assert!(text.contains(&format!("PROBE {what} ERR {errno}\n")), "{what}: not refused with {errno}: {text}");
    }
    assert!(text.contains("PROBE setflags_immutable ERR "), "the immutable flag was set: {text}");
    for e in walk(&granted) {
        let m = std::fs::symlink_metadata(&e).unwrap();
        assert_eq!(m.mode() & 0o6000, 0, "{} is setuid or setgid", e.display());
        assert!(m.file_type().is_file() || m.file_type().is_dir(), "{} is a special file", e.display());
        let c = std::ffi::CString::new(e.as_os_str().as_bytes()).unwrap();
        let mut names = [0u8; 256];
        // SAFETY: a valid path and buffer.
        let n = unsafe { libc::llistxattr(c.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
        assert!(n <= 0, "{} has extended attributes: {:?}", e.display(), &names[..n as usize]);
    }
}

/// What a test tries in a granted directory (its path is the argument).
const PRIVILEGED_FILE_PROBE: &str = r##"import ctypes, os, sys, stat, errno
libc = ctypes.CDLL(None, use_errno=True)
D = sys.argv[1]
def r(name, f):
    try:
        v = f(); print("PROBE", name, "OK", v, flush=True)
    except OSError as e:
        print("PROBE", name, "ERR", e.errno, flush=True)
def sc(nr, *a):
    v = libc.syscall(nr, *a)
    if v < 0: raise OSError(ctypes.get_errno(), "")
    return v
p = lambda n: os.path.join(D, n).encode()
print("PROBE id", os.getuid(), os.getgid(), os.getcwd())
print("PROBE Dstat", oct(os.stat(D).st_mode), os.stat(D).st_uid, os.stat(D).st_gid)
r("io_uring_setup", lambda: sc(425, 4, ctypes.create_string_buffer(120)))
r("open6755", lambda: os.open(D+"/a", os.O_CREAT|os.O_WRONLY, 0o6755))
r("mknod_reg_4755", lambda: sc(259, -100, p("b"), stat.S_IFREG|0o4755, 0))
r("mknod_chr", lambda: sc(259, -100, p("c"), stat.S_IFCHR|0o666, os.makedev(1,3)))
open(D+"/f","w").write("#!/bin/sh\nid\n")
r("chmod4755", lambda: os.chmod(D+"/f", 0o4755))
r("fchmodat_2755", lambda: sc(268, -100, p("f"), 0o2755))
r("chown_f_0_42", lambda: os.chown(D+"/f", 0, 42))
r("chown_f_1000", lambda: os.chown(D+"/f", 1000, 1000))
r("stat_f", lambda: (oct(os.stat(D+"/f").st_mode), os.stat(D+"/f").st_uid, os.stat(D+"/f").st_gid))
r("setxattr_cap", lambda: os.setxattr(D+"/f", "security.capability", b"\x01\x00\x00\x02" + b"\x00"*16))
r("setxattr_acl", lambda: os.setxattr(D+"/f", "system.posix_acl_access", b"\x02\x00\x00\x00"))
r("setxattr_user", lambda: os.setxattr(D+"/f", "user.x", b"1"))
r("removexattr", lambda: os.removexattr(D+"/f", "user.x"))
# O_TMPFILE with mode
r("otmpfile6755", lambda: os.open(D, os.O_TMPFILE|os.O_WRONLY, 0o6755))
# setgid inheritance: mkdir, chown group, then mkdir
os.makedirs(D+"/sg", exist_ok=True)
r("stat_sg", lambda: oct(os.stat(D+"/sg").st_mode))
# link from read-only system dir / test dir
r("link_su", lambda: os.link("/usr/bin/su", D+"/su"))
cwd = os.getcwd(); open(cwd+"/t","w").write("x")
r("link_testdir", lambda: os.link(cwd+"/t", D+"/t"))
r("rename_testdir", lambda: os.rename(cwd+"/t", D+"/t"))
r("link_procfd", lambda: sc(265, -100, ("/proc/self/fd/%d" % os.open(cwd+"/t", os.O_RDONLY)).encode(), -100, p("t2"), 0x400))
r("mount", lambda: sc(165, b"none", p("m"), b"tmpfs", 0, 0))
r("unshare_user", lambda: sc(272, 0x10000000))
# FS_IOC_SETFLAGS immutable
import fcntl, array
fd = os.open(D+"/f", os.O_RDONLY)
r("setflags_immutable", lambda: fcntl.ioctl(fd, 0x40086602, array.array('l',[0x10])))
print("PROBE done")
"##;

/// The other ABIs of an x86-64 kernel from a confined command, under the
/// one merged filter (red team, 2026-12-07): an i386 call through
/// `int 0x80` kills the process (SIGSYS), an x32 call (the number with bit
/// 30) and number −1 are EPERM, and the command runs under one filter.
#[cfg(target_arch = "x86_64")]
#[test]
#[ignore = "needs root"]
fn other_abis_are_killed_or_refused_by_the_one_filter() {
    require_root();
    let env = Env::new();
    let probe = r#"import ctypes, mmap, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
if len(sys.argv) > 1:
    # mov eax, 20 (i386 getpid); int 0x80; ret
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3]))
    f = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
    print("i386 getpid returned", f(), flush=True)
    sys.exit(0)
p = subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True)
print("i386 child exit", p.returncode)
r = libc.syscall(39 | 0x40000000)
print("x32 getpid", r, ctypes.get_errno())
r = libc.syscall(-1)
print("number -1", r, ctypes.get_errno())
print([l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp_filters")])
"#;
    let h = Hostile::new(&env);
    h.profile("abi", &script_profile("abi", "sh", "python3 {{profile_dir}}/probe.py", "", "")).file(
        "abi",
        "probe.py",
        probe.as_bytes(),
    );
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/abi", "--runs", "1", "--save", "a", "--logs", "all"]);
    assert_eq!(r.code, 0, "{r:?}");
    // The trial's log only (the probe's own text is in the profile's copy).
    let text = result_text(&env, "a");
    assert!(text.contains("i386 child exit -31"), "an i386 call was not killed by SIGSYS: {text}");
    assert!(!text.contains("i386 getpid returned"), "an i386 call returned");
    assert!(text.contains("x32 getpid -1 1"), "an x32 call was not EPERM");
    assert!(text.contains("number -1 -1 1"), "call number u32::MAX was not EPERM");
    assert!(text.contains("['1']"), "not exactly one filter");
}

/// The red team's holes of this round, each as it was found: a descriptor
/// engine inherited (a file of root's on fd 9), a sparse 1 GiB stdout, a
/// built-in `startup-time` command from a repository, a granted writable
/// directory reached through `..` and through a link planted in it, and a
/// setuid file made in a granted directory. Each is refused or bounded.
#[test]
#[ignore = "needs root"]
fn the_red_teams_holes_stay_closed() {
    use std::os::unix::fs::PermissionsExt;
    require_root();
    let env = Env::new();
    let t = tag("rt");
    let bait = std::path::PathBuf::from(format!("/var/lib/engine-bait-{t}"));
    let granted = std::path::PathBuf::from(format!("/var/lib/engine-granted-{t}"));
    let _placed = Placed(vec![bait.clone(), granted.clone()]);
    for d in [&bait, &granted] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::set_permissions(&bait, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(bait.join("secret"), format!("root secret {t}\n")).unwrap();
    let (b, g) = (bait.display().to_string(), granted.display().to_string());
    let h = Hostile::new(&env);
    h.profile("fd", &script_profile("fd", "sh", "cat <&9 2>&1; ls -l /proc/self/fd; true", "", ""))
        .profile(
            "sparse",
            &script_profile(
                "sparse",
                "sh",
                "python3 -c 'import os; os.lseek(1, (1 << 30) - 64, 0); os.write(1, b\"sparse end\\n\")'",
                "",
                "",
            ),
        )
        .profile(
            "startup",
            &format!(
                "id: startup\nversion: 1.0.0\ntitle: Startup\ntest_type: other\nexecutor:\n  builtin:\n    workload: startup-time\n    config: {{background: none, files: \"1\", size: 4KiB, command: \"touch {b}/pwned\"}}\nresults: [{{id: seconds, unit: Seconds, proportion: LIB}}]\nparsers: []\n"
            ),
        )
        .profile("dotdot", &script_profile("dotdot", "sh", &format!("cat {g}/../{}/secret", bait.file_name().unwrap().to_string_lossy()), &format!("sandbox: {{writable: [\"{g}/../{}\"]}}\n", bait.file_name().unwrap().to_string_lossy()), ""))
        .profile("plant", &script_profile("plant", "sh", &format!("ln -s {b} {g}/cache"), &format!("sandbox: {{writable: [{g}]}}\n"), ""))
        .profile("vialink", &script_profile("vialink", "sh", &format!("echo x > {g}/cache/planted"), &format!("sandbox: {{writable: [\"{g}/cache/\"]}}\n"), ""))
        .profile("suid", &script_profile("suid", "sh", &format!("cp /bin/sh {g}/suidsh; chmod 4755 {g}/suidsh; chmod g+s {g}/suidsh; ls -l {g}/suidsh"), &format!("sandbox: {{writable: [{g}]}}\n"), ""));
    h.profile(
        "slowbuild",
        &script_profile(
            "slowbuild",
            "sh",
            "true",
            "install:\n  build:\n    - shell: \"true\"\n      timeout: 5h\n",
            "",
        ),
    );
    assert_eq!(h.add(&env, "evil").code, 0);
    let grant = format!("writable={g}");
    // A build step's timeout beyond the default is the user's to grant.
    let r = env.bench(&["evil/slowbuild", "--runs", "1", "--save", "sb"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("slowbuild/profile.yaml:") && r.stderr.contains("--grant time=5h"), "{r:?}");

    // fd 9 open on a 0600 file of root's, inherited by engine.
    let secret = std::fs::File::open(bait.join("secret")).unwrap();
    let mut c = env.cmd(&["benchmark", "-y", "--target-dir", env.target.path().to_str().unwrap()]);
    c.args(["evil/fd", "--runs", "1", "--save", "fd", "--logs", "all"]);
    // SAFETY: dup2 onto fd 9 in the child before exec (no close-on-exec).
    unsafe {
        use std::os::unix::process::CommandExt;
        let raw = secret.as_raw_fd();
        c.pre_exec(move || if libc::dup2(raw, 9) < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) });
    }
    let r: Run = c.output().unwrap().into();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!all_text(&env).contains(&format!("root secret {t}")), "an inherited descriptor reached the trial");

    // A sparse gigabyte on stdout: engine keeps 16 MiB of it.
    let r = env.bench(&["evil/sparse", "--runs", "1", "--save", "sp", "--logs", "all"]);
    assert_eq!(r.code, 0, "{r:?}");
    let logs: u64 = walk(env.home.path()).iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    assert!(logs < 64 << 20, "{logs} bytes under ENGINE_HOME after a sparse 1 GiB stdout");
    assert!(all_text(&env).contains("bytes of this output not kept"), "the cut is said");

    // startup-time's command from a repository: refused at its field.
    let r = env.bench(&["evil/startup", "--runs", "1", "--save", "st"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("startup/profile.yaml:") && r.stderr.contains("--grant builtin-command=yes"), "{r:?}");
    assert!(!bait.join("pwned").exists(), "a built-in workload ran a repository's command");

    // `..` out of a granted directory: never granted by that grant.
    let r = env.bench(&["evil/dotdot", "--runs", "1", "--save", "dd", "--grant", &grant]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("--grant writable="), "{r:?}");
    // A link planted in the granted directory, named with a trailing slash.
    let r = env.bench(&["evil/plant", "--runs", "1", "--save", "pl", "--grant", &grant]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(granted.join("cache").is_symlink());
    let r = env.bench(&["evil/vialink", "--runs", "1", "--save", "vl", "--grant", &grant]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(!bait.join("planted").exists(), "a link in a granted directory was bound");
    // setuid and setgid bits in a granted directory: refused.
    let r = env.bench(&["evil/suid", "--runs", "1", "--save", "su", "--grant", &grant, "--logs", "all"]);
    assert_eq!(r.code, 0, "{r:?}");
    let mode = std::fs::metadata(granted.join("suidsh")).map(|m| m.permissions().mode()).unwrap_or(0);
    assert_eq!(mode & 0o6000, 0, "a setuid or setgid file of the host's root was made: {mode:o}");
    assert_eq!(super::listing(&bait), ["secret"], "the bait directory changed");
}

/// Space the scratch watchdog's walk cannot see: files the trial keeps
/// open after removing them (each under the one-file limit), past a 64 MiB
/// scratch limit. The file system lost it, and what the test holds is
/// counted: the trial is stopped, not let through as "something else".
#[test]
#[ignore = "needs root"]
fn unlinked_open_files_count_against_the_scratch_limit() {
    require_root();
    let env = Env::new();
    let hog = r#"python3 -c '
import os, time
held = []
for i in range(5):
    f = open("/tmp/hog%d" % i, "wb"); os.unlink("/tmp/hog%d" % i)
    for _ in range(60):
        f.write(b"x" * (1 << 20))
    f.flush(); os.fsync(f.fileno()); held.append(f)
print("held 300 MiB unlinked", flush=True)
time.sleep(30)
'"#;
    let h = Hostile::new(&env);
    h.profile("unl", &script_profile("unl", "sh", hog, "requirements: {free_space: 16MiB}\n", ""));
    assert_eq!(h.add(&env, "evil").code, 0);
    let t0 = Instant::now();
    let r = env.bench(&["evil/unl", "--runs", "1", "--save", "u"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(25), "not stopped: {:?}", t0.elapsed());
    let f = failures(&env, "u");
    assert!(f.iter().any(|(_, why)| why.contains("scratch limit")), "{f:?}");
}

/// Round two of the red team: space held only by a mapping of a removed
/// file (its descriptor closed), and inodes instead of bytes (empty files
/// take no blocks). Each passes the 64 MiB scratch limit (100,000 entries)
/// and is stopped.
#[test]
#[ignore = "needs root"]
fn mapped_removed_files_and_empty_files_count_against_the_scratch_limit() {
    require_root();
    let env = Env::new();
    let mapped = r#"python3 -c '
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
for i in range(3):
    fd = os.open("big%d" % i, os.O_RDWR | os.O_CREAT, 0o600)
    os.posix_fallocate(fd, 0, 60 << 20)
    libc.mmap(None, 4096, 1, 1, fd, 0)
    os.close(fd); os.unlink("big%d" % i)
print("held by mappings only", flush=True)
time.sleep(20)
'"#;
    let empty = r#"python3 -c '
import os, time
for i in range(110000):
    os.close(os.open("/tmp/e%d" % i, os.O_CREAT | os.O_WRONLY, 0o600))
print("made 110000 empty files", flush=True)
time.sleep(20)
'"#;
    let small = "requirements: {free_space: 16MiB}\n";
    let h = Hostile::new(&env);
    h.profile("mapped", &script_profile("mapped", "sh", mapped, small, ""))
        .profile("empty", &script_profile("empty", "sh", empty, small, ""))
        .suite("space", "title: Space\ntests:\n  - profile: mapped\n  - profile: empty\n");
    assert_eq!(h.add(&env, "evil").code, 0);
    let t0 = Instant::now();
    let r = env.bench(&["evil/suite/space", "--runs", "1", "--save", "s"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(38), "not stopped: {:?}", t0.elapsed());
    let f = failures(&env, "s");
    for id in ["mapped", "empty"] {
        let why = f.iter().find(|(p, _)| p == id).map(|(_, w)| w.as_str()).unwrap_or_default();
        assert!(why.contains("scratch limit"), "{id}: {why} {r:?}");
    }
}

/// Kernel memory no memory cgroup is charged for, held through the test's
/// own network namespace (red team, session 39): replies the kernel queues
/// on netlink sockets that never read them (519 MiB under a 64 MiB limit).
/// They count against the test's memory limit: the hoarder is stopped with
/// the limit named, well short of the 2 GiB it tries for — also when a
/// child first opens 19,900 idle netlink sockets, which made each look at
/// the table take 0.2 s (887 MiB held in between, round 3). The script
/// says what it holds after each socket (`SO_MEMINFO`, not the slow table).
#[test]
#[ignore = "needs root"]
fn netlink_queues_count_against_the_memory_limit() {
    require_root();
    let env = Env::new();
    // Requests of an unknown type with NLM_F_ACK: each error reply carries
    // the request back, queued on the sender until it reads.
    let netlink = r#"
import os, socket, struct, sys, time
if sys.argv[1] == "idle":
    if os.fork() == 0:
        idle = []
        for i in range(19900):
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
            s.bind((0, 0)); idle.append(s)
        time.sleep(30)
        os._exit(0)
    time.sleep(4)
msg = struct.pack("=IHHII", 16 + 32000, 0x1f0, 0x1 | 0x4, 1, 0) + b"\0" * 32000
keep, held = [], 0
for n in range(128):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((0, 0)); s.setblocking(False)
    for i in range(600):
        try: s.sendto(msg, (0, 0))
        except OSError: break
    keep.append(s)
    held += struct.unpack("=9I", s.getsockopt(socket.SOL_SOCKET, 55, 36))[0]
    print("held", held >> 20, "MiB", flush=True)
time.sleep(2)
"#;
    let h = Hostile::new(&env);
    for (id, how) in [("nlq", "fill"), ("nlidle", "idle")] {
        let run = format!("python3 {{{{profile_dir}}}}/q.py {how}");
        h.profile(id, &script_profile(id, "sh", &run, "sandbox: {memory: 64MiB}\n", "")).file(
            id,
            "q.py",
            netlink.as_bytes(),
        );
    }
    assert_eq!(h.add(&env, "evil").code, 0);
    for id in ["nlq", "nlidle"] {
        let r = env.bench(&[&format!("evil/{id}"), "--runs", "1", "--save", id, "--logs", "all"]);
        let most = most_held(&result_text(&env, id));
        let reason = failure_text(&env, id);
        eprintln!("{id}: at most {most} MiB queued");
        // 64 MiB and what one look can miss (50 ms, 10 ms near the limit).
        assert!(most <= 320, "{id}: {most} MiB of netlink replies held under a 64 MiB limit ({reason}; {r:?})");
        assert_eq!(r.code, 4, "{id}: {r:?}");
        assert!(reason.contains("64.0 MiB of memory"), "{id}: {reason}\n{r:?}");
    }
}

/// The most a hoarder said it held (its `held N MiB` lines), MiB.
fn most_held(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.strip_prefix("held ")?.split_whitespace().next()?.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
}

/// Why the trials of result `id` failed, as one text.
fn failure_text(env: &Env, id: &str) -> String {
    failures(env, id).into_iter().map(|(_, r)| r).collect()
}

/// TCP, UDP, UDP-Lite and MPTCP buffers count against the memory limit
/// (red team, session 39: under cgroup v1, which charges them apart from
/// the limit, a test held 600 MiB of loopback TCP buffers under 64 MiB,
/// 1.09 GiB with 1-byte `MSG_EOR` writes, 1.6 GiB of UDP-Lite, 152 MiB of
/// MPTCP; and in the next session, connections its listener never
/// accepted, which the kernel makes and charges to no cgroup until
/// accepted: 128 MiB for 1,000, and 768 MiB with reset ones, which no
/// socket dump lists; then 1 GiB of the sockets alone, reset before
/// sending anything, and 763 MiB in UDP error queues: transmit timestamps
/// never read back; then the error queues of TCP sockets reset by their
/// peer, which leave the connection hash, kept by descriptor or in flight
/// in a Unix socket: 8 MiB each, 520 MiB in ten seconds unwatched; then, in
/// red team round 5, option memory — TCP MD5 keys: 881 MiB — corked UDP
/// datagrams (round 6: 990 MiB), TCP send queues of one-byte fragments
/// each keeping a 32 KiB page charged to nobody (round 7: 3 GiB), and error queues filled while a look walked
/// 380,000 descriptors and the watch then paused ten times as long:
/// 403 MiB). Each way opens pairs over the test's own
/// loopback whose receivers never read, and says what its sockets hold
/// after each pair (`SO_MEMINFO`: received, queued to send, reserved; for
/// the unaccepted, the machine's TCP memory it added), then keeps them:
/// the kernel refuses to grow them much past the limit, and engine stops
/// the test once they and the rest of its memory pass it, naming the limit.
/// MPTCP is off in the test's network namespace (an MPTCP listener's
/// unaccepted connections hold what no counter sees): refused, ENOPROTOOPT.
#[test]
#[ignore = "needs root"]
fn socket_buffers_count_against_the_memory_limit() {
    require_root();
    let _one = UNCHARGED_SOCKETS.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let script = r#"
import array, fcntl, socket, struct, sys, termios, time
kind = sys.argv[1]
def held(s):
    m = struct.unpack("=9I", s.getsockopt(socket.SOL_SOCKET, 55, 36))
    return m[0] + m[4] + m[5]
def unexplained():
    m = {l.split(":")[0]: int(l.split()[1]) for l in open("/proc/meminfo")}
    kinds = ["Active", "Inactive", "Unevictable", "Slab", "KernelStack", "PageTables", "SecPageTables", "Percpu", "Hugetlb", "VmallocUsed"]
    return (m["MemTotal"] - m["MemFree"] - sum(m.get(k, 0) for k in kinds) - m["KReclaimable"] + m["SReclaimable"]) * 1024
def tcpmem():
    tcp = [l for l in open("/proc/net/sockstat") if l.startswith("TCP:")][0].split()
    return int(tcp[tcp.index("mem") + 1]) * 4096
keep, total = [], 0
if kind == "padded":
    # Descriptors by the hundred thousand (20 processes with 19,000 each,
    # cheap: one Unix socket dup'd) and two sockets out of the connection
    # hash, so that each look walks every descriptor table.
    import os
    a, b = socket.socketpair()
    for f in range(10, 19010): os.dup2(a.fileno(), f, inheritable=True)
    for k in range(20):
        if os.fork() == 0: os.execv("/bin/sleep", ["sleep", "40"])
    for f in range(10, 19010): os.close(f)
    keep += [socket.socket(), socket.socket()]
    time.sleep(2)
    kind = "errqueue"
for n in range(400):
    try:
        if kind == "frags":
            # One-byte sends on a connection whose peer never reads, each
            # after a corked UDP datagram took the rest of the thread's
            # 32 KiB send page: each byte keeps a page, charged to nobody.
            if n == 0:
                before = unexplained()
                r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.1", 0)); r.setblocking(False)
                d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); d.connect(r.getsockname())
                l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(16)
                keep += [r, d, l]; c = None
            for k in range(64):
                if c is None:
                    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
                    c.connect(l.getsockname()); p, _ = l.accept(); p.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    c.setblocking(False); keep += [c, p]
                    try: c.send(b"z" * 65536)
                    except BlockingIOError: pass
                    time.sleep(0.05)
                d.send(b"y", socket.MSG_MORE); d.send(b"y" * 32767, 0)
                try:
                    while True: r.recv(70000)
                except BlockingIOError: pass
                try: c.send(b"x")
                except BlockingIOError: c = None
            # What the machine's kernel took that none of its counts says
            # (as engine reads it): the pages kept.
            total = unexplained() - before
            # 100 MiB a second: what a look every 50 ms stops near the
            # limit (faster, the overshoot grows with the rate).
            time.sleep(0.02)
        elif kind == "cork":
            # A datagram corked (MSG_MORE) waits in its socket's write queue,
            # charged to no memory cgroup: 40 sockets a round.
            for k in range(40):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(("127.0.0.1", 9))
                s.send(b"c" * 65000, socket.MSG_MORE)
                keep.append(s); total += struct.unpack("=9I", s.getsockopt(socket.SOL_SOCKET, 55, 36))[2]
        elif kind == "md5":
            # TCP MD5 keys until the socket's option memory is full (963
            # keys, 180 KiB of the kernel's): charged to no memory cgroup.
            s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            for k in range(2000):
                peer = struct.pack("=H", socket.AF_INET6) + struct.pack("!HI16sI", 0, 0, b"\xfd" + (n * 10000 + k).to_bytes(15, "big"), 0)
                try: s.setsockopt(socket.IPPROTO_TCP, 14, peer.ljust(128, b"\0") + struct.pack("=BBHI", 0, 0, 80, 0) + b"k" * 80)
                except OSError: break
            keep.append(s); total += struct.unpack("=9I", s.getsockopt(socket.SOL_SOCKET, 55, 36))[6]
        elif kind == "resetqueue" or kind == "inflight":
            # A connection whose sender asked a software transmit timestamp
            # of each 1-byte write: its error queue keeps a copy of each
            # (8 MiB). Then its peer resets it: out of the connection hash
            # and the namespace's count, the queue kept. Kept by descriptor,
            # or sent in flight over a Unix socket and closed.
            if n == 0:
                l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(16); u = socket.socketpair(); keep += [l, u]
            c = socket.socket(); c.connect(l.getsockname()); a, _ = l.accept()
            c.setsockopt(socket.SOL_SOCKET, 37, (1 << 1) | (1 << 4))
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
            c.setblocking(False); a.setblocking(False)
            for k in range(12000):
                try: c.send(b"r")
                except OSError: pass
                try:
                    while a.recv(1 << 20): pass
                except OSError: pass
            a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); a.close()
            time.sleep(0.001)
            total += struct.unpack("=9I", c.getsockopt(socket.SOL_SOCKET, 55, 36))[0]
            if kind == "inflight":
                u[0].sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [c.fileno()]))]); c.close()
            else:
                keep.append(c)
        elif kind == "errqueue":
            # Datagrams to a port nobody has, each with a software transmit
            # timestamp asked for: the socket's error queue keeps a copy of
            # each, charged to the socket alone.
            x = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            x.setsockopt(socket.SOL_IP, 11, 1)
            x.setsockopt(socket.SOL_SOCKET, 37, (1 << 1) | (1 << 4))
            x.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30); x.setblocking(False)
            for k in range(140):
                try: x.sendto(b"y" * 65000, ("127.0.0.1", 9))
                except OSError: pass
            keep.append(x); total += struct.unpack("=9I", x.getsockopt(socket.SOL_SOCKET, 55, 36))[0]
        elif kind == "empty":
            # Reset connections that sent nothing: each leaves the socket
            # the kernel made (2,368 bytes) in its listener's queue, and no
            # buffers. 100 a round, a new listener every 4,000.
            if n % 40 == 0:
                l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4096); keep.append(l)
            for j in range(100):
                c = socket.socket(); c.connect(keep[-1].getsockname())
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
            total = (n + 1) * 100 * 2368
        elif kind in ("unaccepted", "reset", "unaccepted6"):
            # Connections to its own listener, never accepted: what they
            # hold, the machine's TCP memory less what it was. Reset ones
            # leave the connection hash (no socket dump lists them) and
            # free their descriptors, their data still queued. IPv6 ones
            # are counted in sockstat6, not sockstat.
            six = kind == "unaccepted6"
            family, host = (socket.AF_INET6, "::1") if six else (socket.AF_INET, "127.0.0.1")
            if n == 0:
                base = tcpmem(); l = socket.socket(family); l.bind((host, 0)); l.listen(4096); keep.append(l)
            for j in range(10):
                c = socket.socket(family); c.connect(keep[0].getsockname()[:2]); c.setblocking(False)
                c.send(b"q" * 120000)
                if kind == "reset":
                    for w in range(100):
                        if struct.unpack("i", fcntl.ioctl(c, termios.TIOCOUTQ, b"\0" * 4))[0] == 0: break
                        time.sleep(0.001)
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
                else:
                    keep.append(c)
            total = max(tcpmem() - base, 0)
        elif kind == "udp" or kind == "udplite":
            proto = 136 if kind == "udplite" else 0
            r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, proto)
            r.bind(("127.0.0.1", 0)); r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, proto); s.setblocking(False)
            for i in range(8000):
                try: s.sendto(b"u", r.getsockname())
                except OSError: break
            keep += [r, s]; total += held(r) + held(s)
        else:
            proto = 262 if kind == "mptcp" else 0
            l = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
            l.bind(("127.0.0.1", 0)); l.listen(1)
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
            c.connect(l.getsockname()); a, _ = l.accept(); c.setblocking(False)
            data, flags = (b"e", 0x80) if kind == "eor" else (b"t" * 65536, 0)
            for i in range(40000):
                try: c.send(data, flags)
                except OSError: break
            keep += [l, c, a]; total += held(c) + held(a)
    except OSError as e:
        print("refused", e, flush=True); break
    print("held", total >> 20, "MiB", flush=True)
time.sleep(2)
"#;
    let h = Hostile::new(&env);
    let kinds = [
        "tcp",
        "eor",
        "udp",
        "udplite",
        "mptcp",
        "unaccepted",
        "unaccepted6",
        "reset",
        "empty",
        "errqueue",
        "resetqueue",
        "inflight",
        "md5",
        "padded",
        "cork",
        "frags",
    ];
    for kind in kinds {
        let id = format!("sk{kind}");
        let run = format!("python3 {{{{profile_dir}}}}/q.py {kind}");
        h.profile(&id, &script_profile(&id, "sh", &run, "sandbox: {memory: 64MiB}\n", "")).file(
            &id,
            "q.py",
            script.as_bytes(),
        );
    }
    assert_eq!(h.add(&env, "evil").code, 0);
    let mptcp_outside = std::fs::read_to_string("/proc/sys/net/mptcp/enabled").ok();
    for kind in kinds {
        let id = format!("sk{kind}");
        let began = Instant::now();
        let r = env.bench(&[&format!("evil/{id}"), "--runs", "1", "--save", &id, "--logs", "all"]);
        let took = began.elapsed();
        let text = result_text(&env, &id);
        let most = most_held(&text);
        let reason = failure_text(&env, &id);
        eprintln!("{id}: at most {most} MiB held, exit {:?}, {took:?}", r.code);
        // The watch stops when the test ends, however long its pause: a
        // pause of ten looks of 3 s (the padded tables) once held engine
        // 30 s past its test's end.
        assert!(kind != "padded" || took < Duration::from_secs(20), "{id}: engine took {took:?}");
        assert!(most <= 320, "{id}: {most} MiB of socket buffers held under a 64 MiB limit ({reason}; {r:?})");
        if kind == "mptcp" {
            // Off in the test's network namespace (its listeners'
            // connections would be charged to nothing until accepted),
            // and still on outside.
            assert!(text.contains("refused [Errno 92]"), "{id}: MPTCP not refused: {text}\n{r:?}");
            assert_eq!(r.code, 0, "{id}: {r:?}");
            assert_eq!(std::fs::read_to_string("/proc/sys/net/mptcp/enabled").ok(), mptcp_outside);
            continue;
        }
        assert_eq!(r.code, 4, "{id}: {r:?}");
        assert!(reason.contains("64.0 MiB of memory"), "{id}: {reason}\n{r:?}");
    }
}

/// What a test leaves in flight in a cycle of Unix sockets dies with it
/// (red team, session 40: listeners holding 76,000 reset connections,
/// 211 MiB of the host's memory, sent over a Unix socket pair and each end
/// over the other, then closed, stayed after the test ended until some
/// process closed a Unix socket with descriptors in flight): engine has
/// the kernel collect them as each confined test ends.
#[test]
#[ignore = "needs root"]
fn what_a_test_leaves_in_flight_dies_with_it() {
    require_root();
    let _one = UNCHARGED_SOCKETS.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let script = r#"
import array, socket, struct
ls = []
for i in range(5):
    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4096); ls.append(l)
    for j in range(4000):
        c = socket.socket(); c.connect(l.getsockname())
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
a, b = socket.socketpair()
fds = array.array("i", [l.fileno() for l in ls] + [a.fileno(), b.fileno()])
b.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
for l in ls: l.close()
a.close(); b.close()
print("left 20000 connections in flight", flush=True)
"#;
    let tcp_sockets = || {
        let stat = std::fs::read_to_string("/proc/net/sockstat").unwrap();
        let tcp: Vec<&str> = stat.lines().find(|l| l.starts_with("TCP:")).unwrap().split_whitespace().collect();
        tcp[tcp.iter().position(|w| *w == "alloc").unwrap() + 1].parse::<i64>().unwrap()
    };
    let h = Hostile::new(&env);
    h.profile(
        "inflight",
        &script_profile("inflight", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 256MiB}\n", ""),
    )
    .file("inflight", "q.py", script.as_bytes());
    assert_eq!(h.add(&env, "evil").code, 0);
    let before = tcp_sockets();
    let r = env.bench(&["evil/inflight", "--runs", "1", "--save", "f", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "f"));
    assert!(result_text(&env, "f").contains("left 20000 connections in flight"));
    // The kernel collects in the background: a few seconds at most.
    let deadline = Instant::now() + Duration::from_secs(5);
    while tcp_sockets() - before > 5000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        tcp_sockets() - before <= 5000,
        "{} TCP sockets more than before the test, after it",
        tcp_sockets() - before
    );
}

/// The host's own sockets growing during a test are not blamed on a test
/// that has no TCP socket (red team, session 40: a confined `sleep` under
/// 64 MiB was killed while the host queued 120 MiB on loopback).
#[test]
#[ignore = "needs root"]
fn the_hosts_sockets_are_not_a_socketless_tests() {
    require_root();
    let _one = UNCHARGED_SOCKETS.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let h = Hostile::new(&env);
    h.profile("calm", &script_profile("calm", "sh", "sleep 3", "sandbox: {memory: 64MiB}\n", ""));
    assert_eq!(h.add(&env, "evil").code, 0);
    let host = std::thread::spawn(|| {
        use std::io::Write;
        std::thread::sleep(Duration::from_millis(1000));
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut held = Vec::new();
        for _ in 0..40 {
            let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
            c.set_nonblocking(true).unwrap();
            let (a, _) = l.accept().unwrap();
            let chunk = vec![0u8; 1 << 20];
            for _ in 0..3 {
                let _ = c.write(&chunk);
            }
            held.push((c, a));
        }
        std::thread::sleep(Duration::from_millis(2500));
        held.len()
    });
    let r = env.bench(&["evil/calm", "--runs", "1", "--save", "calm", "--logs", "all"]);
    assert_eq!(host.join().unwrap(), 40);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "calm"));
}

/// Page cache is not memory the test holds (red team, session 39): a test
/// that wrote 400 MiB under a 256 MiB limit (its cgroup full of cache),
/// then five times let 8 MiB of netlink replies queue for 0.2 s before
/// reading them, runs to its end — the watch counts the working set, not
/// the cache the kernel would reclaim; and so does one whose cache is
/// active (read three times) when it streams over TCP (session 40: killed
/// at 61.5 MiB of cache and 3.9 MiB of buffers under 64 MiB); and a
/// server under 64 MiB with connections coming and going by the thousand
/// (the watch looks at every socket of the test then, and one closing
/// while a look runs is missing from it), sockets never connected, reset
/// ones held open and descriptors passed over a Unix socket; and a
/// program whose first thread exited while another holds a pool of
/// sockets never connected (red team round 5: killed, its sockets counted
/// as nowhere at 32 MiB each — its namespaces and descriptor table went
/// with the first thread); and one handing two sockets to a worker that
/// takes them a second later; and 600 MiB queued on Unix sockets beside a
/// TCP listener, and a TCP pair pinging while the host frees 1.5 GiB.
#[test]
#[ignore = "needs root"]
fn page_cache_does_not_trip_the_socket_watch() {
    require_root();
    let _one = UNCHARGED_SOCKETS.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let script = r#"
import socket, struct, time
with open("data.bin", "wb") as f:
    for i in range(400): f.write(b"\0" * (1 << 20))
msg = struct.pack("=IHHII", 16 + 32000, 0x1f0, 0x1 | 0x4, 1, 0) + b"\0" * 32000
for r in range(5):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((0, 0))
    for i in range(128): s.sendto(msg, (0, 0))
    time.sleep(0.2)
    s.setblocking(False)
    try:
        while True: s.recv(1 << 16)
    except BlockingIOError: pass
    s.close()
print("queued and read 5 times", flush=True)
"#;
    let h = Hostile::new(&env);
    h.profile(
        "cachefp",
        &script_profile("cachefp", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 256MiB}\n", ""),
    )
    .file("cachefp", "q.py", script.as_bytes());
    // A file server's shape (red team, session 40): 54 MiB read three
    // times (active cache, which the kernel reclaims as well), then 64 MiB
    // streamed over loopback TCP to a client that starts reading late.
    let server = r#"
import os, socket, threading, time
with open("data.bin", "wb") as f:
    for i in range(54): f.write(os.urandom(1 << 20))
for r in range(3):
    with open("data.bin", "rb") as f:
        while f.read(1 << 20): pass
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
got = [0]
def client():
    c = socket.socket(); c.connect(l.getsockname()); time.sleep(0.5)
    while True:
        b = c.recv(1 << 16)
        if not b: break
        got[0] += len(b)
t = threading.Thread(target=client); t.start()
a, _ = l.accept()
for i in range(64): a.sendall(b"z" * (1 << 20))
a.close(); t.join()
print("streamed", got[0] >> 20, "MiB", flush=True)
"#;
    h.profile(
        "activefp",
        &script_profile("activefp", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 64MiB}\n", ""),
    )
    .file("activefp", "q.py", server.as_bytes());
    let churn = r#"
import array, socket, struct, threading, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(128)
def serve():
    while True:
        a, _ = l.accept()
        try: a.sendall(a.recv(4096))
        except OSError: pass
        a.close()
threading.Thread(target=serve, daemon=True).start()
l2 = socket.socket(); l2.bind(("127.0.0.1", 0)); l2.listen(64)
idle = [socket.create_connection(l2.getsockname()) for i in range(30)]
idle += [l2.accept()[0] for i in range(30)]
unconnected = [socket.socket() for i in range(5)] + [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for i in range(5)]
u = socket.socketpair()
n, end = 0, time.time() + 4
while time.time() < end:
    c = socket.create_connection(l.getsockname()); c.sendall(b"p" * 1000); c.recv(4096)
    if n % 50 == 0:
        # Reset by its peer, held open a while; passed over a Unix socket.
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        u[0].sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [c.fileno()]))])
        msg, anc, _, _ = u[1].recvmsg(1, socket.CMSG_SPACE(4))
        socket.socket(fileno=array.array("i", anc[0][2])[0]).close()
    c.close(); n += 1
print("connections", n, flush=True)
"#;
    h.profile(
        "churnfp",
        &script_profile("churnfp", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 64MiB}\n", ""),
    )
    .file("churnfp", "q.py", churn.as_bytes());
    let leader = r#"
import ctypes, os, socket, threading, time
def work():
    pool = [socket.socket() for i in range(4)]
    time.sleep(3)
    print("worker done with", len(pool), "sockets", flush=True)
    os._exit(0)
threading.Thread(target=work).start()
time.sleep(0.2)
# The first thread ends (ctypes lets the interpreter's lock go first).
ctypes.CDLL(None).pthread_exit(None)
"#;
    h.profile(
        "leaderfp",
        &script_profile("leaderfp", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 64MiB}\n", ""),
    )
    .file("leaderfp", "q.py", leader.as_bytes());
    // Sockets handed to a worker before use, which takes them a second
    // later (red team round 6: killed, two sockets in flight counted at the
    // most one can hold).
    let handoff = r#"
import array, os, socket, time
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
if os.fork() == 0:
    a.close(); time.sleep(1)
    for i in range(2):
        msg, anc, _, _ = b.recvmsg(1, socket.CMSG_SPACE(4))
        s = socket.socket(fileno=array.array("i", anc[0][2])[0]); s.connect(("127.0.0.1", 9)); s.close()
    os._exit(0)
b.close()
for i in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))]); s.close()
os.wait()
print("handed over 2 sockets", flush=True)
"#;
    h.profile(
        "handfp",
        &script_profile("handfp", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 64MiB}\n", ""),
    )
    .file("handfp", "q.py", handoff.as_bytes());
    // Charged kernel memory off the LRU lists (Unix socket queues) beside
    // a TCP listener, and a TCP pair pinging while the host frees 1.5 GiB
    // (red team round 8: both killed, the first counted twice, the second
    // blamed for the free pages left on a CPU's own list).
    let unixq = r#"
import socket, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
keep, sent = [], 0
while sent < 600 << 20:
    a, b = socket.socketpair(); a.setblocking(False)
    try:
        while sent < 600 << 20: sent += a.send(b"q" * 65536)
    except BlockingIOError: pass
    keep.append((a, b))
time.sleep(2)
print("queued", sent >> 20, "MiB", flush=True)
"#;
    let ping = r#"
import socket, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(8)
c = socket.create_connection(l.getsockname()); s, _ = l.accept()
for i in range(60):
    c.send(b"ping"); s.recv(4); time.sleep(0.1)
print("pinged", flush=True)
"#;
    h.profile(
        "unixfp",
        &script_profile("unixfp", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 1GiB}\n", ""),
    )
    .file("unixfp", "q.py", unixq.as_bytes())
    .profile(
        "pingfp",
        &script_profile("pingfp", "sh", "python3 {{profile_dir}}/q.py", "sandbox: {memory: 64MiB}\n", ""),
    )
    .file("pingfp", "q.py", ping.as_bytes());
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/unixfp", "--runs", "1", "--save", "uq", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "uq"));
    assert!(result_text(&env, "uq").contains("queued 600 MiB"));
    let bloat = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(2));
        let mut b = vec![0u8; 1536 << 20];
        for i in (0..b.len()).step_by(4096) {
            b[i] = 1;
        }
        std::hint::black_box(&b);
    });
    let r = env.bench(&["evil/pingfp", "--runs", "1", "--save", "pf", "--logs", "all"]);
    bloat.join().unwrap();
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "pf"));
    assert!(result_text(&env, "pf").contains("pinged"));
    let r = env.bench(&["evil/handfp", "--runs", "1", "--save", "ho", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "ho"));
    assert!(result_text(&env, "ho").contains("handed over 2 sockets"));
    let r = env.bench(&["evil/leaderfp", "--runs", "1", "--save", "z", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "z"));
    assert!(result_text(&env, "z").contains("worker done with 4 sockets"));
    let r = env.bench(&["evil/churnfp", "--runs", "1", "--save", "n", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "n"));
    assert!(result_text(&env, "n").contains("connections "));
    let r = env.bench(&["evil/cachefp", "--runs", "1", "--save", "c", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "c"));
    assert!(result_text(&env, "c").contains("queued and read 5 times"));
    let r = env.bench(&["evil/activefp", "--runs", "1", "--save", "a", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "a"));
    assert!(result_text(&env, "a").contains("streamed 64 MiB"));
}

/// A test's own cgroups are the root of what it sees (red team, session
/// 39: `/proc/self/cgroup` inside showed the host's cgroup paths and
/// engine's pid): a cgroup namespace rooted where the command was placed.
#[test]
#[ignore = "needs root"]
fn a_test_sees_its_cgroups_as_the_root() {
    require_root();
    let env = Env::new();
    let h = Hostile::new(&env);
    h.profile("cg", &script_profile("cg", "sh", "cat /proc/self/cgroup; echo end of cgroups", "", ""));
    assert_eq!(h.add(&env, "evil").code, 0);
    let r = env.bench(&["evil/cg", "--runs", "1", "--save", "cg", "--logs", "all"]);
    assert_eq!(r.code, 0, "{:?} {r:?}", failures(&env, "cg"));
    let text = result_text(&env, "cg");
    assert!(text.contains("end of cgroups"), "{text}");
    let lines: Vec<&str> =
        text.lines().filter(|l| l.splitn(3, ':').count() == 3 && l.starts_with(char::is_numeric)).collect();
    assert!(!lines.is_empty(), "no cgroup lines: {text}");
    for l in lines {
        assert!(l.ends_with(":/") && !l.contains("engine-"), "a path outside the test's own cgroup: {l}\n{text}");
    }
}
