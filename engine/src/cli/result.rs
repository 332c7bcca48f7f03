//! `engine result …`: show, compare, edit, import and export saved results.

use super::ui;
use super::{Failure, exit, store_failure};
use clap::{Args, Subcommand};
use engine::analysis::normalize::Reference;
use engine::home::Home;
use engine::profile::resolve::Catalog;
use engine::report::{self, View};
use engine::result::{ResultFile, Store, edit, store};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(Args, Debug, Clone)]
pub struct ViewArgs {
    /// Output format
    #[arg(long, default_value = "text", value_parser = clap::builder::PossibleValuesParser::new(report::FORMATS))]
    pub format: String,
    /// Write the report to FILE (atomically) instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Identifier the others are compared with (default: the first)
    #[arg(long, value_name = "ID")]
    pub baseline: Option<String>,
    /// Show values relative to the lowest of each result, or to the baseline
    #[arg(long, value_name = "TO", num_args = 0..=1, default_missing_value = "lowest", value_parser = ["lowest", "baseline"])]
    pub normalize: Option<String>,
    /// Drop outlier trials (modified z-score over 3.5) before averaging
    #[arg(long)]
    pub remove_outliers: bool,
    /// Hide results with a relative SD over PCT (default 6)
    #[arg(long, value_name = "PCT", num_args = 0..=1, default_missing_value = "6")]
    pub hide_noisy: Option<f64>,
    /// Smallest change reported as real, percent
    #[arg(long, value_name = "PCT", default_value_t = engine::analysis::significance::NOISE_PCT)]
    pub noise: f64,
    /// How many notable results to list
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub notable: usize,
}

#[derive(Subcommand, Debug)]
pub enum ResultCommand {
    /// Print a saved result: bars with SE and N, overall means, wins, and verdicts against a baseline
    Show {
        /// Result name
        name: String,
        #[command(flatten)]
        view: ViewArgs,
    },
    /// Compare saved results (names, result.json files or PTS composite.xml files) side by side
    Compare {
        #[arg(required = true, num_args = 1.., value_name = "NAME|FILE")]
        names: Vec<String>,
        #[command(flatten)]
        view: ViewArgs,
    },
    /// Merge results into a new one: tests aligned by identity, every identifier kept.
    /// Every result.json must satisfy schemas/result.schema.json and come from this engine's major version
    Merge {
        #[arg(required = true, num_args = 1.., value_name = "NAME|FILE")]
        names: Vec<String>,
        /// Name of the merged result
        #[arg(long, value_name = "NAME")]
        save: String,
        /// Merge nothing when any input is refused (by default refused inputs are left
        /// out, named with the reason, and the rest merged with exit code 4)
        #[arg(long)]
        strict: bool,
        /// Record a source that has no result to merge, with why (`host3=unreachable`):
        /// listed in the merged result and its reports
        #[arg(long = "left-out", value_name = "SOURCE=REASON")]
        left_out: Vec<String>,
        /// Replace a result of that name (atomically) instead of refusing
        #[arg(long)]
        replace: bool,
    },
    /// Rename an identifier
    RenameIdentifier { name: String, from: String, to: String },
    /// Remove an identifier and its values
    RemoveIdentifier { name: String, identifier: String },
    /// Remove results: by test identity, profile id, or `profile: description`
    RemoveResult { name: String, what: String },
    /// Delete a saved result and its logs
    Delete { name: String },
    /// Import a PTS/OpenBenchmarking composite.xml as a saved result
    Import {
        file: PathBuf,
        /// Name to save it as (default: its title)
        #[arg(long, value_name = "NAME")]
        save: Option<String>,
    },
}

/// A saved result by name, or a file: result.json, or a PTS composite.xml;
/// what loading repaired is said on stderr.
fn load(store: &Store, catalog: &Catalog, what: &str) -> Result<(String, ResultFile), Failure> {
    let (label, f) = load_quiet(store, catalog, what)?;
    for r in &f.repaired {
        eprintln!("warning: {label}: {r}");
    }
    Ok((label, f))
}

fn load_quiet(store: &Store, catalog: &Catalog, what: &str) -> Result<(String, ResultFile), Failure> {
    let p = Path::new(what);
    if (what.contains('/') || what.ends_with(".json") || what.ends_with(".xml")) && p.is_file() {
        let label = p
            .parent()
            .and_then(|d| d.file_name())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| what.to_string());
        if what.ends_with(".xml") {
            let text = engine::interop::pts::read(p).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
            let f = engine::interop::pts::import(&text, what, catalog)
                .map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
            return Ok((label, f));
        }
        return store::load_file(p).map(|f| (label, f)).map_err(store_failure);
    }
    store.load(what).map(|f| (what.to_string(), f)).map_err(store_failure)
}

fn render(file: &ResultFile, v: &ViewArgs) -> Result<i32, Failure> {
    let exporter = report::by_name(&v.format, ui::width()).expect("clap checked the format");
    // An image on a terminal is garbage on the screen: refuse before any work.
    if exporter.binary() && v.output.is_none() && std::io::stdout().is_terminal() {
        return Err(Failure::new(
            exit::USAGE,
            format!("--format {} is a binary image: not written to a terminal", v.format),
        )
        .hint("write it to a file with -o FILE (or redirect standard output)"));
    }
    let mut file = file.clone();
    if v.remove_outliers {
        engine::analysis::noise::remove_outliers(&mut file);
    }
    if let Some(pct) = v.hide_noisy {
        let n = engine::analysis::noise::hide_noisy(&mut file, pct);
        if n > 0 {
            eprintln!("{n} noisy result(s) hidden (relative SD over {pct} %)");
        }
    }
    let ids = engine::analysis::identifiers(&file);
    if let Some(b) = &v.baseline
        && !ids.contains(b)
    {
        return Err(Failure::new(exit::USAGE, format!("no identifier `{b}` in this result"))
            .hint(format!("identifiers: {}", ids.join(", "))));
    }
    let view = View {
        baseline: v.baseline.clone(),
        normalize: v.normalize.as_deref().map(|n| match n {
            "baseline" => Reference::Baseline(v.baseline.clone().or_else(|| ids.first().cloned()).unwrap_or_default()),
            _ => Reference::Lowest,
        }),
        noise_pct: v.noise,
        notable: v.notable,
    };
    let bytes = exporter.export_bytes(&file, &view).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    match &v.output {
        Some(path) => {
            store::write_atomic(path, &bytes).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
            eprintln!("wrote {}", path.display());
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| Failure::new(exit::ERROR, format!("cannot write the report: {e}")))?;
        }
    }
    Ok(exit::OK)
}

fn edit_failure(e: edit::EditError) -> Failure {
    Failure::new(exit::USAGE, e.to_string())
}

pub fn run(cmd: ResultCommand) -> Result<i32, Failure> {
    let home = Home::from_env();
    let store = Store::new(home.results());
    let catalog = Catalog::from_env(&home.user_profiles());
    match cmd {
        ResultCommand::Show { name, view } => {
            let (_, f) = load(&store, &catalog, &name)?;
            render(&f, &view)
        }
        ResultCommand::Compare { names, view } => {
            let files: Vec<(String, ResultFile)> =
                names.iter().map(|n| load(&store, &catalog, n)).collect::<Result<_, _>>()?;
            let title = files.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" vs ");
            render(&edit::merge(files, &title), &view)
        }
        ResultCommand::Merge { names, save, strict, left_out, replace } => {
            merge(&store, &catalog, &names, &save, strict, &left_out, replace)
        }
        ResultCommand::RenameIdentifier { name, from, to } => {
            change(&store, &name, |f| edit::rename_identifier(f, &from, &to).map_err(edit_failure))
        }
        ResultCommand::RemoveIdentifier { name, identifier } => {
            change(&store, &name, |f| edit::remove_identifier(f, &identifier).map_err(edit_failure))
        }
        ResultCommand::RemoveResult { name, what } => change(&store, &name, |f| {
            let n = edit::remove_result(f, &what).map_err(edit_failure)?;
            eprintln!("removed {n} result(s)");
            Ok(())
        }),
        ResultCommand::Delete { name } => {
            store.delete(&name).map_err(store_failure)?;
            eprintln!("deleted result `{name}`");
            Ok(exit::OK)
        }
        ResultCommand::Import { file, save } => {
            let text = engine::interop::pts::read(&file).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
            let f = engine::interop::pts::import(&text, &file.display().to_string(), &catalog).map_err(|e| {
                Failure::new(exit::USAGE, e.to_string())
                    .hint("engine imports the composite.xml of a PTS result (test-results/NAME/composite.xml)")
            })?;
            let name = save.unwrap_or_else(|| f.title.clone());
            store::check_name(&name).map_err(store_failure)?;
            let _lock = store.lock(&name).map_err(store_failure)?;
            if store.exists(&name) {
                return Err(Failure::new(exit::USAGE, format!("a result named `{name}` exists"))
                    .hint("pick another name with --save"));
            }
            store.save(&name, &f).map_err(store_failure)?;
            let matched = f.results.iter().filter(|r| !r.profile_version.is_empty()).count();
            eprintln!(
                "imported `{name}`: {} identifiers, {} results ({matched} matched to engine's profiles and can be re-run with `engine benchmark {name}`)",
                f.systems.len(),
                f.results.len()
            );
            Ok(exit::OK)
        }
    }
}

/// `engine result merge`: every input checked (schema, format, engine
/// version) before anything is merged; refused inputs are left out and named
/// in the merged result with the reason (`--strict`: nothing is merged).
fn merge(
    store: &Store,
    catalog: &Catalog,
    names: &[String],
    save: &str,
    strict: bool,
    left_out: &[String],
    replace: bool,
) -> Result<i32, Failure> {
    store::check_name(save).map_err(store_failure)?;
    let mut declared = Vec::new();
    for l in left_out {
        let Some((source, reason)) = l.split_once('=').filter(|(s, r)| !s.trim().is_empty() && !r.trim().is_empty())
        else {
            return Err(Failure::new(exit::USAGE, format!("--left-out `{l}`: expected SOURCE=REASON"))
                .hint("e.g. --left-out 'host3=unreachable: connection refused'"));
        };
        declared.push(engine::result::LeftOut { source: source.trim().to_string(), reason: reason.trim().to_string() });
    }
    let validator = engine::result::validate::Validator::new();
    let mut files: Vec<(String, ResultFile)> = Vec::new();
    let mut skipped = Vec::new();
    for n in names {
        match load_checked(store, catalog, &validator, n) {
            Ok((label, f)) => {
                for r in &f.repaired {
                    eprintln!("warning: {label}: {r}");
                }
                files.push((label, f));
            }
            Err(Checked::Refused { label, reason }) if !strict => {
                eprintln!("left out {label}: {reason}");
                skipped.push(engine::result::LeftOut { source: label, reason });
            }
            Err(Checked::Refused { label, reason }) => {
                return Err(Failure::new(exit::ERROR, format!("{label} is not merged: {reason}"))
                    .hint("nothing was written (--strict); without --strict such inputs are left out and named"));
            }
            Err(Checked::Failed(f)) => return Err(f),
        }
    }
    if files.is_empty() {
        return Err(Failure::new(exit::ERROR, "nothing to merge: every input was left out"));
    }
    let _lock = store.lock(save).map_err(store_failure)?;
    if store.exists(save) && !replace {
        return Err(Failure::new(exit::USAGE, format!("a result named `{save}` exists"))
            .hint("pick another name with --save, or replace it with --replace"));
    }
    let count = files.len();
    let mut merged = edit::merge(files, save);
    merged.left_out.extend(declared);
    merged.left_out.extend(skipped.iter().cloned());
    store.save(save, &merged).map_err(store_failure)?;
    eprintln!(
        "merged {count} result(s) into `{save}`: {} identifiers, {} results",
        merged.systems.len(),
        merged.results.len()
    );
    for l in &merged.left_out {
        eprintln!("  left out {}: {}", l.source, l.reason);
    }
    Ok(if skipped.is_empty() { exit::OK } else { exit::TESTS_FAILED })
}

/// Why an input of a merge is not used.
enum Checked {
    /// Not a valid result (named by its label): left out, or with `--strict` the merge stops.
    Refused { label: String, reason: String },
    /// Bad usage or an error that stops the command either way.
    Failed(Failure),
}

/// Loads a merge input: a saved result or result.json (checked against the
/// schema and engine version), or a PTS composite.xml (imported).
fn load_checked(
    store: &Store,
    catalog: &Catalog,
    validator: &engine::result::validate::Validator,
    what: &str,
) -> Result<(String, ResultFile), Checked> {
    let p = Path::new(what);
    let looks_like_path = what.contains('/') || what.ends_with(".json") || what.ends_with(".xml");
    let is_file = looks_like_path && p.is_file();
    // A fetched file is named by its folder (`fetched/host3/result.json`: host3).
    let folder = || {
        p.parent()
            .and_then(|d| d.file_name())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| what.to_string())
    };
    if looks_like_path && !is_file && !store.exists(what) {
        let reason = match std::fs::metadata(p) {
            Ok(_) => format!("{what}: not a file"),
            Err(e) => format!("{what}: cannot read it: {e}"),
        };
        return Err(Checked::Refused { label: folder(), reason });
    }
    if is_file && what.ends_with(".xml") {
        return load_quiet(store, catalog, what).map_err(Checked::Failed);
    }
    let (label, path) = if is_file {
        (folder(), p.to_path_buf())
    } else {
        if let Err(e) = store.load(what) {
            return match e {
                engine::result::StoreError::Invalid { .. } => {
                    Err(Checked::Refused { label: what.to_string(), reason: e.to_string() })
                }
                e => Err(Checked::Failed(store_failure(e))),
            };
        }
        (what.to_string(), store.path(what))
    };
    validator
        .check_file(&path)
        .map(|f| (label.clone(), f))
        .map_err(|e| Checked::Refused { label, reason: format!("{}: {}", path.display(), e.reason) })
}

/// Loads `name`, applies `f`, writes it back atomically under the lock.
fn change(store: &Store, name: &str, f: impl FnOnce(&mut ResultFile) -> Result<(), Failure>) -> Result<i32, Failure> {
    let _lock = store.lock(name).map_err(store_failure)?;
    let mut file = store.load(name).map_err(store_failure)?;
    f(&mut file)?;
    store.save(name, &file).map_err(store_failure)?;
    Ok(exit::OK)
}
