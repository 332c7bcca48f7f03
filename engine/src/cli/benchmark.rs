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
use engine::runner::{LogPolicy, Progress, Quiet, RunSettings, interrupt, requirements};
use engine::session::{Session, Ui, slug};
use engine::state::hygiene::Hygiene;
use engine::state::journal::{self, Journal};
use engine::sweep::{self, Plan, SweepArgs, SweepError};
use engine::units;
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
    /// Run every test under each I/O scheduler of the device under the target directory:
    /// `none,mq-deadline,kyber,bfq,bfq:low_latency=0`, or `all`; each state is its own identifier
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub scheduler: Option<String>,
    /// Run every test on each file system made fresh on --device: `ext4,xfs,btrfs`,
    /// with mount options as `ext4:nobarrier` or `ext4:data=writeback,noatime`
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub filesystem: Vec<String>,
    /// The device file systems are made on: a spare `/dev/X` (refused if mounted, part of the
    /// root disk, or holding data without --force-destroy-data), or `loop:SIZE` (e.g. `loop:4G`)
    /// for a loop device over a file engine creates and removes
    #[arg(long, value_name = "DEV", help_heading = "System-state sweeps (root)")]
    pub device: Option<String>,
    /// Directory for the backing file of `--device loop:SIZE` (default: ENGINE_HOME/loop)
    #[arg(long, value_name = "DIR", help_heading = "System-state sweeps (root)")]
    pub loop_dir: Option<PathBuf>,
    /// Erase a --device that has a partition table or file system
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub force_destroy_data: bool,
    /// Set a queue attribute or scheduler tunable for the run: `queue/read_ahead_kb=128`,
    /// `iosched/slice_idle=0` (restored afterwards)
    #[arg(long = "set", value_name = "ATTR=VALUE", help_heading = "System-state sweeps (root)")]
    pub set: Vec<String>,
    /// Run the states of each test in random order, to decorrelate drift
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub shuffle: bool,
    /// Sync and drop the page cache before every trial
    #[arg(long, help_heading = "Hygiene")]
    pub drop_caches: bool,
    /// fstrim the target file system before every test
    #[arg(long, help_heading = "Hygiene")]
    pub fstrim: bool,
    /// Pause before every test (`5s`)
    #[arg(long, value_name = "DURATION", help_heading = "Hygiene")]
    pub settle: Option<String>,
    /// Report format printed at the end
    #[arg(long, default_value = "text", value_parser = clap::builder::PossibleValuesParser::new(report::FORMATS))]
    pub format: String,
}

/// Progress and messages on the terminal.
struct TermUi {
    tty: bool,
}

impl Ui for TermUi {
    fn progress(&self, prefix: &str) -> Box<dyn Progress> {
        if self.tty { Box::new(Spinner::new(prefix.to_string())) } else { Box::new(Quiet) }
    }
    fn message(&self, msg: &str) {
        eprintln!("{msg}");
    }
}

/// A run that died (or one still running) may have left a scheduler, a mount
/// or a loop device changed: nothing runs until that is settled.
fn refuse_unfinished_changes(home: &Home) -> Result<(), Failure> {
    let left = journal::leftovers(&home.journal()).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    if let Some(l) = left.first() {
        let what: Vec<String> = l.changes.iter().map(|c| c.describe()).collect();
        return Err(if l.alive {
            Failure::new(exit::ERROR, format!("engine (pid {}) is changing system state: {}", l.pid, what.join("; ")))
                .hint("wait for it to finish; runs that change system state cannot overlap")
        } else {
            Failure::new(
                exit::ERROR,
                format!("an earlier run (pid {}) left system state changed: {}", l.pid, what.join("; ")),
            )
            .hint("run `engine recover` to undo it")
        });
    }
    Ok(())
}

fn sweep_failure(e: SweepError) -> Failure {
    let code = match &e {
        SweepError::Usage(_) => exit::USAGE,
        _ => exit::ERROR,
    };
    let f = Failure::new(code, e.to_string());
    match e {
        SweepError::NeedsRoot(_) => f.hint("run engine as root (sudo) for system-state sweeps"),
        _ => f,
    }
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
    refuse_unfinished_changes(&home)?;
    let file = match store.load(&name) {
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
    let sweep_args = SweepArgs {
        scheduler: args.scheduler.clone(),
        filesystem: args.filesystem.clone(),
        device: args.device.clone(),
        loop_dir: args.loop_dir.clone().unwrap_or_else(|| home.root.join("loop")),
        set: args.set.clone(),
        shuffle: args.shuffle,
        force_destroy_data: args.force_destroy_data,
        drop_caches: args.drop_caches,
        fstrim: args.fstrim,
    };
    let plan = Plan::new(&sweep_args).map_err(sweep_failure)?;
    let need =
        tests.iter().filter_map(|t| requirements::free_space_of(t).map(|b| (b, t.label()))).max_by_key(|(b, _)| *b);
    if !tests.is_empty() && plan.filesystems.is_empty() {
        requirements::check_target(&target, need).map_err(|e| {
            Failure::new(exit::ERROR, e.to_string()).hint("pick another directory with `--target-dir DIR`")
        })?;
    }
    let target = std::fs::canonicalize(&target).unwrap_or(target);
    let settle = match &args.settle {
        Some(s) => Some(units::parse_duration(s).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?),
        None => None,
    };

    interrupt::install().map_err(|e| Failure::new(exit::ERROR, format!("cannot install signal handlers: {e}")))?;
    let mut env: Vec<String> = tests.iter().flat_map(|t| t.profile.profile.relevant_env.iter().cloned()).collect();
    env.sort();
    env.dedup();
    let logs = if args.logs == "failed" { LogPolicy::Failed } else { LogPolicy::All };
    let settings = RunSettings { runs: args.runs, target_dir: target.clone(), logs, drop_caches: args.drop_caches };
    let hygiene = Hygiene { drop_caches: args.drop_caches, fstrim: args.fstrim, settle };
    let tty = std::io::stderr().is_terminal();
    let term = TermUi { tty };
    let mut session = Session::new(&store, name.clone(), file, settings, hygiene, env, &term);
    if plan.is_active() {
        let journal = Journal::create(&home.journal()).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
        let cx = sweep::Context {
            target: &target,
            prefix: args.identifier.as_deref(),
            mount_root: &home.root.join("mnt"),
            journal: &journal,
            ui: &term,
        };
        let result = sweep::run(&plan, &cx, &mut session, &tests);
        // Whatever happened, nothing may stay changed.
        let mut j = journal.lock().unwrap_or_else(|p| p.into_inner());
        let (_, failed) = j.undo_all();
        for f in &failed {
            eprintln!("error: could not restore: {f}");
        }
        if failed.is_empty() {
            j.close();
        }
        result.map_err(sweep_failure)?;
    } else {
        let total = tests.len();
        for (i, t) in tests.iter().enumerate() {
            session
                .run(t, &identifier, &target, &format!("[{}/{total}]", i + 1))
                .map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
            if session.interrupted {
                break;
            }
        }
    }
    let (saved, failed, interrupted) = (session.saved, session.failed, session.interrupted);
    let file = session.file;

    if saved > 0 || store.exists(&name) {
        let shown = store.load(&name).unwrap_or(file);
        let exporter = report::by_name(&args.format, ui::width()).expect("clap checked the format");
        print!("{}", exporter.export(&shown, &report::View::default()));
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
