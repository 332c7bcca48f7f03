//! The result a run writes: opened under its lock (created, or continued
//! with the tests it lacks), the run recorded so the same command resumes
//! it, announced; closed with what was skipped, an empty folder removed, and
//! the outcome.

use super::destination::{Destination, Runs, Unfinished};
use super::request::{Outcome, Ran, Request};
use super::session::{Hygiene, Session};
use crate::events::{Events, RunStart};
use crate::expand::Test;
use crate::model::result::{FailedTest, ResultFile};
use crate::ops::{Context, Failure};
use crate::plugin::cache::Cache;
use crate::runner::{self, Executors, RunSettings};
use crate::state::scratch::Scratch;
use crate::state::server::Servers;
use crate::store::{Lock, StoreError};
use std::path::Path;

/// What the runner keeps for the whole run: the journals of test folders and
/// servers (test folders still there are removed when it is dropped), the
/// compiled plugins, the installs.
pub(super) struct Journals {
    scratch: Scratch,
    servers: Servers,
    plugins: Cache,
    installed: std::path::PathBuf,
}

impl Journals {
    pub fn new(cx: &Context) -> Journals {
        Journals {
            scratch: Scratch::new(&cx.home.journal()),
            servers: Servers::new(&cx.home.journal()),
            plugins: Cache::new(cx.home.plugin_cache()),
            installed: cx.home.installed(),
        }
    }
}

/// The result being written, under its lock.
pub(super) struct Record {
    _lock: Lock,
    /// The result folder was there before this run.
    existed: bool,
    file: Option<ResultFile>,
    /// Tests the identifier already had, and what to say about them.
    kept: usize,
    kept_note: Option<String>,
    runs: Runs,
}

impl Record {
    /// Locks result `dest.name` (from here on its folder exists), loads it or
    /// starts it, and leaves in `tests` only those the identifier lacks.
    pub fn open(
        cx: &Context,
        req: &Request,
        dest: &Destination,
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
        tests.retain(|t| !file.has_any(&t.key(), &dest.identifier));
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
                started: crate::sys::time::now(),
            };
            runs.record(&u)
                .map_err(|e| Failure::error(format!("cannot record the run in {}: {e}", cx.home.runs().display())))?;
        }
        Ok(Record { _lock: lock, existed, file: Some(file), kept, kept_note, runs })
    }

    /// Tells `events` the run starts, and what will not run.
    pub fn announce(
        &self,
        cx: &Context,
        dest: &Destination,
        tests: usize,
        skipped: &[FailedTest],
        not_runnable: &[String],
        events: &dyn Events,
    ) {
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
        for s in skipped {
            events.test_skipped(s);
        }
        for m in not_runnable {
            events.cannot_run(m, &dest.identifier);
        }
    }

    /// The session that runs `tests` into this record.
    #[allow(clippy::too_many_arguments)]
    pub fn session<'a>(
        &mut self,
        cx: &'a Context,
        req: &Request,
        dest: &Destination,
        tests: &[Test],
        target: &Path,
        journals: &'a Journals,
        executors: &'a dyn Executors,
        events: &'a dyn Events,
    ) -> Session<'a> {
        let mut env: Vec<String> = tests.iter().flat_map(|t| t.profile.profile.relevant_env.iter().cloned()).collect();
        env.sort();
        env.dedup();
        let settings = RunSettings {
            runs: req.runs,
            warmup: req.warmup,
            target_dir: target.to_path_buf(),
            logs: req.logs,
            drop_caches: req.drop_caches,
        };
        let runner = runner::Env {
            installed: &journals.installed,
            plugins: &journals.plugins,
            scratch: &journals.scratch,
            servers: &journals.servers,
            executors,
            path: cx.settings.environ.get("PATH").map(String::as_str),
        };
        let hygiene = Hygiene { fstrim: req.fstrim, settle: req.settle };
        let file = self.file.take().expect("one session per record");
        Session::new(&cx.store, dest.name.clone(), file, settings, hygiene, runner, &cx.settings.environ, events, env)
    }

    /// Records the skipped tests once the result exists, removes a folder
    /// nothing was saved to, and says how the run ended.
    #[allow(clippy::too_many_arguments)]
    pub fn close(
        self,
        cx: &Context,
        argv: &[String],
        session: Session,
        looped: Result<(), Failure>,
        dest: &Destination,
        skipped: Vec<FailedTest>,
        not_runnable: Vec<String>,
    ) -> Result<Outcome, Failure> {
        let (saved, interrupted, failed) = (session.saved, session.interrupted, session.failed);
        let mut file = session.file;
        let store = &cx.store;
        // Skipped tests are part of the record once the result exists.
        if !skipped.is_empty() && (saved > 0 || !failed.is_empty() || store.exists(&dest.name)) {
            for s in &skipped {
                if !file.has_any(&s.test, &s.identifier) {
                    file.record_failure(s.clone());
                }
            }
            store.save(&dest.name, &file)?;
        }
        let exists = store.exists(&dest.name);
        let Record { _lock, existed, runs, .. } = self;
        drop(_lock);
        if !exists && !existed {
            // Nothing was saved: leave no empty result folder behind.
            let _ = std::fs::remove_dir_all(store.dir(&dest.name));
        }
        looped?;
        let interrupted = interrupted.then(|| resume_command(argv, &dest.name, &dest.identifier));
        if interrupted.is_none() && failed.is_empty() {
            runs.finish(&dest.key);
        }
        let result = exists.then(|| (dest.name.clone(), store.path(&dest.name)));
        Ok(Outcome::Ran(Ran { result, saved, failed, skipped, not_runnable, interrupted }))
    }
}

/// The command line that resumes this run: the same arguments with the
/// result name and identifier it used.
fn resume_command(argv: &[String], name: &str, identifier: &str) -> String {
    use crate::model::template::quote;
    let mut out: Vec<String> = vec!["engine".into()];
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if a == "--save" || a == "--identifier" {
            i += 2;
            continue;
        }
        if !(a.starts_with("--save=") || a.starts_with("--identifier=")) {
            out.push(quote(a));
        }
        i += 1;
    }
    out.extend(["--save".into(), quote(name), "--identifier".into(), quote(identifier)]);
    out.join(" ")
}
