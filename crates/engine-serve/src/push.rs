//! `engine result push URL NAME`: a saved result sent to an `engine serve`
//! (`POST URL/api/results?name=…` with the bearer token), whole — a
//! fleet's counters and system details too — and the server's answer.

use engine_ops::{Context, browse};
use std::time::Duration;
use thiserror::Error;

/// What to push where.
pub struct Push {
    /// The server's base URL (`http://ci-results:8080`).
    pub url: String,
    /// The saved result to send.
    pub name: String,
    /// The name it is saved as there (default: `name`).
    pub to: Option<String>,
    pub token: String,
    pub timeout: Duration,
}

/// The server's answer.
#[derive(Debug, serde::Deserialize)]
pub struct Pushed {
    pub name: String,
    /// The result's page, from the server's base.
    pub url: String,
    pub appended: bool,
    pub identifiers: usize,
    pub results: usize,
    #[serde(default)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Error)]
pub enum PushError {
    #[error("`{0}` is not an http:// or https:// URL")]
    Url(String),
    #[error("{0}")]
    Result(String),
    #[error("the server refused it ({status}): {message}")]
    Refused { status: u16, message: String },
    #[error("cannot reach {url}: {why}")]
    Unreachable { url: String, why: String },
}

impl PushError {
    /// Whether it is the person's to fix (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, PushError::Url(_)) || matches!(self, PushError::Refused { status: 400 | 401 | 403, .. })
    }
}

/// Whether `url` sends the token in clear text beyond this machine.
pub fn in_clear(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| {
        u.scheme() == "http"
            && !matches!(u.host(), Some(url::Host::Ipv4(a)) if a.is_loopback())
            && !matches!(u.host(), Some(url::Host::Ipv6(a)) if a.is_loopback())
            && u.host_str() != Some("localhost")
    })
}

fn endpoint(base: &str, to: &str) -> Result<reqwest::Url, PushError> {
    let mut u = reqwest::Url::parse(base).map_err(|_| PushError::Url(base.to_string()))?;
    if !matches!(u.scheme(), "http" | "https") || u.host().is_none() {
        return Err(PushError::Url(base.to_string()));
    }
    let path = format!("{}/api/results", u.path().trim_end_matches('/'));
    u.set_path(&path);
    u.set_query(None);
    u.query_pairs_mut().append_pair("name", to);
    Ok(u)
}

pub fn push(cx: &Context, p: &Push) -> Result<Pushed, PushError> {
    let to = p.to.as_deref().unwrap_or(&p.name);
    let url = endpoint(&p.url, to)?;
    let file = browse::exported(cx, &p.name).map_err(|e| PushError::Result(e.to_string()))?;
    let body = serde_json::to_vec(&file).map_err(|e| PushError::Result(e.to_string()))?;
    drop(file);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let unreachable = |e: reqwest::Error| PushError::Unreachable { url: p.url.clone(), why: e.to_string() };
    let client = reqwest::blocking::Client::builder()
        .timeout(p.timeout)
        .user_agent(concat!("engine/", env!("CARGO_PKG_VERSION")))
        // A redirect would carry the token elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(unreachable)?;
    let mut res = client
        .post(url)
        .bearer_auth(&p.token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .map_err(unreachable)?;
    let status = res.status().as_u16();
    // The answer is small; what a server sends past 64 KiB is not read.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut res, 64 * 1024), &mut bytes)
        .map_err(|e| PushError::Unreachable { url: p.url.clone(), why: e.to_string() })?;
    let text = String::from_utf8_lossy(&bytes);
    if !(200..300).contains(&status) {
        let message = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(|e| engine_sys::text::one_line(e).into_owned()))
            .unwrap_or_else(|| engine_sys::text::one_line(&text.chars().take(300).collect::<String>()).into_owned());
        return Err(PushError::Refused { status, message });
    }
    serde_json::from_str(&text).map_err(|e| PushError::Refused { status, message: format!("not engine's answer: {e}") })
}
