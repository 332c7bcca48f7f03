//! `engine result monitor`: the time series recorded around a result's
//! tests, as sparklines, CSV or JSON.

use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use super::{Failure, exit};
use clap::{Args, ValueEnum};
use engine_ops::Context;
use engine_ops::vocab::report::monitor;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MonitorArgs {
    /// A saved result or a result.json file
    #[arg(value_name = "NAME|FILE")]
    pub name: String,
    /// Only tests REF names: a test identity, profile id, description or
    /// `profile: description` (repeatable)
    #[arg(long = "test", value_name = "REF")]
    pub tests: Vec<String>,
    /// Only these metrics: a name (`util`, `cpu_iowait`) or `source:name`
    /// (`vda:util`) (repeatable; default: the device columns, the CPU split,
    /// dirty pages and I/O pressure)
    #[arg(long = "metric", value_name = "M")]
    pub metrics: Vec<String>,
    /// `text` (sparklines, trials apart), `csv` (one row per sample and
    /// metric) or `json` (the series as stored)
    #[arg(long, value_enum, default_value_t = MonitorFormat::Text)]
    pub format: MonitorFormat,
    /// Write to FILE (atomically) instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MonitorFormat {
    Text,
    Csv,
    Json,
}

pub fn run(cx: &Context, a: MonitorArgs) -> Result<i32, Failure> {
    let events = TermEvents::new(false, Shown::Nothing, ui::width(), Prompts::new());
    let found = engine_ops::monitor::series(cx, &a.name, &a.tests, &events)?;
    let shown: Vec<(&str, monitor::Shown)> = found
        .iter()
        .map(|m| {
            let series = m.series.as_ref();
            (
                m.test.as_str(),
                monitor::Shown { heading: &m.heading, identifier: &m.identifier, series, pressure: m.pressure },
            )
        })
        .collect();
    let text = match a.format {
        MonitorFormat::Text => {
            let views: Vec<monitor::Shown> = shown.iter().map(|(_, s)| s.clone()).collect();
            monitor::text(&views, &a.metrics, ui::width().saturating_sub(40).max(20))
        }
        MonitorFormat::Csv => {
            let ok: Vec<(&str, &str, &engine_model::model::series::Series)> =
                shown.iter().filter_map(|(t, s)| s.series.ok().map(|x| (*t, s.identifier, x))).collect();
            monitor::csv(&ok, &a.metrics)
        }
        MonitorFormat::Json => monitor::json(&shown.iter().map(|(t, s)| (*t, s)).collect::<Vec<_>>()),
    };
    ui::emit(text.as_bytes(), a.output.as_deref(), "the series")?;
    // A series that cannot be read is shown as such; the command says so too.
    let unread = found.iter().filter(|m| m.series.is_err()).count();
    if unread > 0 {
        errln!("{unread} series could not be read (missing or damaged); the rest are shown");
        return Ok(exit::ERROR);
    }
    Ok(exit::OK)
}
