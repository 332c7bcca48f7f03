//! `POST /api/results?name=NAME`: a result.json from CI or another machine,
//! with the server's bearer token, checked exactly as `result merge` checks
//! an input (schema, size, names, identifiers that clash) and saved as
//! NAME, or appended to the result of that name. Refused: without a token
//! configured (403), with a wrong one (401), too large (413), a bad name
//! (400), a file the merge refuses (422, its own message); nothing is
//! written then.

use crate::app::{App, Said, sha};
use crate::params::Params;
use crate::reply::{HttpError, Reply, Want};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use engine_ops::browse;
use std::sync::Arc;

pub(crate) async fn receive(
    State(app): State<Arc<App>>,
    uri: Uri,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    match accept(app, uri, headers, body).await {
        Ok(r) => r.into_response(),
        Err(e) => e.wanting(Want::Json).into_response(),
    }
}

async fn accept(app: Arc<App>, uri: Uri, headers: HeaderMap, body: axum::body::Body) -> Result<Reply, HttpError> {
    let Some(expected) = app.token else {
        return Err(HttpError::new(
            StatusCode::FORBIDDEN,
            "uploads are off: this server was started without --upload-token-file",
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| sha(t.trim().as_bytes()));
    // Digests compared, not the tokens: the time taken says nothing of how
    // much of a guess was right.
    if given != Some(expected) {
        let mut e = HttpError::new(
            StatusCode::UNAUTHORIZED,
            "a valid bearer token is needed to upload (Authorization: Bearer TOKEN)",
        );
        e.challenge = true;
        return Err(e);
    }
    let p = Params::parse(uri.query(), &["name"])?;
    let name =
        p.one("name")?.ok_or_else(|| HttpError::bad("parameter `name`: the result's name is missing"))?.to_string();
    name.parse::<engine_ops::benchmark::ResultName>().map_err(|e| HttpError::bad(format!("parameter `name`: {e}")))?;
    let too_large =
        || HttpError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("the upload is larger than {} bytes", app.max_upload));
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > app.max_upload as u64) {
        return Err(too_large());
    }
    // One upload in memory at a time: the others wait in their sockets. The
    // turn goes with the work, which runs to its end even when the client
    // has gone.
    let turn = app.uploads.clone().lock_owned().await;
    let bytes = axum::body::to_bytes(body, app.max_upload).await.map_err(|_| too_large())?;
    let a = app.clone();
    tokio::task::spawn_blocking(move || {
        let _turn = turn;
        save(&a, &name, &bytes)
    })
    .await
    .map_err(|e| HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// The upload written where only this request sees it, then merged.
fn save(app: &App, name: &str, bytes: &[u8]) -> Result<Reply, HttpError> {
    let failed =
        |e: std::io::Error| HttpError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot keep the upload: {e}"));
    let dir = tempfile::Builder::new().prefix("engine-upload-").tempdir().map_err(failed)?;
    // Its folder's name is the label the merge gives it in messages.
    let folder = dir.path().join("upload");
    std::fs::create_dir(&folder).map_err(failed)?;
    let path = folder.join("result.json");
    std::fs::write(&path, bytes).map_err(failed)?;
    let existed = app.cx.store.exists(name);
    let said = Said::default();
    let m = browse::accept(&app.cx, &path, name, &said)?;
    let body = serde_json::json!({
        "name": name,
        "url": format!("/results/{}", crate::page::url(name)),
        "appended": existed,
        "identifiers": m.file.systems.len(),
        "results": m.file.results.len(),
        "warnings": said.lines(),
    });
    let mut r = Reply::json(&body);
    r.status = if existed { StatusCode::OK } else { StatusCode::CREATED };
    Ok(r)
}
