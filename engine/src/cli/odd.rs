//! `engine result odd`: a fleet's odd hosts — far from their group by the
//! robust rule of `analysis::fleet` — as text, CSV or JSON, for tickets.

use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use super::{Failure, exit};
use clap::{Args, ValueEnum};
use engine_ops::Context;
use engine_ops::present;
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
    pub(super) fn select(&self) -> present::Select {
        present::Select { group_by: self.group_by.clone(), identifiers: self.identifiers.clone() }
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
    let format = match a.format {
        OddFormat::Text => present::OddFormat::Text,
        OddFormat::Csv => present::OddFormat::Csv,
        OddFormat::Json => present::OddFormat::Json,
    };
    let text = present::odd(&file, &a.fleet.select(), format);
    ui::emit(text.as_bytes(), a.output.as_deref(), "the list")?;
    Ok(exit::OK)
}
