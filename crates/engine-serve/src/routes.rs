//! The routes: a URL to its page, the limits and headers around them all.
//! Every page is a blocking function of the request (it reads result files
//! and the index), run off the async threads, within [`PAGE_TIMEOUT`].

use crate::app::{App, Asked};
use crate::log::LogFormat;
use crate::page;
use crate::reply::{HttpError, Reply, Want};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// A page's work may take this long; then 503.
const PAGE_TIMEOUT: Duration = Duration::from_secs(60);

type Page = fn(&App, &Asked) -> Result<Reply, HttpError>;

/// Runs `page` for the request on a blocking thread; its error in the
/// representation asked for.
/// The longest path and query a page takes.
const MAX_URL: usize = 8192;

async fn run(app: Arc<App>, uri: Uri, headers: HeaderMap, page: Page) -> Response {
    let (want, _) = Want::of(uri.path(), &headers);
    if uri.path_and_query().map_or(0, |p| p.as_str().len()) > MAX_URL {
        return HttpError::new(StatusCode::URI_TOO_LONG, format!("the URL is longer than {MAX_URL} bytes"))
            .wanting(want)
            .into_response();
    }
    let Some(turn) = app.budget.page().await else { return busy(want) };
    let a = app.clone();
    let work = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        // The page the request names, as its parameters read it: a host,
        // an absolute form, blank or spaced values and other spellings of
        // the same query are one page, made once.
        let url = crate::params::canonical(uri.path(), uri.query());
        let (want, path) = Want::of(uri.path(), &headers);
        let generation = a.index().generation().ok();
        if let Some(hit) = generation.and_then(|g| a.cache.get(g, &url, want)) {
            return Ok::<_, HttpError>(hit);
        }
        let asked = Asked { want, path, query: uri.query() };
        let reply = page(&a, &asked).map_err(|e| e.wanting(want))?;
        let body = Bytes::from(reply.body);
        if let Some(g) = generation {
            a.cache.put(g, &url, want, (reply.status, reply.want), &body);
        }
        Ok((reply.status, reply.want, body))
    });
    match tokio::time::timeout(PAGE_TIMEOUT, work).await {
        Ok(Ok(Ok((status, want, body)))) => match app.budget.body(body).await {
            Some(body) => Reply::with_body(status, want, body),
            None => busy(want),
        },
        Ok(Ok(Err(e))) => e.into_response(),
        Ok(Err(e)) => {
            HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the page failed: {e}")).into_response()
        }
        Err(_) => HttpError::new(StatusCode::SERVICE_UNAVAILABLE, "the page took too long").into_response(),
    }
}

/// 503: the server's budget is spent for now.
fn busy(want: Want) -> Response {
    let mut r =
        HttpError::new(StatusCode::SERVICE_UNAVAILABLE, "the server is busy with other pages; try again shortly")
            .wanting(want)
            .into_response();
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

macro_rules! page {
    ($f:path) => {
        get(|State(app): State<Arc<App>>, uri: Uri, headers: HeaderMap| run(app, uri, headers, $f))
    };
}

pub(crate) fn router(app: Arc<App>, log: LogFormat) -> Router {
    let csp = app.csp();
    let max_upload = app.max_upload;
    Router::new()
        .route("/", get(|| async { Redirect::to("/results") }))
        .route("/assets/engine.css", get(css))
        .route("/results", page!(crate::pages::list::page))
        .route("/results.json", page!(crate::pages::list::page))
        .route("/results.csv", page!(crate::pages::list::page))
        .route("/results/{name}", page!(crate::pages::result::page))
        .route("/fleet/{name}", page!(crate::pages::fleet::page))
        .route("/compare", page!(crate::pages::compare::page))
        .route("/compare.json", page!(crate::pages::compare::page))
        .route("/compare.csv", page!(crate::pages::compare::page))
        .route("/history", page!(crate::pages::history::page))
        .route("/history.json", page!(crate::pages::history::page))
        .route("/history.csv", page!(crate::pages::history::page))
        .route("/systems", page!(crate::pages::systems::page))
        .route("/systems.json", page!(crate::pages::systems::page))
        .route("/systems.csv", page!(crate::pages::systems::page))
        .route("/api/results", post(crate::upload::receive))
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(max_upload))
        .layer(axum::middleware::from_fn_with_state(log, crate::log::access))
        .layer(axum::middleware::from_fn_with_state(csp, secured))
        .with_state(app)
}

async fn css() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8"), (header::CACHE_CONTROL, "max-age=3600")], page::CSS)
}

async fn not_found(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let (want, _) = Want::of(uri.path(), &headers);
    if method != Method::GET && method != Method::HEAD {
        return HttpError::new(StatusCode::METHOD_NOT_ALLOWED, format!("{method} is not served here"))
            .wanting(want)
            .into_response();
    }
    HttpError::not_found(format!("no page at {}", page::one_line(uri.path()))).wanting(want).into_response()
}

/// The headers every answer carries: what may run (the CSP), no sniffing,
/// no framing, no referrer.
async fn secured(State(csp): State<HeaderValue>, req: Request, next: axum::middleware::Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, csp);
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    res
}
