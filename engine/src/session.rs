//! One `engine benchmark` run: runs tests for identifiers (system states),
//! records each finished test in the result file at once (atomically), and
//! keeps count of what failed. The sweep drives it once per state.

use crate::expand::Test;
use crate::result::{FailedTest, ResultFile, Store, StoreError, System};
use crate::runner::{self, Outcome, Progress, RunSettings, interrupt};
use crate::state::hygiene::{self, Hygiene};
use std::collections::HashMap;
use std::path::Path;

/// How a session talks to the person running it.
pub trait Ui {
    /// The progress display of one test (`prefix` is `[3/12]`).
    fn progress(&self, prefix: &str, label: &str, identifier: &str) -> Box<dyn Progress>;
    /// The progress display of `test`: what [`Ui::progress`] shows, for
    /// displays that want the test itself (its identity), not only its label.
    fn test_progress(&self, prefix: &str, test: &Test, identifier: &str) -> Box<dyn Progress> {
        self.progress(prefix, &test.label(), identifier)
    }
    /// The system an identifier runs on was captured (before its first test).
    fn captured(&self, _system: &System) {}
    /// A test finished: `file` holds its results (under `test` for `identifier`).
    fn finished(&self, _file: &ResultFile, _test: &str, _identifier: &str) {}
    /// A line for the person running it (failures, skips, warnings).
    fn message(&self, msg: &str);
    /// A test failed for an identifier (after [`Ui::message`] said so).
    fn test_failed(&self, _failed: &FailedTest) {}
}

pub struct Session<'a> {
    store: &'a Store,
    pub name: String,
    pub file: ResultFile,
    settings: RunSettings,
    hygiene: Hygiene,
    /// Environment variables the tests declare relevant.
    env: Vec<String>,
    ui: &'a dyn Ui,
    pub saved: usize,
    /// Tests that failed in this run.
    pub failed: Vec<FailedTest>,
    pub interrupted: bool,
    captured: HashMap<String, System>,
    /// Scheduler tunables the current state set (shown in the Disk Notes).
    pub highlight: Vec<String>,
}

/// A name fit for a folder: lower case, `-` for runs of other characters,
/// at most 60 characters.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches(['-', '.']).chars().take(60).collect()
}

/// A folder name for `s` that no other string shares: the slug, and a hash
/// of the whole string when the slug lost anything (case, punctuation, length).
pub fn unique_slug(s: &str) -> String {
    let base = slug(s);
    if base == s { base } else { format!("{base}-{}", short_hash(s)) }
}

/// FNV-1a, for short stable folder names.
fn short_hash(s: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{:08x}", h as u32)
}

impl<'a> Session<'a> {
    pub fn new(
        store: &'a Store,
        name: String,
        file: ResultFile,
        settings: RunSettings,
        hygiene: Hygiene,
        env: Vec<String>,
        ui: &'a dyn Ui,
    ) -> Self {
        Session {
            store,
            name,
            file,
            settings,
            hygiene,
            env,
            ui,
            saved: 0,
            failed: Vec::new(),
            interrupted: false,
            captured: HashMap::new(),
            highlight: Vec::new(),
        }
    }

    /// Whether `identifier` already has results for `test` (a resumed run skips it).
    pub fn done(&self, test: &Test, identifier: &str) -> bool {
        self.file.has_any(&test.key(), identifier)
    }

    /// Runs `test` for `identifier` with its scratch directory in `target`.
    /// The system is captured (after the caller applied its state) the first
    /// time the identifier needs it.
    pub fn run(&mut self, test: &Test, identifier: &str, target: &Path, prefix: &str) -> Result<(), StoreError> {
        if interrupt::requested() {
            self.interrupted = true;
            return Ok(());
        }
        if self.done(test, identifier) {
            return Ok(());
        }
        let own = &test.profile.profile.hygiene;
        let settle = own.settle.as_deref().and_then(|s| crate::units::parse_duration(s).ok());
        if let Some(d) = self.hygiene.settle.max(settle) {
            std::thread::sleep(d);
        }
        if (self.hygiene.fstrim || own.fstrim)
            && let Err(e) = hygiene::fstrim(target)
        {
            self.ui.message(&format!("warning: {e}"));
        }
        if !self.captured.contains_key(identifier) && self.file.system(identifier).is_none() {
            let s = crate::sysinfo::capture(identifier, target, &self.env, &self.highlight);
            self.ui.captured(&s);
            self.captured.insert(identifier.to_string(), s);
        }
        let rel =
            format!("logs/{}/{}-{}", unique_slug(identifier), slug(&test.profile.profile.id), short_hash(&test.key()));
        let logs = self.store.dir(&self.name).join(&rel);
        let settings = RunSettings { target_dir: target.to_path_buf(), ..self.settings.clone() };
        let progress = self.ui.test_progress(prefix, test, identifier);
        match runner::run_test(test, &settings, &logs, &rel, progress.as_ref()) {
            Outcome::Completed(results) => {
                if self.file.system(identifier).is_none()
                    && let Some(s) = self.captured.get(identifier)
                {
                    self.file.systems.push(s.clone());
                }
                for (template, mut entry) in results {
                    entry.identifier = identifier.to_string();
                    self.file.upsert(&template, entry);
                }
                if let Some(s) = self.file.systems.iter_mut().find(|s| s.identifier == identifier) {
                    s.finished = Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string());
                }
                self.store.save(&self.name, &self.file)?;
                self.saved += 1;
                self.ui.finished(&self.file, &test.key(), identifier);
            }
            Outcome::Failed(f) => {
                self.ui.message(&format!("failed {} ({identifier}): {}", test.label(), f.reason));
                let dir = self.store.dir(&self.name);
                let failed = FailedTest {
                    test: test.key(),
                    profile: test.profile.profile.id.clone(),
                    title: test.profile.profile.title.clone(),
                    description: test.description(),
                    identifier: identifier.to_string(),
                    status: "failed".into(),
                    reason: f.reason,
                    log: f.log.map(|l| {
                        l.strip_prefix(&dir)
                            .map(|r| r.display().to_string())
                            .unwrap_or_else(|_| l.display().to_string())
                    }),
                    stderr_tail: f.stderr_tail,
                    timestamp: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
                };
                self.file.record_failure(failed.clone());
                self.store.save(&self.name, &self.file)?;
                self.ui.test_failed(&failed);
                self.failed.push(failed);
            }
            Outcome::Interrupted => self.interrupted = true,
        }
        Ok(())
    }
}
