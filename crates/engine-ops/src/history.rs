//! `engine result history`: the saved results named (or every one) loaded
//! and their history built.

use crate::{Context, Failure};
pub use engine::analysis::history::Query;
use engine::analysis::history::{self, History, HistoryError};
use engine::events::Events;
use engine::model::result::ResultFile;

pub use engine::analysis::history::{MIN_MAGNITUDE_PCT, Order};
pub use engine::report::history::Format;

/// `hs` as `format` writes it for a terminal `width` wide; a format that
/// shows one history at a time refuses several, saying which they are.
pub fn render(hs: &[History], format: Format, width: usize) -> Result<String, Failure> {
    engine::report::history::render(hs, format, width).map_err(|e| {
        let hint = format!(
            "pick one with --test PROFILE or --tag KEY=VALUE, or name its saved results; the histories: {}",
            e.groups.join(" | ")
        );
        Failure::usage(e.to_string()).hint(hint)
    })
}

/// An Apache Otava configuration for the CSV of `h` written at `csv`.
pub fn otava_config(h: &History, csv: &std::path::Path) -> String {
    engine::report::history::csv::otava_config(h, "engine", &csv.display().to_string())
}

/// The history of `names` as `q` asks; with no names, every saved result,
/// a history per group of related results ([`history::build_grouped`]).
pub fn history(cx: &Context, names: &[String], q: &Query, events: &dyn Events) -> Result<Vec<History>, Failure> {
    let built = if names.is_empty() {
        history::build_grouped(load_all(cx, events)?, q)
    } else {
        history::build(&load_named(cx, names, events)?, q).map(|h| vec![h])
    };
    built.map_err(|e| {
        let hint = match &e {
            HistoryError::Units(_) => {
                "leave one of them out: name the results to use, or pick tests with --test".to_string()
            }
            HistoryError::NoTest(_, profiles) => format!("profiles in these results: {}", profiles.join(", ")),
            HistoryError::Empty(_) if q.tags.is_empty() => "save results with `engine benchmark … --save NAME`".into(),
            HistoryError::Empty(_) => "`engine list results --tag KEY=VALUE` lists what is tagged".into(),
        };
        Failure::usage(e.to_string()).hint(hint)
    })
}

/// The history of the saved results `names` (names only: none is read as a
/// path, whatever it ends in), as `q` asks.
pub fn of_saved(cx: &Context, names: &[String], q: &Query, events: &dyn Events) -> Result<History, Failure> {
    let mut files = Vec::with_capacity(names.len());
    for n in names {
        let f = cx.store.load_lean(n).map_err(|e| super::result::named(cx, n, e))?;
        for r in &f.repaired {
            events.message(&format!("warning: {n}: {r}"));
        }
        files.push((n.clone(), f));
    }
    history::build(&files, q).map_err(|e| Failure::usage(e.to_string()))
}

fn load_named(cx: &Context, names: &[String], events: &dyn Events) -> Result<Vec<(String, ResultFile)>, Failure> {
    let mut files: Vec<(String, ResultFile)> = Vec::with_capacity(names.len());
    for n in names {
        let f = super::result::load(cx, n, events)?;
        if files.iter().any(|(label, _)| *label == f.0) {
            return Err(Failure::usage(format!("`{}` is named twice", f.0)));
        }
        files.push(f);
    }
    Ok(files)
}

/// Every saved result, read on all cores; one that cannot be read is named
/// and left out.
fn load_all(cx: &Context, events: &dyn Events) -> Result<Vec<(String, ResultFile)>, Failure> {
    let store = &cx.store;
    let names = store.list();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = names.len().div_ceil(threads).max(1);
    let loaded: Vec<Vec<(String, Result<ResultFile, engine::store::StoreError>)>> = std::thread::scope(|s| {
        let parts: Vec<_> = names
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|n| (n.clone(), store.load_lean(n))).collect()))
            .collect();
        parts.into_iter().map(|p| p.join().unwrap_or_default()).collect()
    });
    let mut files = Vec::with_capacity(names.len());
    for (name, f) in loaded.into_iter().flatten() {
        match f {
            Ok(f) => files.push((name, f)),
            Err(e) => events.message(&format!("warning: left out `{name}`: {e}")),
        }
    }
    Ok(files)
}
