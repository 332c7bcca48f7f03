//! What a run shows while it runs: on a terminal, a progress line with the
//! test, `trial k of n` and an ETA, and each test's result as soon as it
//! finishes; piped (CI logs), one line when a test starts and one when it
//! ends, with the result blocks on stdout.

use engine::report::{systems, text};
use engine::result::{ResultFile, System};
use engine::runner::{Ended, Progress};
use engine::session::Ui;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct TermUi {
    /// stderr is a terminal: draw a progress line.
    pub tty: bool,
    /// Print result blocks as tests finish (the text format).
    pub results: bool,
    pub width: usize,
}

impl Ui for TermUi {
    fn progress(&self, prefix: &str, label: &str, identifier: &str) -> Box<dyn Progress> {
        if self.tty {
            Box::new(Line::new(format!("{prefix} {label}")))
        } else {
            eprintln!("{prefix} {label} ({identifier}): started");
            Box::new(Piped { prefix: prefix.to_string(), start: Instant::now(), trials: Mutex::new(0) })
        }
    }

    fn captured(&self, s: &System) {
        if self.results {
            println!("{}", systems::brief(s));
        }
    }

    fn finished(&self, file: &ResultFile, test: &str, identifier: &str) {
        if !self.results {
            return;
        }
        // Only this test's results, with every identifier's bar.
        let mut one = ResultFile { title: file.title.clone(), ..Default::default() };
        one.results = file.results.iter().filter(|r| r.test == test).cloned().collect();
        let _ = identifier;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", text::test_blocks(&one, test, self.width));
        let _ = out.flush();
    }

    fn message(&self, msg: &str) {
        eprintln!("{msg}");
    }
}

/// Piped output: a line when the test ends.
struct Piped {
    prefix: String,
    start: Instant,
    /// Trials that ended (not warm-ups); an interrupted one does not count.
    trials: Mutex<u32>,
}

impl Progress for Piped {
    fn trial_done(&self, k: u32, warmup: bool, _seconds: f64) {
        if !warmup {
            *self.trials.lock().unwrap() = k;
        }
    }
    fn done(&self, ended: Ended) {
        eprintln!("{} {}", self.prefix, end_line(ended, *self.trials.lock().unwrap(), self.start.elapsed()));
    }
}

/// What the piped log says when a test ends.
fn end_line(ended: Ended, trials: u32, took: Duration) -> String {
    let s = took.as_secs_f64();
    match ended {
        Ended::Completed => format!("finished: {trials} trial(s) in {s:.1} s"),
        Ended::Failed => format!("failed after {trials} trial(s) in {s:.1} s"),
        Ended::Interrupted => format!("interrupted after {s:.1} s: nothing of this test is saved"),
    }
}

/// `[3/12] fio: Type: Random Read … trial 2 of 3, ETA 0:12` on stderr, at
/// most 80 columns, redrawn in place.
struct Line {
    bar: Mutex<Option<ProgressBar>>,
    what: String,
    /// When each trial started.
    starts: Mutex<Vec<Instant>>,
}

impl Line {
    fn new(what: String) -> Self {
        Line { bar: Mutex::new(None), what, starts: Mutex::new(Vec::new()) }
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

/// Cuts `s` to `max` characters, with an ellipsis.
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

impl Progress for Line {
    fn trial(&self, label: &str, k: u32, planned: u32) {
        let mut starts = self.starts.lock().unwrap();
        starts.push(Instant::now());
        // ETA from the trials done so far: the remaining planned ones at their mean time.
        let eta = if starts.len() >= 2 {
            let done = starts.len() - 1;
            let per = (starts[done] - starts[0]) / done as u32;
            let left = planned.max(k) - k + 1;
            format!(", ETA {}", clock(per * left))
        } else {
            String::new()
        };
        let extra = if k > planned { " (added)" } else { "" };
        let tail = format!(" — trial {k} of {}{extra}{eta}", planned.max(k));
        let warm = if label.ends_with("(warm-up)") { " (warm-up)" } else { "" };
        let room = 80usize.saturating_sub(tail.chars().count() + warm.len() + 3);
        let msg = format!("{}{warm}{tail}", fit(&self.what, room));
        let mut g = self.bar.lock().unwrap();
        let bar = g.get_or_insert_with(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap());
            b.enable_steady_tick(Duration::from_millis(120));
            b
        });
        bar.set_message(msg);
    }

    fn done(&self, _ended: Ended) {
        if let Some(b) = self.bar.lock().unwrap().take() {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fit_in_80_columns() {
        assert_eq!(clock(Duration::from_secs(75)), "1:15");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
        let s = fit(&"x".repeat(100), 10);
        assert_eq!(s.chars().count(), 10);
        assert!(s.ends_with('…'));
        assert_eq!(fit("short", 10), "short");
    }

    #[test]
    fn the_end_line_says_how_the_test_ended() {
        let t = Duration::from_millis(700);
        assert_eq!(end_line(Ended::Completed, 3, t), "finished: 3 trial(s) in 0.7 s");
        assert_eq!(end_line(Ended::Failed, 1, t), "failed after 1 trial(s) in 0.7 s");
        assert_eq!(end_line(Ended::Interrupted, 1, t), "interrupted after 0.7 s: nothing of this test is saved");
    }
}
