//! `engine result odd`: a fleet's odd hosts — far from their group by the
//! robust rule of `analysis::fleet` — as text, CSV or JSON, for tickets.

use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use super::{Failure, exit};
use clap::{Args, ValueEnum};
use engine_ops::Context;
use std::path::PathBuf;

/// Which hosts a fleet's view shows and how it groups them (also on `result show`).
#[derive(Args, Debug, Clone, Default)]
pub struct FleetArgs {
    /// Group the hosts by a system field or tag (`disk-model`, `kernel`, `tag:rack`):
    /// distributions and odd hosts per group
    #[arg(long, value_name = "KEY")]
    pub group_by: Option<String>,
    /// Only the identifiers matching GLOB (`node-1*`, `rack?-*`)
    #[arg(long = "identifier", value_name = "GLOB", value_parser = glob_pattern)]
    pub identifiers: Option<glob::Pattern>,
}

pub(super) fn glob_pattern(s: &str) -> Result<glob::Pattern, String> {
    glob::Pattern::new(s).map_err(|e| format!("`{s}` is not a glob pattern: {e}"))
}

impl FleetArgs {
    pub(super) fn select(&self) -> engine_ops::vocab::analysis::fleet::Select {
        engine_ops::vocab::analysis::fleet::Select {
            group_by: self.group_by.clone(),
            identifiers: self.identifiers.clone(),
        }
    }
}

#[derive(Args, Debug)]
pub struct OddArgs {
    /// A saved result or a result.json file
    #[arg(value_name = "NAME|FILE")]
    pub name: String,
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// `text` (a line each), `csv` (a row each) or `json` (with the rule)
    #[arg(long, value_enum, default_value_t = OddFormat::Text)]
    pub format: OddFormat,
    /// Write to FILE (atomically) instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OddFormat {
    Text,
    Csv,
    Json,
}

pub fn run(cx: &Context, a: OddArgs) -> Result<i32, Failure> {
    let events = TermEvents::new(false, Shown::Nothing, ui::width(), Prompts::new());
    let (_, file) = engine_ops::result::load(cx, &a.name, &events)?;
    let fleet = engine_ops::vocab::analysis::fleet::analyse(&file, &a.fleet.select());
    let text = match a.format {
        OddFormat::Csv => engine_ops::vocab::report::fleet::odd_csv(&file, &fleet),
        OddFormat::Json => engine_ops::vocab::report::fleet::odd_json(&file, &fleet),
        OddFormat::Text => {
            let mut out = format!(
                "{} odd host-result(s) of {} judged in {} hosts ({})\n",
                fleet.odd.len(),
                fleet.judged,
                fleet.hosts,
                engine_ops::vocab::analysis::fleet::RULE
            );
            for o in &fleet.odd {
                out.push_str(&engine_ops::vocab::report::fleet::odd_line(&file, o));
                out.push('\n');
            }
            out
        }
    };
    ui::emit(text.as_bytes(), a.output.as_deref(), "the list")?;
    Ok(exit::OK)
}
