//! `engine serve` (issue 57): the saved results over real HTTP on
//! 127.0.0.1 — pages and their JSON and CSV twins, the index kept in step
//! with the files, uploads and `result push`, bad requests, the security
//! headers — and in a real browser (headless Chromium through
//! ChromeDriver, [`browser`]).

mod attacks;
mod browser;
mod pages;
mod uploads;

use crate::common::{Env, repo};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A fixture store made by `scripts/serve-fixture.py` (the benchmark's
/// too) in `env`'s ENGINE_HOME.
pub fn fixture(env: &Env, args: &[&str]) {
    let out = Command::new("python3")
        .arg(repo().join("scripts/serve-fixture.py"))
        .arg(env.home.path().join("results"))
        .args(args)
        .env("ENGINE_VERSION", env!("CARGO_PKG_VERSION"))
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "serve-fixture.py: {}", String::from_utf8_lossy(&out.stderr));
}

/// The upload token the tests start servers with.
pub const TOKEN: &str = "a-long-enough-token-0123456789";

/// A token file (mode 600) holding [`TOKEN`] in `env`'s home; its path.
pub fn token_file(env: &Env) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = env.home.path().join("token");
    std::fs::write(&p, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p.display().to_string()
}

/// An HTTP client that gives up after `limit` and follows no redirect.
pub fn client_within(limit: Duration) -> reqwest::blocking::Client {
    // reqwest is built without a TLS provider in this tree.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder().timeout(limit).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// A running `engine serve` on a port the system picked; stopped with
/// SIGTERM when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    /// The access log and messages, line by line.
    pub log: mpsc::Receiver<String>,
}

impl Server {
    pub fn start(env: &Env, extra: &[&str]) -> Server {
        Self::start_in(env, extra, None)
    }

    /// [`Server::start`] with the server's working directory at `cwd`.
    pub fn start_in(env: &Env, extra: &[&str], cwd: Option<&std::path::Path>) -> Server {
        let mut args = vec!["serve", "--bind", "127.0.0.1:0", "--refresh", "200ms"];
        args.extend_from_slice(extra);
        let mut cmd = env.cmd(&args);
        if let Some(d) = cwd {
            cmd.current_dir(d);
        }
        let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("engine serve starts");
        let (tx, rx) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = rx.recv_timeout(Duration::from_secs(60)).expect("engine serve says where it listens");
        let at = first.split(" at http://").nth(1).and_then(|r| r.split('/').next()).unwrap_or_else(|| {
            panic!("not the start line: {first}");
        });
        Server { base: format!("http://{at}"), child, log: rx }
    }

    pub fn client() -> reqwest::blocking::Client {
        client_within(Duration::from_secs(60))
    }

    /// GET `path`: status, content type, body.
    pub fn get(&self, path: &str) -> (u16, String, String) {
        let r = Self::client().get(format!("{}{path}", self.base)).send().unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let ct = r.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        (r.status().as_u16(), ct, r.text().unwrap())
    }

    /// GET `path`, which must answer 200; its body.
    pub fn ok(&self, path: &str) -> String {
        let (status, _, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    pub fn json(&self, path: &str) -> serde_json::Value {
        serde_json::from_str(&self.ok(path)).unwrap_or_else(|e| panic!("GET {path}: not JSON: {e}"))
    }

    /// SIGTERM; the exit code.
    pub fn stop(mut self) -> i32 {
        self.signal(libc::SIGTERM);
        self.wait_exit(Duration::from_secs(20)).unwrap_or_else(|| panic!("engine serve still ran 20 s after SIGTERM"))
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// The exit code, if the server ends within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let t0 = std::time::Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s.code().unwrap_or(-1));
            }
            if t0.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's memory now and at its peak, bytes (VmRSS, VmHWM).
    pub fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb = |key: &str| {
            status.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        };
        (kb("VmRSS:").unwrap_or(0) * 1024, kb("VmHWM:").unwrap_or(0) * 1024)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
