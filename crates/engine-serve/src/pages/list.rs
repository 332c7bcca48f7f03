//! `/results`: the saved results, searched, sorted and paged; a result's
//! row links to its report, and the ticked ones are compared.

use crate::app::{App, Asked};
use crate::page::{date, esc, shell, table, url};
use crate::params::Params;
use crate::reply::{HttpError, Reply, Want};
use engine_ops::browse::{Found, Search, Sort};
use std::fmt::Write;

const TAKES: [&str; 10] = ["q", "test", "identifier", "tag", "field", "from", "until", "sort", "page", "per"];

fn search(p: &Params) -> Result<Search, HttpError> {
    let sort = match p.one("sort")? {
        None => Sort::default(),
        Some(s) => Sort::ALL.iter().find(|(n, _)| *n == s).map(|(_, s)| *s).ok_or_else(|| {
            let names: Vec<&str> = Sort::ALL.iter().map(|(n, _)| *n).collect();
            HttpError::bad(format!(
                "parameter `sort`: `{}` is not one of {}",
                crate::page::one_line(s),
                names.join(", ")
            ))
        })?,
    };
    Ok(Search {
        text: p.one("q")?.map(str::to_string),
        test: p.one("test")?.map(str::to_string),
        identifier: p.one("identifier")?.map(str::to_string),
        tags: p.pairs_of("tag")?,
        fields: p.pairs_of("field")?,
        from: p.time("from")?,
        until: p.time("until")?,
        sort,
        page: p.number("page", 1, 1..=1_000_000)?,
        per_page: p.number("per", 50, 1..=1000)?,
    })
}

pub(crate) fn page(app: &App, a: &Asked) -> Result<Reply, HttpError> {
    let p = a.params(&TAKES)?;
    let s = search(&p)?;
    let found = app.index().search(&s).map_err(|e| HttpError::from(engine_ops::browse::BrowseError::from(e)))?;
    Ok(match a.want {
        Want::Json => Reply::json(&found),
        Want::Csv => Reply::ok(Want::Csv, csv(&found)),
        Want::Html => Reply::ok(Want::Html, html(&p, &s, &found)),
    })
}

fn csv(f: &Found) -> String {
    let mut out =
        engine_sys::text::csv_row(&["name", "title", "started", "identifiers", "tests", "profiles", "damaged"]);
    for r in &f.rows {
        out.push_str(&engine_sys::text::csv_row(&[
            r.name.clone(),
            r.title.clone(),
            date(r.started),
            r.identifiers.to_string(),
            r.tests.to_string(),
            r.profiles.join(" "),
            r.damaged.clone().unwrap_or_default(),
        ]));
    }
    out
}

fn form(p: &Params, s: &Search) -> Result<String, HttpError> {
    let field = |label: &str, name: &str, value: &str, hint: &str| {
        format!("<label>{label}<input name=\"{name}\" value=\"{}\" placeholder=\"{}\"></label>", esc(value), esc(hint))
    };
    let mut h = String::from("<form class=\"search\" method=\"get\" action=\"/results\">");
    h.push_str(&field("Search", "q", p.one("q")?.unwrap_or(""), "anything: test, host, kernel, tag…"));
    h.push_str(&field("Test or profile", "test", p.one("test")?.unwrap_or(""), "fio, pts/fs-mark…"));
    h.push_str(&field("Identifier", "identifier", p.one("identifier")?.unwrap_or(""), ""));
    h.push_str(&field("Tag", "tag", p.all("tag").first().copied().unwrap_or(""), "KEY=VALUE"));
    h.push_str(&field("Hardware/software", "field", p.all("field").first().copied().unwrap_or(""), "Kernel=6.1"));
    h.push_str(&field("From", "from", p.one("from")?.unwrap_or(""), "YYYY-MM-DD"));
    h.push_str(&field("Until", "until", p.one("until")?.unwrap_or(""), "YYYY-MM-DD"));
    h.push_str("<label>Sort<select name=\"sort\">");
    for (n, v) in Sort::ALL {
        let sel = if v == s.sort { " selected" } else { "" };
        let _ = write!(h, "<option value=\"{n}\"{sel}>{n}</option>");
    }
    h.push_str("</select></label><label>&nbsp;<button type=\"submit\">Search</button></label></form>");
    Ok(h)
}

fn html(p: &Params, s: &Search, f: &Found) -> String {
    let mut h = String::from("<h1>Saved results</h1>");
    h.push_str(&form(p, s).unwrap_or_default());
    let pages = f.total.div_ceil(f.per_page).max(1);
    let _ = write!(
        h,
        "<p class=\"links\">{} result(s){} · <a href=\"/results.json?{q}\">JSON</a><a href=\"/results.csv?{q}\">CSV</a></p>",
        f.total,
        if pages > 1 { format!(", page {} of {pages}", f.page) } else { String::new() },
        q = esc(&p.query())
    );
    let rows: Vec<Vec<String>> = f
        .rows
        .iter()
        .map(|r| {
            let link = format!("<a href=\"/results/{}\">{}</a>", esc(&url(&r.name)), esc(&r.name));
            let (title, tick) = match &r.damaged {
                Some(why) => (format!("<span class=\"damaged\">damaged: {}</span>", esc(why)), String::new()),
                None => (
                    esc(&r.title),
                    format!("<input type=\"checkbox\" name=\"r\" value=\"{}\" aria-label=\"compare\">", esc(&r.name)),
                ),
            };
            vec![
                tick,
                link,
                title,
                esc(&date(r.started)),
                r.identifiers.to_string(),
                r.tests.to_string(),
                esc(&r.profiles.join(", ")),
            ]
        })
        .collect();
    h.push_str("<form method=\"get\" action=\"/compare\">");
    h.push_str(&table(&["", "Name", "Title", "Started (UTC)", "Identifiers", "Tests", "Profiles"], &rows));
    h.push_str("<p><button type=\"submit\" id=\"compare\">Compare ticked results</button></p></form>");
    h.push_str("<p class=\"pager\">");
    if f.page > 1 {
        let _ = write!(
            h,
            "<a rel=\"prev\" href=\"/results?{}\">← newer page</a>",
            esc(&p.with("page", &(f.page - 1).to_string()))
        );
    }
    if f.page < pages {
        let _ = write!(
            h,
            "<a rel=\"next\" href=\"/results?{}\">next page →</a>",
            esc(&p.with("page", &(f.page + 1).to_string()))
        );
    }
    h.push_str("</p>");
    shell("Saved results", &h)
}
