//! One test for one identifier: hygiene before it, the system captured the
//! first time the identifier needs it, the runner, and the result file
//! written atomically as soon as the test ends — an interrupted run keeps
//! everything it finished.

use crate::Failure;
use engine::events::{Events, TestEnd, TestStart};
use engine::expand::Test;
use engine::model::facts::Timestamp;
use engine::model::result::{FailedTest, FailureStatus, ResultFile, StateRecipe, System};
use engine::runner::{self, Logs, Outcome, RunSettings};
use engine::state::switch::{Subset, Switch};
use engine::store::{self, Store, StoreError};
use engine::sys::interrupt;
use engine::sysinfo::Environ;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How every test of a run runs: the runner's settings and surroundings,
/// the hygiene before each test, what the system capture records.
pub(super) struct Setup<'a> {
    pub settings: RunSettings,
    /// The hygiene every test gets (its profile may ask for more).
    pub hygiene: engine::state::hygiene::Hygiene,
    pub runner: runner::Env<'a>,
    /// Environment variables the tests declare relevant, and the environment.
    pub env: Vec<String>,
    pub environ: &'a Environ,
    /// `--tag KEY=VALUE`s, over the tags the capture fills in.
    pub tags: Vec<(String, String)>,
}

/// The result being written and what this run did to it. Only its own
/// methods change it: the loop over states tells it what it enters.
pub(super) struct Session<'a> {
    store: &'a Store,
    name: String,
    /// Where the runner writes logs until the store keeps them (made at
    /// the first test that runs).
    staging: Option<store::staging::Staging>,
    file: ResultFile,
    setup: Setup<'a>,
    events: &'a dyn Events,
    /// Tests saved, tests that failed, and whether a stop was asked for.
    saved: usize,
    failed: Vec<FailedTest>,
    /// Tests skipped on a state that had no room for them.
    skipped: Vec<FailedTest>,
    interrupted: bool,
    /// How exact the results saved this run are.
    precision: engine::analysis::precision::Precision,
    captured: HashMap<String, System>,
    /// Whose each logs folder of this run is (a test for an identifier): two never share one.
    folders: HashMap<String, String>,
    /// Scheduler tunables the current state sets (shown in the Disk Notes).
    highlight: Vec<String>,
    /// How the sweep ran its states, for the systems' notes.
    sweep_note: Option<String>,
    /// What ran confined, or unconfined by request, for the systems' notes.
    sandbox_note: Option<String>,
    /// `--rounds N`: the round being run, of how many.
    round: (u32, u32),
    /// The rounds are set-ups (`--setups N` on a --device): each round's
    /// trials are recorded as one set-up, and the runner sets a test up once.
    setup_rounds: bool,
    /// The sweep's identifiers in the order the user listed the states: the
    /// result lists its systems so (the first is the default baseline),
    /// whatever order `--shuffle` ran them in.
    listed: Vec<String>,
    /// The flags that make each listed identifier's state.
    recipes: HashMap<String, StateRecipe>,
    /// Tests run again though their identifiers have them, and for which
    /// identifiers (`--only-unsettled`); with any, nothing else runs.
    redo: HashMap<String, HashSet<String>>,
    /// An `--only-unsettled` run: only what `redo` names runs.
    redoing: bool,
}

/// What a session leaves: the result and how the run went.
pub(super) struct Finished {
    pub file: ResultFile,
    pub saved: usize,
    pub failed: Vec<FailedTest>,
    pub skipped: Vec<FailedTest>,
    pub interrupted: bool,
    pub precision: engine::analysis::precision::Precision,
}

/// Where a test of `identifier` keeps its logs, relative to the result folder.
fn logs_rel(test: &Test, identifier: &str) -> String {
    store::series::logs_rel(&test.profile.profile.id, &test.key(), identifier)
}

/// The record of `test` having no results for `identifier`.
pub(crate) fn failed_test(
    test: &Test,
    identifier: &str,
    status: FailureStatus,
    reason: String,
    timestamp: Timestamp,
) -> FailedTest {
    FailedTest {
        test: test.key(),
        profile: test.profile.profile.id.clone(),
        title: test.profile.profile.title.clone(),
        description: test.description(),
        identifier: identifier.into(),
        status,
        reason,
        log: None,
        stderr_tail: Vec::new(),
        timestamp,
    }
}

impl<'a> Session<'a> {
    pub(crate) fn new(
        store: &'a Store,
        name: String,
        file: ResultFile,
        setup: Setup<'a>,
        events: &'a dyn Events,
    ) -> Self {
        Session {
            store,
            name,
            staging: None,
            file,
            setup,
            events,
            saved: 0,
            failed: Vec::new(),
            skipped: Vec::new(),
            interrupted: false,
            precision: Default::default(),
            captured: HashMap::new(),
            folders: HashMap::new(),
            highlight: Vec::new(),
            sweep_note: None,
            sandbox_note: None,
            round: (1, 1),
            setup_rounds: false,
            listed: Vec::new(),
            recipes: HashMap::new(),
            redo: HashMap::new(),
            redoing: false,
        }
    }

    /// Tests to run again though their identifiers have them, and for which
    /// (`--only-unsettled`).
    pub(crate) fn with_redo(mut self, redo: HashMap<String, HashSet<String>>) -> Self {
        self.redoing = !redo.is_empty();
        self.redo = redo;
        self
    }

    /// What ran confined, or unconfined by request, for the systems' notes.
    pub(crate) fn note_sandbox(&mut self, note: Option<String>) {
        self.sandbox_note = note;
    }

    pub(crate) fn finish(self) -> Finished {
        Finished {
            file: self.file,
            saved: self.saved,
            failed: self.failed,
            skipped: self.skipped,
            interrupted: self.interrupted,
            precision: self.precision,
        }
    }

    /// Settle and trim before a test, as the run and the profile ask.
    fn before(&self, test: &Test, target: &Path) {
        let own = &test.profile.profile.hygiene;
        let settle = own.settle.as_ref().map(engine::units::Duration::get);
        if let Some(d) = self.setup.hygiene.settle.max(settle) {
            std::thread::sleep(d);
        }
        if (self.setup.hygiene.fstrim || own.fstrim)
            && let Err(e) = engine::state::hygiene::fstrim(target)
        {
            self.events.message(&format!("warning: {e}"));
        }
    }

    /// The system of `identifier`, captured (after the caller applied its
    /// state) the first time it is needed. An identifier the result has
    /// already must be measured where it was before: else its numbers and
    /// its notes would describe different systems, and the run stops here.
    fn capture(&mut self, identifier: &str, target: &Path) -> Result<(), Failure> {
        if self.captured.contains_key(identifier) {
            return Ok(());
        }
        let mut s = engine::sysinfo::capture(identifier, target, &self.setup.env, self.setup.environ, &self.highlight);
        if let Some(n) = &self.sweep_note {
            s.notes.insert("Sweep Notes".into(), n.clone());
        }
        if let Some(n) = &self.sandbox_note {
            s.notes.insert("Sandbox Notes".into(), n.clone());
        }
        for (k, v) in &self.setup.tags {
            s.tags.insert(k.clone(), v.clone());
        }
        s.state = self.recipes.get(identifier).cloned();
        match self.file.system(identifier) {
            Some(before) => moved(&self.name, before, &s)?,
            None => self.events.system_captured(&s),
        }
        self.captured.insert(identifier.to_string(), s);
        Ok(())
    }

    /// Which of `ids` the test `key` is still to run for: a test to redo
    /// runs once more for the identifiers named, whatever they have (their
    /// entries are replaced); re-running, nothing else; otherwise the
    /// identifiers that lack this round of it.
    fn todo(&mut self, key: &str, ids: &[String]) -> Vec<usize> {
        if self.redoing {
            let redo = self.redo.entry(key.to_string()).or_default();
            return (0..ids.len()).filter(|&i| redo.remove(&ids[i])).collect();
        }
        (0..ids.len()).filter(|&i| self.file.rounds_of(key, &ids[i]) < self.round.0).collect()
    }

    /// Why `rels` cannot be the logs folders of `owners` (a test for an
    /// identifier each): one of them is another's of this run (its name is
    /// injective and hashed with 128 bits, so only a defect could get
    /// here); else they are taken.
    fn shared_folder(&mut self, owners: &[String], rels: &[String]) -> Option<String> {
        // The result's saved entries own their folders too (an identifier
        // renamed or removed by hand must not hand its logs to a new one).
        let prefixes: Vec<String> = rels.iter().map(|r| format!("{r}/")).collect();
        for r in &self.file.results {
            for e in &r.entries {
                for p in [&e.logs, &e.monitor].into_iter().flatten() {
                    let Some(k) = prefixes.iter().position(|pre| p.starts_with(pre.as_str())) else { continue };
                    let owner = format!("{} for `{}`", r.test, e.identifier);
                    if !owners.contains(&owner) {
                        self.folders.entry(rels[k].clone()).or_insert(owner);
                    }
                }
            }
        }
        for (rel, owner) in rels.iter().zip(owners) {
            if let Some(other) = self.folders.get(rel).filter(|o| *o != owner) {
                return Some(format!(
                    "its logs folder {rel} is also {other}'s; two tests' logs are never mixed, so it did not run"
                ));
            }
        }
        for (rel, owner) in rels.iter().zip(owners) {
            self.folders.insert(rel.clone(), owner.clone());
        }
        None
    }

    /// Keeps the logs the runner staged for `rel` (and `series`) in the
    /// result folder: where the series is (or why there is none), and why
    /// the logs could not all be kept, said at once and saved with the entry.
    fn keep(
        &self,
        rel: &str,
        series: Option<&engine::model::series::Series>,
    ) -> (Option<Result<String, StoreError>>, Option<String>) {
        let Some(staging) = self.staging.as_ref() else { return (None, None) };
        let kept = staging.keep(rel, series);
        let lost = kept.logs.err().map(|e| format!("the test's logs were not all kept: {e}"));
        if let Some(why) = &lost {
            self.events.message(&format!("warning: {why}"));
        }
        (kept.series, lost)
    }

    /// Saves what became of `test` for `identifier` (its logs at `rel`)
    /// and says so.
    fn ended(
        &mut self,
        test: &Test,
        identifier: &str,
        rel: &str,
        start: &TestStart,
        outcome: Outcome,
    ) -> Result<(), StoreError> {
        match outcome {
            Outcome::Completed { results, series } => {
                let (monitor, lost) = self.keep(rel, series.as_deref());
                self.completed(identifier, results, monitor, lost)?;
                self.events.test_done(start, TestEnd::Completed { file: &self.file });
            }
            Outcome::Failed(f) => {
                let (_, lost) = self.keep(rel, None);
                let staging = self.staging.as_ref();
                let mut reason = staging.map_or_else(|| f.reason.clone(), |s| s.kept_text(&f.reason));
                if let Some(why) = lost {
                    reason = format!("{reason} ({why})");
                }
                let mut failed = failed_test(test, identifier, FailureStatus::Failed, reason, Timestamp::now());
                failed.log =
                    f.log.map(|l| staging.and_then(|s| s.kept_as(&l)).unwrap_or_else(|| l.display().to_string()));
                failed.stderr_tail = match staging {
                    Some(s) => f.stderr_tail.iter().map(|l| s.kept_text(l)).collect(),
                    None => f.stderr_tail,
                };
                self.file.record_failure(failed.clone());
                self.store.save(&self.name, &mut self.file)?;
                self.events.test_done(start, TestEnd::Failed(&failed));
                self.failed.push(failed);
            }
            Outcome::Interrupted => {
                // What it logged before the stop explains where it stopped.
                self.keep(rel, None);
                self.interrupted = true;
                self.events.test_done(start, TestEnd::Interrupted);
            }
        }
        Ok(())
    }

    /// A finished test's results, saved at once.
    fn completed(
        &mut self,
        identifier: &str,
        results: Vec<(engine::model::result::TestResult, engine::model::result::ResultEntry)>,
        monitor: Option<Result<String, StoreError>>,
        lost: Option<String>,
    ) -> Result<(), StoreError> {
        if self.file.system(identifier).is_none()
            && let Some(s) = self.captured.get(identifier)
        {
            let rank = |id: &str| self.listed.iter().position(|x| x == id);
            let at = rank(identifier)
                .and_then(|me| self.file.systems.iter().position(|sys| rank(&sys.identifier).is_some_and(|r| r > me)));
            match at {
                Some(i) => self.file.systems.insert(i, s.clone()),
                None => self.file.systems.push(s.clone()),
            }
        }
        for (template, mut entry) in results {
            entry.identifier = identifier.into();
            match &monitor {
                Some(Ok(rel)) => entry.monitor = Some(rel.clone()),
                Some(Err(why)) => entry.notes.push(format!("no monitor series: {why}")),
                None => {}
            }
            entry.notes.extend(lost.clone());
            if self.setup_rounds {
                let n = entry.trials.len();
                entry = entry.with_setups(vec![1; n]);
            }
            self.file.add_round(&template, entry, self.round.0);
            // The precision of what the run ends with, counted once.
            if self.round.0 == self.round.1
                && let Some(e) = self
                    .file
                    .results
                    .iter()
                    .find(|x| x.test == template.test && x.result == template.result)
                    .and_then(|x| engine::analysis::entry(x, identifier))
            {
                // Named by its metric too: a test's results are told apart.
                let name = match template.description.is_empty() {
                    true => format!("{}: {}", template.title, template.result),
                    false => template.heading(&template.title),
                };
                self.precision.add(&template.test, &name, e);
            }
        }
        if let Some(s) = self.file.systems.iter_mut().find(|s| s.identifier == identifier) {
            s.finished = Some(engine::model::facts::Timestamp::now());
        }
        self.store.save(&self.name, &mut self.file)?;
        self.saved += 1;
        Ok(())
    }
}

/// The benchmark's side of the sweep's loop: each test run and saved.
impl engine::state::sweep::Tests for Session<'_> {
    type Error = Failure;

    /// A set of states begins: the tunables its states set (for the Disk
    /// Notes) and its identifiers in the order listed.
    fn enter_states(&mut self, highlight: Vec<String>, listed: Vec<String>, recipes: Vec<Option<StateRecipe>>) {
        self.highlight = highlight;
        self.recipes = listed.iter().zip(recipes).filter_map(|(id, r)| Some((id.clone(), r?))).collect();
        self.listed = listed;
    }

    /// How the sweep ran its states, for the systems' notes.
    fn note_sweep(&mut self, note: String) {
        self.sweep_note = Some(note);
    }

    /// Round `round` of `of` begins; `setups`: each round is a set-up.
    fn start_round(&mut self, round: u32, of: u32, setups: bool) {
        self.round = (round, of);
        self.setup_rounds = setups;
    }

    /// The round being run, of how many (`--rounds N`).
    fn round(&self) -> (u32, u32) {
        self.round
    }

    /// Runs `test` once for the states of `switch`, its trials interleaved
    /// across them, state `i` saved as `ids[i]` — leaving out the states
    /// whose identifier has the test already.
    fn run(
        &mut self,
        test: &Test,
        ids: &[String],
        target: &Path,
        at: (usize, usize),
        switch: &mut dyn Switch,
    ) -> Result<(), Failure> {
        if interrupt::requested() {
            self.interrupted = true;
            return Ok(());
        }
        let key = test.key();
        let todo = self.todo(&key, ids);
        if todo.is_empty() {
            return Ok(());
        }
        // A file system a sweep just made is checked here, test by test: the
        // target check before the run could not see it.
        if let Some(why) = no_room(test, target) {
            for &i in &todo {
                let s = failed_test(test, &ids[i], FailureStatus::Skipped, why.clone(), Timestamp::now());
                self.events.test_skipped(&s);
                self.file.record_failure(s.clone());
                self.skipped.push(s);
            }
            return Ok(());
        }
        self.before(test, target);
        for &i in &todo {
            if self.captured.contains_key(&ids[i]) {
                continue;
            }
            // The system is described in its own state (the scheduler in the Disk Notes).
            if let Err(e) = switch.enter(i) {
                self.events.message(&format!("warning: {e}"));
            }
            self.capture(&ids[i], target)?;
        }
        let rels: Vec<String> = todo.iter().map(|&i| logs_rel(test, &ids[i])).collect();
        let owners: Vec<String> = todo.iter().map(|&i| format!("{key} for `{}`", ids[i])).collect();
        if let Some(why) = self.shared_folder(&owners, &rels) {
            for &i in &todo {
                let s = failed_test(test, &ids[i], FailureStatus::Failed, why.clone(), Timestamp::now());
                self.events.message(&format!("error: {} for `{}`: {why}", test.label(), ids[i]));
                self.file.record_failure(s.clone());
                self.failed.push(s);
            }
            return Ok(());
        }
        if self.staging.is_none() {
            self.staging = Some(self.store.staging(&self.name)?);
        }
        let staging = self.staging.as_ref().expect("made above");
        let dirs: Vec<PathBuf> = rels.iter().map(|r| staging.dir(r)).collect();
        let logs: Vec<Logs> =
            dirs.iter().zip(&rels).zip(&todo).map(|((dir, rel), &i)| Logs { dir, rel, name: &ids[i] }).collect();
        let setups = if self.setup_rounds { Some(1) } else { self.setup.settings.setups };
        let settings = RunSettings {
            target_dir: target.to_path_buf(),
            rounds: self.round.1,
            setups,
            rounds_are_setups: self.setup_rounds,
            ..self.setup.settings.clone()
        };
        let label = test.label();
        let shown = todo.iter().map(|&i| ids[i].as_str()).collect::<Vec<_>>().join(" | ");
        let start = TestStart { key: &key, label: &label, identifier: &shown, index: at.0, total: at.1 };
        self.events.test_started(&start);
        let mut sub = Subset { inner: switch, states: &todo };
        let outcomes = runner::run_states(test, &settings, &self.setup.runner, &logs, self.events, &mut sub);
        for (k, outcome) in outcomes.into_iter().enumerate() {
            let identifier = &ids[todo[k]];
            let start = TestStart { identifier, ..start };
            self.ended(test, identifier, &rels[k], &start, outcome)?;
        }
        Ok(())
    }

    /// Whether a stop was asked for.
    fn interrupted(&self) -> bool {
        self.interrupted
    }

    fn message(&self, text: &str) {
        self.events.message(text);
    }
}

/// Refuses to add to `before` (an identifier of result `name`) what is
/// measured in `now`, when the two were not measured in the same place.
fn moved(name: &str, before: &System, now: &System) -> Result<(), Failure> {
    use engine::sysinfo::place::place;
    let (Some(was), Some(is)) = (place(before), place(now)) else { return Ok(()) };
    if was == is {
        return Ok(());
    }
    let id = &before.identifier;
    let hint = match &before.state {
        Some(r) => format!(
            "re-create its state: engine benchmark {} --only-unsettled (or give the flags it was made by: {r})",
            engine::model::template::quote(name)
        ),
        None => format!(
            "run where it ran ({}), or save the new numbers under another identifier (--identifier NEW)",
            before.target_dir.as_deref().map_or("the same directory".into(), |d| format!("--target-dir {d}"))
        ),
    };
    Err(Failure::usage(format!(
        "`{id}` in `{name}` was measured on {was}; this run is on {is}: its numbers and its notes would describe different systems"
    ))
    .hint(hint))
}

/// Why `test` cannot run in `target`: less free space than it declares.
fn no_room(test: &Test, target: &Path) -> Option<String> {
    let need = engine::runner::requirements::free_space_of(test)?;
    let free = engine::sys::fs::free_bytes(target).ok()?;
    (free < need).then(|| {
        format!(
            "needs {} free in {}, which has {}",
            engine::units::format_bytes_binary(need),
            target.display(),
            engine::units::format_bytes_binary(free)
        )
    })
}
