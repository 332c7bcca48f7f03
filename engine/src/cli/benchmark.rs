//! `engine benchmark` and `engine run`: resolve, expand, check, run, save, report.

use super::resolve::{Resolved, cli_presets, expand_failure, resolve};
use super::ui::{self, Menu, Spinner};
use super::{Failure, exit};
use clap::Args;
use engine::expand::{self, Batch, Chooser, Test};
use engine::home::Home;
use engine::profile::resolve::Catalog;
use engine::report;
use engine::result::{ResultFile, Store, store};
use engine::runner::{self, LogPolicy, Outcome, Progress, Quiet, RunSettings, interrupt, requirements};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct BenchmarkArgs {
    /// What to run: a profile (`fio`, `fio@1.0`), a suite (`suite/disk`), a saved
    /// result (re-runs its tests for a new identifier), or a path to a profile or suite file
    #[arg(required = true, value_name = "REF")]
    pub refs: Vec<String>,
    /// Name of the result to save to (appends when it exists); `/` and `..` are refused
    #[arg(long, value_name = "NAME")]
    pub save: Option<String>,
    /// Label of this system state in the result (`vda: BFQ`); an existing one resumes its missing tests
    #[arg(long, value_name = "ID")]
    pub identifier: Option<String>,
    /// Entries to run, by option id or name and entry label or value: `--option block_size=4KB,2MB`
    #[arg(long = "option", short = 'o', value_name = "KEY=A,B")]
    pub options: Vec<String>,
    /// Run exactly N trials per test (no trials added for noise)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Batch mode: no menus; every entry (or the profile's defaults) runs
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Directory the tests run in (each test gets a fresh scratch directory inside it)
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Title of a new result file
    #[arg(long)]
    pub title: Option<String>,
    /// Description of a new result file
    #[arg(long)]
    pub description: Option<String>,
    /// Trial logs to keep under the result folder: `all`, or only those of `failed` trials
    #[arg(long, default_value = "all", value_parser = ["all", "failed"])]
    pub logs: String,
    /// Report format printed at the end
    #[arg(long, default_value = "text", value_parser = clap::builder::PossibleValuesParser::new(report::FORMATS))]
    pub format: String,
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches(['-', '.']).chars().take(60).collect()
}

/// FNV-1a, for short stable folder names.
fn short_hash(s: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{:08x}", h as u32)
}

fn default_identifier(file: &ResultFile) -> String {
    let base = engine::sysinfo::hostname();
    if file.system(&base).is_none() {
        return base;
    }
    (2..).map(|i| format!("{base} ({i})")).find(|c| file.system(c).is_none()).unwrap()
}

pub fn run(args: BenchmarkArgs, _install: bool) -> Result<i32, Failure> {
    let home = Home::from_env();
    let store = Store::new(home.results());
    let catalog = Catalog::from_env(&home.user_profiles());
    if let Some(n) = &args.save {
        store::check_name(n)
            .map_err(|e| Failure::new(exit::USAGE, e.to_string()).hint("use a plain name such as `disk-2026-11`"))?;
    }

    // Resolve and expand.
    let presets = cli_presets(&args.options)?;
    let chooser: Box<dyn Chooser> = if !args.yes && ui::interactive() { Box::new(Menu) } else { Box::new(Batch) };
    let mut tests: Vec<Test> = Vec::new();
    let mut rerun: Option<String> = None;
    let mut used_presets = HashSet::new();
    let mut not_runnable = Vec::new();
    for r in &args.refs {
        match resolve(r, &catalog, &store)? {
            Resolved::Planned(items) => {
                for item in items {
                    let mut all = item.presets.clone();
                    for (i, p) in presets.iter().enumerate() {
                        if expand::find_option(&item.profile, &p.option).is_some() {
                            used_presets.insert(i);
                            all.push(p.clone());
                        }
                    }
                    tests.extend(
                        expand::expand(&item.profile, &all, chooser.as_ref(), true)
                            .map_err(|e| expand_failure(e, exit::USAGE))?,
                    );
                }
            }
            Resolved::Saved { name, tests: t, missing } => {
                rerun.get_or_insert(name);
                tests.extend(t);
                not_runnable.extend(missing);
            }
        }
    }
    for (i, p) in presets.iter().enumerate() {
        if !used_presets.contains(&i) && rerun.is_none() {
            return Err(Failure::new(exit::USAGE, format!("no profile in this run has an option `{}`", p.option))
                .hint("see the options with `engine info PROFILE`"));
        }
    }
    let mut seen = HashSet::new();
    tests.retain(|t| seen.insert(t.key()));

    // Where to save, under which identifier.
    let name = args.save.clone().or(rerun.clone()).unwrap_or_else(|| {
        let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let stamp: String = stamp.chars().filter(|c| c.is_ascii_digit()).take(12).collect();
        format!("{}-{stamp}", slug(&args.refs.join("-")))
    });
    store::check_name(&name).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
    let _lock = store.lock(&name).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    let mut file = match store.load(&name) {
        Ok(f) => f,
        Err(engine::result::StoreError::NotFound(_)) => {
            let mut f = ResultFile::new(args.title.as_deref().unwrap_or(&name));
            f.description = args.description.clone().unwrap_or_default();
            f
        }
        Err(e) => return Err(Failure::new(exit::ERROR, e.to_string())),
    };
    let identifier = args.identifier.clone().unwrap_or_else(|| default_identifier(&file));
    if identifier.trim().is_empty() {
        return Err(Failure::new(exit::USAGE, "the identifier is empty"));
    }

    // Skip what this identifier already has (resume), and what cannot run here.
    let mut skipped: Vec<String> = not_runnable;
    let before = tests.len();
    tests.retain(|t| !file.has_any(&t.key(), &identifier));
    if tests.len() < before {
        eprintln!(
            "{identifier}: {} test(s) already in result `{name}` are kept; running the other {}",
            before - tests.len(),
            tests.len()
        );
    }
    let mut unmet_profiles = HashSet::new();
    for t in &tests {
        let p = &t.profile.profile;
        if unmet_profiles.contains(&p.id) {
            continue;
        }
        let mut unmet: Vec<String> = requirements::missing_programs(p).iter().map(ToString::to_string).collect();
        unmet.extend(requirements::missing_root(p).map(|u| u.to_string()));
        if !unmet.is_empty() {
            for u in &unmet {
                eprintln!("skipped {}: {u}", p.id);
            }
            unmet_profiles.insert(p.id.clone());
        }
    }
    tests.retain(|t| {
        if unmet_profiles.contains(&t.profile.profile.id) {
            skipped.push(t.label());
            false
        } else {
            true
        }
    });

    // The target directory must be usable before any trial.
    let target = args.target_dir.clone().unwrap_or_else(|| home.default_target_dir());
    let need =
        tests.iter().filter_map(|t| requirements::free_space_of(t).map(|b| (b, t.label()))).max_by_key(|(b, _)| *b);
    if !tests.is_empty() {
        requirements::check_target(&target, need).map_err(|e| {
            Failure::new(exit::ERROR, e.to_string()).hint("pick another directory with `--target-dir DIR`")
        })?;
    }
    let target = std::fs::canonicalize(&target).unwrap_or(target);

    interrupt::install().map_err(|e| Failure::new(exit::ERROR, format!("cannot install signal handlers: {e}")))?;
    let system = match file.system(&identifier) {
        Some(s) => s.clone(),
        None => {
            let mut env: Vec<String> =
                tests.iter().flat_map(|t| t.profile.profile.relevant_env.iter().cloned()).collect();
            env.sort();
            env.dedup();
            engine::sysinfo::capture(&identifier, &target, &env)
        }
    };
    let logs = if args.logs == "failed" { LogPolicy::Failed } else { LogPolicy::All };
    let settings = RunSettings { runs: args.runs, target_dir: target.clone(), logs };
    let tty = std::io::stderr().is_terminal();
    let mut failed = 0usize;
    let mut saved = 0usize;
    let mut interrupted = false;
    let total = tests.len();
    for (i, t) in tests.iter().enumerate() {
        if interrupt::requested() {
            interrupted = true;
            break;
        }
        let rel = format!("logs/{}/{}-{}", slug(&identifier), slug(&t.profile.profile.id), short_hash(&t.key()));
        let logs = store.dir(&name).join(&rel);
        let progress: Box<dyn Progress> =
            if tty { Box::new(Spinner::new(format!("[{}/{total}]", i + 1))) } else { Box::new(Quiet) };
        match runner::run_test(t, &settings, &logs, &rel, progress.as_ref()) {
            Outcome::Completed(results) => {
                if file.system(&identifier).is_none() {
                    file.systems.push(system.clone());
                }
                for (template, mut entry) in results {
                    entry.identifier = identifier.clone();
                    file.upsert(&template, entry);
                }
                if let Some(s) = file.systems.iter_mut().find(|s| s.identifier == identifier) {
                    s.finished = Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string());
                }
                store.save(&name, &file).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
                saved += 1;
            }
            Outcome::Failed(msg) => {
                failed += 1;
                eprintln!("failed {}: {msg}", t.label());
            }
            Outcome::Interrupted => {
                interrupted = true;
                break;
            }
        }
    }

    if saved > 0 || store.exists(&name) {
        let shown = store.load(&name).unwrap_or(file);
        let exporter = report::by_name(&args.format, ui::width()).expect("clap checked the format");
        print!("{}", exporter.export(&shown));
        eprintln!("\nSaved to {}", store.path(&name).display());
    }
    if interrupted {
        eprintln!("interrupted: {saved} test(s) completed and saved; run the same command again to resume");
        return Ok(exit::INTERRUPTED);
    }
    if !skipped.is_empty() {
        eprintln!("{} test(s) skipped", skipped.len());
    }
    if failed > 0 || !skipped.is_empty() {
        return Ok(exit::TESTS_FAILED);
    }
    Ok(exit::OK)
}
