//! `engine benchmark` and `engine run`: the flags, turned into an
//! `ops::benchmark::Request`; the run shown on the terminal or as JSON
//! events; the report, the summary and the exit code at the end.

use super::Failure;
use super::args::{Logs, Progress, RunFormat};
use super::benchmark_args::BenchmarkArgs;
use super::command_line::CommandLine;
use super::progress_json::JsonEvents;
use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use engine_model::model::result::ResultFile;
use engine_ops::Context;
use engine_ops::benchmark::{self, Estimate, LogPolicy, Outcome, Ran, Request, Timing};
use engine_ops::gate::Gate;
use engine_ops::present::Format;
use engine_ops::vocab::report;
use std::io::IsTerminal;
use std::time::Duration;

/// The request these flags make; `install`: `benchmark` (not `run`).
fn request(flags: &BenchmarkArgs, install: bool) -> Request {
    let command = CommandLine { args: flags, install }.given();
    into_request(flags.clone(), install, command)
}

fn into_request(a: BenchmarkArgs, install: bool, command: String) -> Request {
    Request {
        refs: a.refs,
        options: a.options,
        save: a.save,
        identifier: a.identifier,
        runs: a.runs,
        budget: a.budget,
        setups: a.setups,
        equivalence: a.compare.equivalence,
        warmup: a.warmup,
        dry_run: a.dry_run,
        yes: a.yes,
        install,
        progress: Some(super::downloads::progress()),
        target_dir: a.target_dir,
        title: a.title,
        description: a.description,
        monitor: a.monitor.monitoring(),
        logs: match a.logs {
            Logs::All => LogPolicy::All,
            Logs::Failed => LogPolicy::Failed,
        },
        sweep: a.sweep.request(a.setups),
        hygiene: a.hygiene.hygiene(),
        allow_concurrent: a.hygiene.allow_concurrent,
        wait: a.hygiene.wait,
        only_unsettled: a.only_unsettled,
        sandbox: a.sandbox.mode(),
        grants: a.sandbox.grants(),
        tags: a.tags,
        command,
    }
}

pub fn run(cx: &Context, mut args: BenchmarkArgs, install: bool) -> Result<i32, Failure> {
    super::config::Defaults::load(cx)?.benchmark(&mut args);
    let format = args.format.unwrap_or(RunFormat::TEXT);
    let progress = args.progress;
    let c = &args.compare;
    let gate = Gate::check(cx, c.compare_to.clone(), c.fail_on_regression, c.margin())?;
    let req = request(&args, install);
    let line = CommandLine { args: &args, install };
    let (code, saved) = run_request(cx, &req, &line, (format, progress), gate.as_ref())?;
    Ok(gate.map_or(code, |g| after(&g, cx, code, saved)))
}

/// The comparison with `--compare-to`'s baseline after a run, printed; the
/// exit code (`Gate::exit_code`).
fn after(gate: &Gate, cx: &Context, code: i32, ran: Option<(String, ResultFile)>) -> i32 {
    let Some((merged, view)) = ran.and_then(|(name, file)| gate.merged(cx, &name, &file)) else { return code };
    errln!();
    let judged = engine_ops::gate::judge(&merged, &view);
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
            benchmark::run(cx, req, &events)
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
    let outcome = benchmark::run(cx, req, &events)?;
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
    if let Some(p) = &e.place {
        outln!("where: {}", engine_sys::text::one_line(p));
    }
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
        let label = engine_sys::text::one_line(&t.label);
        outln!("  {label}: {} trial(s) (up to {} within a budget of {budget}), {est}", t.trials, t.most);
        for c in &t.commands {
            outln!("    {}", engine_sys::text::one_line(c));
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
    // The margin the run's verdict stop settled within (`--equivalence`,
    // else config.toml's) is the one its report judges by.
    let own = report::View { equivalence_pct: command.args.compare.margin(), ..report::View::default() };
    if let (Some((name, _)), Some(shown), Some(end)) = (&r.result, r.file.as_deref().cloned(), format) {
        match end {
            End::Analysis => {
                let a = report::text::analysis_only(&shown, &own, ui::width());
                if !a.trim().is_empty() {
                    out!("\n{a}");
                }
            }
            // Under --compare-to the report is the comparison the gate
            // judges (a JUnit file's failures are its regressions).
            End::Report(f) => {
                let (mut file, view) = gate.and_then(|g| g.merged(cx, name, &shown)).unwrap_or((shown, own));
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
            let line = engine_sys::text::one_line;
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
            // A sweep of the disk under the target directory is made again
            // only under a directory the person names: the hint names it.
            let a = command.args;
            let dir = a.target_dir.clone().or_else(|| std::env::current_dir().ok());
            let hint = match dir.filter(|_| a.sweep.on_target()) {
                Some(d) => {
                    format!("{hint} --target-dir {}", engine_model::model::template::quote(&d.display().to_string()))
                }
                None => hint,
            };
            errln!("{}", engine_sys::text::terminal(&hint));
        }
    }
    if let Some((name, path)) = &r.result {
        errln!(
            "\nSaved to {} ({} test(s) this run); view it with `engine result show {}`",
            path.display(),
            r.saved,
            engine_model::model::template::quote(name)
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
