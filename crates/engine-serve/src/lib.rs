//! `engine serve`: a web viewer over the saved results and the target of
//! `engine result push`. The pages are the reports engine already writes
//! (the result's HTML report, `result compare`, `result history`, a
//! fleet's view) and a searchable list from the results' index; every page
//! has a stable URL, a JSON twin (`.json` or `Accept: application/json`)
//! and, where it shows a table, a CSV one. Read-only unless the server was
//! given an upload token. The operations are `engine_ops::browse`; this
//! crate only speaks HTTP.

mod app;
mod budget;
mod cache;
mod listen;
mod log;
mod page;
mod pages;
mod params;
pub mod push;
mod reply;
mod routes;
mod upload;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

pub use log::LogFormat;

/// How the server runs (`engine serve`'s flags).
#[derive(Debug, Clone)]
pub struct Options {
    pub bind: SocketAddr,
    /// The file holding the bearer token uploads must carry; none: read-only.
    pub token_file: Option<PathBuf>,
    /// The largest upload accepted, bytes.
    pub max_upload: usize,
    pub log: LogFormat,
    /// How often the index is brought in step with the files.
    pub refresh: Duration,
}

/// Uploads larger than this are refused (413): the limit a result from
/// outside has everywhere in engine.
pub const MAX_UPLOAD: usize = 64 << 20;

/// The shortest token accepted: a guessable one is no protection.
const MIN_TOKEN: usize = 16;

#[derive(Debug, Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("--bind {0} reaches beyond this machine, and no --upload-token-file was given")]
    Exposed(SocketAddr),
    #[error("upload token file {}: {why}", path.display())]
    Token { path: PathBuf, why: String },
    #[error("{0}")]
    Index(String),
    #[error("the server stopped: {0}")]
    Runtime(std::io::Error),
}

impl ServeError {
    /// Whether the person asked for what cannot be (exit 2), rather than
    /// the system refusing (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(self, ServeError::Exposed(_) | ServeError::Token { .. })
    }
}

/// The token in `path`: its first line, at least [`MIN_TOKEN`] bytes, from
/// a file no other user can read.
fn read_token(path: &Path) -> Result<String, ServeError> {
    use std::os::unix::fs::PermissionsExt;
    let bad = |why: String| ServeError::Token { path: path.to_path_buf(), why };
    let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(bad("users other than its owner can read or change it; `chmod 600` it".into()));
    }
    let bytes = engine_sys::fs::read_capped(path, 4096).map_err(|e| bad(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".into()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.len() < MIN_TOKEN {
        return Err(bad(format!("the token is shorter than {MIN_TOKEN} characters")));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("the token holds a space or a control character".into()));
    }
    Ok(token)
}

/// Serves the saved results of `cx` until SIGTERM or SIGINT, then finishes
/// the requests in flight (at most 10 s, or until a second signal) and
/// returns; a page still computing is abandoned. `started` is told the
/// address listened on (a port 0 is chosen by the system).
pub fn serve(
    cx: engine_ops::Context,
    o: Options,
    started: impl FnOnce(SocketAddr, &engine_ops::browse::Refreshed),
) -> Result<(), ServeError> {
    let token = o.token_file.as_deref().map(read_token).transpose()?;
    if token.is_none() && !o.bind.ip().is_loopback() {
        return Err(ServeError::Exposed(o.bind));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("engine-serve")
        .build()
        .map_err(ServeError::Runtime)?;
    let served = rt.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(o.bind).await.map_err(|source| ServeError::Bind { addr: o.bind, source })?;
        let addr = listener.local_addr().map_err(ServeError::Runtime)?;
        let (app, refreshed) = tokio::task::spawn_blocking(move || app::App::open(cx, token, o.max_upload))
            .await
            .map_err(|e| ServeError::Index(e.to_string()))??;
        started(addr, &refreshed);
        let app = std::sync::Arc::new(app);
        tokio::spawn(app::keep_in_step(app.clone(), o.refresh));
        listen::run(listener, routes::router(app, o.log)).await.map_err(ServeError::Runtime)
    });
    // A page's blocking work cannot be cancelled: it is left to the process's end.
    rt.shutdown_timeout(Duration::from_millis(200));
    served
}
