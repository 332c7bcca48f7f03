//! One file per page, and the test picker two of them share.

use crate::app::{App, Asked};
use crate::page;
use crate::reply::{HttpError, Reply, Want};
use engine_ops::browse;

pub(crate) mod compare;
pub(crate) mod fleet;
pub(crate) mod history;
pub(crate) mod list;
pub(crate) mod result;
pub(crate) mod systems;

/// The tests the index knows, each linked to `page?test=…` (the pickers of
/// the history and systems pages).
pub(crate) fn tests_picker(app: &App, a: &Asked, page_path: &str, title: &str) -> Result<Reply, HttpError> {
    let tests = app.index().tests().map_err(|e| HttpError::from(browse::BrowseError::from(e)))?;
    if a.want != Want::Html {
        let rows: Vec<_> =
            tests.iter().map(|(t, p, ti)| serde_json::json!({"test": t, "profile": p, "title": ti})).collect();
        return Ok(match a.want {
            Want::Csv => {
                let mut out = engine_sys::text::csv_row(&["test", "profile", "title"]);
                for (t, p, ti) in &tests {
                    out.push_str(&engine_sys::text::csv_row(&[t, p, ti]));
                }
                Reply::ok(Want::Csv, out)
            }
            _ => Reply::json(&serde_json::json!({ "tests": rows })),
        });
    }
    let rows: Vec<Vec<String>> = tests
        .iter()
        .map(|(t, p, ti)| {
            vec![
                format!("<a href=\"{page_path}?test={}\">{}</a>", page::esc(&page::url(t)), page::esc(t)),
                page::esc(p),
                page::esc(ti),
            ]
        })
        .collect();
    let body = format!(
        "<h1>{}</h1><p>Pick a test.</p>{}",
        page::esc(title),
        page::table(&["Test", "Profile", "Title"], &rows)
    );
    Ok(Reply::ok(Want::Html, page::shell(title, &body)))
}
