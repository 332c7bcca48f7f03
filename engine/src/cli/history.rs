//! `engine result history`: each result's value over saved results, with
//! the change points found in it.

use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use super::{Failure, exit};
use clap::Args;
use engine_model::stats::changepoint::{self, Settings};
use engine_ops::Context;
use engine_ops::history::{self, Format, MIN_MAGNITUDE_PCT, Order, Query};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Saved results or result.json files (default: every saved result)
    #[arg(value_name = "NAME|FILE")]
    pub names: Vec<String>,
    /// Only identifiers tagged KEY=VALUE (repeatable: all must match)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::args::tag)]
    pub tags: Vec<(String, String)>,
    /// Only results REF names: a test identity, profile id, description or
    /// `profile: description` (repeatable)
    #[arg(long = "test", value_name = "REF")]
    pub tests: Vec<String>,
    /// Order the runs by a tag's values (natural order: 6.9 before 6.10) instead of their start times
    #[arg(long, value_name = "KEY", value_parser = super::args::tag_key)]
    pub by: Option<String>,
    /// Significance level of each change point's permutation test
    #[arg(long, value_name = "P", default_value_t = changepoint::ALPHA, value_parser = probability)]
    pub significance: f64,
    /// Smallest change of the mean reported, percent
    #[arg(long, value_name = "PCT", default_value_t = MIN_MAGNITUDE_PCT, value_parser = super::args::percent)]
    pub min_magnitude: f64,
    /// Permutations per test, at most (fewer once the answer is settled)
    #[arg(long, value_name = "N", default_value_t = changepoint::PERMUTATIONS)]
    pub permutations: u32,
    /// Output format: text, csv (the layout Apache Otava reads), html, svg or json
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = format)]
    pub format: Format,
    /// Write to FILE (atomically) instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --format csv -o FILE: also write the Apache Otava test definition
    /// (YAML) that reads FILE
    #[arg(long, value_name = "YAML")]
    pub otava_config: Option<PathBuf>,
}

fn probability(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|_| format!("`{s}` is not a probability (e.g. 0.01)"))?;
    if !(p > 0.0 && p < 1.0) {
        return Err(format!("{p} is not between 0 and 1"));
    }
    Ok(p)
}

fn format(s: &str) -> Result<Format, String> {
    Format::ALL
        .iter()
        .find(|(n, _)| *n == s)
        .map(|(_, f)| *f)
        .ok_or_else(|| format!("`{s}` is not a history format: {}", Format::ALL.map(|(n, _)| n).join(", ")))
}

fn query(a: &HistoryArgs) -> Result<Query, Failure> {
    // p-values go down to 1/(permutations + 1): fewer could never find anything.
    let least = (1.0 / a.significance).ceil() as u64 - 1;
    if u64::from(a.permutations) < least {
        return Err(Failure::usage(format!(
            "with {} permutations no change point can reach p ≤ {} (the smallest p-value is 1/{})",
            a.permutations,
            a.significance,
            u64::from(a.permutations) + 1
        ))
        .hint(format!("ask for --permutations {} or more", least.max(19) * 2 + 1)));
    }
    if a.otava_config.is_some() && (a.format != Format::Csv || a.output.is_none()) {
        return Err(Failure::usage("--otava-config describes the CSV file written: it needs --format csv -o FILE"));
    }
    Ok(Query {
        tags: a.tags.clone(),
        tests: a.tests.clone(),
        order: a.by.clone().map_or(Order::Time, Order::Tag),
        settings: Settings { alpha: a.significance, permutations: a.permutations, ..Settings::default() },
        min_magnitude_pct: a.min_magnitude,
    })
}

pub fn run(cx: &Context, a: HistoryArgs) -> Result<i32, Failure> {
    let q = query(&a)?;
    let events = TermEvents::new(false, Shown::Nothing, ui::width(), Prompts::new());
    let hs = history::history(cx, &a.names, &q, &events)?;
    let text = history::render(&hs, a.format, ui::width())?;
    ui::emit(text.as_bytes(), a.output.as_deref(), "the history")?;
    // --otava-config goes with -o (checked in `query`).
    if let (Some(conf), Some(path), [h]) = (&a.otava_config, &a.output, hs.as_slice()) {
        let csv = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        let yaml = history::otava_config(h, &csv);
        engine_sys::fs::write_atomic(conf, yaml.as_bytes())
            .map_err(|e| Failure::error(format!("cannot write {}: {e}", conf.display())))?;
        errln!("wrote {} (test `engine`: `otava analyze --config-file {} engine`)", conf.display(), conf.display());
    }
    Ok(exit::OK)
}
