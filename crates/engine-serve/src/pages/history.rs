//! `/history?test=T`: a test's values across every saved result that holds
//! it, in time order, with the change points `result history` finds; as
//! JSON and CSV too. Without a test: the tests to pick from.

use super::tests_picker;
use crate::app::{App, Asked, Said};
use crate::page::{esc, framed};
use crate::reply::{HttpError, Reply, Want};
use engine_ops::browse;
use engine_ops::history::Format;
use std::fmt::Write;

pub(crate) fn page(app: &App, a: &Asked) -> Result<Reply, HttpError> {
    let p = a.params(&["test"])?;
    let Some(test) = p.one("test")? else { return tests_picker(app, a, "/history", "History of a test") };
    let format = match a.want {
        Want::Json => Format::Json,
        Want::Csv => Format::Csv,
        Want::Html => Format::Html,
    };
    let said = Said::default();
    let text = {
        let index = app.index();
        browse::history(&app.cx, &index, test, format, &said)?
    };
    if a.want != Want::Html {
        return Ok(Reply::ok(a.want, text));
    }
    let q = esc(&p.query());
    let mut before = format!(
        "<p class=\"links\"><a href=\"/history.json?{q}\">JSON</a><a href=\"/history.csv?{q}\">CSV</a>\
         <a href=\"/systems?{q}\">the systems that ran it</a></p>"
    );
    for line in said.lines() {
        let _ = write!(before, "<p class=\"muted\">{}</p>", esc(&line));
    }
    Ok(Reply::ok(Want::Html, framed(text.as_bytes(), &before)))
}
