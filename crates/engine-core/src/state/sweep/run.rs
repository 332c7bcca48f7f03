//! Every test under each system state asked for — one loop for a plain run
//! (one state that changes nothing) and for sweeps of file systems, I/O
//! schedulers and queue settings. Sweep states are journaled before they
//! are made and restored whatever happens. The benchmark's session runs
//! each test through [`Tests`]; this loop never sees how.

use super::{DeviceChoice, Plan, SweepError};
use crate::expand::Test;
use crate::model::result::StateRecipe;
use crate::state::filesystem::{FsSpec, FsState};
use crate::state::journal::Shared;
use crate::state::scheduler::SchedulerState;
use crate::state::switch::{Switch, SwitchError, Unchanged};
use crate::state::sysfs::{Setting, Settings};
use crate::state::{Guard, StateError, SystemState, loopdev};
use crate::sysinfo::source::Fs;
use std::path::{Path, PathBuf};

/// What the loop asks of the run it serves (the benchmark's session).
pub trait Tests {
    /// The run's error; a sweep's own failures become one.
    type Error: From<SweepError>;
    /// A set of states begins: the tunables its states set (for the Disk
    /// Notes), its identifiers in the order listed and the flags that make
    /// each again.
    fn enter_states(&mut self, highlight: Vec<String>, listed: Vec<String>, recipes: Vec<Option<StateRecipe>>);
    /// How the sweep runs its states, for the systems' notes.
    fn note_sweep(&mut self, note: String);
    /// Round `round` of `of` begins; `setups`: each round is a set-up.
    fn start_round(&mut self, round: u32, of: u32, setups: bool);
    /// The round being run, of how many.
    fn round(&self) -> (u32, u32);
    /// Runs `test` once for the states of `switch`, state `i` saved as
    /// `ids[i]`, its folder in `dir`; `at` is `(done, total)`.
    fn run(
        &mut self,
        test: &Test,
        ids: &[String],
        dir: &Path,
        at: (usize, usize),
        switch: &mut dyn Switch,
    ) -> Result<(), Self::Error>;
    /// Whether a stop was asked for.
    fn interrupted(&self) -> bool;
    /// Tells the user (a warning, a note).
    fn message(&self, text: &str);
}

/// Where the tests run: the target directory, the identifiers' prefix (a
/// sweep's default: the disk model or device) and where file systems a
/// sweep makes are mounted.
pub struct Where<'a> {
    pub target: &'a Path,
    pub prefix: Option<&'a str>,
    pub mount_root: PathBuf,
}

/// The states tests run in on one directory: each a scheduler state, or
/// `None` for the state the machine is in.
struct StateSet {
    dir: PathBuf,
    prefix: String,
    fs_label: Option<String>,
    states: Vec<Option<SchedulerState>>,
    highlight: Vec<String>,
    /// The flags that make this set's states, but the scheduler (none for
    /// the state the machine is in).
    recipe: Option<StateRecipe>,
}

impl StateSet {
    /// The identifier of each state, in the order the user listed them.
    fn identifiers(&self) -> Vec<String> {
        self.states
            .iter()
            .map(|s| {
                let label = s.as_ref().map(SystemState::label);
                super::identifier(&self.prefix, self.fs_label.as_deref(), label.as_deref())
            })
            .collect()
    }

    /// The flags that make each state again, in the order listed.
    fn recipes(&self) -> Vec<Option<StateRecipe>> {
        self.states
            .iter()
            .map(|s| {
                let scheduler = s.as_ref().map(|s| s.scheduler.to_string());
                self.recipe.clone().map(|r| StateRecipe { scheduler, ..r })
            })
            .collect()
    }
}

/// Runs `tests` in each state and counts them as `[done/total]`.
struct Loop<'s, T: Tests> {
    session: &'s mut T,
    tests: &'s [Test],
    total: usize,
    done: usize,
    shuffle: Option<super::Shuffler>,
    interleave: bool,
}

impl<T: Tests> Loop<'_, T> {
    /// Every test in every state of `set`, the states of each test in a row
    /// (in random order with `--shuffle`) so the machine's drift hits all
    /// alike — or, interleaved, each test's trials round-robin across them.
    fn run(&mut self, set: &StateSet, journal: Option<&Shared>) -> Result<(), T::Error> {
        let ids = set.identifiers();
        self.session.enter_states(set.highlight.clone(), ids.clone(), set.recipes());
        if let (true, Some(j)) = (self.interleave && set.states.len() > 1, journal) {
            return self.interleaved(set, &ids, j);
        }
        for test in self.tests {
            self.done += 1;
            let mut order: Vec<usize> = (0..set.states.len()).collect();
            if let Some(s) = &mut self.shuffle {
                s.shuffle(&mut order);
            }
            for i in order {
                let state = set.states[i].as_ref();
                let guard = match (state, journal) {
                    (Some(s), Some(j)) => Some(s.apply(j).map_err(SweepError::from)?),
                    _ => None,
                };
                self.session.run(
                    test,
                    std::slice::from_ref(&ids[i]),
                    &set.dir,
                    (self.done, self.total),
                    &mut Unchanged,
                )?;
                if let Some(g) = guard
                    && let Err(e) = g.finish()
                {
                    self.session.message(&format!("warning: could not restore the scheduler: {e}"));
                }
                if self.session.interrupted() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

impl<T: Tests> Loop<'_, T> {
    /// Each test set up once, its trials in rounds across the states of
    /// `set`: a state is applied (journaled) before each of its trials and
    /// the machine's own state restored after the test.
    fn interleaved(&mut self, set: &StateSet, ids: &[String], journal: &Shared) -> Result<(), T::Error> {
        let note = format!(
            "Trials interleaved round-robin across {} states ({}), in a new random order each round; each test set up once.",
            ids.len(),
            ids.join(", ")
        );
        self.session.message(&format!("{note} (--no-interleave runs each state in one block)"));
        self.session.note_sweep(note);
        for test in self.tests {
            self.done += 1;
            let mut switch = Rounds { states: &set.states, journal, guard: None, shuffler: super::Shuffler::new() };
            let ran = self.session.run(test, ids, &set.dir, (self.done, self.total), &mut switch);
            if let Some(g) = switch.guard.take()
                && let Err(e) = g.finish()
            {
                self.session.message(&format!("warning: could not restore the scheduler: {e}"));
            }
            ran?;
            if self.session.interrupted() {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Switches between scheduler states trial by trial: the state in force is
/// restored before the next is applied, each change journaled first.
struct Rounds<'a> {
    states: &'a [Option<SchedulerState>],
    journal: &'a Shared,
    guard: Option<Guard>,
    shuffler: super::Shuffler,
}

impl Switch for Rounds<'_> {
    fn count(&self) -> usize {
        self.states.len()
    }

    fn enter(&mut self, i: usize) -> Result<(), SwitchError> {
        if let Some(g) = self.guard.take() {
            g.finish()?;
        }
        if let Some(s) = &self.states[i] {
            self.guard = Some(s.apply(self.journal)?);
        }
        Ok(())
    }

    fn order(&mut self) -> Vec<usize> {
        let mut o: Vec<usize> = (0..self.states.len()).collect();
        self.shuffler.shuffle(&mut o);
        o
    }
}

/// Runs `tests` under every state of `plan` at `at`, changes journaled in
/// `journal` (`None` only for a plan that changes nothing) and all undone
/// before it returns.
pub fn run<T: Tests>(
    plan: &Plan,
    at: Where,
    journal: Option<&Shared>,
    session: &mut T,
    tests: &[Test],
) -> Result<(), T::Error> {
    let Where { target, prefix, mount_root } = at;
    let fs_count = plan.filesystems.len().max(1);
    // Rounds repeat the blocks in a new order each time.
    let shuffle = (plan.shuffle || plan.rounds > 1).then(super::Shuffler::new);
    let total = tests.len() * fs_count * plan.rounds as usize;
    let mut lp = Loop { session, tests, total, done: 0, shuffle, interleave: plan.interleave };
    if !plan.is_active() {
        let set = StateSet {
            dir: target.to_path_buf(),
            prefix: prefix.unwrap_or_default().to_string(),
            fs_label: None,
            states: vec![None],
            highlight: Vec::new(),
            recipe: None,
        };
        return lp.run(&set, None);
    }
    let Some(journal) = journal else {
        return Err(SweepError::Refused("a sweep changes system state: it needs the journal".into()).into());
    };
    let sweep = Sweep { plan, target, prefix, mount_root, journal };
    let mut result = Ok(());
    for round in 1..=plan.rounds {
        lp.session.start_round(round, plan.rounds, plan.setup_rounds);
        if plan.setup_rounds {
            lp.session.message(&format!("set-up {round} of {}: the file systems made afresh", plan.rounds));
        } else if plan.rounds > 1 {
            lp.session.message(&format!("round {round} of {}", plan.rounds));
        }
        result = sweep.run(&mut lp);
        if result.is_err() || lp.session.interrupted() {
            break;
        }
    }
    // Whatever happened, nothing may stay changed.
    let mut j = journal.lock().unwrap_or_else(|p| p.into_inner());
    let (_, failed) = j.undo_all();
    for f in &failed {
        lp.session.message(&format!("error: could not restore: {f}"));
    }
    if failed.is_empty() {
        j.close();
    }
    result
}

/// The device a file-system sweep makes its file systems on.
struct Device {
    /// `/dev/sdb`, `/dev/loop0`.
    path: String,
    /// The disk whose queue settings apply.
    queue: String,
    /// How identifiers name it, when not by its model or name.
    label: Option<String>,
}

/// A sweep on its way: the device, the file systems made on it, the queue
/// settings and scheduler states of each.
struct Sweep<'a> {
    plan: &'a Plan,
    target: &'a Path,
    prefix: Option<&'a str>,
    mount_root: PathBuf,
    journal: &'a Shared,
}

impl Sweep<'_> {
    fn run<T: Tests>(&self, lp: &mut Loop<T>) -> Result<(), T::Error> {
        let mut _loop_guard: Option<Guard> = None;
        let mut filesystems: Vec<&FsSpec> = self.plan.filesystems.iter().collect();
        // Round 1 keeps the order given (the first listed is the baseline);
        // later rounds take a new order each.
        if lp.session.round().0 > 1
            && let Some(s) = &mut lp.shuffle
        {
            s.shuffle(&mut filesystems);
        }
        let device: Option<Device> = match &self.plan.device {
            None => None,
            Some(DeviceChoice::Dev(s)) => {
                Some(Device { path: s.path.clone(), queue: s.queue_disk.clone(), label: None })
            }
            Some(DeviceChoice::Loop { spec, dir }) => {
                let a = loopdev::create(dir, *spec, self.journal).map_err(SweepError::from)?;
                if let Some(w) = &a.fell_back {
                    lp.session.message(&format!("warning: {w}"));
                }
                _loop_guard = Some(a.guard);
                let queue = a.device.trim_start_matches("/dev/").to_string();
                // Named by what it is, not by its number: `loop0` today is
                // `loop1` tomorrow, and identifiers must line up across runs.
                let label = Some(loopdev::label(*spec));
                Some(Device { path: a.device, queue, label })
            }
        };
        let mount_root = self.mount_root()?;
        let fs_states: Vec<Option<&FsSpec>> =
            if filesystems.is_empty() { vec![None] } else { filesystems.into_iter().map(Some).collect() };
        for fs in fs_states {
            let (fs_guard, dir) = match (fs, &device) {
                (Some(spec), Some(d)) => {
                    let mp = mount_root.join(format!("{}-{}", std::process::id(), spec.fstype));
                    let st = FsState { spec: spec.clone(), device: d.path.clone(), mount_point: mp.clone() };
                    (Some(st.apply(self.journal).map_err(SweepError::from)?), mp)
                }
                _ => (None, self.target.to_path_buf()),
            };
            self.on_dir(lp, fs, &device, dir)?;
            if let Some(g) = fs_guard
                && let Err(e) = g.finish()
            {
                lp.session.message(&format!("warning: {e}"));
            }
            if lp.session.interrupted() {
                break;
            }
        }
        Ok(())
    }

    /// Mount points are compared with mountinfo, which shows canonical paths:
    /// a relative or symlinked ENGINE_HOME must not make apply and undo disagree.
    fn mount_root(&self) -> Result<PathBuf, SweepError> {
        if self.plan.filesystems.is_empty() {
            return Ok(self.mount_root.clone());
        }
        std::fs::create_dir_all(&self.mount_root)
            .and_then(|_| std::fs::canonicalize(&self.mount_root))
            .map_err(|e| SweepError::Refused(format!("cannot use {}: {e}", self.mount_root.display())))
    }

    /// The queues under `dir` (or of the device) and how identifiers name them.
    fn queues(&self, device: &Option<Device>, dir: &Path) -> Result<(Vec<String>, String), SweepError> {
        Ok(match device {
            Some(Device { label: Some(l), queue, .. }) => (vec![format!("/sys/block/{queue}/queue")], l.clone()),
            Some(Device { path: dev, queue: qd, .. }) => {
                let model = crate::sysinfo::device::describe(&Fs::live(), qd).ok().and_then(|(d, _)| d.model);
                (
                    vec![format!("/sys/block/{qd}/queue")],
                    model.unwrap_or_else(|| dev.trim_start_matches("/dev/").to_string()),
                )
            }
            None => super::queues_of(dir)?,
        })
    }

    /// The queue settings and scheduler states on one directory, and the tests in each.
    fn on_dir<T: Tests>(
        &self,
        lp: &mut Loop<T>,
        fs: Option<&FsSpec>,
        device: &Option<Device>,
        dir: PathBuf,
    ) -> Result<(), T::Error> {
        let plan = self.plan;
        let keep = plan.schedulers == super::Schedulers::Keep && plan.settings.is_empty();
        let (queues, label) =
            if device.is_none() && keep { (Vec::new(), String::new()) } else { self.queues(device, &dir)? };
        let prefix = self.prefix.map(str::to_string).unwrap_or(label);
        let scheds = super::scheduler_states(&plan.schedulers, &queues)?;
        let (iosched, queue_settings): (Vec<Setting>, Vec<Setting>) =
            plan.settings.iter().cloned().partition(Setting::is_iosched);
        let j = self.journal;
        let _set_guard =
            Settings { queues: queues.clone(), settings: queue_settings }.apply(j).map_err(SweepError::from)?;
        // Settings of the scheduler in force when no scheduler is swept.
        let _io_guard = if scheds.is_empty() && !iosched.is_empty() {
            Some(Settings { queues: queues.clone(), settings: iosched.clone() }.apply(j).map_err(SweepError::from)?)
        } else {
            None
        };
        let states: Vec<SchedulerState> = scheds
            .into_iter()
            .map(|s| SchedulerState { scheduler: s, queues: queues.clone(), iosched: iosched.clone() })
            .collect();
        // Try every state once before any test, so a bad tunable stops the run here.
        for s in &states {
            s.apply(j)
                .map_err(SweepError::from)?
                .finish()
                .map_err(|e| SweepError::State(StateError::Apply(e.to_string())))?;
        }
        // Every tunable any state sets, so `BFQ low_latency=1` and `BFQ low_latency=0` read side by side.
        let mut highlight: Vec<String> =
            states.iter().flat_map(|s| s.scheduler.tunables.iter().map(|(k, _)| k.clone())).collect();
        highlight.extend(iosched.iter().map(|s| s.attr.trim_start_matches("iosched/").to_string()));
        highlight.sort();
        highlight.dedup();
        let states = if states.is_empty() { vec![None] } else { states.into_iter().map(Some).collect() };
        let recipe = StateRecipe {
            device: plan.device.as_ref().map(|d| match d {
                DeviceChoice::Dev(s) => s.path.clone(),
                DeviceChoice::Loop { spec, .. } => super::DeviceSpec::Loop(*spec).to_string(),
            }),
            filesystem: fs.map(ToString::to_string),
            scheduler: None,
            settings: plan.settings.iter().map(ToString::to_string).collect(),
            prefix: self.prefix.map(str::to_string),
        };
        let set = StateSet { dir, prefix, fs_label: fs.map(FsSpec::label), states, highlight, recipe: Some(recipe) };
        lp.run(&set, Some(j))
    }
}
