//! `--progress json`: the run's progress as one JSON object per line on
//! standard output (`engine::events`), flushed line by line, for Ansible's
//! polling or any other orchestrator. Human messages still go to standard
//! error as well, so a log of stderr reads as before.

use super::Failure;
use engine::events::{Event, EventLine, ResultValue, TestStatus, now, position};
use engine::expand::Test;
use engine::result::{FailedTest, ResultFile};
use engine::runner::Progress;
use engine::session::Ui;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The test running now.
struct Current {
    test: String,
    identifier: String,
    start: Instant,
    trials: u32,
}

/// How the run ended, for the last line.
#[derive(Default, Clone)]
pub struct Summary {
    pub result: Option<String>,
    pub path: Option<String>,
    pub saved: usize,
    pub failed: usize,
    pub skipped: usize,
    pub interrupted: bool,
}

#[derive(Default)]
struct Shared {
    current: Mutex<Option<Current>>,
    summary: Mutex<Summary>,
}

impl Shared {
    fn emit(&self, event: Event) {
        let line = serde_json::to_string(&EventLine { time: now(), event }).expect("events serialize");
        let mut out = std::io::stdout().lock();
        // A reader that went away must not stop the benchmark.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// The `Ui` of `--progress json`.
#[derive(Default, Clone)]
pub struct JsonUi {
    shared: Arc<Shared>,
}

impl JsonUi {
    pub fn emit(&self, event: Event) {
        self.shared.emit(event);
    }

    pub fn set_summary(&self, s: Summary) {
        *self.shared.summary.lock().unwrap() = s;
    }

    /// A failed or skipped test that never reached the session (requirements).
    pub fn test_error(&self, f: &FailedTest) {
        self.emit(Event::Error {
            message: format!("{} {}: {}: {}", f.status, f.profile, f.description, f.reason),
            hint: None,
            test: Some(f.test.clone()),
            identifier: Some(f.identifier.clone()),
            status: Some(f.status.clone()),
            log: f.log.clone(),
        });
    }

    /// The last lines: the error that stopped the run (if any), then how it ended.
    pub fn finish(&self, outcome: &Result<i32, Failure>) {
        let exit_code = match outcome {
            Ok(c) => *c,
            Err(f) => {
                self.emit(Event::Error {
                    message: f.message.clone(),
                    hint: f.hint.clone(),
                    test: None,
                    identifier: None,
                    status: None,
                    log: None,
                });
                f.code
            }
        };
        let s = self.shared.summary.lock().unwrap().clone();
        self.emit(Event::RunFinished {
            exit_code,
            result: s.result,
            path: s.path,
            saved: s.saved,
            failed: s.failed,
            skipped: s.skipped,
            interrupted: s.interrupted,
        });
    }
}

struct JsonProgress {
    shared: Arc<Shared>,
}

impl Progress for JsonProgress {
    fn trial_done(&self, k: u32, warmup: bool, seconds: f64) {
        let (test, identifier) = {
            let mut g = self.shared.current.lock().unwrap();
            let Some(c) = g.as_mut() else { return };
            if !warmup {
                c.trials = c.trials.max(k);
            }
            (c.test.clone(), c.identifier.clone())
        };
        self.shared.emit(Event::TrialDone { test, identifier, trial: k, warmup, seconds });
    }
}

impl Ui for JsonUi {
    fn progress(&self, _prefix: &str, _label: &str, _identifier: &str) -> Box<dyn Progress> {
        Box::new(JsonProgress { shared: self.shared.clone() })
    }

    fn test_progress(&self, prefix: &str, test: &Test, identifier: &str) -> Box<dyn Progress> {
        let pos = position(prefix);
        *self.shared.current.lock().unwrap() =
            Some(Current { test: test.key(), identifier: identifier.to_string(), start: Instant::now(), trials: 0 });
        self.emit(Event::TestStarted {
            index: pos.map(|p| p.0),
            total: pos.map(|p| p.1),
            test: test.key(),
            label: test.label(),
            identifier: identifier.to_string(),
        });
        Box::new(JsonProgress { shared: self.shared.clone() })
    }

    fn finished(&self, file: &ResultFile, test: &str, identifier: &str) {
        let results = file
            .results
            .iter()
            .filter(|r| r.test == test)
            .filter_map(|r| {
                let e = r.entries.iter().find(|e| e.identifier == identifier)?;
                Some(ResultValue { result: r.result.clone(), unit: r.unit.clone(), value: e.value, se: e.se, n: e.n })
            })
            .collect();
        let (trials, seconds) = self.take_current();
        self.emit(Event::TestDone {
            test: test.to_string(),
            identifier: identifier.to_string(),
            status: TestStatus::Completed,
            trials,
            seconds,
            results,
            reason: None,
        });
    }

    fn message(&self, msg: &str) {
        eprintln!("{msg}");
        self.emit(Event::Message { text: msg.to_string() });
    }

    fn test_failed(&self, f: &FailedTest) {
        let (trials, seconds) = self.take_current();
        self.emit(Event::TestDone {
            test: f.test.clone(),
            identifier: f.identifier.clone(),
            status: TestStatus::Failed,
            trials,
            seconds,
            results: Vec::new(),
            reason: Some(f.reason.clone()),
        });
        self.test_error(f);
    }
}

impl JsonUi {
    /// Trials and seconds of the test that just ended.
    fn take_current(&self) -> (u32, f64) {
        match self.shared.current.lock().unwrap().take() {
            Some(c) => (c.trials, c.start.elapsed().as_secs_f64()),
            None => (0, 0.0),
        }
    }
}
