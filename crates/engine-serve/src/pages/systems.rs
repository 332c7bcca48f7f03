//! `/systems?test=T`: the system table of every host that ran a test —
//! where it was saved, when, and its hardware and software fields, a
//! column per field. Without a test: the tests to pick from.

use super::tests_picker;
use crate::app::{App, Asked};
use crate::page::{esc, shell, table, url};
use crate::reply::{HttpError, Reply, Want};
use engine_ops::browse::{self, Host};
use std::fmt::Write;

/// Hosts on one page; the JSON and CSV twins carry as many.
const MAX_HOSTS: usize = 5000;

pub(crate) fn page(app: &App, a: &Asked) -> Result<Reply, HttpError> {
    let p = a.params(&["test"])?;
    let Some(test) = p.one("test")? else { return tests_picker(app, a, "/systems", "Systems that ran a test") };
    let (hosts, more) = {
        let index = app.index();
        browse::hosts(&app.cx, &index, test, MAX_HOSTS)?
    };
    if hosts.is_empty() {
        return Err(HttpError::bad(format!(
            "parameter `test`: no saved result holds test `{}`",
            crate::page::one_line(test)
        )));
    }
    let columns = columns(&hosts);
    Ok(match a.want {
        Want::Json => Reply::json(&serde_json::json!({ "test": test, "hosts": hosts, "truncated": more })),
        Want::Csv => Reply::ok(Want::Csv, csv(&hosts, &columns)),
        Want::Html => {
            let mut head = vec!["Result".to_string(), "Identifier".into(), "Started".into()];
            head.extend(columns.iter().map(|(_, k)| k.clone()));
            let rows: Vec<Vec<String>> = hosts
                .iter()
                .map(|h| {
                    let mut r = vec![
                        format!("<a href=\"/results/{}\">{}</a>", esc(&url(&h.result)), esc(&h.result)),
                        esc(&h.identifier),
                        esc(&h.started),
                    ];
                    r.extend(columns.iter().map(|c| esc(value(h, c))));
                    r
                })
                .collect();
            let q = esc(&p.query());
            let mut body = format!(
                "<h1>Systems that ran {}</h1><p class=\"links\">{} host(s){} · <a href=\"/systems.json?{q}\">JSON</a>\
                 <a href=\"/systems.csv?{q}\">CSV</a><a href=\"/history?{q}\">its history</a></p>",
                esc(test),
                hosts.len(),
                if more { format!(" (the first {MAX_HOSTS})") } else { String::new() }
            );
            let head: Vec<&str> = head.iter().map(String::as_str).collect();
            let _ = write!(body, "{}", table(&head, &rows));
            Reply::ok(Want::Html, shell(&format!("Systems: {test}"), &body))
        }
    })
}

/// Every field any host has, hardware first, in the order first seen.
fn columns(hosts: &[Host]) -> Vec<(bool, String)> {
    let mut out: indexmap::IndexSet<(bool, String)> = indexmap::IndexSet::new();
    for h in hosts {
        out.extend(h.hardware.keys().map(|k| (true, k.clone())));
    }
    for h in hosts {
        out.extend(h.software.keys().map(|k| (false, k.clone())));
    }
    out.into_iter().collect()
}

fn value<'h>(h: &'h Host, (hardware, key): &(bool, String)) -> &'h str {
    let map = if *hardware { &h.hardware } else { &h.software };
    map.get(key).map_or("", String::as_str)
}

fn csv(hosts: &[Host], columns: &[(bool, String)]) -> String {
    let mut head = vec!["result".to_string(), "identifier".into(), "started".into()];
    head.extend(columns.iter().map(|(_, k)| k.clone()));
    let mut out = engine_sys::text::csv_row(&head);
    for h in hosts {
        let mut r = vec![h.result.clone(), h.identifier.clone(), h.started.clone()];
        r.extend(columns.iter().map(|c| value(h, c).to_string()));
        out.push_str(&engine_sys::text::csv_row(&r));
    }
    out
}
