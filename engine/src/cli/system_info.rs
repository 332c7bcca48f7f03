//! `engine system-info`: what results would record about this machine.

use super::{Failure, exit};
use clap::Args;
use engine_ops::Context;
use std::fmt::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SystemInfoArgs {
    /// Directory whose file system and devices are described (default: the default target directory)
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Print the data as JSON
    #[arg(long)]
    pub json: bool,
    /// Read a captured tree of /sys, /proc and /etc instead of this machine
    #[arg(long, value_name = "DIR", hide = true)]
    pub root: Option<PathBuf>,
    /// Print how long each part of the capture took, to stderr
    #[arg(long)]
    pub timings: bool,
}

pub fn run(cx: &Context, args: SystemInfoArgs) -> Result<i32, Failure> {
    let view = engine_ops::info::system(cx, args.target_dir.clone(), args.root.as_deref());
    if args.timings {
        for (what, d) in &view.timings {
            errln!("{:>8.2} ms  {what}", d.as_secs_f64() * 1000.0);
        }
        errln!("{:>8.2} ms  total", view.total.as_secs_f64() * 1000.0);
    }
    if args.json {
        let json = serde_json::to_string_pretty(&view.info).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
        // JSON's own escapes for what a terminal would act on, so `outln!` leaves it valid.
        outln!("{}", engine_sys::text::json(&json));
        return Ok(exit::OK);
    }
    let mut out = String::new();
    let host = view.info.hostname.clone().unwrap_or_else(|| "this system".into());
    writeln!(out, "{host}\n").unwrap();
    for (title, map) in view.sections() {
        writeln!(out, "  {title}:").unwrap();
        let w = map.keys().map(|k| k.len()).max().unwrap_or(0);
        for (k, v) in &map {
            writeln!(out, "    {k:w$}  {v}").unwrap();
        }
        writeln!(out).unwrap();
    }
    writeln!(out, "  Notes:").unwrap();
    for (k, v) in view.notes() {
        writeln!(out, "    {k}: {v}").unwrap();
    }
    out!("{out}");
    Ok(exit::OK)
}
