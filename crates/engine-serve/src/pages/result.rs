//! `/results/NAME`: the result's own HTML report (charts, verdicts,
//! monitors), its file as JSON (whole, as `result show --format json`
//! exports it) and its values as CSV.

use crate::app::{App, Asked};
use crate::page::{esc, framed, url};
use crate::reply::{HttpError, Reply, Want};
use engine_ops::browse;
use engine_ops::present::Format;

pub(crate) fn page(app: &App, a: &Asked) -> Result<Reply, HttpError> {
    a.params(&[])?;
    let mut name = a.name_after("/results/")?;
    let mut want = a.want;
    // A result whose own name ends in `.json` or `.csv` is its HTML page.
    if want != Want::Html {
        let whole = format!("{name}.{}", if want == Want::Json { "json" } else { "csv" });
        if !app.cx.store.exists(&name) && app.cx.store.exists(&whole) {
            (name, want) = (whole, Want::Html);
        }
    }
    Ok(match want {
        Want::Json => Reply::json(&browse::exported(&app.cx, &name)?),
        Want::Csv => Reply::ok(Want::Csv, browse::report(&app.cx, &name, &browse::presentation(Format::Csv))?),
        Want::Html => {
            let report = browse::report(&app.cx, &name, &browse::presentation(Format::Html))?;
            let n = esc(&url(&name));
            let links = format!(
                "<p class=\"links\"><a href=\"/results/{n}.json\">JSON</a><a href=\"/results/{n}.csv\">CSV</a>\
                 <a href=\"/fleet/{n}\">as a fleet</a><a href=\"/compare?r={n}\">compare with…</a></p>"
            );
            Reply::ok(Want::Html, framed(&report, &links))
        }
    })
}
