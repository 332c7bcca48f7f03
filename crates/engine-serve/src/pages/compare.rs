//! `/compare?r=A&r=B[&id=…][&baseline=…]`: any selection of saved results
//! (and of their identifiers) compared as `result compare` compares them;
//! the page lets the identifiers and the baseline be picked again.

use crate::app::{App, Asked};
use crate::page::{esc, framed};
use crate::reply::{HttpError, Reply, Want};
use engine_ops::browse;
use engine_ops::present::Format;
use std::fmt::Write;

pub(crate) fn page(app: &App, a: &Asked) -> Result<Reply, HttpError> {
    let p = a.params(&["r", "id", "baseline"])?;
    let names: Vec<String> = p.all("r").into_iter().map(str::to_string).collect();
    let only: Vec<String> = p.all("id").into_iter().map(str::to_string).collect();
    let format = match a.want {
        Want::Json => Format::Json,
        Want::Csv => Format::Csv,
        Want::Html => Format::Html,
    };
    let mut presentation = browse::presentation(format);
    presentation.baseline = p.one("baseline")?.map(str::to_string);
    let (report, ids) = browse::compare(&app.cx, &names, &only, &presentation).map_err(|e| match e {
        browse::BrowseError::NotFound(n) => {
            HttpError::not_found(format!("parameter `r`: no saved result named `{}`", crate::page::one_line(&n)))
        }
        e => e.into(),
    })?;
    if a.want != Want::Html {
        return Ok(Reply::ok(a.want, report));
    }
    let mut form = String::from("<form method=\"get\" action=\"/compare\"><p>Comparing ");
    for n in &names {
        let _ = write!(form, "<input type=\"hidden\" name=\"r\" value=\"{}\"><b>{}</b> ", esc(n), esc(n));
    }
    form.push_str("</p><p>Identifiers: ");
    for id in &ids {
        let on = if only.is_empty() || only.contains(id) { " checked" } else { "" };
        let _ =
            write!(form, "<label><input type=\"checkbox\" name=\"id\" value=\"{}\"{on}>{}</label> ", esc(id), esc(id));
    }
    form.push_str("</p><p><label>Baseline <select name=\"baseline\"><option value=\"\">the first</option>");
    let chosen = p.one("baseline")?.unwrap_or("");
    for id in &ids {
        let sel = if id == chosen { " selected" } else { "" };
        let _ = write!(form, "<option value=\"{}\"{sel}>{}</option>", esc(id), esc(id));
    }
    let q = esc(&p.query());
    let _ = write!(
        form,
        "</select></label> <button type=\"submit\">Compare</button></p></form>\
         <p class=\"links\"><a href=\"/compare.json?{q}\">JSON</a><a href=\"/compare.csv?{q}\">CSV</a></p>"
    );
    Ok(Reply::ok(Want::Html, framed(&report, &form)))
}
