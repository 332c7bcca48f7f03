//! `engine benchmark` and `engine run`, as named phases: flags → tests →
//! destination → host and machine locks → install → requirements → target → the result
//! opened → every test under every state → the result closed. Nothing is
//! created on disk before the host lock, so a refused run leaves nothing.

mod destination;
mod estimate;
mod flags;
mod lock;
mod record;
mod recreate;
mod request;
mod requirements;
mod sandbox;
mod session;
mod target;
mod work;

pub use estimate::estimate_refs;
pub use request::{Estimate, Outcome, Ran, Request, Resume, Scheduled, SweepRequest, Timing};
// The request's parts the capabilities define: the binary names them here.
pub use engine::expand::Preset;
pub use engine::monitor::{INTERVALS, Monitoring, POINTS, POINTS_RANGE};
pub use engine::runner::LogPolicy;
pub use engine::runner::sandbox::Mode as Sandbox;
pub use engine::state::hygiene::Hygiene;
pub use engine::state::sweep::{DeviceSpec, FsList, Schedulers};
pub use engine::state::sysfs::Setting;
pub use engine::store::ResultName;
pub(crate) use session::failed_test;

use crate::{Context, Failure};
use engine::events::Events;
use engine::runner::Executors;
use engine::sys::interrupt;

/// Runs `req` in `cx`, telling `events`, each test on the executor its
/// profile names.
pub fn run(cx: &Context, req: &Request, events: &dyn Events) -> Result<Outcome, Failure> {
    benchmark(cx, req, events, &engine::runner::ProfileExecutors)
}

/// [`run`] with the executors each test gets from `executors`
/// (`runner::ProfileExecutors` but in tests of this pipeline).
pub fn benchmark(
    cx: &Context,
    req: &Request,
    events: &dyn Events,
    executors: &dyn Executors,
) -> Result<Outcome, Failure> {
    let flags = flags::check(cx, req)?;
    let work = work::expand(cx, req, events)?;
    // --only-unsettled on a sweep's result makes the states again.
    let recreated = match (&work.rerun, req.only_unsettled) {
        (Some(name), true) => recreate::request(cx, req, name)?,
        _ => None,
    };
    let (req, flags) = match &recreated {
        Some(r) => (r, flags::check(cx, r)?),
        None => (req, flags),
    };
    let place = match (&recreated, flags.plan.is_active()) {
        (Some(r), _) => format!("the unsettled states made again: {}", recreate::describe(r)),
        (None, true) => format!("a sweep of {} state(s) a test", flags.plan.state_count().unwrap_or(1)),
        (None, false) => format!("in {}", flags.target.display()),
    };
    if req.dry_run {
        let mut e = estimate::estimate(cx, req, &work, flags.plan.state_count());
        e.place = Some(place);
        return Ok(Outcome::DryRun(e));
    }
    if recreated.is_some() {
        events.message(&format!("re-running {place}"));
    }
    let dest = destination::choose(cx, req, &flags, &work)?;
    // Before installing: an install next to a running benchmark disturbs it too.
    // ENGINE_HOME's lock first: a second run with the same home is refused
    // naming it, --allow-concurrent or not.
    let _host = lock::host(cx, &req.command, &dest.name, &dest.identifier, req.wait, events)?;
    let _machine =
        lock::machine(cx, &req.command, &dest.name, &dest.identifier, (req.allow_concurrent, req.wait), events)?;
    let work::Work { mut tests, optional, not_runnable, .. } = work;
    // Before installing: a confined install build needs the same kernel features.
    let sandbox = sandbox::phase(cx, req, &tests, events)?;
    let ask = crate::install::PhaseRequest {
        refs: &req.refs,
        options: &req.options,
        install: req.install,
        yes: req.yes,
        progress: req.progress.as_ref(),
        sandbox: req.sandbox,
    };
    let not_installed = crate::install::phase(cx, &tests, &optional, ask, events);
    if req.install && interrupt::requested() {
        events.message("interrupted while installing; nothing ran");
        return Ok(Outcome::InterruptedInstall);
    }
    let skipped = requirements::check(&mut tests, &optional, &dest.identifier, &not_installed, events);
    let target = target::prepare(&flags, &tests, events)?;
    lock::refuse_unfinished_changes(cx, events)?;
    let mut record = record::Record::open(cx, req, dest, flags.plan.is_active(), &mut tests, events)?;
    record.announce(cx, tests.len(), skipped, not_runnable, events);
    interrupt::install().map_err(|e| Failure::error(format!("cannot install signal handlers: {e}")))?;
    let parts = record::RunnerParts::new(cx, executors, sandbox.config);
    let mut session = record.session(cx, req, &tests, &target, &parts, events);
    session.note_sandbox(sandbox.note);
    let prefix = if flags.plan.is_active() { req.identifier.as_deref() } else { Some(record.identifier()) };
    let looped = sweep(cx, &flags.plan, &target, prefix, &mut session, &tests, events);
    // A sweep's identifiers come from its states: resuming must not pin one.
    let pin = !flags.plan.is_active() || req.identifier.is_some();
    record.close(cx, session, looped, pin)
}

/// Every test under each state of `plan`: a sweep holds the machine's state
/// lock and a journal of its changes (after checking that no earlier run
/// left changes undone); a plain run needs neither.
fn sweep(
    cx: &Context,
    plan: &engine::state::sweep::Plan,
    target: &std::path::Path,
    prefix: Option<&str>,
    session: &mut session::Session,
    tests: &[engine::expand::Test],
    events: &dyn Events,
) -> Result<(), Failure> {
    use engine::state::journal::{Journal, StateLock};
    use engine::state::sweep::{self, Where};
    let at = Where { target, prefix, mount_root: cx.home.root.join("mnt") };
    if !plan.is_active() {
        return sweep::run(plan, at, None, session, tests);
    }
    let _state_lock = StateLock::acquire(&cx.home.state_lock()).map_err(Failure::error)?;
    lock::refuse_unfinished_changes(cx, events)?;
    let journal = Journal::create(&cx.home.journal()).map_err(Failure::error)?;
    sweep::run(plan, at, Some(&journal), session, tests)
}
