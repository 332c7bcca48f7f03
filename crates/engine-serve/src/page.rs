//! The frame of the server's own pages (the list, the pickers, errors):
//! one style sheet served from `/assets/engine.css`, no script, every value
//! escaped here. The reports engine writes keep their own frame and get
//! the navigation bar put in ([`framed`]).

use std::fmt::Write;

/// The server's style sheet.
/// Its rules for the server's own pages are under `body.engine`; a report
/// keeps its own look and gets only the bar and the links above it.
pub(crate) const CSS: &str = "\
body.engine{font:14px/1.45 system-ui,sans-serif;color:#222;margin:0}\
body.engine main{max-width:1200px;margin:1em auto;padding:0 1em}\
nav.engine{background:#1f2937;padding:.5em 1em;font:14px/1.45 system-ui,sans-serif}\
div.engine-bar{font:14px/1.45 system-ui,sans-serif;margin:.5em 0}\
nav.engine a{color:#e5e7eb;margin-right:1.2em;text-decoration:none}\
nav.engine a:hover{text-decoration:underline}\
body.engine table{border-collapse:collapse;width:100%}\
body.engine th,body.engine td{text-align:left;padding:3px 8px;border-bottom:1px solid #e5e7eb;vertical-align:top}\
body.engine th{background:#f3f4f6}\
form.search{display:flex;flex-wrap:wrap;gap:.5em;margin:1em 0}\
form.search label{display:flex;flex-direction:column;font-size:12px;color:#555}\
.error{color:#b91c1c}.damaged{color:#b91c1c}.muted{color:#6b7280}\
.pager a{margin-right:1em}.links a{margin-right:1em}";

/// `s` for HTML text or a quoted attribute.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `s` as one URL path segment or query value.
pub(crate) fn url(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>().replace('+', "%20")
}

/// `s` on one line, control characters shown (for messages).
pub(crate) fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '\u{FFFD}' } else { c }).collect()
}

/// The navigation bar of every page.
fn nav() -> &'static str {
    "<nav class=\"engine\"><a href=\"/results\">Results</a><a href=\"/history\">History</a>\
     <a href=\"/systems\">Systems</a></nav>"
}

/// A page of the server's own: `title` (text) and `body` (HTML already escaped).
pub(crate) fn shell(title: &str, body: &str) -> String {
    let mut h = String::with_capacity(body.len() + 512);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · engine</title><link rel=\"stylesheet\" href=\"/assets/engine.css\"></head>\
         <body class=\"engine\">{}<main>{body}</main></body></html>\n",
        esc(title),
        nav()
    );
    h
}

/// A report engine wrote (a whole page) with the navigation bar and
/// `before` (HTML already escaped) at the top of its body. The report's
/// head and `<body>` are engine's own template: every value in them is
/// escaped, so the first `</head>` and `<body>` are the template's.
pub(crate) fn framed(report: &[u8], before: &str) -> Vec<u8> {
    let html = String::from_utf8_lossy(report);
    let (Some(head), Some(body)) = (html.find("</head>"), html.find("<body>")) else {
        return report.to_vec();
    };
    if body < head {
        return report.to_vec();
    }
    let mut out = String::with_capacity(html.len() + before.len() + 256);
    out.push_str(&html[..head]);
    out.push_str("<link rel=\"stylesheet\" href=\"/assets/engine.css\">");
    out.push_str(&html[head..body + "<body>".len()]);
    out.push_str(nav());
    if !before.is_empty() {
        let _ = write!(out, "<div class=\"engine-bar\">{before}</div>");
    }
    out.push_str(&html[body + "<body>".len()..]);
    out.into_bytes()
}

/// A table of cells already escaped.
pub(crate) fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut h = String::from("<table><thead><tr>");
    for c in head {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr></thead><tbody>");
    for r in rows {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td>{c}</td>");
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table>");
    h
}

/// A date from seconds since the epoch (`2026-12-06 23:40`, UTC).
pub(crate) fn date(epoch: Option<i64>) -> String {
    epoch
        .and_then(|s| u64::try_from(s).ok())
        .map(|s| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s))
        .map(|t| {
            let r = humantime::format_rfc3339_seconds(t).to_string();
            format!("{} {}", &r[..10], &r[11..16])
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_cannot_leave_their_text_or_attribute() {
        assert_eq!(esc("<img src=x onerror='a'>\"&"), "&lt;img src=x onerror=&#39;a&#39;&gt;&quot;&amp;");
        assert_eq!(esc("a\u{1b}[2Jb"), "a\u{FFFD}[2Jb");
    }

    #[test]
    fn names_in_links_are_one_segment() {
        assert_eq!(url("a/b c?d#e&f"), "a%2Fb%20c%3Fd%23e%26f");
    }

    #[test]
    fn a_report_gets_the_bar_inside_its_body() {
        let r = b"<!DOCTYPE html><html><head><title>x</title><style>s</style></head><body>\n<h1>x</h1></body></html>";
        let out = String::from_utf8(framed(r, "<p>k</p>")).unwrap();
        assert!(
            out.contains("<link rel=\"stylesheet\" href=\"/assets/engine.css\"></head><body><nav class=\"engine\">")
        );
        assert!(out.contains("<div class=\"engine-bar\"><p>k</p></div>\n<h1>x</h1>"));
    }
}
