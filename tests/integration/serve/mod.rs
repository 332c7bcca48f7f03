//! `engine serve` (issue 57): the saved results over real HTTP on
//! 127.0.0.1 — pages and their JSON and CSV twins, the index kept in step
//! with the files, uploads and `result push`, bad requests, the security
//! headers — and in a real browser (headless Chromium through
//! ChromeDriver, [`browser`]).

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
        let mut args = vec!["serve", "--bind", "127.0.0.1:0", "--refresh", "200ms"];
        args.extend_from_slice(extra);
        let mut child =
            env.cmd(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("engine serve starts");
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
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
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
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let t0 = std::time::Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "engine serve still ran 20 s after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
