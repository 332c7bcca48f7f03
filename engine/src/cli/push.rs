//! `engine result push URL NAME`: a saved result sent to an `engine serve`.

use super::Failure;
use clap::Args;
use engine_ops::Context;
use engine_serve::push::{self, Push};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct PushArgs {
    /// The server's address (`http://results.lab:8080`)
    url: String,
    /// The saved result to send
    name: String,
    /// The name it gets there (default: NAME); an existing result of that
    /// name gets this one's identifiers appended
    #[arg(long = "as", value_name = "NAME")]
    to: Option<String>,
    /// The file holding the server's upload token (first line); else the
    /// ENGINE_UPLOAD_TOKEN environment variable
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Give up after this long
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = humantime::parse_duration)]
    timeout: Duration,
}

fn token(cx: &Context, a: &PushArgs) -> Result<String, Failure> {
    let hint = "give --token-file FILE or set ENGINE_UPLOAD_TOKEN to the token the server was started with";
    let t = match &a.token_file {
        Some(f) => engine_sys::fs::read_capped(f, 4096)
            .map_err(|e| Failure::usage(format!("--token-file {}: {e}", f.display())))
            .map(|b| String::from_utf8_lossy(&b).lines().next().unwrap_or("").trim().to_string())?,
        None => cx.settings.upload_token.clone().unwrap_or_default().trim().to_string(),
    };
    if t.is_empty() {
        return Err(Failure::usage("no upload token").hint(hint));
    }
    Ok(t)
}

pub fn run(cx: &Context, a: PushArgs) -> Result<i32, Failure> {
    let token = token(cx, &a)?;
    if push::in_clear(&a.url) {
        errln!("warning: {} is plain http beyond this machine: the token and the result travel unencrypted", a.url);
    }
    let p = Push { url: a.url.clone(), name: a.name, to: a.to, token, timeout: a.timeout };
    let done = push::push(cx, &p).map_err(|e| {
        let usage = e.is_usage();
        let f = if usage { Failure::usage(e.to_string()) } else { Failure::error(e.to_string()) };
        match e {
            push::PushError::Refused { status: 401, .. } => {
                f.hint("the token is not the one the server was started with")
            }
            push::PushError::Refused { status: 403, .. } => {
                f.hint("start the server with `engine serve --upload-token-file FILE`")
            }
            _ => f,
        }
    })?;
    // What the server says is its text, not ours: each on one line.
    let line = |s: &str| engine_sys::text::one_line(s).into_owned();
    for w in &done.warnings {
        errln!("warning: {}", line(w));
    }
    errln!(
        "{} `{}` at {}{}: {} identifier(s), {} result(s)",
        if done.appended { "appended to" } else { "saved as" },
        line(&done.name),
        a.url.trim_end_matches('/'),
        line(&done.url),
        done.identifiers,
        done.results
    );
    Ok(super::exit::OK)
}
