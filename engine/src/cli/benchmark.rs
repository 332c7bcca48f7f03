//! `engine benchmark` and `engine run`: the flags, turned into an
//! `ops::benchmark::Request`; the run shown on the terminal or as JSON
//! events; the report, the summary and the exit code at the end.

use super::Failure;
use super::args::{self, Logs, Progress, RunFormat};
use super::command_line::CommandLine;
use super::progress_json::JsonEvents;
use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use clap::Args;
use engine::model::result::ResultFile;
use engine::ops::Context;
use engine::ops::benchmark::{self, Estimate, Outcome, Ran, Request, SweepRequest, Timing};
use engine::ops::gate::Gate;
use engine::report::{self, Format};
use engine::runner::{LogPolicy, ProfileExecutors};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
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
    pub options: Vec<engine::expand::Preset>,
    /// Run exactly N trials per test (no trials added for noise)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Time each test's trials may take (`30s`, `5m`; default: the suite's, the
    /// profile's, else 60 s): trials are added while the 95 % CI is wider than the target
    #[arg(long, value_name = "DURATION", value_parser = args::positive_duration)]
    pub budget: Option<Duration>,
    /// Run N trials first and discard them (overrides the profile's `trials.warmup`)
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// With a saved result: re-run only its tests that stopped for time wider
    /// than ±5 % (their entries are replaced); give them a larger --budget
    #[arg(long)]
    pub only_unsettled: bool,
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
    #[arg(long, value_enum, default_value_t = Logs::All)]
    pub logs: Logs,
    /// Run every test under each I/O scheduler of the device under the target directory:
    /// `none,mq-deadline,kyber,bfq,bfq:low_latency=0`, or `all`; each state is its own identifier
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub scheduler: Option<engine::sweep::Schedulers>,
    /// Run every test on each file system made fresh on --device: `ext4,xfs,btrfs`,
    /// with mount options as `ext4:nobarrier` or `ext4:data=writeback,noatime`
    #[arg(long, value_name = "LIST", help_heading = "System-state sweeps (root)")]
    pub filesystem: Vec<engine::sweep::FsList>,
    /// The device file systems are made on: a spare `/dev/X` (refused if mounted, part of the
    /// root disk, or holding data without --force-destroy-data), or `loop:SIZE` (e.g. `loop:4G`)
    /// for a loop device over a file engine creates and removes, with direct I/O on the file
    /// (`loop:4G,cached` keeps the page cache)
    #[arg(long, value_name = "DEV", help_heading = "System-state sweeps (root)")]
    pub device: Option<engine::sweep::DeviceSpec>,
    /// Directory for the backing file of `--device loop:SIZE` (default: ENGINE_HOME/loop)
    #[arg(long, value_name = "DIR", help_heading = "System-state sweeps (root)")]
    pub loop_dir: Option<PathBuf>,
    /// Erase a --device that has a partition table or file system
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub force_destroy_data: bool,
    /// Set a queue attribute or scheduler tunable for the run: `queue/read_ahead_kb=128`,
    /// `iosched/slice_idle=0` (restored afterwards)
    #[arg(long = "set", value_name = "ATTR=VALUE", help_heading = "System-state sweeps (root)")]
    pub set: Vec<engine::state::sysfs::Setting>,
    /// Run the states of each test in random order, to decorrelate drift
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub shuffle: bool,
    /// Run each test's trials round-robin across the scheduler states (set up once, a
    /// fresh random order each round), so drift hits every state alike; the default
    /// for scheduler sweeps, refused with --filesystem
    #[arg(long, overrides_with = "no_interleave", help_heading = "System-state sweeps (root)")]
    pub interleave: bool,
    /// Run each state's trials in one block instead
    #[arg(long, help_heading = "System-state sweeps (root)")]
    pub no_interleave: bool,
    /// Run the blocks of states N times, in a new order each round, each round adding
    /// its trials (a share of the budget) to the same identifiers: for file-system sweeps
    #[arg(long, value_name = "N", help_heading = "System-state sweeps (root)")]
    pub rounds: Option<u32>,
    /// Sync and drop the page cache before every trial
    #[arg(long, help_heading = "Hygiene")]
    pub drop_caches: bool,
    /// Run even while another engine benchmark runs on this machine (with any
    /// ENGINE_HOME): a warning instead of a refusal; the two measure each other
    #[arg(long, help_heading = "Hygiene")]
    pub allow_concurrent: bool,
    /// fstrim the target file system before every test
    #[arg(long, help_heading = "Hygiene")]
    pub fstrim: bool,
    /// Run every external profile confined (namespaces, read-only root, a cgroup;
    /// README, "Sandbox"); profiles from a repository and `sandbox: true` ones always are
    #[arg(long, conflicts_with = "no_sandbox", help_heading = "Sandbox")]
    pub sandbox: bool,
    /// Run no profile confined, repository profiles included (asks on a terminal,
    /// elsewhere needs -y; the result file says so)
    #[arg(long, help_heading = "Sandbox")]
    pub no_sandbox: bool,
    /// Give a profile from a repository (or imported from PTS) more than the sandbox's
    /// defaults, by name (repeatable): `writable=DIR`, `processes=N`, `memory=SIZE`,
    /// `scratch=SIZE`, `time=DURATION` (a plugin's memory and time too); the result's
    /// Sandbox Notes record it. Without it such a profile asking for more is refused
    #[arg(long = "grant", value_name = "KEY=VALUE", value_parser = args::grant, help_heading = "Sandbox")]
    pub grants: Vec<engine::model::grant::Grants>,
    /// Pause before every test (`5s`)
    #[arg(long, value_name = "DURATION", value_parser = args::duration, help_heading = "Hygiene")]
    pub settle: Option<Duration>,
    /// A label recorded with the run (repeatable): `--tag commit=abc123 --tag firmware=2.1`;
    /// `kernel` and `engine` are recorded by themselves; `list results --tag K=V` filters
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = args::tag)]
    pub tags: Vec<(String, String)>,
    /// After the run, compare its result with saved result NAME (its first identifier is
    /// the baseline) and list the regressions and improvements
    #[arg(long, value_name = "NAME")]
    pub compare_to: Option<String>,
    /// With --compare-to: exit 6 when a result is significantly worse than NAME's by at
    /// least PCT (default: the noise threshold)
    #[arg(long, value_name = "PCT", num_args = 0..=1, requires = "compare_to", value_parser = args::percent)]
    pub fail_on_regression: Option<Option<f64>>,
    /// What is printed: `text` (on a terminal a compact table per test as it finishes —
    /// value, ±CI, N, marks — then the comparison; piped, the whole report once at the
    /// end), `bars` (each test's bar charts as it finishes), or a report format at the end
    #[arg(long, value_enum, default_value = "text")]
    pub format: RunFormat,
    /// How progress is shown: `text` (a progress line on a terminal, a line per test
    /// otherwise) or `json` (one JSON object per line on standard output, for
    /// orchestrators: schemas/progress.schema.json)
    #[arg(long, value_enum, default_value_t = Progress::Text)]
    pub progress: Progress,
}

impl BenchmarkArgs {
    /// The request these flags make; `install`: `benchmark` (not `run`).
    fn request(&self, install: bool) -> Request {
        let this = self.clone();
        let command = CommandLine { args: self, install }.given();
        this.into_request(install, command)
    }

    fn into_request(self, install: bool, command: String) -> Request {
        Request {
            refs: self.refs,
            options: self.options,
            save: self.save,
            identifier: self.identifier,
            runs: self.runs,
            budget: self.budget,
            warmup: self.warmup,
            dry_run: self.dry_run,
            yes: self.yes,
            install,
            progress: Some(super::downloads::progress()),
            target_dir: self.target_dir,
            title: self.title,
            description: self.description,
            logs: match self.logs {
                Logs::All => LogPolicy::All,
                Logs::Failed => LogPolicy::Failed,
            },
            sweep: SweepRequest {
                schedulers: self.scheduler.unwrap_or_default(),
                filesystems: self.filesystem.into_iter().flat_map(|l| l.0).collect(),
                device: self.device,
                loop_dir: self.loop_dir,
                force_destroy_data: self.force_destroy_data,
                settings: self.set,
                shuffle: self.shuffle,
                rounds: self.rounds,
                interleave: if self.interleave {
                    Some(true)
                } else if self.no_interleave {
                    Some(false)
                } else {
                    None
                },
            },
            drop_caches: self.drop_caches,
            allow_concurrent: self.allow_concurrent,
            only_unsettled: self.only_unsettled,
            sandbox: match (self.sandbox, self.no_sandbox) {
                (true, _) => engine::runner::sandbox::Mode::On,
                (_, true) => engine::runner::sandbox::Mode::Off,
                _ => engine::runner::sandbox::Mode::Auto,
            },
            grants: self.grants.into_iter().fold(Default::default(), engine::model::grant::Grants::merge),
            tags: self.tags,
            fstrim: self.fstrim,
            settle: self.settle,
            command,
        }
    }
}

pub fn run(cx: &Context, args: BenchmarkArgs, install: bool) -> Result<i32, Failure> {
    let format = args.format;
    let progress = args.progress;
    let gate = Gate::check(cx, args.compare_to.clone(), args.fail_on_regression)?;
    let req = args.request(install);
    let line = CommandLine { args: &args, install };
    let (code, saved) = run_request(cx, &req, &line, (format, progress), gate.as_ref())?;
    Ok(gate.map_or(code, |g| after(&g, cx, code, saved)))
}

/// The comparison with `--compare-to`'s baseline after a run, printed; the
/// exit code (`Gate::exit_code`).
fn after(gate: &Gate, cx: &Context, code: i32, ran: Option<(String, ResultFile)>) -> i32 {
    let Some((merged, view)) = ran.and_then(|(name, file)| gate.merged(cx, &name, &file)) else { return code };
    errln!();
    let judged = engine::ops::gate::judge(&merged, &view);
    super::result::print_judged(&judged);
    gate.exit_code(code, &judged)
}

/// Runs `req`, printing as `format` and `progress` say; its exit code and the result it saved to.
fn run_request(
    cx: &Context,
    req: &Request,
    line: &CommandLine,
    (format, progress): (RunFormat, Progress),
    gate: Option<&Gate>,
) -> Result<(i32, Option<(String, ResultFile)>), Failure> {
    if progress == Progress::Json {
        let events = JsonEvents::new(Prompts::new());
        let outcome = if format != RunFormat::Report(Format::Text) {
            let name = match format {
                RunFormat::Bars => "bars",
                RunFormat::Report(f) => f.name(),
            };
            Err(Failure::usage(format!(
                "--progress json writes events to standard output; --format {name} would be mixed into them"
            ))
            .hint("write the report afterwards: `engine result show NAME --format FORMAT`"))
        } else {
            benchmark::benchmark(cx, req, &events, &ProfileExecutors)
        };
        events.finish(&outcome);
        return outcome.map(|o| (finish(cx, &o, line, None, None), saved(o)));
    }
    let tty = std::io::stderr().is_terminal();
    // Piped output gets each chart once, in the report at the end, instead
    // of a test's charts again after every state of a sweep.
    let (shown, end) = match (format, std::io::stdout().is_terminal()) {
        (RunFormat::Report(Format::Text), true) => (Shown::Compact, End::Analysis),
        (RunFormat::Bars, true) => (Shown::Bars, End::Analysis),
        (RunFormat::Bars, false) => (Shown::Nothing, End::Report(Format::Text)),
        (RunFormat::Report(f), _) => (Shown::Nothing, End::Report(f)),
    };
    let events = TermEvents::new(tty, shown, ui::width(), Prompts::new());
    let outcome = benchmark::benchmark(cx, req, &events, &ProfileExecutors)?;
    Ok((finish(cx, &outcome, line, Some(end), gate), saved(outcome)))
}

/// The result a run saved to, as saved.
fn saved(o: Outcome) -> Option<(String, ResultFile)> {
    match o {
        Outcome::Ran(Ran { result: Some((name, _)), file: Some(file), .. }) => Some((name, *file)),
        _ => None,
    }
}

/// What is printed after a run on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The comparison across identifiers only (the tests were shown as they finished).
    Analysis,
    /// The whole report in this format.
    Report(Format),
}

/// Prints how the run ended (the report too, unless `format` is none: JSON
/// progress) and returns its exit code.
fn finish(cx: &Context, outcome: &Outcome, line: &CommandLine, format: Option<End>, gate: Option<&Gate>) -> i32 {
    match outcome {
        Outcome::DryRun(e) => print_estimate(e),
        Outcome::InterruptedInstall => {}
        Outcome::Ran(r) => print_ran(cx, r, line, format, gate),
    }
    outcome.exit_code()
}

fn print_estimate(e: &Estimate) {
    outln!("{} test(s):", e.tests.len());
    for t in &e.tests {
        let est = match t.seconds {
            Some(s) => {
                let how = match &t.timing {
                    Timing::Earlier(name) => format!("as in result `{name}`"),
                    Timing::RunTime => "from its run time".to_string(),
                    Timing::Unknown => String::new(),
                };
                format!("~{} {how}", humantime::format_duration(Duration::from_secs(s.ceil() as u64)))
            }
            None => "time unknown".to_string(),
        };
        let budget = humantime::format_duration(t.budget);
        let label = engine::sys::text::one_line(&t.label);
        outln!("  {label}: {} trial(s) (up to {} within a budget of {budget}), {est}", t.trials, t.most);
        for c in &t.commands {
            outln!("    {}", engine::sys::text::one_line(c));
        }
    }
    for m in &e.not_runnable {
        outln!("  cannot run: {m}");
    }
    let (total, unknown) = e.known();
    let known = humantime::format_duration(Duration::from_secs(total.ceil() as u64));
    let most = humantime::format_duration(Duration::from_secs(e.most().ceil() as u64));
    outln!("at most: {most} (each test's time budget, or its scheduled trials where they take longer)");
    if unknown == e.tests.len() {
        outln!("estimated: unknown (none of these tests has run here yet, and none has a fixed run time)");
    } else if unknown == 0 {
        outln!("estimated: {known} for the scheduled trials");
    } else {
        outln!("estimated: {known} for the tests with a timing; {unknown} test(s) never timed here");
    }
}

/// The report, what failed or was skipped, where it is saved, and what to do next.
fn print_ran(cx: &Context, r: &Ran, command: &CommandLine, format: Option<End>, gate: Option<&Gate>) {
    if let (Some((name, _)), Some(shown), Some(end)) = (&r.result, r.file.as_deref().cloned(), format) {
        match end {
            End::Analysis => {
                let a = report::text::analysis_only(&shown, &report::View::default(), ui::width());
                if !a.trim().is_empty() {
                    out!("\n{a}");
                }
            }
            // Under --compare-to the report is the comparison the gate
            // judges (a JUnit file's failures are its regressions).
            End::Report(f) => {
                let (mut file, view) =
                    gate.and_then(|g| g.merged(cx, name, &shown)).unwrap_or((shown, report::View::default()));
                // What failed is said once, below, with its log and its last lines.
                if f == Format::Text {
                    file.failures.clear();
                }
                out!("{}", f.exporter(ui::width()).export(&file, &view));
            }
        }
    }
    if !r.failed.is_empty() || !r.skipped.is_empty() {
        errln!();
        for f in r.failed.iter().chain(&r.skipped) {
            let line = engine::sys::text::one_line;
            let what = if f.description.is_empty() { String::new() } else { format!(": {}", line(&f.description)) };
            errln!("{} {}{what} ({}): {}", f.status, line(&f.profile), line(&f.identifier), f.reason);
            if let (Some(l), Some((name, _))) = (&f.log, &r.result) {
                errln!("    log: {}", cx.store.dir(name).join(l).display());
            }
            // The command's own words, a line each: a CR or an escape in them is shown, not acted on.
            for tail in &f.stderr_tail {
                errln!("    | {}", line(tail));
            }
        }
    }
    if !r.precision.halves.is_empty() {
        errln!("\n{}", r.precision);
        if let Some(more) = r.precision.what_it_would_take() {
            errln!("{more}");
        }
        if let Some(hint) = r.result.as_ref().and_then(|(name, _)| r.precision.rerun_hint(name)) {
            errln!("{}", engine::sys::text::terminal(&hint));
        }
    }
    if let Some((name, path)) = &r.result {
        errln!(
            "\nSaved to {} ({} test(s) this run); view it with `engine result show {}`",
            path.display(),
            r.saved,
            engine::model::template::quote(name)
        );
    }
    if let Some(resume) = &r.interrupted {
        let cmd = command.resume(resume);
        errln!("interrupted: {} test(s) completed and saved; resume with:\n  {cmd}", r.saved);
    } else if !r.failed.is_empty() {
        errln!("{} test(s) failed; run the same command again to retry them", r.failed.len());
    } else if !r.skipped.is_empty() || !r.not_runnable.is_empty() {
        errln!("{} test(s) skipped", r.skipped.len() + r.not_runnable.len());
    }
}
