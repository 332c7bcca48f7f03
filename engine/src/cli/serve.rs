//! `engine serve`: the saved results in a browser, and the target of
//! `engine result push` (engine_serve).

use super::Failure;
use clap::Args;
use engine_ops::Context;
use engine_serve::{LogFormat, Options, ServeError};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address and port to listen on; beyond loopback only with --upload-token-file
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
    /// The saved results to serve (default: ENGINE_HOME's)
    #[arg(long, value_name = "DIR")]
    results: Option<PathBuf>,
    /// Accept uploads (`engine result push`, POST /api/results) carrying the
    /// token in this file's first line (at least 16 characters; the file
    /// readable by its owner only). Without it the server is read-only
    #[arg(long, value_name = "FILE")]
    upload_token_file: Option<PathBuf>,
    /// The largest upload accepted, in MiB
    #[arg(long, value_name = "MIB", default_value_t = (engine_serve::MAX_UPLOAD >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    max_upload: u64,
    /// Access log on standard error: common, combined, json or off
    #[arg(long, value_name = "FORMAT", default_value = "common", value_parser = log_format)]
    log: LogFormat,
    /// How often results changed by other means are taken into the index
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    refresh: Duration,
}

fn log_format(s: &str) -> Result<LogFormat, String> {
    LogFormat::ALL
        .iter()
        .find(|(n, _)| *n == s)
        .map(|(_, f)| *f)
        .ok_or_else(|| format!("`{s}` is not a log format: {}", LogFormat::ALL.map(|(n, _)| n).join(", ")))
}

pub fn run(cx: Context, a: ServeArgs) -> Result<i32, Failure> {
    let cx = match a.results {
        Some(dir) => cx.with_results(dir),
        None => cx,
    };
    let root = cx.store_root();
    let o = Options {
        bind: a.bind,
        token_file: a.upload_token_file,
        max_upload: (a.max_upload << 20) as usize,
        log: a.log,
        refresh: a.refresh.max(Duration::from_millis(100)),
    };
    let uploads = o.token_file.is_some();
    engine_serve::serve(cx, o, |addr, r| {
        errln!(
            "serving {} saved result(s) from {} at http://{addr}/ ({}{}); Ctrl-C stops",
            r.read + r.unchanged - r.damaged,
            root.display(),
            if uploads { "uploads on" } else { "read-only" },
            if r.damaged > 0 { format!(", {} damaged", r.damaged) } else { String::new() }
        );
    })
    .map(|()| super::exit::OK)
    .map_err(|e| {
        let f = if e.is_usage() { Failure::usage(e.to_string()) } else { Failure::error(e.to_string()) };
        match e {
            ServeError::Exposed(_) => {
                f.hint("give --upload-token-file FILE, or listen on loopback (--bind 127.0.0.1:8080) behind a proxy")
            }
            ServeError::Bind { .. } => f.hint("another program listens there; pick another port with --bind"),
            _ => f,
        }
    })
}
