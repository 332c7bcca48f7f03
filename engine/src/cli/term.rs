//! What a run shows on a terminal while it runs: a progress line with the
//! test, `trial k of n` and an ETA, and each test's result as soon as it
//! finishes; piped (CI logs), one line when a test starts and one when it
//! ends, with the result blocks on stdout.

use super::ui::Prompts;
use engine_model::events::{Events, Live, LiveReading, TestEnd, TestStart};
use engine_model::model::profile::{LoadedProfile, OptionDef};
use engine_model::model::result::{ResultFile, System};
use engine_ops::vocab::report::{systems, text};
use engine_sys::text::one_line;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The test running now, as the display tracks it.
enum Current {
    /// A progress line redrawn in place (and the device line under it
    /// while monitors run).
    Line {
        what: String,
        bar: Option<ProgressBar>,
        starts: Vec<Instant>,
        live: Option<ProgressBar>,
        /// The monitors' readings the device line shows.
        readings: Option<Arc<Live>>,
        run_left: Option<Duration>,
        /// The position and test without the states, and, in an
        /// interleaved run, the round and state of the next trial.
        head: String,
        state: Option<String>,
    },
    /// Piped: trials that ended (not warm-ups; an interrupted one does not count).
    Piped { prefix: String, start: Instant, trials: u32 },
}

pub struct TermEvents {
    /// stderr is a terminal: draw a progress line.
    tty: bool,
    /// What is printed as each test finishes.
    shown: Shown,
    width: usize,
    prompts: Prompts,
    current: Mutex<Option<Current>>,
    /// The lines drawn in place: the progress line, the device line under it.
    multi: MultiProgress,
    /// When the run's first test started.
    first: Mutex<Option<Instant>>,
}

/// What a run prints on standard output as each test finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Nothing (another format, or piped output that gets the whole report at the end).
    Nothing,
    /// One line per result of the identifier that just ran: value, ±CI, N, marks.
    Compact,
    /// The bar charts of the test, every identifier so far (`--format bars`).
    Bars,
}

impl TermEvents {
    pub fn new(tty: bool, shown: Shown, width: usize, prompts: Prompts) -> Self {
        let (current, first) = (Mutex::new(None), Mutex::new(None));
        TermEvents { tty, shown, width, prompts, current, multi: MultiProgress::new(), first }
    }
}

/// `[3/12]`: where a test is in the run.
pub fn position(t: &TestStart<'_>) -> String {
    format!("[{}/{}]", t.index, t.total)
}

/// What the piped log says when a test ends.
fn end_line(end: &TestEnd<'_>, trials: u32, took: Duration) -> String {
    let s = took.as_secs_f64();
    match end {
        TestEnd::Completed { .. } => format!("finished: {trials} trial(s) in {s:.1} s"),
        TestEnd::Failed(_) => format!("failed after {trials} trial(s) in {s:.1} s (why: below, at the end)"),
        TestEnd::Interrupted => format!("interrupted after {s:.1} s: nothing of this test is saved"),
    }
}

/// `m:ss`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Cuts `s` to `max` columns, with an ellipsis.
fn fit(s: &str, max: usize) -> String {
    engine_sys::text::fit(s, max).into_owned()
}

/// `[3/12] fio: Type: Random Read … (vm) — trial 2 of 3, ETA 0:12, run 4:10 left`,
/// at most `width` columns (the test's name cut first); the ETA from the
/// trials so far (the remaining planned ones at their mean time), the run's
/// from the tests so far (`run_left`).
fn line(
    what: &str,
    starts: &[Instant],
    k: u32,
    planned: u32,
    warmup: bool,
    width: usize,
    run_left: Option<Duration>,
) -> String {
    let eta = if starts.len() >= 2 {
        let done = starts.len() - 1;
        let per = (starts[done] - starts[0]) / done as u32;
        let left = planned.max(k) - k + 1;
        format!(", ETA {}", clock(per * left))
    } else {
        String::new()
    };
    let run = run_left.map_or(String::new(), |d| format!(", run {} left", clock(d)));
    // Past the scheduled trials there is no "of n": the rule adds trials
    // while the interval is wider than its target.
    let tail = if k > planned {
        format!(" — trial {k} (more while the 95 % CI is wider than the target){run}")
    } else {
        format!(" — trial {k} of {planned}{eta}{run}")
    };
    let warm = if warmup { " (warm-up)" } else { "" };
    let room = width.max(40).saturating_sub(engine_sys::text::width(&tail) + warm.len() + 3);
    format!("{}{warm}{tail}", fit(what, room))
}

/// The run's remaining time from the tests so far: the time since the
/// first started, per test done, times the tests left (this one included).
fn run_left(first: Instant, index: usize, total: usize) -> Option<Duration> {
    let done = index.checked_sub(1).filter(|d| *d > 0)?;
    let per = first.elapsed() / done as u32;
    Some(per * (total + 1).saturating_sub(index) as u32)
}

/// The device line: `vda  read 512.3 MB/s  write 0 MB/s  131012 IOPS  util 100 %  queue 1.2`.
fn live_line(device: &str, r: &LiveReading) -> String {
    format!(
        "{}  read {:.1} MB/s  write {:.1} MB/s  {:.0} IOPS  util {:.0} %  queue {:.1}",
        one_line(device),
        r.read_mb_s,
        r.write_mb_s,
        r.iops,
        r.util_pct,
        r.queue_depth
    )
}

/// The device line under the progress line: redrawn from the sampler's
/// last reading, cut to `width`.
fn live_bar(live: Arc<Live>, width: usize) -> ProgressBar {
    let style = ProgressStyle::with_template("  {live}").unwrap().with_key(
        "live",
        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let text = live.get().map(|r| live_line(&live.device, &r));
            let _ = w.write_str(&fit(text.as_deref().unwrap_or("…"), width.saturating_sub(3)));
        },
    );
    let b = ProgressBar::new_spinner();
    b.set_style(style);
    b.enable_steady_tick(Duration::from_millis(250));
    b
}

impl Events for TermEvents {
    fn monitoring(&self, live: Option<Arc<Live>>) {
        let mut g = self.current.lock().unwrap();
        let Some(Current::Line { live: line, bar, readings, .. }) = g.as_mut() else { return };
        if let Some(old) = line.take() {
            old.finish_and_clear();
            self.multi.remove(&old);
        }
        // Drawn under the progress line once that is drawn: a device line
        // alone above it would be left behind when both are cleared.
        *readings = live;
        if bar.is_some() {
            *line = readings.clone().map(|l| self.multi.add(live_bar(l, self.width.min(100))));
        }
    }

    fn system_captured(&self, s: &System) {
        if self.shown != Shown::Nothing {
            outln!("{}", systems::brief(s, self.width));
        }
    }

    fn test_started(&self, t: &TestStart<'_>) {
        let prefix = position(t);
        let first = *self.first.lock().unwrap().get_or_insert_with(Instant::now);
        let c = if self.tty {
            // The state (a sweep's identifier) is named: which one runs matters.
            let what = format!("{prefix} {} ({})", one_line(t.label), one_line(t.identifier));
            let head = format!("{prefix} {}", one_line(t.label));
            let run_left = run_left(first, t.index, t.total);
            Current::Line {
                what,
                bar: None,
                starts: Vec::new(),
                live: None,
                readings: None,
                run_left,
                head,
                state: None,
            }
        } else {
            errln!("{prefix} {} ({}): started", one_line(t.label), one_line(t.identifier));
            Current::Piped { prefix, start: Instant::now(), trials: 0 }
        };
        *self.current.lock().unwrap() = Some(c);
    }

    fn trial_state(&self, round: u32, state: &str) {
        if let Some(Current::Line { state: s, .. }) = self.current.lock().unwrap().as_mut() {
            *s = Some(format!("round {round} · {}", one_line(state)));
        }
    }

    fn trial_started(&self, k: u32, planned: u32, warmup: bool) {
        let mut g = self.current.lock().unwrap();
        let Some(Current::Line { what, bar, starts, run_left, live, readings, head, state }) = g.as_mut() else {
            return;
        };
        starts.push(Instant::now());
        // An interleaved run names the state being measured and the round.
        let shown = state.as_ref().map(|s| format!("{head} · {s}"));
        let msg = line(shown.as_ref().unwrap_or(what), starts, k, planned, warmup, self.width, *run_left);
        let bar = bar.get_or_insert_with(|| {
            let b = self.multi.add(ProgressBar::new_spinner());
            b.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap());
            b.enable_steady_tick(Duration::from_millis(120));
            b
        });
        bar.set_message(msg);
        if live.is_none() {
            *live = readings.clone().map(|l| self.multi.add(live_bar(l, self.width.min(100))));
        }
    }

    fn trial_done(&self, k: u32, warmup: bool, _seconds: f64) {
        if let Some(Current::Piped { trials, .. }) = self.current.lock().unwrap().as_mut()
            && !warmup
        {
            *trials = k;
        }
    }

    fn test_done(&self, t: &TestStart<'_>, end: TestEnd<'_>) {
        // Piped, the failure's reason is left to the report at the end, so it is said once.
        let mut said = false;
        match self.current.lock().unwrap().take() {
            Some(Current::Line { bar, live, .. }) => {
                // A test that failed before its monitors stopped leaves no
                // stale line; nor does a device line never drawn past its `…`.
                for b in bar.into_iter().chain(live) {
                    b.finish_and_clear();
                    self.multi.remove(&b);
                }
                let _ = self.multi.clear();
            }
            Some(Current::Piped { prefix, start, trials }) => {
                errln!("{prefix} {}", end_line(&end, trials, start.elapsed()));
                said = true;
            }
            _ => {}
        }
        match end {
            TestEnd::Completed { file } => match self.shown {
                Shown::Compact => out!("{}", text::compact(file, t.key, t.identifier, self.width)),
                Shown::Bars => self.print_test(file, t.key),
                Shown::Nothing => {}
            },
            TestEnd::Failed(f) if !said => {
                errln!("failed {} ({}): {}", one_line(t.label), one_line(t.identifier), f.reason)
            }
            _ => {}
        }
    }

    fn cannot_run(&self, what: &str, _identifier: &str) {
        errln!("cannot run: {what}");
    }

    fn message(&self, text: &str) {
        errln!("{text}");
    }

    fn confirm(&self, question: &str) -> bool {
        self.prompts.confirm(question)
    }

    fn choose(&self, profile: &LoadedProfile, option: &OptionDef, defaults: &[usize]) -> Option<Vec<usize>> {
        self.prompts.choose(profile, option, defaults)
    }
}

impl TermEvents {
    /// Only this test's results, with every identifier's bar.
    fn print_test(&self, file: &ResultFile, test: &str) {
        let mut one = ResultFile { title: file.title.clone(), ..Default::default() };
        one.results = file.results.iter().filter(|r| r.test == test).cloned().collect();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", text::test_blocks(&one, test, self.width));
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_scheduled_trials_the_line_says_why_not_of_n() {
        let now = Instant::now();
        let l = line("fio", &[now, now], 11, 10, false, 120, None);
        assert!(l.ends_with("— trial 11 (more while the 95 % CI is wider than the target)"), "{l}");
        let l = line("fio", &[now], 3, 10, false, 80, None);
        assert!(l.ends_with("— trial 3 of 10"), "{l}");
    }

    #[test]
    fn lines_use_the_width_and_say_the_runs_time_left() {
        let long = format!("[3/12] fio: {} (loop 2G: ext4 / NONE)", "Type: Random Read - ".repeat(6));
        let wide = line(&long, &[], 1, 3, false, 200, Some(Duration::from_secs(250)));
        assert!(wide.contains("Type: Random Read - Type") && wide.ends_with("trial 1 of 3, run 4:10 left"), "{wide}");
        assert!(engine_sys::text::width(&wide) <= 200 && engine_sys::text::width(&wide) > 120, "{wide}");
        let first = Instant::now() - Duration::from_secs(20);
        let left = run_left(first, 3, 12).unwrap();
        assert!((99..=101).contains(&left.as_secs()), "2 tests in 20 s, 10 left: {left:?}");
        assert_eq!(run_left(first, 1, 12), None, "nothing done yet");
    }

    #[test]
    fn lines_fit_in_80_columns() {
        assert_eq!(clock(Duration::from_secs(75)), "1:15");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
        let s = fit(&"x".repeat(100), 10);
        assert_eq!(s.chars().count(), 10);
        assert!(s.ends_with('…'));
        assert_eq!(fit("short", 10), "short");
        assert!(line(&"y".repeat(200), &[], 2, 3, true, 80, None).chars().count() <= 80);
    }

    #[test]
    fn the_end_line_says_how_the_test_ended() {
        let t = Duration::from_millis(700);
        let f = ResultFile::default();
        assert_eq!(end_line(&TestEnd::Completed { file: &f }, 3, t), "finished: 3 trial(s) in 0.7 s");
        assert_eq!(end_line(&TestEnd::Interrupted, 1, t), "interrupted after 0.7 s: nothing of this test is saved");
    }
}
