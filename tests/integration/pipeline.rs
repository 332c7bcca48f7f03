//! The benchmark pipeline as a library function: `ops::benchmark` driven in
//! this process with a fake executor and a recording `Events`, without the
//! binary or any benchmark tool — its phases in order, what it saves, how it
//! tells the outside, and the outcome with its exit code.

use crate::common::{Env, echo_profile, trial_log_in};
use engine::events::{Events, RunStart, TestEnd, TestStart};
use engine::expand::Test;
use engine::home::Home;
use engine::model::result::FailedTest;
use engine::runner::{self, ExecError, Executor, Executors, TestEnv, TrialEnv, TrialRun};
use engine_ops::benchmark::{self, Outcome, Request};
use engine_ops::{Context, Settings};
use std::sync::Mutex;
use std::time::Duration;

/// What a run told the outside, in order, one line each.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Recorder {
    fn push(&self, s: String) {
        self.0.lock().unwrap().push(s);
    }
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl Events for Recorder {
    fn run_started(&self, r: &RunStart<'_>) {
        self.push(format!("run_started {} {} tests={} kept={}", r.result, r.identifier, r.tests, r.kept));
    }
    fn test_started(&self, t: &TestStart<'_>) {
        self.push(format!("test_started [{}/{}] {} ({})", t.index, t.total, t.label, t.identifier));
    }
    fn trial_started(&self, k: u32, planned: u32, warmup: bool) {
        self.push(format!("trial_started {k}/{planned} warmup={warmup}"));
    }
    fn trial_done(&self, k: u32, warmup: bool, _seconds: f64) {
        self.push(format!("trial_done {k} warmup={warmup}"));
    }
    fn test_done(&self, _t: &TestStart<'_>, end: TestEnd<'_>) {
        let how = match end {
            TestEnd::Completed { .. } => "completed".to_string(),
            TestEnd::Failed(f) => format!("failed: {}", f.reason),
            TestEnd::Interrupted => "interrupted".to_string(),
        };
        self.push(format!("test_done {how}"));
    }
    fn test_skipped(&self, f: &FailedTest) {
        self.push(format!("test_skipped {}", f.profile));
    }
    fn message(&self, text: &str) {
        self.push(format!("message {text}"));
    }
}

/// Trials that print `value: V` for the next of `values`, or fail at `fail_at`.
struct Fake {
    values: Vec<f64>,
    fail_at: Option<usize>,
    calls: Mutex<Vec<String>>,
}

struct FakeExecutor<'a> {
    fake: &'a Fake,
    trial: usize,
}

impl Executor for FakeExecutor<'_> {
    fn setup(&mut self, env: &TestEnv<'_>) -> Result<(), ExecError> {
        assert!(env.test_dir.is_dir(), "the test's folder exists at setup");
        self.fake.calls.lock().unwrap().push("setup".into());
        Ok(())
    }
    fn trial(&mut self, env: &TrialEnv<'_>) -> Result<TrialRun, ExecError> {
        assert!(env.scratch.is_dir(), "each trial has its scratch directory");
        self.fake.calls.lock().unwrap().push(format!("trial {}", env.label));
        let i = self.trial;
        self.trial += 1;
        if self.fake.fail_at == Some(i) {
            return Err(ExecError::Workload { workload: "fake".into(), message: "the disk caught fire".into() });
        }
        Ok(TrialRun {
            stdout: format!("value: {}\n", self.fake.values[i % self.fake.values.len()]),
            wall: Duration::from_millis(10),
            log: env.logs.join(format!("trial-{}.log", env.label)),
            log_text: "fake\n".into(),
            ..TrialRun::default()
        })
    }
    fn teardown(&mut self, _env: &TestEnv<'_>) -> Result<(), ExecError> {
        self.fake.calls.lock().unwrap().push("teardown".into());
        Ok(())
    }
}

impl Executors for Fake {
    fn executor<'a>(&'a self, _test: &Test, _env: &runner::Env<'a>) -> Box<dyn Executor + 'a> {
        Box::new(FakeExecutor { fake: self, trial: 0 })
    }
}

fn context(env: &Env) -> Context {
    let settings = Settings { profile_path: vec![env.profiles.path().to_path_buf()], ..Settings::default() };
    Context::new(Home { root: env.home.path().to_path_buf() }, settings)
}

fn request(env: &Env, refs: &[&str]) -> Request {
    Request {
        refs: refs.iter().map(|s| s.to_string()).collect(),
        save: Some("r".parse().unwrap()),
        identifier: Some("h".into()),
        runs: Some(3),
        yes: true,
        target_dir: Some(env.target.path().to_path_buf()),
        ..Request::default()
    }
}

#[test]
fn a_run_goes_through_its_phases_saves_and_says_so() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["7"]));
    let cx = context(&env);
    let fake = Fake { values: vec![1.0, 2.0, 3.0], fail_at: None, calls: Mutex::new(Vec::new()) };
    let events = Recorder::default();
    let outcome = benchmark::benchmark(&cx, &request(&env, &["echo"]), &events, &fake).unwrap();

    // The outcome knows what was saved and its exit code.
    let Outcome::Ran(ran) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(outcome.exit_code(), 0);
    assert_eq!(ran.saved, 1);
    assert!(ran.failed.is_empty() && ran.skipped.is_empty() && ran.interrupted.is_none());
    let (name, path) = ran.result.clone().unwrap();
    assert_eq!((name.as_str(), path.clone()), ("r", env.result_path("r")));

    // The executor: set up once, three trials each in its own directory, torn down.
    assert_eq!(*fake.calls.lock().unwrap(), ["setup", "trial 1", "trial 2", "trial 3", "teardown"]);

    // The events, in order: the run, the test, its trials, its end.
    let lines = events.lines();
    let expected = [
        "run_started r h tests=1 kept=0",
        "test_started [1/1] echo: Value: V7 (h)",
        "trial_started 1/3 warmup=false",
        "trial_done 1 warmup=false",
        "trial_started 2/3 warmup=false",
        "trial_done 2 warmup=false",
        "trial_started 3/3 warmup=false",
        "trial_done 3 warmup=false",
        "test_done completed",
    ];
    let from_start: Vec<&String> = lines.iter().skip_while(|l| !l.starts_with("run_started")).collect();
    assert_eq!(from_start, expected.iter().collect::<Vec<_>>(), "{lines:#?}");

    // What was saved: the fake's values, their statistics, the system, the logs.
    let f = env.result("r");
    let e = &f["results"][0]["entries"][0];
    assert_eq!(e["identifier"], "h");
    assert_eq!(e["trials"], serde_json::json!([1.0, 2.0, 3.0]));
    assert_eq!(e["value"], 2.0);
    assert_eq!(e["n"], 3);
    assert_eq!(f["systems"][0]["identifier"], "h");
    let logs = env.home.path().join("results/r").join(e["logs"].as_str().unwrap());
    assert_eq!(trial_log_in(&logs, "trial-2"), "fake\n");
    // Nothing is left to resume, and the test folders are gone.
    assert_eq!(std::fs::read_dir(env.home.path().join("runs")).map(|d| d.count()).unwrap_or(0), 0);
    assert_eq!(std::fs::read_dir(env.target.path()).unwrap().count(), 0, "test folders left behind");

    // The same request again keeps what is there and runs nothing.
    let again = Recorder::default();
    let outcome = benchmark::benchmark(&cx, &request(&env, &["echo"]), &again, &fake).unwrap();
    let Outcome::Ran(ran) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(ran.saved, 0);
    assert!(again.lines().iter().any(|l| l == "run_started r h tests=0 kept=1"), "{:#?}", again.lines());
}

#[test]
fn a_failing_trial_fails_its_test_records_it_and_exits_4() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["7"]));
    let cx = context(&env);
    let fake = Fake { values: vec![1.0], fail_at: Some(1), calls: Mutex::new(Vec::new()) };
    let events = Recorder::default();
    let outcome = benchmark::benchmark(&cx, &request(&env, &["echo"]), &events, &fake).unwrap();
    assert_eq!(outcome.exit_code(), 4);
    let Outcome::Ran(ran) = &outcome else { panic!("{outcome:?}") };
    assert_eq!((ran.saved, ran.failed.len()), (0, 1));
    assert_eq!(ran.failed[0].reason, "fake: the disk caught fire");
    // Torn down after the failure too.
    assert_eq!(*fake.calls.lock().unwrap(), ["setup", "trial 1", "trial 2", "teardown"]);
    assert!(events.lines().contains(&"test_done failed: fake: the disk caught fire".to_string()));
    let f = env.result("r");
    assert_eq!(f["failures"][0]["status"], "failed");
    // A failed run can be resumed: its record stays.
    assert_eq!(std::fs::read_dir(env.home.path().join("runs")).unwrap().count(), 1);
}

#[test]
fn bad_requests_fail_with_their_exit_codes_before_anything_is_created() {
    let env = Env::new();
    env.profile("echo", &echo_profile("echo", &["7"]));
    let cx = context(&env);
    let fake = Fake { values: vec![1.0], fail_at: None, calls: Mutex::new(Vec::new()) };
    let events = Recorder::default();
    let e = benchmark::benchmark(&cx, &request(&env, &["nope"]), &events, &fake).unwrap_err();
    assert_eq!(e.code, 2, "{e}");
    assert!(e.message.contains("`nope`"), "{e}");
    let mut bad = request(&env, &["echo"]);
    bad.options = vec!["size=1".parse().unwrap()];
    let e = benchmark::benchmark(&cx, &bad, &events, &fake).unwrap_err();
    assert_eq!(e.code, 2, "{e}");
    assert!(e.message.contains("no profile in this run has an option `size`"), "{e}");
    assert!(fake.calls.lock().unwrap().is_empty(), "nothing ran");
    assert!(!env.home.path().join("results").exists(), "nothing was created");
}
