//! The access log on standard error, a line per request in a format log
//! tools read: Common Log Format, Combined (with referer and user agent) or
//! JSON lines. Text from the request is escaped as Apache escapes it, so a
//! line is always one line.

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use std::net::SocketAddr;
use std::time::{Instant, SystemTime};

/// The client's address, put on each request by the accept loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub SocketAddr);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// `host - - [date] "request" status bytes`.
    #[default]
    Common,
    /// Common, then `"referer" "user-agent"`.
    Combined,
    /// One JSON object per line.
    Json,
    /// No access log.
    Off,
}

impl LogFormat {
    pub const ALL: [(&'static str, LogFormat); 4] = [
        ("common", LogFormat::Common),
        ("combined", LogFormat::Combined),
        ("json", LogFormat::Json),
        ("off", LogFormat::Off),
    ];
}

/// `s` with `"`, `\` and what is not printable ASCII as `\xNN`.
fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// `[06/Dec/2026:23:40:01 +0000]` from RFC 3339's `2026-12-06T23:40:01Z`.
fn clf_date(t: SystemTime) -> String {
    let r = humantime::format_rfc3339_seconds(t).to_string();
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = r.get(5..7).and_then(|m| m.parse::<usize>().ok()).and_then(|m| MONTHS.get(m - 1)).unwrap_or(&"Jan");
    format!(
        "[{}/{month}/{}:{} +0000]",
        r.get(8..10).unwrap_or("01"),
        r.get(0..4).unwrap_or("1970"),
        r.get(11..19).unwrap_or("00:00:00")
    )
}

pub(crate) async fn access(State(format): State<LogFormat>, req: Request, next: Next) -> Response {
    if format == LogFormat::Off {
        return next.run(req).await;
    }
    let began = Instant::now();
    let when = SystemTime::now();
    let peer = req.extensions().get::<Peer>().map_or_else(|| "-".to_string(), |p| p.0.ip().to_string());
    let line = format!("{} {} {:?}", req.method(), req.uri(), req.version());
    let (referer, agent) = {
        let header = |h| req.headers().get(h).and_then(|v| v.to_str().ok()).unwrap_or("-").to_string();
        (header(header::REFERER), header(header::USER_AGENT))
    };
    let res = next.run(req).await;
    let bytes = axum::body::HttpBody::size_hint(res.body()).exact().map_or_else(|| "-".to_string(), |n| n.to_string());
    let status = res.status().as_u16();
    let common = format!("{peer} - - {} \"{}\" {status} {bytes}", clf_date(when), escaped(&line));
    let out = match format {
        LogFormat::Common | LogFormat::Off => common,
        LogFormat::Combined => format!("{common} \"{}\" \"{}\"", escaped(&referer), escaped(&agent)),
        LogFormat::Json => serde_json::json!({
            "time": humantime::format_rfc3339_millis(when).to_string(),
            "client": peer,
            "request": line,
            "status": status,
            "bytes": bytes.parse::<u64>().ok(),
            "referer": referer,
            "user_agent": agent,
            "ms": began.elapsed().as_secs_f64() * 1e3,
        })
        .to_string(),
    };
    eprintln!("{out}");
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_common_log_format() {
        let t = humantime::parse_rfc3339("2026-12-06T23:40:01Z").unwrap();
        assert_eq!(clf_date(t), "[06/Dec/2026:23:40:01 +0000]");
    }

    #[test]
    fn request_text_stays_on_one_line() {
        assert_eq!(escaped("GET /a\"b\n\x1b[2J"), "GET /a\\\"b\\x0a\\x1b[2J");
        assert_eq!(escaped("é"), "\\xc3\\xa9");
    }
}
