//! What a run tells the outside as it goes — tests and trials starting and
//! ending, systems captured, warnings — and the questions it may ask (which
//! entries, whether to install). One trait: the terminal display and the
//! JSON progress stream implement it in the binary; tests record it.
//! `wire` is the JSON form of the stream (`schemas/progress.schema.json`).

pub mod wire;

use crate::model::profile::{LoadedProfile, OptionDef};
use crate::model::result::{FailedTest, ResultFile, System};

/// A run about to run its first test.
#[derive(Debug, Clone)]
pub struct RunStart<'a> {
    /// The result it saves to, and that result's file.
    pub result: &'a str,
    pub path: &'a str,
    /// The identifier (with a sweep: the prefix of each state's, if given).
    pub identifier: &'a str,
    /// Tests it will run (per system state) and tests the identifier already had.
    pub tests: usize,
    pub kept: usize,
    /// The same command resumed an unfinished run.
    pub resumed: bool,
    /// Tests skipped before the run (requirements not met).
    pub skipped: usize,
}

/// One test for one identifier.
#[derive(Debug, Clone, Copy)]
pub struct TestStart<'a> {
    /// Identity of the test (`results[].test` of the result file).
    pub key: &'a str,
    /// `profile: description`, as people read it.
    pub label: &'a str,
    pub identifier: &'a str,
    /// Position in this run (from 1) and how many there are.
    pub index: usize,
    pub total: usize,
}

/// How a test ended.
#[derive(Debug, Clone, Copy)]
pub enum TestEnd<'a> {
    /// Saved: `file` holds its results.
    Completed {
        file: &'a ResultFile,
    },
    Failed(&'a FailedTest),
    /// Stopped by Ctrl-C or SIGTERM: nothing of it is saved.
    Interrupted,
}

/// The device line a display may show while trials run: the first device
/// under test, as the monitor's sampler last read it (the book, "Monitors").
#[derive(Debug)]
pub struct Live {
    /// `vda`, `loop3`.
    pub device: String,
    reading: std::sync::Mutex<Option<LiveReading>>,
}

/// The device over the last sampling interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LiveReading {
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    /// Reads and writes completed per second.
    pub iops: f64,
    pub util_pct: f64,
    pub queue_depth: f64,
}

impl Live {
    pub fn new(device: &str) -> Live {
        Live { device: device.to_string(), reading: std::sync::Mutex::new(None) }
    }

    pub fn set(&self, r: LiveReading) {
        if let Ok(mut g) = self.reading.lock() {
            *g = Some(r);
        }
    }

    /// The last reading; `None` before the first interval ends.
    pub fn get(&self) -> Option<LiveReading> {
        self.reading.lock().ok().and_then(|g| *g)
    }
}

/// What a run tells the outside. Every method has a default that does nothing
/// (or answers "no"), so an implementation says only what it shows.
pub trait Events {
    fn run_started(&self, _run: &RunStart<'_>) {}
    /// The system an identifier runs on was captured (before its first test).
    fn system_captured(&self, _system: &System) {}
    fn test_started(&self, _test: &TestStart<'_>) {}
    /// In an interleaved run, the next trial is round `round`'s of the
    /// state with identifier `state` (said before its `trial_started`).
    fn trial_state(&self, _round: u32, _state: &str) {}
    /// Trial `k` of `planned` starts (`warmup`: a discarded warm-up trial).
    fn trial_started(&self, _k: u32, _planned: u32, _warmup: bool) {}
    /// The monitors started for a test (`Some`: its device line, updated
    /// every interval from another thread) or stopped (`None`).
    fn monitoring(&self, _live: Option<std::sync::Arc<Live>>) {}
    /// Trial `k` ended and its values were read; `seconds` is its wall time.
    fn trial_done(&self, _k: u32, _warmup: bool, _seconds: f64) {}
    fn test_done(&self, _test: &TestStart<'_>, _end: TestEnd<'_>) {}
    /// A test that will not run for this identifier (a requirement not met).
    fn test_skipped(&self, _skipped: &FailedTest) {}
    /// A test of a saved result that cannot run here (`what` says why).
    fn cannot_run(&self, _what: &str, _identifier: &str) {}
    /// A line for the person running it: a warning, a note.
    fn message(&self, _text: &str) {}
    /// Whether to go ahead with `question` (an install). No when nobody can answer.
    fn confirm(&self, _question: &str) -> bool {
        false
    }
    /// The entries of `option` to run, asked of the person running it; none
    /// when nobody can answer (then the defaults run).
    fn choose(&self, _profile: &LoadedProfile, _option: &OptionDef, _defaults: &[usize]) -> Option<Vec<usize>> {
        None
    }
}

/// Tells nobody anything.
pub struct Silent;

impl Events for Silent {}
