//! Downloads that are verified before they are used: each file streams into
//! a temporary file in the cache folder while SHA-256 is computed, is checked
//! against its size and hash, and only then is renamed to
//! `cache/downloads/<sha256>`. A broken transfer resumes with an HTTP Range
//! request where the server allows it; each mirror gets a few attempts with
//! backoff, then the next mirror is tried. `ENGINE_DOWNLOAD_CACHE` (folders
//! and base URLs) is searched before the mirrors, the cache before all.
//! Ctrl-C, a failure or a panic removes the temporary file.

use crate::sys::interrupt;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

/// One file to have in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    pub file: String,
    /// Lower-case hex.
    pub sha256: String,
    pub size: Option<u64>,
    pub urls: Vec<String>,
}

/// Where a file came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Already in the cache: no request was made.
    Cache,
    /// Copied from an `ENGINE_DOWNLOAD_CACHE` folder.
    Folder(PathBuf),
    /// Downloaded from this URL.
    Url(String),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Cache => f.write_str("cache"),
            Origin::Folder(p) => write!(f, "{}", p.display()),
            Origin::Url(u) => f.write_str(u),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Fetched {
    /// `cache/downloads/<sha256>`.
    pub path: PathBuf,
    pub origin: Origin,
    pub bytes: u64,
    pub seconds: f64,
}

#[derive(Debug, Error)]
pub enum DownloadError {
    #[error("{file}: no source had it with sha256 {sha256}:\n{}", .tried.iter().map(|t| format!("  - {t}")).collect::<Vec<_>>().join("\n"))]
    Exhausted { file: String, sha256: String, tried: Vec<String> },
    #[error("{file}: download interrupted; nothing was kept")]
    Interrupted { file: String },
    #[error("{file}: cannot write {}: {source}; nothing was kept", path.display())]
    Write { file: String, path: PathBuf, source: io::Error },
    #[error("{file}: needs {need} bytes but {} has {free} free", dir.display())]
    NoSpace { file: String, dir: PathBuf, need: u64, free: u64 },
    #[error("cannot set up downloads: {0}")]
    Setup(String),
}

impl DownloadError {}

/// An extra place to look before the mirrors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extra {
    /// A folder holding files by name or by sha256.
    Folder(PathBuf),
    /// A base URL: `BASE/<file>` is asked for.
    Base(String),
}

/// Where a download's progress goes. The library draws and prints
/// nothing: the CLI shows a bar per file on a terminal, else a line per
/// download.
pub trait Progress: Send + Sync {
    /// A transfer of `file` (`key`: its SHA-256, unique among the
    /// transfers running) from `url` starts at byte `at` of `total` (when known).
    fn started(&self, key: &str, file: &str, url: &str, at: u64, total: Option<u64>);
    /// `at` bytes of transfer `key` are in.
    fn advanced(&self, key: &str, at: u64);
    /// Transfer `key` ended, complete or not.
    fn ended(&self, key: &str);
    /// `file` is in the cache, `bytes` long, its SHA-256 verified, after `seconds`.
    fn fetched(&self, file: &str, bytes: u64, seconds: f64);
}

/// A [`Progress`] held by [`Settings`] (cloned with them).
#[derive(Clone)]
pub struct ProgressSink(pub std::sync::Arc<dyn Progress>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// How downloads behave; [`Settings::from_env`] reads the environment.
#[derive(Debug, Clone)]
pub struct Settings {
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes (or the response headers).
    pub read_timeout: Duration,
    /// Attempts per mirror.
    pub retries: u32,
    /// Pause before the second attempt; doubled for each further one.
    pub backoff: Duration,
    /// Downloads run at once.
    pub jobs: usize,
    pub extra: Vec<Extra>,
    /// Where each transfer's progress goes (none: nothing is shown).
    pub progress: Option<ProgressSink>,
    /// How much a downloaded archive may unpack to
    /// (`ENGINE_DOWNLOAD_UNPACK_MAX`, `ENGINE_DOWNLOAD_UNPACK_RATIO`).
    pub unpack: super::extract::Limits,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            connect_timeout: Duration::from_secs(15),
            read_timeout: Duration::from_secs(30),
            retries: 3,
            backoff: Duration::from_millis(500),
            jobs: 4,
            extra: Vec::new(),
            progress: None,
            unpack: super::extract::Limits::DOWNLOADS,
        }
    }
}

impl Settings {
    /// Defaults, with `ENGINE_DOWNLOAD_TIMEOUT`, `ENGINE_DOWNLOAD_RETRIES`,
    /// `ENGINE_DOWNLOAD_JOBS`, `ENGINE_DOWNLOAD_CACHE` and the
    /// `ENGINE_DOWNLOAD_UNPACK_*` limits applied, as `var` gives them.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Settings {
        use crate::env;
        let mut s = Settings::default();
        let num = |k: &str| var(k).and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| *v > 0.0);
        if let Some(t) = num(env::ENGINE_DOWNLOAD_TIMEOUT) {
            s.read_timeout = Duration::from_secs_f64(t);
            s.connect_timeout = Duration::from_secs_f64(t.min(15.0));
            // Short timeouts (tests, fast LANs) get a short backoff too.
            s.backoff = Duration::from_secs_f64((t / 10.0).min(0.5));
        }
        if let Some(r) = num(env::ENGINE_DOWNLOAD_RETRIES) {
            s.retries = (r as u32).max(1);
        }
        if let Some(j) = num(env::ENGINE_DOWNLOAD_JOBS) {
            s.jobs = (j as usize).clamp(1, 32);
        }
        if let Some(v) = var(env::ENGINE_DOWNLOAD_CACHE) {
            s.extra = parse_extra(&v);
        }
        if let Some(b) = var(env::ENGINE_DOWNLOAD_UNPACK_MAX).and_then(|v| crate::units::parse_size(&v).ok()) {
            s.unpack.max_bytes = b.max(1);
        }
        if let Some(r) = num(env::ENGINE_DOWNLOAD_UNPACK_RATIO) {
            s.unpack.max_ratio = (r as u64).max(1);
        }
        s
    }
}

/// `ENGINE_DOWNLOAD_CACHE`: `:`-separated folders and base URLs (a URL's own
/// `:` after the scheme does not split it).
pub(crate) fn parse_extra(v: &str) -> Vec<Extra> {
    let mut out = Vec::new();
    let parts: Vec<&str> = v.split(':').collect();
    let mut i = 0;
    while i < parts.len() {
        let p = parts[i];
        if (p == "http" || p == "https") && i + 1 < parts.len() && parts[i + 1].starts_with("//") {
            // Re-join `http` + `//host` (+ `port/path` pieces that are digits-first).
            let mut url = format!("{p}:{}", parts[i + 1]);
            i += 2;
            while i < parts.len() && parts[i].chars().next().is_some_and(|c| c.is_ascii_digit()) {
                url.push(':');
                url.push_str(parts[i]);
                i += 1;
            }
            out.push(Extra::Base(url));
            continue;
        }
        if !p.is_empty() {
            out.push(Extra::Folder(PathBuf::from(p)));
        }
        i += 1;
    }
    out
}

/// The HTTP(S) client every engine download uses (profile repositories too):
/// rustls on ring, the timeouts of `settings`, engine's user agent.
pub(crate) fn http_client(settings: &Settings) -> Result<reqwest::blocking::Client, DownloadError> {
    // reqwest is built without a TLS crypto provider; ring is ours.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::blocking::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .timeout(settings.read_timeout)
        .user_agent(concat!("engine/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| DownloadError::Setup(e.to_string()))
}

/// Fetches files into the cache folder.
pub struct Downloader {
    client: reqwest::blocking::Client,
    cache: PathBuf,
    settings: Settings,
}

/// How one attempt at one source ended, when it did not succeed.
enum Failed {
    /// This source does not have it (404, wrong size, wrong content): next source.
    Source(String),
    /// Worth another attempt at the same source (timeout, broken connection, 5xx).
    Retry(String),
    /// Stop: nothing else can help (Ctrl-C, the disk is full).
    Stop(DownloadError),
}

/// The temporary file of one download: removed when dropped unless it was
/// renamed into place. Holds an exclusive lock, so two engines never write it at once.
struct Part {
    path: PathBuf,
    file: File,
    len: u64,
    hasher: Sha256,
    done: bool,
}

impl Part {
    fn open(path: PathBuf) -> io::Result<Part> {
        use std::os::unix::fs::MetadataExt;
        for _ in 0..20 {
            let file = crate::sys::fs::open_lock(&path)?;
            // Waits while another engine downloads it.
            file.lock()?;
            // The holder before us may have renamed the file into the cache
            // meanwhile: the lock only counts if the path still names our file.
            let ours = file.metadata()?.ino();
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.ino() == ours) {
                let mut part = Part { path, file, len: 0, hasher: Sha256::new(), done: false };
                part.rehash()?;
                return Ok(part);
            }
        }
        Err(io::Error::other(format!("{} keeps changing under another engine", path.display())))
    }

    /// Hashes what an earlier, killed run left, so the download resumes after it.
    fn rehash(&mut self) -> io::Result<()> {
        self.hasher = Sha256::new();
        self.file.seek(SeekFrom::Start(0))?;
        let mut buf = vec![0u8; 1 << 20];
        let mut len = 0u64;
        loop {
            let n = self.file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            self.hasher.update(&buf[..n]);
            len += n as u64;
        }
        self.len = len;
        Ok(())
    }

    fn reset(&mut self) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.len = 0;
        self.hasher = Sha256::new();
        Ok(())
    }

    fn write(&mut self, b: &[u8]) -> io::Result<()> {
        self.file.write_all(b)?;
        self.hasher.update(b);
        self.len += b.len() as u64;
        Ok(())
    }
}

impl Drop for Part {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Downloader {
    pub fn new(cache: PathBuf, settings: Settings) -> Result<Downloader, DownloadError> {
        let client = http_client(&settings)?;
        Ok(Downloader { client, cache, settings })
    }

    /// The cached file for `w`, if it is there (checked by size, not re-hashed:
    /// only verified files are ever renamed into the cache).
    pub(crate) fn cached(&self, w: &Want) -> Option<PathBuf> {
        let p = self.cache.join(&w.sha256);
        let m = std::fs::symlink_metadata(&p).ok()?;
        (m.is_file() && w.size.is_none_or(|s| s == m.len())).then_some(p)
    }

    /// Fetches every file, `jobs` at a time; results in the order of `wants`.
    pub fn fetch_all(&self, wants: &[Want]) -> Vec<Result<Fetched, DownloadError>> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<Fetched, DownloadError>>>> =
            Mutex::new((0..wants.len()).map(|_| None).collect());
        let workers = self.settings.jobs.min(wants.len()).max(1);
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= wants.len() {
                            break;
                        }
                        let r = self.fetch(&wants[i]);
                        results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
                    }
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .map(|r| r.expect("every item ran"))
            .collect()
    }

    /// Puts `w` in the cache: from the cache itself, an extra folder or base
    /// URL, or the mirrors in order.
    pub(crate) fn fetch(&self, w: &Want) -> Result<Fetched, DownloadError> {
        let start = Instant::now();
        let done = |path: PathBuf, origin: Origin| {
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            Ok(Fetched { path, origin, bytes, seconds: start.elapsed().as_secs_f64() })
        };
        if let Some(p) = self.cached(w) {
            return done(p, Origin::Cache);
        }
        let write_err = |path: &Path, source: io::Error| DownloadError::Write {
            file: w.file.clone(),
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(&self.cache).map_err(|e| write_err(&self.cache, e))?;
        let part_path = self.cache.join(format!("{}.part", w.sha256));
        let mut part = Part::open(part_path.clone()).map_err(|e| write_err(&part_path, e))?;
        // Another engine may have finished it while we waited for the lock.
        if let Some(p) = self.cached(w) {
            return done(p, Origin::Cache);
        }
        if let Some(size) = w.size {
            let free = crate::sys::fs::free_bytes(&self.cache).unwrap_or(u64::MAX);
            let need = size.saturating_sub(part.len);
            if free < need {
                return Err(DownloadError::NoSpace { file: w.file.clone(), dir: self.cache.clone(), need, free });
            }
        }
        let mut tried = Vec::new();
        for extra in &self.settings.extra {
            match extra {
                Extra::Folder(dir) => {
                    for name in [w.file.as_str(), w.sha256.as_str()] {
                        let src = dir.join(name);
                        if !src.is_file() {
                            continue;
                        }
                        match self.copy_from(&src, w, &mut part) {
                            Ok(()) => return self.finish(part, w, Origin::Folder(src), start),
                            Err(Failed::Stop(e)) => return Err(e),
                            Err(Failed::Source(m) | Failed::Retry(m)) => tried.push(format!("{}: {m}", src.display())),
                        }
                    }
                }
                Extra::Base(base) => {
                    let url = format!("{}/{}", base.trim_end_matches('/'), w.file);
                    match self.try_url(&url, w, &mut part, 1, &mut tried) {
                        Ok(()) => return self.finish(part, w, Origin::Url(url), start),
                        Err(Some(e)) => return Err(e),
                        Err(None) => {}
                    }
                }
            }
        }
        for url in &w.urls {
            match self.try_url(url, w, &mut part, self.settings.retries, &mut tried) {
                Ok(()) => return self.finish(part, w, Origin::Url(url.clone()), start),
                Err(Some(e)) => return Err(e),
                Err(None) => {}
            }
        }
        if tried.is_empty() {
            tried.push("no mirror and no ENGINE_DOWNLOAD_CACHE entry has it".into());
        }
        Err(DownloadError::Exhausted { file: w.file.clone(), sha256: w.sha256.clone(), tried })
    }

    /// Attempts at one URL; `Err(None)`: try the next source.
    fn try_url(
        &self,
        url: &str,
        w: &Want,
        part: &mut Part,
        attempts: u32,
        tried: &mut Vec<String>,
    ) -> Result<(), Option<DownloadError>> {
        let mut delay = self.settings.backoff;
        for attempt in 1..=attempts {
            if attempt > 1 {
                sleep_unless_interrupted(delay);
                delay *= 2;
            }
            if interrupt::requested() {
                return Err(Some(DownloadError::Interrupted { file: w.file.clone() }));
            }
            let r = self.transfer(url, w, part).and_then(|()| self.verify(w, part));
            match r {
                Ok(()) => return Ok(()),
                Err(Failed::Stop(e)) => return Err(Some(e)),
                Err(Failed::Source(m)) => {
                    tried.push(format!("{url}: {m}"));
                    return Err(None);
                }
                Err(Failed::Retry(m)) => tried.push(format!("{url}: {m} (attempt {attempt} of {attempts})")),
            }
        }
        Err(None)
    }

    /// Checks the finished temporary file against the size and hash; a
    /// mismatch empties it (the content came from this source).
    fn verify(&self, w: &Want, part: &mut Part) -> Result<(), Failed> {
        let got = crate::sys::hash::hex(&part.hasher.clone().finalize());
        let size_ok = w.size.is_none_or(|s| s == part.len);
        if got == w.sha256 && size_ok {
            return Ok(());
        }
        let len = part.len;
        part.reset().map_err(|e| self.stop_write(w, part, e))?;
        if !size_ok {
            Err(Failed::Source(format!("got {len} bytes, expected {}", w.size.unwrap_or(0))))
        } else {
            Err(Failed::Source(format!("sha256 mismatch: got {got}")))
        }
    }

    fn stop_write(&self, w: &Want, part: &Part, e: io::Error) -> Failed {
        Failed::Stop(DownloadError::Write { file: w.file.clone(), path: part.path.clone(), source: e })
    }

    /// One request: resumes with Range when the temporary file has bytes.
    fn transfer(&self, url: &str, w: &Want, part: &mut Part) -> Result<(), Failed> {
        let (resp, expected_total) = self.request(url, w, part)?;
        let progress = self.settings.progress.as_ref().map(|p| p.0.as_ref());
        if let Some(p) = progress {
            p.started(&w.sha256, &w.file, url, part.len, expected_total.or(w.size));
        }
        let result = self.stream(resp, w, part, progress);
        if let Some(p) = progress {
            p.ended(&w.sha256);
        }
        if let Err(Failed::Source(m)) = &result
            && m.starts_with("sends more")
        {
            part.reset().map_err(|e| self.stop_write(w, part, e))?;
        }
        result?;
        let want_len = expected_total.or(w.size);
        if let Some(t) = want_len
            && part.len < t
        {
            return Err(Failed::Retry(format!("the body ended after {} of {t} bytes", part.len)));
        }
        Ok(())
    }

    /// Sends the request (with Range from the temporary file's length) and
    /// reads its status: the response and the length the whole file will
    /// have, when the server says. A server that does not resume where asked
    /// empties the temporary file.
    fn request(
        &self,
        url: &str,
        w: &Want,
        part: &mut Part,
    ) -> Result<(reqwest::blocking::Response, Option<u64>), Failed> {
        use reqwest::StatusCode;
        use reqwest::header::{CONTENT_RANGE, RANGE};
        let mut req = self.client.get(url);
        let resume_from = part.len;
        if resume_from > 0 {
            req = req.header(RANGE, format!("bytes={resume_from}-"));
        }
        let resp = req.send().map_err(|e| Failed::Retry(describe(&e)))?;
        let expected_total = match resp.status() {
            StatusCode::PARTIAL_CONTENT if resume_from > 0 => {
                let start = resp
                    .headers()
                    .get(CONTENT_RANGE)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("bytes "))
                    .and_then(|v| v.split('-').next())
                    .and_then(|v| v.trim().parse::<u64>().ok());
                if start != Some(resume_from) {
                    part.reset().map_err(|e| self.stop_write(w, part, e))?;
                    return Err(Failed::Retry("the server resumed at the wrong offset; starting over".into()));
                }
                resp.content_length().map(|n| n + resume_from)
            }
            StatusCode::OK => {
                if resume_from > 0 {
                    // The server ignored the Range: start over.
                    part.reset().map_err(|e| self.stop_write(w, part, e))?;
                }
                resp.content_length()
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                part.reset().map_err(|e| self.stop_write(w, part, e))?;
                return Err(Failed::Retry("the server refused to resume; starting over".into()));
            }
            s if s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS || s == StatusCode::REQUEST_TIMEOUT => {
                return Err(Failed::Retry(format!("HTTP {s}")));
            }
            s => return Err(Failed::Source(format!("HTTP {s}"))),
        };
        if let (Some(total), Some(size)) = (expected_total, w.size)
            && total != size
        {
            return Err(Failed::Source(format!("the server has {total} bytes, expected {size}")));
        }
        Ok((resp, expected_total))
    }

    /// Appends the body to the temporary file. SHA-256 runs on its own
    /// thread while this one reads the socket and writes the file: on two
    /// cores the download then costs what the copy costs, not the copy plus
    /// the hash.
    fn stream(
        &self,
        body: impl Read + Send + 'static,
        w: &Want,
        part: &mut Part,
        progress: Option<&dyn Progress>,
    ) -> Result<(), Failed> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(8);
        let mut hasher = std::mem::take(&mut part.hasher);
        // The socket is read on a thread of its own: a server that stalls
        // holds that thread (until the read timeout), never Ctrl-C.
        let chunks = read_chunks(body, part.len).map_err(|e| Failed::Retry(e.to_string()))?;
        std::thread::scope(|scope| {
            let h = scope.spawn(move || {
                for buf in rx {
                    hasher.update(&buf);
                }
                hasher
            });
            let result = loop {
                if interrupt::requested() {
                    break Err(Failed::Stop(DownloadError::Interrupted { file: w.file.clone() }));
                }
                let (buf, end) = match chunks.recv_timeout(INTERRUPT_POLL) {
                    Ok(c) => c,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        break Err(Failed::Retry("the reading thread stopped".into()));
                    }
                };
                let filled = buf.len();
                if filled > 0 {
                    if let Err(e) = part.file.write_all(&buf) {
                        break Err(self.stop_write(w, part, e));
                    }
                    part.len += filled as u64;
                    if tx.send(buf).is_err() {
                        break Err(Failed::Retry("the hashing thread stopped".into()));
                    }
                }
                if let Some(size) = w.size
                    && part.len > size
                {
                    break Err(Failed::Source(format!("sends more than the expected {size} bytes")));
                }
                if let Some(p) = progress {
                    p.advanced(&w.sha256, part.len);
                }
                match end {
                    Some(Ok(())) => break Ok(()),
                    Some(Err(b)) => break Err(Failed::Retry(b.to_string())),
                    None => {}
                }
            };
            drop(tx);
            part.hasher = h.join().unwrap_or_default();
            result
        })
    }

    /// Copies a file from an extra folder through the hasher.
    fn copy_from(&self, src: &Path, w: &Want, part: &mut Part) -> Result<(), Failed> {
        part.reset().map_err(|e| self.stop_write(w, part, e))?;
        let mut f = File::open(src).map_err(|e| Failed::Source(e.to_string()))?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            if interrupt::requested() {
                return Err(Failed::Stop(DownloadError::Interrupted { file: w.file.clone() }));
            }
            let n = f.read(&mut buf).map_err(|e| Failed::Source(e.to_string()))?;
            if n == 0 {
                break;
            }
            part.write(&buf[..n]).map_err(|e| self.stop_write(w, part, e))?;
        }
        self.verify(w, part)
    }

    /// Flushes the verified temporary file and renames it into the cache.
    fn finish(&self, mut part: Part, w: &Want, origin: Origin, start: Instant) -> Result<Fetched, DownloadError> {
        let dest = self.cache.join(&w.sha256);
        let werr = |source| DownloadError::Write { file: w.file.clone(), path: dest.clone(), source };
        part.file.sync_all().map_err(werr)?;
        if interrupt::requested() {
            return Err(DownloadError::Interrupted { file: w.file.clone() });
        }
        std::fs::rename(&part.path, &dest).map_err(werr)?;
        part.done = true;
        if let Ok(d) = File::open(&self.cache) {
            let _ = d.sync_all();
        }
        let secs = start.elapsed().as_secs_f64();
        if let (Some(p), false) = (&self.settings.progress, matches!(origin, Origin::Cache)) {
            p.0.fetched(&w.file, part.len, secs);
        }
        Ok(Fetched { path: dest, origin, bytes: part.len, seconds: secs })
    }
}

fn sleep_unless_interrupted(d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end && !interrupt::requested() {
        std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
    }
}

/// reqwest's error with its causes (the first line alone says little).
fn describe(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "cannot connect".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// How often a download looks at Ctrl-C while its server sends nothing.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

/// A transfer whose body broke off.
#[derive(Debug, Error)]
#[error("transfer broke after {after} bytes: {source}")]
struct Broke {
    after: u64,
    source: io::Error,
}

/// Reads `body` on a thread of its own, in chunks of 512 KiB (the last
/// shorter), each with how the transfer ended after it, if it did.
type Chunk = (Vec<u8>, Option<Result<(), Broke>>);

fn read_chunks(mut body: impl Read + Send + 'static, mut written: u64) -> io::Result<std::sync::mpsc::Receiver<Chunk>> {
    const CHUNK: usize = 512 * 1024;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Chunk>(4);
    std::thread::Builder::new().name("engine-download".into()).spawn(move || {
        loop {
            let mut buf = vec![0u8; CHUNK];
            let (filled, end) = fill(&mut body, &mut buf, written);
            buf.truncate(filled);
            written += filled as u64;
            let done = end.is_some();
            // The receiver gone (Ctrl-C, an error): stop reading.
            if tx.send((buf, end)).is_err() || done {
                return;
            }
        }
    })?;
    Ok(rx)
}

/// Reads `body` into `buf` until it is full or the body ends (fewer, larger
/// writes); `written` bytes came before it. Returns the bytes read and, at
/// the end of the body, how it ended.
fn fill(body: &mut impl Read, buf: &mut [u8], written: u64) -> (usize, Option<Result<(), Broke>>) {
    let mut filled = 0;
    while filled < buf.len() {
        match body.read(&mut buf[filled..]) {
            Ok(0) => return (filled, Some(Ok(()))),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return (filled, Some(Err(Broke { after: written + filled as u64, source: e })));
            }
        }
    }
    (filled, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_cache_entries_split_on_colons_but_keep_urls() {
        assert_eq!(
            parse_extra("/srv/cache:http://127.0.0.1:8080/files/::https://mirror/x"),
            vec![
                Extra::Folder("/srv/cache".into()),
                Extra::Base("http://127.0.0.1:8080/files/".into()),
                Extra::Base("https://mirror/x".into()),
            ]
        );
    }

    #[test]
    fn unpack_limits_come_from_the_environment() {
        let s = Settings::from_vars(|_| None);
        assert_eq!(s.unpack, super::super::extract::Limits::DOWNLOADS);
        let vars = |k: &str| match k {
            crate::env::ENGINE_DOWNLOAD_UNPACK_MAX => Some("16GiB".to_string()),
            crate::env::ENGINE_DOWNLOAD_UNPACK_RATIO => Some("500".to_string()),
            _ => None,
        };
        let s = Settings::from_vars(vars);
        assert_eq!((s.unpack.max_bytes, s.unpack.max_ratio), (16 << 30, 500));
        // Nonsense keeps the defaults.
        let s = Settings::from_vars(|_| Some("lots".to_string()));
        assert_eq!(s.unpack, super::super::extract::Limits::DOWNLOADS);
    }
}
