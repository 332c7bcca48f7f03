//! `engine benchmark` and `engine run`, as a sequence of named phases:
//! check every flag → resolve → expand → destination (name, identifier,
//! resume) → install (benchmark) / what is missing (run) → requirements → target → lock → capture and trials
//! (plain or sweep) → report. Nothing is created on disk before the lock
//! phase, so a refused run leaves nothing behind.

use super::progress_json::{JsonUi, Summary};
use super::resolve::{Resolved, cli_presets, expand_failure, resolve};
use super::run_ui::TermUi;
use super::ui::{self, Menu};
use super::{Failure, exit, store_failure};
use clap::Args;
use engine::expand::{self, Batch, Chooser, Test};
use engine::home::Home;
use engine::hostlock::{Holder, HostLock, HostLockError};
use engine::profile::resolve::Catalog;
use engine::report;
use engine::result::{FailedTest, ResultFile, Store, StoreError, store};
use engine::resume::{self, Runs, Unfinished};
use engine::runner::{LogPolicy, RunSettings, interrupt, requirements};
use engine::session::{Session, Ui, slug};
use engine::state::hygiene::Hygiene;
use engine::state::journal::{self, Journal};
use engine::sweep::{self, Plan, SweepArgs, SweepError};
use engine::units;
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Run N trials first and discard them (overrides the profile's `trials.warmup`)
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// List the tests, trials and an estimated time, and run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Batch mode: no menus; every entry (or the profile's defaults) runs
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Directory the tests run in; it must exist (each trial gets a fresh scratch directory inside it)
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
    #[arg(long, default_value = "text", value_parser = clap::builder::PossibleValuesParser::new(report::TEXT_FORMATS))]
    pub format: String,
    /// How progress is shown: `text` (a progress line on a terminal, a line per test
    /// otherwise) or `json` (one JSON object per line on standard output, for
    /// orchestrators: schemas/progress.schema.json)
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub progress: String,
}

fn failure(code: i32) -> impl Fn(String) -> Failure {
    move |m| Failure::new(code, m)
}

/// A run that died (or one still running) may have left a scheduler, a mount
/// or a loop device changed: nothing runs until that is settled.
fn refuse_unfinished_changes(home: &Home) -> Result<(), Failure> {
    let mut left = journal::leftovers(&home.journal()).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    // Test folders a killed run left change nothing but disk space: removed
    // here, without asking for `engine recover`.
    left.retain(|l| {
        if l.alive || !l.changes.iter().all(|c| matches!(c, journal::Change::Scratch { .. })) {
            return true;
        }
        let (done, failed) = journal::recover(l);
        for d in done {
            eprintln!("note: a killed run (pid {}) left test folders: {d}", l.pid);
        }
        !failed.is_empty()
    });
    // Servers another live run started are its own business (they listen on
    // their own sockets and ports); a dead run's need `engine recover`.
    let blocking = left.iter().find(|l| !(l.alive && l.changes.iter().all(|c| c.is_process())));
    if let Some(l) = blocking {
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

/// Phase 1: every flag, checked before anything is resolved or created.
struct Flags {
    settle: Option<Duration>,
    target: PathBuf,
    /// The target is engine's default (created when missing).
    default_target: bool,
    plan: Plan,
    logs: LogPolicy,
}

fn check_flags(args: &BenchmarkArgs, home: &Home) -> Result<Flags, Failure> {
    if let Some(n) = &args.save {
        store::check_name(n)
            .map_err(|e| Failure::new(exit::USAGE, e.to_string()).hint("use a plain name such as `disk-2026-11`"))?;
    }
    if let Some(id) = &args.identifier
        && id.trim().is_empty()
    {
        return Err(Failure::new(exit::USAGE, "the identifier is empty")
            .hint("name the system state: `--identifier 'vda: BFQ'`"));
    }
    let settle = match &args.settle {
        Some(s) => Some(units::parse_duration(s).map_err(|e| Failure::new(exit::USAGE, format!("--settle: {e}")))?),
        None => None,
    };
    let (target, default_target) = match &args.target_dir {
        Some(t) => (t.clone(), false),
        None => (home.default_target_dir(), true),
    };
    if !default_target {
        match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Failure::new(exit::ERROR, format!("--target-dir {} is not a directory", target.display())));
            }
            Err(e) => {
                return Err(Failure::new(
                    exit::ERROR,
                    format!("--target-dir {} cannot be used: {e}", target.display()),
                )
                .hint(
                    "create it first (engine does not create it: an unmounted mount point would test the wrong disk)",
                ));
            }
        }
    }
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
    let logs = if args.logs == "failed" { LogPolicy::Failed } else { LogPolicy::All };
    Ok(Flags { settle, target, default_target, plan, logs })
}

/// Phases 2 and 3: the references resolved and expanded into tests.
struct Work {
    tests: Vec<Test>,
    /// Keys of the tests only optional suite items asked for.
    optional: HashSet<String>,
    /// The saved result whose tests are re-run (`engine benchmark NAME`).
    rerun: Option<String>,
    /// Tests of a saved result that cannot run here.
    not_runnable: Vec<String>,
}

fn expand_refs(args: &BenchmarkArgs, catalog: &Catalog, store: &Store) -> Result<Work, Failure> {
    let presets = cli_presets(&args.options)?;
    let chooser: Box<dyn Chooser> = if !args.yes && ui::interactive() { Box::new(Menu) } else { Box::new(Batch) };
    let mut tests: Vec<Test> = Vec::new();
    let mut rerun: Option<String> = None;
    let mut used_presets = HashSet::new();
    let mut not_runnable = Vec::new();
    let (mut optional, mut required) = (HashSet::new(), HashSet::new());
    for r in &args.refs {
        match resolve(r, catalog, store)? {
            Resolved::Planned(items) => {
                for item in items {
                    let mut all = item.presets.clone();
                    for (i, p) in presets.iter().enumerate() {
                        if expand::find_option(&item.profile, &p.option).is_some() {
                            used_presets.insert(i);
                            all.push(p.clone());
                        }
                    }
                    let t = expand::expand(&item.profile, &all, chooser.as_ref(), true)
                        .map_err(|e| expand_failure(e, exit::USAGE))?;
                    if t.is_empty() {
                        eprintln!("nothing chosen for {}: its tests are left out", item.profile.profile.id);
                    }
                    for x in &t {
                        if item.optional {
                            optional.insert(x.key())
                        } else {
                            required.insert(x.key())
                        };
                    }
                    tests.extend(t);
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
            let ids: Vec<String> = tests
                .iter()
                .flat_map(|t| t.profile.profile.options.iter().map(|o| o.id.clone()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let hint = match engine::profile::diag::did_you_mean(&p.option, ids.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "see the options with `engine info PROFILE`".to_string(),
            };
            return Err(
                Failure::new(exit::USAGE, format!("no profile in this run has an option `{}`", p.option)).hint(hint)
            );
        }
    }
    let mut seen = HashSet::new();
    tests.retain(|t| seen.insert(t.key()));
    if tests.is_empty() && not_runnable.is_empty() {
        return Err(Failure::new(exit::USAGE, "nothing to run: no test was chosen"));
    }
    optional.retain(|k| !required.contains(k));
    Ok(Work { tests, optional, rerun, not_runnable })
}

/// What the run is asked to do, as a key for resuming (not --save/--identifier).
fn run_key(args: &BenchmarkArgs, flags: &Flags) -> String {
    let mut parts: Vec<String> = args.refs.clone();
    let mut opts = args.options.clone();
    opts.sort();
    parts.extend(opts);
    parts.push(format!("runs={:?} warmup={:?}", args.runs, args.warmup));
    let target = std::fs::canonicalize(&flags.target).unwrap_or_else(|_| flags.target.clone());
    parts.push(target.display().to_string());
    parts.push(format!("{:?} {:?} {:?} {:?}", args.scheduler, args.filesystem, args.device, args.set));
    resume::key(&parts)
}

/// Phase 4: where to save and under which identifier, resuming an
/// unfinished run of the same command.
struct Destination {
    name: String,
    identifier: String,
    key: String,
    resumed: bool,
}

fn destination(
    args: &BenchmarkArgs,
    flags: &Flags,
    work: &Work,
    home: &Home,
    store: &Store,
) -> Result<Destination, Failure> {
    let key = run_key(args, flags);
    let runs = Runs::new(home.runs());
    let results = home.results();
    let unfinished: Option<Unfinished> = match (&args.save, &work.rerun) {
        (Some(n), _) => runs.find_for_name(&key, n, &results),
        (None, Some(n)) => runs.find_for_name(&key, n, &results),
        (None, None) => runs.find(&key, &results),
    };
    let name =
        args.save.clone().or(work.rerun.clone()).or(unfinished.as_ref().map(|u| u.name.clone())).unwrap_or_else(|| {
            // A new result: the references and the time, never an existing name.
            let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
            let stamp: String = stamp.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
            let base = format!("{}-{stamp}", slug(&args.refs.join("-")));
            std::iter::once(base.clone())
                .chain((2..).map(|i| format!("{base}-{i}")))
                .find(|n| !store.dir(n).exists())
                .expect("some name is free")
        });
    store::check_name(&name).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
    let file = match store.load(&name) {
        Ok(f) => Some(f),
        Err(StoreError::NotFound(_)) => None,
        Err(e) => return Err(store_failure(e)),
    };
    let resumed_id = unfinished.as_ref().filter(|u| u.name == name).map(|u| u.identifier.clone());
    let identifier = match (&args.identifier, &resumed_id) {
        (Some(id), _) => id.clone(),
        (None, Some(id)) => id.clone(),
        (None, None) => {
            let base = engine::sysinfo::hostname();
            let taken = |c: &str| file.as_ref().is_some_and(|f| f.system(c).is_some());
            if !taken(&base) { base } else { (2..).map(|i| format!("{base} ({i})")).find(|c| !taken(c)).unwrap() }
        }
    };
    let resumed = args.identifier.is_none() && resumed_id.is_some();
    Ok(Destination { name, identifier, key, resumed })
}

/// Phase 5: what cannot run here (missing programs, not root) is skipped;
/// quietly for optional suite items (the run still succeeds).
fn requirements_phase(
    tests: &mut Vec<Test>,
    optional: &HashSet<String>,
    skipped: &mut Vec<FailedTest>,
    identifier: &str,
    not_installed: &std::collections::HashMap<String, String>,
) {
    let mut unmet_profiles: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for t in tests.iter() {
        let p = &t.profile.profile;
        if unmet_profiles.contains_key(&p.id) {
            continue;
        }
        let mut unmet: Vec<String> = Vec::new();
        if let Some(why) = not_installed.get(&p.id) {
            unmet.push(why.clone());
        } else {
            unmet.extend(requirements::missing_programs(p).iter().map(ToString::to_string));
            unmet.extend(requirements::missing_files(p).iter().map(ToString::to_string));
        }
        unmet.extend(requirements::missing_root(p).map(|u| u.to_string()));
        if !unmet.is_empty() {
            let all_optional =
                tests.iter().filter(|x| x.profile.profile.id == p.id).all(|x| optional.contains(&x.key()));
            for u in &unmet {
                if all_optional {
                    eprintln!("not run (optional in this suite) {}: {u}", p.id);
                } else {
                    eprintln!("skipped {}: {u}", p.id);
                }
            }
            unmet_profiles.insert(p.id.clone(), unmet.join("; "));
        }
    }
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    tests.retain(|t| match unmet_profiles.get(&t.profile.profile.id) {
        Some(_) if optional.contains(&t.key()) => false,
        Some(why) => {
            skipped.push(FailedTest {
                test: t.key(),
                profile: t.profile.profile.id.clone(),
                title: t.profile.profile.title.clone(),
                description: t.description(),
                identifier: identifier.to_string(),
                status: "skipped".into(),
                reason: why.clone(),
                log: None,
                stderr_tail: Vec::new(),
                timestamp: stamp.clone(),
            });
            false
        }
        None => true,
    });
}

/// Phase 6: the target directory, usable and with room, named for what it is.
fn target_phase(flags: &Flags, tests: &[Test]) -> Result<PathBuf, Failure> {
    if flags.default_target {
        std::fs::create_dir_all(&flags.target).map_err(|e| {
            Failure::new(exit::ERROR, format!("cannot create {}: {e}", flags.target.display()))
                .hint("pick another directory with `--target-dir DIR`")
        })?;
    }
    let need =
        tests.iter().filter_map(|t| requirements::free_space_of(t).map(|b| (b, t.label()))).max_by_key(|(b, _)| *b);
    if !tests.is_empty() && flags.plan.filesystems.is_empty() {
        requirements::check_target(&flags.target, need).map_err(|e| {
            Failure::new(exit::ERROR, e.to_string()).hint("pick another directory with `--target-dir DIR`")
        })?;
        if let Some(w) = engine::sysinfo::target_warning(&flags.target) {
            eprintln!("warning: {w}");
        }
    }
    Ok(std::fs::canonicalize(&flags.target).unwrap_or_else(|_| flags.target.clone()))
}

/// The command line that resumes this run: the same arguments with the
/// result name and identifier it used.
fn resume_command(name: &str, identifier: &str) -> String {
    let argv: Vec<String> = std::env::args().collect();
    let mut out: Vec<String> = vec!["engine".into()];
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--save" || a == "--identifier" {
            i += 2;
            continue;
        }
        if a.starts_with("--save=") || a.starts_with("--identifier=") {
            i += 1;
            continue;
        }
        out.push(engine::profile::template::quote(a));
        i += 1;
    }
    out.push("--save".into());
    out.push(engine::profile::template::quote(name));
    out.push("--identifier".into());
    out.push(engine::profile::template::quote(identifier));
    out.join(" ")
}

/// Estimated seconds of one test: its scheduled trials at the time its
/// earlier trials took (from any saved result), else unknown.
fn dry_run(work: &Work, args: &BenchmarkArgs, store: &Store, name: Option<&str>) -> i32 {
    let file = name.and_then(|n| store.load(n).ok());
    let mut total = 0.0;
    let mut unknown = 0;
    println!("{} test(s):", work.tests.len());
    for t in &work.tests {
        let tr = &t.profile.profile.trials;
        let trials = args.runs.unwrap_or(tr.times) + args.warmup.unwrap_or(tr.warmup);
        let max = args.runs.unwrap_or(tr.max.unwrap_or(tr.times * 4));
        let per = file.as_ref().and_then(|f| {
            let secs: Vec<f64> = f
                .results
                .iter()
                .filter(|r| r.test == t.key())
                .flat_map(|r| r.entries.iter().flat_map(|e| e.trial_seconds.iter().copied()))
                .collect();
            (!secs.is_empty()).then(|| secs.iter().sum::<f64>() / secs.len() as f64)
        });
        let est = match per {
            Some(s) => {
                total += s * trials as f64;
                format!("~{}", humantime::format_duration(Duration::from_secs((s * trials as f64).ceil() as u64)))
            }
            None => {
                unknown += 1;
                "time unknown".to_string()
            }
        };
        println!("  {}: {trials} trial(s) (up to {max}), {est}", t.label());
    }
    for m in &work.not_runnable {
        println!("  cannot run: {m}");
    }
    let known = humantime::format_duration(Duration::from_secs(total.ceil() as u64));
    if unknown == work.tests.len() {
        println!("estimated: unknown (none of these tests has run here yet; timings come from earlier runs)");
    } else if unknown == 0 {
        println!("estimated: {known} for the scheduled trials");
    } else {
        println!("estimated: {known} for the tests with earlier timings; {unknown} test(s) never timed here");
    }
    exit::OK
}

/// The whole-host lock: one benchmark at a time per ENGINE_HOME.
fn host_lock(home: &Home, dest: &Destination) -> Result<HostLock, Failure> {
    HostLock::acquire(&home.benchmark_lock(), &Holder::this_process(&dest.name, &dest.identifier)).map_err(|e| {
        let f = Failure::new(exit::ERROR, e.to_string());
        match e {
            HostLockError::Busy(_) => f.hint(
                "wait for it to finish: two benchmarks at once on one machine measure each other \
                 (the lock goes when that process ends, however it ends)",
            ),
            HostLockError::Io { .. } => f,
        }
    })
}

pub fn run(args: BenchmarkArgs, install: bool) -> Result<i32, Failure> {
    // However the run ends, its scratch journal goes with it.
    struct CloseScratch;
    impl Drop for CloseScratch {
        fn drop(&mut self) {
            journal::close_scratch();
        }
    }
    let _scratch = CloseScratch;
    if args.progress != "json" {
        return run_with(args, install, None);
    }
    let ui = JsonUi::default();
    let outcome = if args.format != "text" {
        Err(Failure::new(
            exit::USAGE,
            format!(
                "--progress json writes events to standard output; --format {} would be mixed into them",
                args.format
            ),
        )
        .hint("write the report afterwards: `engine result show NAME --format FORMAT`"))
    } else {
        run_with(args, install, Some(&ui))
    };
    ui.finish(&outcome);
    outcome
}

fn run_with(args: BenchmarkArgs, install: bool, json: Option<&JsonUi>) -> Result<i32, Failure> {
    let home = Home::from_env();
    let store = Store::new(home.results());
    let catalog = Catalog::from_env(&home.user_profiles());

    let flags = check_flags(&args, &home)?;
    let work = expand_refs(&args, &catalog, &store)?;
    if args.dry_run {
        return Ok(dry_run(&work, &args, &store, args.save.as_deref().or(work.rerun.as_deref())));
    }
    let dest = destination(&args, &flags, &work, &home, &store)?;
    // Before installing: an install next to a running benchmark disturbs it too.
    let _host_lock = host_lock(&home, &dest)?;
    let Work { mut tests, not_runnable, optional, .. } = work;
    let mut skipped: Vec<FailedTest> = Vec::new();
    if !not_runnable.is_empty() {
        for m in &not_runnable {
            eprintln!("cannot run: {m}");
        }
    }
    // Install phase: `benchmark` installs what is missing (asking on a
    // terminal, or with --yes); `run` never installs and says what is missing.
    let quote = engine::profile::template::quote;
    let install_args: Vec<String> = args
        .refs
        .iter()
        .map(|r| quote(r))
        .chain(args.options.iter().map(|o| format!("--option {}", quote(o))))
        .collect();
    let not_installed = super::install::phase(&tests, &optional, install, args.yes, &install_args.join(" "));
    if install && interrupt::requested() {
        eprintln!("interrupted while installing; nothing ran");
        return Ok(exit::INTERRUPTED);
    }
    requirements_phase(&mut tests, &optional, &mut skipped, &dest.identifier, &not_installed);
    let target = target_phase(&flags, &tests)?;
    refuse_unfinished_changes(&home)?;

    // Lock: from here on the result folder exists.
    let existed = store.dir(&dest.name).exists();
    let lock = store.lock(&dest.name).map_err(store_failure)?;
    let file = match store.load(&dest.name) {
        Ok(f) => f,
        Err(StoreError::NotFound(_)) => {
            let mut f = ResultFile::new(args.title.as_deref().unwrap_or(&dest.name));
            f.description = args.description.clone().unwrap_or_default();
            f
        }
        Err(e) => return Err(store_failure(e)),
    };
    for r in &file.repaired {
        eprintln!("warning: {}: {r}", dest.name);
    }
    let identifier = dest.identifier.clone();
    let before = tests.len();
    tests.retain(|t| !file.has_any(&t.key(), &identifier));
    if tests.len() < before {
        eprintln!(
            "{} `{identifier}`: {} test(s) already in result `{}` are kept; running the other {}",
            if dest.resumed { "resuming" } else { "continuing" },
            before - tests.len(),
            dest.name,
            tests.len()
        );
    }
    let runs = Runs::new(home.runs());
    let record = Unfinished {
        key: dest.key.clone(),
        name: dest.name.clone(),
        identifier: identifier.clone(),
        started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    };
    if !tests.is_empty() {
        runs.record(&record).map_err(|e| {
            Failure::new(exit::ERROR, format!("cannot record the run in {}: {e}", home.runs().display()))
        })?;
    }
    if let Some(j) = json {
        j.set_summary(Summary { result: Some(dest.name.clone()), skipped: skipped.len(), ..Summary::default() });
        j.emit(engine::events::Event::RunStarted {
            version: engine::events::EVENTS_VERSION,
            engine_version: env!("CARGO_PKG_VERSION").to_string(),
            pid: std::process::id(),
            result: dest.name.clone(),
            path: store.path(&dest.name).display().to_string(),
            identifier: identifier.clone(),
            tests: tests.len(),
            kept: before - tests.len(),
            resumed: dest.resumed,
        });
        for s in &skipped {
            j.test_error(s);
        }
        for m in &not_runnable {
            j.emit(engine::events::Event::Error {
                message: format!("cannot run: {m}"),
                hint: None,
                test: None,
                identifier: Some(identifier.clone()),
                status: Some("skipped".into()),
                log: None,
            });
        }
    }

    interrupt::install().map_err(|e| Failure::new(exit::ERROR, format!("cannot install signal handlers: {e}")))?;
    let mut env: Vec<String> = tests.iter().flat_map(|t| t.profile.profile.relevant_env.iter().cloned()).collect();
    env.sort();
    env.dedup();
    let settings = RunSettings {
        runs: args.runs,
        warmup: args.warmup,
        target_dir: target.clone(),
        logs: flags.logs,
        drop_caches: args.drop_caches,
    };
    let hygiene = Hygiene { drop_caches: args.drop_caches, fstrim: args.fstrim, settle: flags.settle };
    let term = TermUi { tty: std::io::stderr().is_terminal(), results: args.format == "text", width: ui::width() };
    let shown: &dyn Ui = match json {
        Some(j) => j,
        None => &term,
    };
    let mut session = Session::new(&store, dest.name.clone(), file, settings, hygiene, env, shown);
    let outcome = if flags.plan.is_active() {
        sweep_phase(&flags.plan, &home, &target, args.identifier.as_deref(), &mut session, &tests, shown)
    } else {
        let total = tests.len();
        let mut r = Ok(());
        for (i, t) in tests.iter().enumerate() {
            if let Err(e) = session.run(t, &identifier, &target, &format!("[{}/{total}]", i + 1)) {
                r = Err(store_failure(e));
                break;
            }
            if session.interrupted {
                break;
            }
        }
        r
    };
    let (saved, interrupted) = (session.saved, session.interrupted);
    let failed = std::mem::take(&mut session.failed);
    let mut file = session.file;
    // Skipped tests are part of the record once the result exists.
    if !skipped.is_empty() && (saved > 0 || !failed.is_empty() || store.exists(&dest.name)) {
        for s in &skipped {
            if !file.has_any(&s.test, &s.identifier) {
                file.record_failure(s.clone());
            }
        }
        store.save(&dest.name, &file).map_err(store_failure)?;
    }
    let exists = store.exists(&dest.name);
    if let Some(j) = json {
        j.set_summary(Summary {
            result: exists.then(|| dest.name.clone()),
            path: exists.then(|| store.path(&dest.name).display().to_string()),
            saved,
            failed: failed.len(),
            skipped: skipped.len() + not_runnable.len(),
            interrupted,
        });
    }
    drop(lock);
    if !exists && !existed {
        // Nothing was saved: leave no empty result folder behind.
        let _ = std::fs::remove_dir_all(store.dir(&dest.name));
    }
    outcome?;

    // Report.
    if exists && json.is_none() {
        let shown = store.load(&dest.name).unwrap_or(file);
        if args.format == "text" {
            let a = report::text::analysis_only(&shown, &report::View::default(), ui::width());
            if !a.trim().is_empty() {
                print!("\n{a}");
            }
        } else {
            let exporter = report::by_name(&args.format, ui::width()).expect("clap checked the format");
            print!("{}", exporter.export(&shown, &report::View::default()));
        }
    }
    if !failed.is_empty() || !skipped.is_empty() {
        eprintln!();
        for f in failed.iter().chain(&skipped) {
            eprintln!("{} {}: {} ({}): {}", f.status, f.profile, f.description, f.identifier, f.reason);
            if let Some(l) = &f.log {
                eprintln!("    log: {}", store.dir(&dest.name).join(l).display());
            }
            for line in &f.stderr_tail {
                eprintln!("    | {line}");
            }
        }
    }
    if exists {
        eprintln!(
            "\nSaved to {} ({saved} test(s) this run); view it with `engine result show {}`",
            store.path(&dest.name).display(),
            engine::profile::template::quote(&dest.name)
        );
    }
    if interrupted {
        eprintln!(
            "interrupted: {saved} test(s) completed and saved; resume with:\n  {}",
            resume_command(&dest.name, &identifier)
        );
        return Ok(exit::INTERRUPTED);
    }
    if !failed.is_empty() {
        eprintln!("{} test(s) failed; run the same command again to retry them", failed.len());
        return Ok(exit::TESTS_FAILED);
    }
    runs.finish(&dest.key);
    if !skipped.is_empty() || !not_runnable.is_empty() {
        eprintln!("{} test(s) skipped", skipped.len() + not_runnable.len());
        return Ok(exit::TESTS_FAILED);
    }
    Ok(exit::OK)
}

/// Phase 7 for sweeps: every test under each system state, journaled and
/// restored whatever happens.
fn sweep_phase(
    plan: &Plan,
    home: &Home,
    target: &Path,
    prefix: Option<&str>,
    session: &mut Session,
    tests: &[Test],
    term: &dyn Ui,
) -> Result<(), Failure> {
    let _state_lock = journal::StateLock::acquire(&home.state_lock()).map_err(failure(exit::ERROR))?;
    refuse_unfinished_changes(home)?;
    let journal = Journal::create(&home.journal()).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    let mount_root = home.root.join("mnt");
    let cx = sweep::Context { target, prefix, mount_root: &mount_root, journal: &journal, ui: term };
    let result = sweep::run(plan, &cx, session, tests);
    // Whatever happened, nothing may stay changed.
    let mut j = journal.lock().unwrap_or_else(|p| p.into_inner());
    let (_, failed) = j.undo_all();
    for f in &failed {
        eprintln!("error: could not restore: {f}");
    }
    if failed.is_empty() {
        j.close();
    }
    result.map_err(sweep_failure)
}
