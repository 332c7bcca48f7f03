//! What a page answers: its representation (HTML, JSON or CSV, from the
//! path's suffix or the Accept header), its bytes, or an error with its
//! status — each error as a page with the list's link, or as JSON.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use engine_ops::browse::BrowseError;

/// A page's representations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Want {
    Html,
    Json,
    Csv,
}

impl Want {
    /// The representation asked for: `.json` or `.csv` at the end of the
    /// path (returned without it), else the Accept header's first of JSON
    /// and CSV before HTML, else HTML.
    pub fn of<'p>(path: &'p str, headers: &HeaderMap) -> (Want, &'p str) {
        if let Some(p) = path.strip_suffix(".json") {
            return (Want::Json, p);
        }
        if let Some(p) = path.strip_suffix(".csv") {
            return (Want::Csv, p);
        }
        let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
        for kind in accept.split(',').map(|k| k.split(';').next().unwrap_or("").trim()) {
            match kind {
                "application/json" => return (Want::Json, path),
                "text/csv" => return (Want::Csv, path),
                "text/html" | "*/*" => break,
                _ => {}
            }
        }
        (Want::Html, path)
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Want::Html => "text/html; charset=utf-8",
            Want::Json => "application/json",
            Want::Csv => "text/csv; charset=utf-8",
        }
    }
}

/// A page's bytes and what they are.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub want: Want,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn ok(want: Want, body: impl Into<Vec<u8>>) -> Reply {
        Reply { status: StatusCode::OK, want, body: body.into() }
    }

    pub fn json(value: &impl serde::Serialize) -> Reply {
        Reply::ok(Want::Json, serde_json::to_vec_pretty(value).unwrap_or_default())
    }
}

impl Reply {
    /// An answer of `want` with `body` (bytes counted against the budget).
    pub fn with_body(status: StatusCode, want: Want, body: axum::body::Body) -> Response {
        let mut r = (status, body).into_response();
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(want.content_type()));
        if want != Want::Html {
            // A JSON or CSV twin is data: a browser shows or saves it, never runs it.
            r.headers_mut().insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("inline"));
        }
        r
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        Reply::with_body(self.status, self.want, axum::body::Body::from(self.body))
    }
}

/// An error a page answers with.
#[derive(Debug)]
pub(crate) struct HttpError {
    pub status: StatusCode,
    pub message: String,
    /// Where to go from here (the list's link is always offered).
    pub want: Want,
    /// For 401: ask for the bearer token.
    pub challenge: bool,
}

impl HttpError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        HttpError { status, message: message.into(), want: Want::Html, challenge: false }
    }

    pub fn bad(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub fn wanting(mut self, want: Want) -> Self {
        self.want = want;
        self
    }
}

impl From<BrowseError> for HttpError {
    fn from(e: BrowseError) -> Self {
        let status = match &e {
            BrowseError::NotFound(_) => StatusCode::NOT_FOUND,
            BrowseError::Damaged { .. } | BrowseError::Refused(_) => StatusCode::UNPROCESSABLE_ENTITY,
            BrowseError::Bad(_) => StatusCode::BAD_REQUEST,
            BrowseError::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        HttpError::new(status, e.to_string())
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let body = match self.want {
            Want::Json => serde_json::to_vec_pretty(&serde_json::json!({
                "error": self.message,
                "status": self.status.as_u16(),
                "results": "/results.json",
            }))
            .unwrap_or_default(),
            Want::Csv | Want::Html => {
                let want = if self.want == Want::Csv { Want::Html } else { self.want };
                let html = crate::page::shell(
                    self.status.canonical_reason().unwrap_or("Error"),
                    &format!(
                        "<h1>{} {}</h1><p class=\"error\">{}</p><p><a href=\"/results\">All results</a></p>",
                        self.status.as_u16(),
                        crate::page::esc(self.status.canonical_reason().unwrap_or("")),
                        crate::page::esc(&self.message)
                    ),
                );
                return Reply { status: self.status, want, body: html.into_bytes() }.with_challenge(self.challenge);
            }
        };
        Reply { status: self.status, want: Want::Json, body }.with_challenge(self.challenge)
    }
}

impl Reply {
    fn with_challenge(self, challenge: bool) -> Response {
        let mut r = self.into_response();
        if challenge {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"engine\""));
        }
        r
    }
}
