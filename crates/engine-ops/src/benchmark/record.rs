//! The result a run writes: opened under its lock (created, or continued
//! with the tests it lacks), the run recorded so the same command resumes
//! it, announced; closed with what was skipped, an empty folder removed, and
//! the outcome.

use super::destination::{Destination, Runs, Unfinished};
use super::request::{Outcome, Ran, Request, Resume};
use super::session::{Finished, Session, Setup};
use crate::{Context, Failure};
use engine::events::{Events, RunStart};
use engine::expand::Test;
use engine::model::result::{FailedTest, ResultFile};
use engine::plugin::cache::Cache;
use engine::runner::{self, Executors, RunSettings};
use engine::state::scratch::Scratch;
use engine::state::server::Servers;
use engine::store::{Lock, StoreError};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What the runner is given for the whole run: the journals of test folders
/// and servers (test folders still there are removed when it is dropped),
/// the compiled plugins, the installs, the executors.
pub(super) struct RunnerParts<'a> {
    scratch: Scratch,
    servers: Servers,
    plugins: Cache,
    installed: std::path::PathBuf,
    executors: &'a dyn Executors,
    sandbox: Option<engine::runner::sandbox::Config>,
}

impl<'a> RunnerParts<'a> {
    pub(crate) fn new(
        cx: &Context,
        executors: &'a dyn Executors,
        sandbox: Option<engine::runner::sandbox::Config>,
    ) -> RunnerParts<'a> {
        RunnerParts {
            scratch: Scratch::new(&cx.home.journal()),
            servers: Servers::new(&cx.home.journal()),
            plugins: Cache::new(cx.home.plugin_cache()),
            installed: cx.home.installed(),
            executors,
            sandbox,
        }
    }
}

/// The result being written, under its lock.
pub(super) struct Record {
    dest: Destination,
    _lock: Lock,
    /// The result folder was there before this run.
    existed: bool,
    /// The run is a sweep: its identifiers come from its states.
    sweep: bool,
    file: Option<ResultFile>,
    /// Tests the identifier already had, and what to say about them.
    kept: usize,
    kept_note: Option<String>,
    runs: Runs,
    /// Tests that will not run here, announced, and recorded at the end.
    skipped: Vec<FailedTest>,
    not_runnable: Vec<String>,
}

impl Record {
    /// Locks result `dest.name` (from here on its folder exists), loads it or
    /// starts it, and leaves in `tests` only those the identifier lacks.
    pub(crate) fn open(
        cx: &Context,
        req: &Request,
        dest: Destination,
        sweep: bool,
        tests: &mut Vec<Test>,
        events: &dyn Events,
    ) -> Result<Record, Failure> {
        let existed = cx.store.dir(&dest.name).exists();
        let lock = cx.store.lock(&dest.name)?;
        let file = match cx.store.load(&dest.name) {
            Ok(f) => f,
            Err(StoreError::NotFound(_)) => {
                let mut f = ResultFile::new(req.title.as_deref().unwrap_or(&dest.name));
                f.description = req.description.clone().unwrap_or_default();
                f
            }
            Err(e) => return Err(e.into()),
        };
        for r in &file.repaired {
            events.message(&format!("warning: {}: {r}", dest.name));
        }
        let before = tests.len();
        // --only-unsettled re-runs what the identifier has unsettled, to replace it.
        // A sweep's: what any of its identifiers has (the session runs each
        // only where it is unsettled).
        if req.only_unsettled {
            let mut by_id = engine::analysis::precision::unsettled(&file);
            let keys: std::collections::HashSet<String> = match sweep {
                true => by_id.into_values().flatten().collect(),
                false => by_id.remove(dest.identifier.as_str()).unwrap_or_default(),
            };
            tests.retain(|t| keys.contains(&t.key()));
        } else {
            tests.retain(|t| !file.has_any(&t.key(), &dest.identifier));
        }
        let kept = before - tests.len();
        let kept_note = (kept > 0).then(|| {
            let how = if dest.resumed { "resuming" } else { "continuing" };
            format!(
                "{how} `{}`: {kept} test(s) already in result `{}` are kept; running the other {}",
                dest.identifier,
                dest.name,
                tests.len()
            )
        });
        let runs = Runs::new(cx.home.runs());
        if !tests.is_empty() {
            let u = Unfinished {
                key: dest.key.clone(),
                name: dest.name.clone(),
                identifier: dest.identifier.clone(),
                started: engine::model::facts::Timestamp::now(),
            };
            runs.record(&u)
                .map_err(|e| Failure::error(format!("cannot record the run in {}: {e}", cx.home.runs().display())))?;
        }
        let (skipped, not_runnable) = (Vec::new(), Vec::new());
        Ok(Record { dest, _lock: lock, existed, sweep, file: Some(file), kept, kept_note, runs, skipped, not_runnable })
    }

    /// The identifier the run saves under.
    pub(crate) fn identifier(&self) -> &str {
        &self.dest.identifier
    }

    /// Tells `events` the run starts, and what will not run.
    pub(crate) fn announce(
        &mut self,
        cx: &Context,
        tests: usize,
        skipped: Vec<FailedTest>,
        not_runnable: Vec<String>,
        events: &dyn Events,
    ) {
        let dest = &self.dest;
        let path = cx.store.path(&dest.name).display().to_string();
        events.run_started(&RunStart {
            result: &dest.name,
            path: &path,
            identifier: &dest.identifier,
            tests,
            kept: self.kept,
            resumed: dest.resumed,
            skipped: skipped.len(),
        });
        if let Some(n) = &self.kept_note {
            events.message(n);
        }
        for s in &skipped {
            events.test_skipped(s);
        }
        for m in &not_runnable {
            events.cannot_run(m, &dest.identifier);
        }
        (self.skipped, self.not_runnable) = (skipped, not_runnable);
    }

    /// The session that runs `tests` into this record.
    pub(crate) fn session<'a>(
        &mut self,
        cx: &'a Context,
        req: &Request,
        tests: &[Test],
        target: &Path,
        parts: &'a RunnerParts<'a>,
        events: &'a dyn Events,
    ) -> Session<'a> {
        // A shared profile names only variables its sandbox passes: it cannot
        // have a token of the user's written into a result to be shared.
        let mut env: Vec<String> = tests
            .iter()
            .flat_map(|t| {
                let shared = t.profile.shared();
                t.profile
                    .profile
                    .relevant_env
                    .iter()
                    .filter(move |n| !shared || engine::sys::process::sandbox_variable(n))
            })
            .cloned()
            .collect();
        env.sort();
        env.dedup();
        let settings = RunSettings {
            runs: req.runs,
            budget: req.budget,
            rounds: 1,
            warmup: req.warmup,
            target_dir: target.to_path_buf(),
            logs: req.logs,
            drop_caches: req.hygiene.drop_caches,
            monitor: req.monitor,
            setups: req.setups,
            rounds_are_setups: false,
            equivalence_pct: req.equivalence.unwrap_or(engine::analysis::significance::EQUIVALENCE_PCT),
        };
        let runner = runner::Env {
            installed: &parts.installed,
            plugins: &parts.plugins,
            scratch: &parts.scratch,
            servers: &parts.servers,
            executors: parts.executors,
            path: cx.settings.environ.get("PATH").map(String::as_str),
            sandbox: parts.sandbox.as_ref(),
        };
        let setup = Setup {
            settings,
            hygiene: req.hygiene,
            runner,
            env,
            environ: &cx.settings.environ,
            tags: req.tags.clone(),
        };
        let file = self.file.take().expect("one session per record");
        // Each test again where it is unsettled: for a sweep in each state
        // that has it so, else for the run's identifier.
        let mut redo: HashMap<String, HashSet<String>> = HashMap::new();
        if req.only_unsettled {
            let wanted: HashSet<String> = tests.iter().map(Test::key).collect();
            for (id, keys) in engine::analysis::precision::unsettled(&file) {
                if self.sweep || id == self.dest.identifier {
                    for k in keys.into_iter().filter(|k| wanted.contains(k)) {
                        redo.entry(k).or_default().insert(id.clone());
                    }
                }
            }
        }
        Session::new(&cx.store, self.dest.name.clone(), file, setup, events).with_redo(redo)
    }

    /// Records the skipped tests once the result exists, removes a folder
    /// nothing was saved to, and says how the run ended; the command that
    /// resumes it names the identifier when `pin` (not for a sweep, whose
    /// identifiers its states make).
    pub(crate) fn close(
        self,
        cx: &Context,
        session: Session,
        looped: Result<(), Failure>,
        pin: bool,
    ) -> Result<Outcome, Failure> {
        let Record { dest, _lock, existed, runs, mut skipped, not_runnable, .. } = self;
        let Finished { mut file, saved, failed, skipped: no_room, interrupted, precision } = session.finish();
        // Skipped on a state with no room: already in the file, reported with the rest.
        skipped.extend(no_room);
        let store = &cx.store;
        // Skipped tests are part of the record once the result exists.
        if !skipped.is_empty() && (saved > 0 || !failed.is_empty() || store.exists(&dest.name)) {
            for s in &skipped {
                if !file.has_any(&s.test, &s.identifier) {
                    file.record_failure(s.clone());
                }
            }
            store.save(&dest.name, &mut file)?;
        }
        let exists = store.exists(&dest.name);
        drop(_lock);
        if !exists && !existed {
            // Nothing was saved: leave no empty result folder behind.
            store.discard_unsaved(&dest.name);
        }
        looped?;
        let interrupted = interrupted
            .then(|| Box::new(Resume { name: dest.name.clone(), identifier: (pin.then(|| dest.identifier.clone())) }));
        if interrupted.is_none() && failed.is_empty() {
            runs.finish(&dest.key);
        }
        let result = exists.then(|| (dest.name.clone(), store.path(&dest.name)));
        let file = exists.then(|| Box::new(file));
        Ok(Outcome::Ran(Ran { result, file, saved, failed, skipped, not_runnable, interrupted, precision }))
    }
}
