//! The server's state: the operations' context, connections to the index,
//! the upload token's digest and the Content-Security-Policy; what a page
//! is given.

use crate::page;
use crate::params::Params;
use crate::reply::{HttpError, Want};
use axum::http::HeaderValue;
use engine_ops::Context;
use engine_ops::browse::{self, Index, Refreshed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) struct App {
    pub cx: Context,
    /// Connections to the index, one per core: a search takes one that is free.
    readers: Vec<Mutex<Index>>,
    /// The upload token's SHA-256 (compared digest to digest).
    pub token: Option<[u8; 32]>,
    pub max_upload: usize,
    /// One upload at a time: two to the same name are a merge each, in turn.
    pub uploads: Arc<tokio::sync::Mutex<()>>,
    /// Pages at once, bytes of answers in flight.
    pub budget: crate::budget::Budget,
    /// Pages made at the index's current generation.
    pub cache: crate::cache::Cache,
    csp: HeaderValue,
}

/// What a page is given.
pub(crate) struct Asked<'a> {
    pub want: Want,
    /// The path without its `.json`/`.csv` suffix.
    pub path: &'a str,
    pub query: Option<&'a str>,
}

impl App {
    pub fn open(cx: Context, token: Option<String>, max_upload: usize) -> Result<(App, Refreshed), crate::ServeError> {
        let failed = |e: browse::BrowseError| crate::ServeError::Index(e.to_string());
        let (first, refreshed) = browse::index(&cx).map_err(failed)?;
        let mut readers = vec![Mutex::new(first)];
        let more = std::thread::available_parallelism().map_or(1, |n| n.get()).max(2) - 1;
        for _ in 0..more {
            readers.push(Mutex::new(Index::open(&cx.store).map_err(|e| crate::ServeError::Index(e.to_string()))?));
        }
        let csp = HeaderValue::from_str(&browse::content_security_policy())
            .map_err(|e| crate::ServeError::Index(e.to_string()))?;
        let token = token.map(|t| sha(t.as_bytes()));
        Ok((
            App {
                cx,
                readers,
                token,
                max_upload,
                uploads: Arc::new(tokio::sync::Mutex::new(())),
                budget: crate::budget::Budget::new(),
                cache: Default::default(),
                csp,
            },
            refreshed,
        ))
    }

    pub fn csp(&self) -> HeaderValue {
        self.csp.clone()
    }

    /// A free connection to the index (or the first, waited for).
    pub fn index(&self) -> std::sync::MutexGuard<'_, Index> {
        for r in &self.readers {
            if let Ok(g) = r.try_lock() {
                return g;
            }
        }
        self.readers[0].lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(crate) fn sha(b: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(b).into()
}

/// Brings the index in step with the files every `every` (results saved by
/// hand or by an engine on another machine sharing the folder; engine's
/// own saves keep it in step themselves).
pub(crate) async fn keep_in_step(app: Arc<App>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let a = app.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let mut i = a.readers[0].lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = i.refresh(&a.cx.store) {
                eprintln!("engine serve: the index: {e}");
            }
        })
        .await;
    }
}

impl Asked<'_> {
    /// The query's parameters, each one of `takes`.
    pub fn params(&self, takes: &[&str]) -> Result<Params, HttpError> {
        Params::parse(self.query, takes)
    }

    /// The last path segment after `prefix`, percent-decoded (a result name).
    pub fn name_after(&self, prefix: &str) -> Result<String, HttpError> {
        let raw = self.path.strip_prefix(prefix).unwrap_or("");
        percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .map(|d| d.into_owned())
            .map_err(|_| HttpError::not_found(format!("no result named `{}`", page::one_line(raw))))
    }
}

/// What an operation says on the way (warnings), kept for the page.
#[derive(Default)]
pub(crate) struct Said(Mutex<Vec<String>>);

impl Said {
    pub fn lines(self) -> Vec<String> {
        self.0.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

impl engine_ops::Events for Said {
    fn message(&self, text: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(text.to_string());
    }
}
