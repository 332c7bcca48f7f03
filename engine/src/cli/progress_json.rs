//! `--progress json`: the run's progress as one JSON object per line on
//! standard output (`engine_model::events::wire`), flushed line by line, for
//! Ansible's polling or any other orchestrator. Human messages still go to
//! standard error as well, so a log of stderr reads as before.

use super::ui::Prompts;
use engine_model::events::wire::{EVENTS_VERSION, Event, EventLine, ResultValue, TestStatus};
use engine_model::events::{Events, RunStart, TestEnd, TestStart};
use engine_model::model::profile::{LoadedProfile, OptionDef};
use engine_model::model::result::FailedTest;
use engine_ops::Failure;
use engine_ops::benchmark::Outcome;
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

/// The test running now.
struct Current {
    start: Instant,
    trials: u32,
}

/// What the last line says when the run stops on an error: what it had got to.
#[derive(Default)]
struct Counts {
    result: Option<String>,
    saved: usize,
    failed: usize,
    skipped: usize,
    interrupted: bool,
}

pub struct JsonEvents {
    prompts: Prompts,
    current: Mutex<Option<(String, String, Current)>>,
    counts: Mutex<Counts>,
}

fn emit(event: Event) {
    let time = engine_sys::time::now_millis();
    let line = serde_json::to_string(&EventLine { time, event }).expect("events serialize");
    let mut out = std::io::stdout().lock();
    // A reader that went away must not stop the benchmark. serde_json
    // escapes C0 controls; the rest (C1, bidi) are escaped here too.
    let _ = writeln!(out, "{}", engine_sys::text::json(&line));
    let _ = out.flush();
}

/// The error event of a test that failed or was skipped.
fn test_error(f: &FailedTest) -> Event {
    Event::Error {
        message: format!("{} {}: {}: {}", f.status, f.profile, f.description, f.reason),
        hint: None,
        test: Some(f.test.clone()),
        identifier: Some(f.identifier.clone()),
        status: Some(f.status.to_string()),
        log: f.log.clone(),
    }
}

impl JsonEvents {
    pub fn new(prompts: Prompts) -> Self {
        JsonEvents { prompts, current: Mutex::new(None), counts: Mutex::new(Counts::default()) }
    }

    /// Trials and seconds of the test that just ended.
    fn take_current(&self) -> (u32, f64) {
        match self.current.lock().unwrap().take() {
            Some((_, _, c)) => (c.trials, c.start.elapsed().as_secs_f64()),
            None => (0, 0.0),
        }
    }

    /// The last lines: the error that stopped the run (if any), then how it ended.
    pub fn finish(&self, outcome: &Result<Outcome, Failure>) {
        let c = self.counts.lock().unwrap();
        let finished = match outcome {
            Ok(o) => {
                let exit_code = o.exit_code();
                match o {
                    Outcome::Ran(r) => Event::RunFinished {
                        exit_code,
                        result: r.result.as_ref().map(|(n, _)| n.clone()),
                        path: r.result.as_ref().map(|(_, p)| p.display().to_string()),
                        saved: r.saved,
                        failed: r.failed.len(),
                        skipped: r.skipped.len() + r.not_runnable.len(),
                        interrupted: r.interrupted.is_some(),
                    },
                    _ => Event::RunFinished {
                        exit_code,
                        result: None,
                        path: None,
                        saved: 0,
                        failed: 0,
                        skipped: 0,
                        interrupted: false,
                    },
                }
            }
            Err(f) => {
                emit(Event::Error {
                    message: f.message.clone(),
                    hint: f.hint.clone(),
                    test: None,
                    identifier: None,
                    status: None,
                    log: None,
                });
                Event::RunFinished {
                    exit_code: f.code,
                    result: c.result.clone(),
                    path: None,
                    saved: c.saved,
                    failed: c.failed,
                    skipped: c.skipped,
                    interrupted: c.interrupted,
                }
            }
        };
        emit(finished);
    }
}

impl Events for JsonEvents {
    fn run_started(&self, r: &RunStart<'_>) {
        let mut c = self.counts.lock().unwrap();
        c.result = Some(r.result.to_string());
        c.skipped = r.skipped;
        emit(Event::RunStarted {
            version: EVENTS_VERSION,
            engine_version: env!("CARGO_PKG_VERSION").to_string(),
            pid: std::process::id(),
            result: r.result.to_string(),
            path: r.path.to_string(),
            identifier: r.identifier.into(),
            tests: r.tests,
            kept: r.kept,
            resumed: r.resumed,
        });
    }

    fn test_started(&self, t: &TestStart<'_>) {
        let c = Current { start: Instant::now(), trials: 0 };
        *self.current.lock().unwrap() = Some((t.key.to_string(), t.identifier.to_string(), c));
        emit(Event::TestStarted {
            index: Some(t.index),
            total: Some(t.total),
            test: t.key.to_string(),
            label: t.label.to_string(),
            identifier: t.identifier.into(),
        });
    }

    fn trial_done(&self, k: u32, warmup: bool, seconds: f64) {
        let (test, identifier) = {
            let mut g = self.current.lock().unwrap();
            let Some((test, identifier, c)) = g.as_mut() else { return };
            if !warmup {
                c.trials = c.trials.max(k);
            }
            (test.clone(), identifier.clone())
        };
        emit(Event::TrialDone { test, identifier: identifier.into(), trial: k, warmup, seconds });
    }

    fn test_done(&self, t: &TestStart<'_>, end: TestEnd<'_>) {
        let (test, identifier) = (t.key.to_string(), t.identifier.to_string());
        match end {
            TestEnd::Completed { file } => {
                self.counts.lock().unwrap().saved += 1;
                let results = file
                    .results
                    .iter()
                    .filter(|r| r.test == t.key)
                    .filter_map(|r| {
                        let e = r.entries.iter().find(|e| e.identifier == t.identifier)?;
                        Some(ResultValue {
                            result: r.result.clone(),
                            unit: r.unit.clone(),
                            value: e.value,
                            se: e.se,
                            n: e.n,
                        })
                    })
                    .collect();
                let (trials, seconds) = self.take_current();
                let status = TestStatus::Completed;
                emit(Event::TestDone {
                    test,
                    identifier: identifier.into(),
                    status,
                    trials,
                    seconds,
                    results,
                    reason: None,
                });
            }
            TestEnd::Failed(f) => {
                self.counts.lock().unwrap().failed += 1;
                self.message(&format!("failed {} ({}): {}", t.label, t.identifier, f.reason));
                let (trials, seconds) = self.take_current();
                let (status, reason) = (TestStatus::Failed, Some(f.reason.clone()));
                emit(Event::TestDone {
                    test,
                    identifier: identifier.into(),
                    status,
                    trials,
                    seconds,
                    results: Vec::new(),
                    reason,
                });
                emit(test_error(f));
            }
            TestEnd::Interrupted => {
                self.counts.lock().unwrap().interrupted = true;
                self.take_current();
            }
        }
    }

    fn test_skipped(&self, f: &FailedTest) {
        emit(test_error(f));
    }

    fn cannot_run(&self, what: &str, identifier: &str) {
        errln!("cannot run: {what}");
        emit(Event::Error {
            message: format!("cannot run: {what}"),
            hint: None,
            test: None,
            identifier: Some(identifier.into()),
            status: Some("skipped".into()),
            log: None,
        });
    }

    fn message(&self, text: &str) {
        errln!("{text}");
        emit(Event::Message { text: text.to_string() });
    }

    fn confirm(&self, question: &str) -> bool {
        self.prompts.confirm(question)
    }

    fn choose(&self, profile: &LoadedProfile, option: &OptionDef, defaults: &[usize]) -> Option<Vec<usize>> {
        self.prompts.choose(profile, option, defaults)
    }
}
