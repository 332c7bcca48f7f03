//! `/fleet/NAME[?by=FIELD][&hosts=GLOB]`: a result as a fleet — each
//! result's distribution over the hosts, grouped by a system field or tag,
//! and the odd hosts — whatever its number of hosts; its odd hosts as CSV
//! and JSON.

use crate::app::{App, Asked};
use crate::page::{esc, framed, url};
use crate::reply::{HttpError, Reply, Want};
use engine_ops::browse;
use engine_ops::present::{Format, OddFormat};

pub(crate) fn page(app: &App, a: &Asked) -> Result<Reply, HttpError> {
    let p = a.params(&["by", "hosts"])?;
    let name = a.name_after("/fleet/")?;
    let select = browse::select(p.one("by")?, p.one("hosts")?)?;
    Ok(match a.want {
        Want::Json => Reply::ok(Want::Json, browse::odd(&app.cx, &name, &select, OddFormat::Json)?),
        Want::Csv => Reply::ok(Want::Csv, browse::odd(&app.cx, &name, &select, OddFormat::Csv)?),
        Want::Html => {
            let mut pr = browse::presentation(Format::Html);
            pr.fleet.from = 1;
            pr.fleet.select = select;
            let report = browse::report(&app.cx, &name, &pr)?;
            let (n, q) = (esc(&url(&name)), esc(&p.query()));
            let links = format!(
                "<form method=\"get\" action=\"/fleet/{n}\"><label>Group by <input name=\"by\" value=\"{}\" \
                 placeholder=\"disk-model, kernel, tag:rack\"></label> <label>Hosts <input name=\"hosts\" value=\"{}\" \
                 placeholder=\"host-1*\"></label> <button type=\"submit\">Show</button></form>\
                 <p class=\"links\"><a href=\"/results/{n}\">the result</a>\
                 <a href=\"/fleet/{n}.csv?{q}\">odd hosts as CSV</a><a href=\"/fleet/{n}.json?{q}\">JSON</a></p>",
                esc(p.one("by")?.unwrap_or("")),
                esc(p.one("hosts")?.unwrap_or(""))
            );
            Reply::ok(Want::Html, framed(&report, &links))
        }
    })
}
