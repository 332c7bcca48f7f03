//! HTTP servers on 127.0.0.1 for the download tests: a programmable one for
//! faults (404, stalls, truncated bodies, Range or not, slow drips) that
//! records every request, and nginx from Debian for the honest path. Both
//! stop when dropped; every loop is bounded in count and time.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the server does for a path.
#[derive(Clone)]
pub enum Route {
    /// The body; Range requests get 206 when `ranges`.
    Body { data: Vec<u8>, ranges: bool },
    /// Headers for the whole body, `after` bytes of it, then silence.
    Stall { data: Vec<u8>, after: usize },
    /// The first `times` responses announce the whole body but close after
    /// `at` bytes; later ones (and Range requests when `ranges`) are whole.
    Truncate { data: Vec<u8>, at: usize, times: usize, ranges: bool },
    /// The body, `chunk` bytes every `every`.
    Drip { data: Vec<u8>, chunk: usize, every: Duration },
}

#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub range: Option<String>,
}

pub struct FaultServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

/// Longest a server lives (a test that forgets it cannot leave it running).
const LIFETIME: Duration = Duration::from_secs(300);
const MAX_CONNECTIONS: usize = 500;

impl FaultServer {
    pub fn start(routes: HashMap<String, Route>) -> FaultServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
        let routes = Arc::new(routes);
        let (r2, s2) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut served = 0;
            while !s2.load(Ordering::SeqCst) && start.elapsed() < LIFETIME && served < MAX_CONNECTIONS {
                match listener.accept() {
                    Ok((conn, _)) => {
                        served += 1;
                        let (routes, reqs, stop, counts) = (routes.clone(), r2.clone(), s2.clone(), counts.clone());
                        std::thread::spawn(move || handle(conn, &routes, &reqs, &stop, &counts));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FaultServer { port, requests, stop }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, path.trim_start_matches('/'))
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn handle(
    conn: TcpStream,
    routes: &HashMap<String, Route>,
    reqs: &Mutex<Vec<Request>>,
    stop: &AtomicBool,
    counts: &Mutex<HashMap<String, usize>>,
) {
    conn.set_nonblocking(false).ok();
    conn.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
    let mut range = None;
    for _ in 0..100 {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.eq_ignore_ascii_case("range")
        {
            range = Some(v.trim().to_string());
        }
    }
    reqs.lock().unwrap().push(Request { path: path.clone(), range: range.clone() });
    let n = {
        let mut c = counts.lock().unwrap();
        let e = c.entry(path.clone()).or_insert(0);
        *e += 1;
        *e
    };
    let mut w = conn;
    let start_of =
        |r: &Option<String>| -> Option<usize> { r.as_deref()?.strip_prefix("bytes=")?.split('-').next()?.parse().ok() };
    let whole = |w: &mut TcpStream, data: &[u8], ranges: bool| match start_of(&range).filter(|_| ranges) {
        Some(s) if s < data.len() => {
            let head = format!(
                "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {s}-{}/{}\r\nConnection: close\r\n\r\n",
                data.len() - s,
                data.len() - 1,
                data.len()
            );
            let _ = w.write_all(head.as_bytes());
            let _ = w.write_all(&data[s..]);
        }
        _ => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", data.len());
            let _ = w.write_all(head.as_bytes());
            let _ = w.write_all(data);
        }
    };
    match routes.get(&path) {
        None => {
            let _ = w.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
        Some(Route::Body { data, ranges }) => whole(&mut w, data, *ranges),
        Some(Route::Stall { data, after }) => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", data.len());
            let _ = w.write_all(head.as_bytes());
            let _ = w.write_all(&data[..*after]);
            let t = Instant::now();
            while !stop.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Some(Route::Truncate { data, at, times, ranges }) => {
            if n <= *times && (range.is_none() || !*ranges) {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", data.len());
                let _ = w.write_all(head.as_bytes());
                let _ = w.write_all(&data[..*at]);
                let _ = w.flush();
                let _ = w.shutdown(std::net::Shutdown::Both);
            } else {
                whole(&mut w, data, *ranges);
            }
        }
        Some(Route::Drip { data, chunk, every }) => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", data.len());
            let _ = w.write_all(head.as_bytes());
            let t = Instant::now();
            for c in data.chunks(*chunk) {
                if stop.load(Ordering::SeqCst) || t.elapsed() > Duration::from_secs(60) || w.write_all(c).is_err() {
                    break;
                }
                std::thread::sleep(*every);
            }
        }
    }
    let mut sink = [0u8; 64];
    let _ = reader.get_mut().set_read_timeout(Some(Duration::from_millis(100)));
    let _ = reader.read(&mut sink);
}

/// nginx serving a folder on 127.0.0.1 (Debian's package; `scripts/install-deps.sh` installs it).
pub struct Nginx {
    pub port: u16,
    child: std::process::Child,
    dir: tempfile::TempDir,
}

impl Nginx {
    pub fn start(root: &Path) -> Nginx {
        let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .expect("nginx is installed (scripts/install-deps.sh)");
        let dir = tempfile::tempdir().unwrap();
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        // SAFETY: geteuid cannot fail.
        let user = if unsafe { libc::geteuid() } == 0 { "user root;" } else { "" };
        let d = dir.path().display();
        let conf = format!(
            "{user}\ndaemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log {d}/access.log;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
               sendfile on;\n  server {{ listen 127.0.0.1:{port}; root {}; }}\n}}\n",
            root.display()
        );
        let conf_path = dir.path().join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = std::process::Command::new(bin)
            .args([
                "-c",
                conf_path.to_str().unwrap(),
                "-p",
                dir.path().to_str().unwrap(),
                "-e",
                &format!("{d}/error.log"),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nginx starts");
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(t.elapsed() < Duration::from_secs(10), "nginx did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx { port, child, dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, path)
    }

    /// Requests nginx logged so far.
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("access.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
