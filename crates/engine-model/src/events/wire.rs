//! The JSON form of a run's events, for orchestrators: `engine benchmark --progress json`
//! writes one JSON object per line on standard output as the run goes, so
//! Ansible, a CI job or any other program can follow it without parsing
//! text. `schemas/progress.schema.json` is generated from these types.

use crate::model::facts::Identifier;
use crate::model::facts::Unit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of the event format; bumped on incompatible changes.
pub const EVENTS_VERSION: u32 = 1;

/// One line of `--progress json`: when, and what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventLine {
    /// When the event happened (RFC 3339, UTC, milliseconds).
    pub time: String,
    #[serde(flatten)]
    pub event: Event,
}

/// What happened. Every line has `event` (the kind) and `time`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The run holds its locks and is about to run its first test.
    RunStarted {
        /// Version of the event format.
        version: u32,
        engine_version: String,
        pid: u32,
        /// Name of the result the run saves to.
        result: String,
        /// Where that result's `result.json` is.
        path: String,
        /// The identifier (with a sweep: the prefix of each state's).
        identifier: Identifier,
        /// Tests this run will run (per system state).
        tests: usize,
        /// Tests the identifier already had, kept from an earlier run.
        kept: usize,
        /// The same command resumed an unfinished run.
        resumed: bool,
    },
    /// A test starts for an identifier.
    TestStarted {
        /// Position of the test in this run (from 1) and how many there are.
        index: Option<usize>,
        total: Option<usize>,
        /// Identity of the test (as in `results[].test` of the result file).
        test: String,
        /// `profile: description`, as the terminal shows it.
        label: String,
        identifier: Identifier,
    },
    /// One trial ended and its values were read.
    TrialDone {
        test: String,
        identifier: Identifier,
        /// The trial's number (from 1; warm-ups count on their own).
        trial: u32,
        /// A warm-up trial, discarded from the statistics.
        warmup: bool,
        /// Its wall time.
        seconds: f64,
    },
    /// A test ended: its results were saved, or it failed.
    TestDone {
        test: String,
        identifier: Identifier,
        status: TestStatus,
        /// Trials run (warm-ups not counted).
        trials: u32,
        /// Wall time of the whole test, setup included.
        seconds: f64,
        /// One per result of the test (empty when it failed).
        results: Vec<ResultValue>,
        /// Why it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Something went wrong: a test failed or was skipped (`test` is set), or
    /// the run stopped (`test` is not set; `run_finished` follows).
    Error {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        test: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identifier: Option<Identifier>,
        /// `failed` or `skipped` for a test; not set for the run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// The log that explains a failed test, relative to the result folder.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<String>,
    },
    /// A line for the person running it (warnings, a sweep's states).
    Message { text: String },
    /// The last line: how the run ended. Always written, also after an error.
    RunFinished {
        /// The exit code engine is about to return (see the book, "Exit codes").
        exit_code: i32,
        /// The result saved to, and its file, when one exists.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// Tests saved by this run.
        saved: usize,
        failed: usize,
        skipped: usize,
        interrupted: bool,
    },
}

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Completed,
    Failed,
}

/// One result of a finished test for its identifier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResultValue {
    /// Result id within the profile (`bandwidth`).
    pub result: String,
    pub unit: Unit,
    pub value: f64,
    pub se: Option<f64>,
    pub n: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_flat_objects_tagged_by_kind() {
        let l = EventLine {
            time: "2026-11-30T10:00:00.000Z".into(),
            event: Event::TrialDone { test: "t".into(), identifier: "h".into(), trial: 2, warmup: false, seconds: 0.5 },
        };
        let s = serde_json::to_string(&l).unwrap();
        assert_eq!(
            s,
            r#"{"time":"2026-11-30T10:00:00.000Z","event":"trial_done","test":"t","identifier":"h","trial":2,"warmup":false,"seconds":0.5}"#
        );
        assert_eq!(serde_json::from_str::<EventLine>(&s).unwrap(), l);
    }
}
