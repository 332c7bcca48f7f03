//! Reading a repository's files: from a folder (a path or `file://` URL) or
//! over HTTP(S) with a blocking reqwest client on rustls. Every read is
//! bounded in size and time; the index is fetched conditionally (ETag,
//! Last-Modified), so an unchanged repository costs one request.
//!
//! The HTTP client is the install module's ([`crate::install::download::http_client`]);
//! repository files are small and must be checked against the signed index
//! before anything else happens, so they are read into memory here rather
//! than through the download cache.

use std::io::Read;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FetchError {
    /// The repository could not be reached at all (connection refused,
    /// DNS, timeout, missing folder): a synced copy can stand in.
    #[error("{url} is unreachable: {msg}")]
    Unreachable { url: String, msg: String },
    #[error("{url}: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} is larger than {max} bytes")]
    TooLarge { url: String, max: u64 },
    #[error("cannot read {url}: {msg}")]
    Read { url: String, msg: String },
}

impl FetchError {
    pub fn is_unreachable(&self) -> bool {
        matches!(self, FetchError::Unreachable { .. })
    }
}

/// Validators of a fetched file, for the next conditional request.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Validators {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

pub enum Fetched {
    Body { bytes: Vec<u8>, validators: Validators },
    NotModified,
}

/// Where a repository lives.
pub enum Source {
    Dir(PathBuf),
    Http { base: String, client: reqwest::blocking::Client },
}

impl Source {
    /// `https://host/path`, `http://…`, `file:///path` or a folder path;
    /// HTTP with the install module's client: same TLS, timeouts and user agent.
    pub(crate) fn new(url: &str, settings: &crate::install::download::Settings) -> Result<Source, FetchError> {
        if url.starts_with("http://") || url.starts_with("https://") {
            let client = crate::install::download::http_client(settings)
                .map_err(|e| FetchError::Read { url: url.into(), msg: e.to_string() })?;
            Ok(Source::Http { base: url.trim_end_matches('/').to_string(), client })
        } else {
            let path = url.strip_prefix("file://").unwrap_or(url);
            Ok(Source::Dir(PathBuf::from(path)))
        }
    }

    pub(crate) fn url_of(&self, rel: &str) -> String {
        match self {
            Source::Dir(d) => d.join(rel).display().to_string(),
            Source::Http { base, .. } => format!("{base}/{rel}"),
        }
    }

    /// Reads `rel` (at most `max` bytes); with `cond`, only when it changed.
    pub(crate) fn get(&self, rel: &str, cond: Option<&Validators>, max: u64) -> Result<Fetched, FetchError> {
        let url = self.url_of(rel);
        match self {
            Source::Dir(d) => {
                if !d.is_dir() {
                    return Err(FetchError::Unreachable { url, msg: "no such folder".into() });
                }
                let p = d.join(rel);
                let meta =
                    std::fs::metadata(&p).map_err(|e| FetchError::Read { url: url.clone(), msg: e.to_string() })?;
                if meta.len() > max {
                    return Err(FetchError::TooLarge { url, max });
                }
                let v = Validators {
                    etag: Some(format!(
                        "{}-{}",
                        meta.len(),
                        meta.modified()
                            .ok()
                            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                            .map(|d| d.as_nanos())
                            .unwrap_or(0)
                    )),
                    last_modified: None,
                };
                if cond.is_some_and(|c| c.etag.is_some() && *c == v) {
                    return Ok(Fetched::NotModified);
                }
                let bytes = read_bounded(
                    std::fs::File::open(&p).map_err(|e| FetchError::Read { url: url.clone(), msg: e.to_string() })?,
                    &url,
                    max,
                )?;
                Ok(Fetched::Body { bytes, validators: v })
            }
            Source::Http { client, .. } => {
                let mut req = client.get(&url);
                if let Some(c) = cond {
                    if let Some(e) = &c.etag {
                        req = req.header(reqwest::header::IF_NONE_MATCH, e);
                    }
                    if let Some(m) = &c.last_modified {
                        req = req.header(reqwest::header::IF_MODIFIED_SINCE, m);
                    }
                }
                let resp = req.send().map_err(|e| {
                    if e.is_connect() || e.is_timeout() {
                        FetchError::Unreachable { url: url.clone(), msg: describe(&e) }
                    } else {
                        FetchError::Read { url: url.clone(), msg: describe(&e) }
                    }
                })?;
                let status = resp.status();
                if status == reqwest::StatusCode::NOT_MODIFIED {
                    return Ok(Fetched::NotModified);
                }
                if !status.is_success() {
                    return Err(FetchError::Status { url, status: status.as_u16() });
                }
                if resp.content_length().is_some_and(|n| n > max) {
                    return Err(FetchError::TooLarge { url, max });
                }
                let header = |h| {
                    resp.headers()
                        .get(h)
                        .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                        .map(str::to_string)
                };
                let validators = Validators {
                    etag: header(reqwest::header::ETAG),
                    last_modified: header(reqwest::header::LAST_MODIFIED),
                };
                let bytes = read_bounded(resp, &url, max)?;
                Ok(Fetched::Body { bytes, validators })
            }
        }
    }

    /// Reads `rel` unconditionally.
    pub(crate) fn get_bytes(&self, rel: &str, max: u64) -> Result<Vec<u8>, FetchError> {
        match self.get(rel, None, max)? {
            Fetched::Body { bytes, .. } => Ok(bytes),
            Fetched::NotModified => unreachable!("an unconditional request is never 304"),
        }
    }
}

fn read_bounded(r: impl Read, url: &str, max: u64) -> Result<Vec<u8>, FetchError> {
    let mut bytes = Vec::new();
    r.take(max + 1).read_to_end(&mut bytes).map_err(|e| FetchError::Read { url: url.into(), msg: e.to_string() })?;
    if bytes.len() as u64 > max {
        return Err(FetchError::TooLarge { url: url.into(), max });
    }
    Ok(bytes)
}

fn describe(e: &reqwest::Error) -> String {
    use std::error::Error;
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}
