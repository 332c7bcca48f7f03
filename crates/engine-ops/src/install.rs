//! Installing what profiles need: `engine install` (files: verified
//! downloads and build steps, system packages first), `engine install-deps`
//! (system packages only), and the install phase of `engine benchmark`
//! (installs what is missing, asking first unless `--yes`) and `engine run`
//! (never installs; says what is missing).

use crate::{Context, Failure, exit};
use engine::catalog::reference::{self, Resolved};
use engine::events::Events;
use engine::expand::{self, Batch, Test};
use engine::install::download::ProgressSink;
use engine::install::packages::{self, Family, Needs};
use engine::install::{InstallError, Installer, Plan, Status};
use engine::model::profile::LoadedProfile;
use engine::sys::interrupt;
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Profiles and suites to install for, as `engine benchmark` would run them.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub refs: Vec<String>,
    /// `--option KEY=A,B`: which entries the install is for.
    pub options: Vec<engine::expand::Preset>,
    /// Reinstall even when the install is current.
    pub force: bool,
    /// Where downloads show their progress.
    pub progress: Option<ProgressSink>,
}

/// What the install phase of a run (`engine benchmark`, `engine run`) may
/// do: from the run's request, so that this module needs nothing of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PhaseRequest<'a> {
    /// The run's references and `--option`s, for the `engine install` it suggests.
    pub refs: &'a [String],
    pub options: &'a [engine::expand::Preset],
    /// May install (`benchmark`); `run` never does.
    pub install: bool,
    /// Installs without asking.
    pub yes: bool,
    pub progress: Option<&'a ProgressSink>,
    pub sandbox: engine::runner::sandbox::Mode,
}

/// Why a profile's tests cannot run for want of an install.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NotInstalled {
    /// System packages are missing: what and how to install them.
    Packages(String),
    /// Its files are not installed (or out of date), and this run does not install them.
    Files { why: String, how: String },
    /// The install was tried and failed.
    Failed(String),
}

impl std::fmt::Display for NotInstalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotInstalled::Packages(s) => f.write_str(s),
            NotInstalled::Files { why, how } => write!(f, "{why}: {how}"),
            NotInstalled::Failed(e) => write!(f, "install failed: {e}"),
        }
    }
}

/// The tests `refs` name in batch mode (defaults, suite presets, `--option`).
pub(crate) fn batch_tests(cx: &Context, refs: &[String], presets: &[expand::Preset]) -> Result<Vec<Test>, Failure> {
    let mut tests = Vec::new();
    for r in refs {
        match reference::resolve(r, cx.catalog(), &cx.store)?.resolved {
            Resolved::Planned(items) => {
                for item in items {
                    let mut all = item.presets.clone();
                    all.extend(
                        presets.iter().filter(|p| expand::find_option(&item.profile, &p.option).is_some()).cloned(),
                    );
                    tests.extend(expand::expand(&item.profile, &all, &Batch, true)?);
                }
            }
            Resolved::Saved { tests: t, .. } => tests.extend(t),
        }
    }
    let mut seen = HashSet::new();
    tests.retain(|t| seen.insert(t.key()));
    Ok(tests)
}

/// One plan per profile version, for the tests of it that will run.
pub(crate) fn plans(cx: &Context, tests: &[Test]) -> Vec<(Arc<LoadedProfile>, Plan)> {
    type Bindings = Vec<IndexMap<String, String>>;
    let mut by: IndexMap<String, (Arc<LoadedProfile>, Bindings)> = IndexMap::new();
    for t in tests {
        let e = by.entry(t.profile.reference()).or_insert_with(|| (t.profile.clone(), Vec::new()));
        e.1.push(t.bindings());
    }
    by.into_values()
        .map(|(lp, b)| {
            let plan = Plan::new(&cx.home, &lp, &b, cx.packages());
            (lp, plan)
        })
        .collect()
}

/// What confined builds run with, checked only when some plan has one.
fn confinement(
    cx: &Context,
    plans: &[Plan],
) -> Result<Option<engine::sys::cgroup::Layout>, engine::sys::confine::Unconfinable> {
    if plans.iter().any(|p| p.confined && !p.build.is_empty()) {
        crate::sandbox::confinement(cx).map(Some)
    } else {
        Ok(None)
    }
}

/// The packages `plans` need, checked here.
fn package_needs(plans: &[&Plan], family: Option<Family>) -> Needs {
    let wanted: Vec<(String, packages::Package)> = plans.iter().flat_map(|p| p.packages.iter().cloned()).collect();
    packages::needs(&wanted, family)
}

/// Lines saying what is missing and how to install it.
pub fn describe_missing(n: &Needs, family: Option<Family>, root: bool) -> Vec<String> {
    let mut out = Vec::new();
    if !n.missing.is_empty() {
        let names: Vec<String> = n.missing.iter().map(|(g, p)| format!("{g} ({})", p.join(", "))).collect();
        out.push(format!("missing packages: {}", names.join(", ")));
        if let Some(f) = family {
            out.push(format!("install them with:\n  {}", f.command_line(&n.packages(), root)));
        }
    }
    let family_name = family.map(Family::name).unwrap_or("this distribution (unknown family: see /etc/os-release)");
    for u in &n.unmapped {
        let what = n
            .checks
            .get(u)
            .map(|p| {
                let mut w: Vec<String> = p.check.programs.iter().map(|x| format!("program `{x}`")).collect();
                w.extend(p.check.files.iter().map(|x| format!("file {x}")));
                w.join(", ")
            })
            .unwrap_or_default();
        out.push(format!(
            "no package of {family_name} provides `{u}` ({what}): install it by hand, or map it in $ENGINE_HOME/packages.yaml"
        ));
    }
    out
}

/// What `engine install` did for one plan.
pub enum Installed {
    Nothing(String),
    Already { reference: String, dir: std::path::PathBuf },
    Done(engine::install::Done),
    Failed { reference: String, error: InstallError },
}

/// `engine install`: system packages first (build steps may need them), then files.
pub fn install(cx: &Context, req: &Request, events: &dyn Events) -> Result<(i32, Vec<Installed>), Failure> {
    let tests = batch_tests(cx, &req.refs, &req.options)?;
    let plans = plans(cx, &tests);
    interrupt::install().map_err(|e| Failure::error(format!("cannot install signal handlers: {e}")))?;
    let (family, root) = (cx.family(), engine::sys::is_root());
    let all: Vec<&Plan> = plans.iter().map(|(_, p)| p).collect();
    let needs = package_needs(&all, family);
    let mut code = exit::OK;
    if !needs.is_satisfied() {
        match family {
            Some(f) if root && needs.unmapped.is_empty() => {
                packages::install(f, &needs).map_err(|e| Failure::new(exit::INSTALL_FAILED, e.to_string()))?
            }
            _ => {
                describe_missing(&needs, family, root).iter().for_each(|l| events.message(l));
                code = exit::INSTALL_FAILED;
            }
        }
    }
    let settings =
        engine::install::download::Settings { progress: req.progress.clone(), ..cx.settings.downloads.clone() };
    let only: Vec<Plan> = plans.into_iter().map(|(_, p)| p).collect();
    let installer =
        Installer::new(cx.home.clone(), settings).map_err(Failure::error)?.with_confinement(confinement(cx, &only));
    let mut out = Vec::new();
    for (plan, r) in only.iter().zip(installer.install(&only, req.force)) {
        out.push(match r {
            Ok(_) if !plan.has_files() => Installed::Nothing(plan.reference()),
            Ok(d) if d.already => Installed::Already { reference: d.reference, dir: d.dir },
            Ok(d) => Installed::Done(d),
            Err(e @ (InstallError::Interrupted | InstallError::InterruptedLeft { .. })) => {
                events.message(&format!("{}: {e}", plan.reference()));
                return Ok((exit::INTERRUPTED, out));
            }
            Err(error) => {
                code = exit::INSTALL_FAILED;
                Installed::Failed { reference: plan.reference(), error }
            }
        });
    }
    Ok((if interrupt::requested() { exit::INTERRUPTED } else { code }, out))
}

/// What `engine install-deps` found and did.
pub struct Deps {
    pub needs: Needs,
    pub family: Option<Family>,
    pub root: bool,
    /// The packages were installed.
    pub installed: bool,
}

/// `engine install-deps`: the system packages the tests need, installed
/// when engine is root, the family is known and every name maps (and not
/// `dry_run`).
pub fn install_deps(cx: &Context, req: &Request, dry_run: bool, events: &dyn Events) -> Result<Deps, Failure> {
    let tests = batch_tests(cx, &req.refs, &req.options)?;
    let plans = plans(cx, &tests);
    let (family, root) = (cx.family(), engine::sys::is_root());
    let all: Vec<&Plan> = plans.iter().map(|(_, p)| p).collect();
    let needs = package_needs(&all, family);
    if let Some(e) = &cx.packages().overlay_error {
        events.message(&format!("warning: {e} (ignored)"));
    }
    let go = !needs.is_satisfied() && !dry_run && root && needs.unmapped.is_empty();
    let Some(f) = family.filter(|_| go) else {
        return Ok(Deps { needs, family, root, installed: false });
    };
    packages::install(f, &needs).map_err(|e| Failure::new(exit::INSTALL_FAILED, e.to_string()))?;
    Ok(Deps { needs, family, root, installed: true })
}

/// The install phase of `engine benchmark` (`req.install`: may install) and
/// `engine run` (never installs). Returns, per profile id, why its tests
/// cannot run. Profiles only optional suite items ask for are never
/// installed here.
pub(crate) fn phase(
    cx: &Context,
    tests: &[Test],
    optional: &HashSet<String>,
    req: PhaseRequest<'_>,
    events: &dyn Events,
) -> HashMap<String, NotInstalled> {
    let mut phase = Phase::new(cx, tests, optional, req, events);
    phase.packages();
    phase.files();
    phase.unmet
}

/// The install phase of one run.
struct Phase<'a> {
    cx: &'a Context,
    tests: &'a [Test],
    optional: &'a HashSet<String>,
    req: PhaseRequest<'a>,
    events: &'a dyn Events,
    plans: Vec<Plan>,
    family: Option<Family>,
    root: bool,
    /// Asked once: the answer holds for packages and files alike.
    asked: Option<bool>,
    unmet: HashMap<String, NotInstalled>,
}

impl<'a> Phase<'a> {
    fn new(
        cx: &'a Context,
        tests: &'a [Test],
        optional: &'a HashSet<String>,
        req: PhaseRequest<'a>,
        events: &'a dyn Events,
    ) -> Self {
        // Programs named without a generic package are left to the requirement check.
        use engine::runner::sandbox::Mode;
        let plans = plans(cx, tests)
            .into_iter()
            .map(|(_, mut p)| {
                let adhoc = p.adhoc.clone();
                p.packages.retain(|(n, _)| !adhoc.contains(n));
                match req.sandbox {
                    Mode::On => p.confined = true,
                    Mode::Off => p.confined = false,
                    Mode::Auto => {}
                }
                p
            })
            .collect();
        let (family, root) = (cx.family(), engine::sys::is_root());
        Phase { cx, tests, optional, req, events, plans, family, root, asked: None, unmet: HashMap::new() }
    }

    /// Whether every test of profile `id` is an optional suite item.
    fn optional_only(&self, id: &str) -> bool {
        self.tests.iter().filter(|t| t.profile.profile.id == id).all(|t| self.optional.contains(&t.key()))
    }

    /// Whether to install `what`: always with `--yes`; never for `run`;
    /// else asked once.
    fn ask(&mut self, what: &str) -> bool {
        if self.req.yes {
            return true;
        }
        if !self.req.install {
            return false;
        }
        let events = self.events;
        *self.asked.get_or_insert_with(|| events.confirm(&format!("Install {what}?")))
    }

    /// System packages per profile (checked once per generic name).
    fn packages(&mut self) {
        let family = self.family;
        let missing: Vec<(usize, Needs)> = (0..self.plans.len())
            .map(|i| (i, package_needs(&[&self.plans[i]], family)))
            .filter(|(_, n)| !n.is_satisfied())
            .collect();
        let wanted: Vec<&Plan> =
            missing.iter().map(|(i, _)| &self.plans[*i]).filter(|p| !self.optional_only(&p.id)).collect();
        let needs = package_needs(&wanted, family);
        let mut done = false;
        if self.req.install
            && !needs.missing.is_empty()
            && self.root
            && let Some(f) = family
            && self.ask(&format!("system packages {}", needs.packages().join(" ")))
        {
            match packages::install(f, &needs) {
                Ok(()) => done = true,
                Err(e) => self.events.message(&format!("error: {e}")),
            }
        }
        for (i, n) in missing {
            let plan = &self.plans[i];
            let n = if done { package_needs(&[plan], family) } else { n };
            if !n.is_satisfied() {
                let why = describe_missing(&n, family, self.root).join("; ").replace("\n  ", " ");
                self.unmet.insert(plan.id.clone(), NotInstalled::Packages(why));
            }
        }
    }

    /// What `engine install` needs to install the same entries: an install
    /// can depend on a suite's presets (build-linux-kernel's `source`).
    fn install_args(&self) -> String {
        let quote = engine::model::template::quote;
        let args: Vec<String> = self
            .req
            .refs
            .iter()
            .map(|r| quote(r))
            .chain(self.req.options.iter().map(|o| format!("--option {}", quote(&o.to_string()))))
            .collect();
        args.join(" ")
    }

    /// Why `p` is not installed, and what would install it.
    fn not_installed(&self, p: &Plan) -> NotInstalled {
        let why = match p.status() {
            Status::Stale(s) => format!("install is out of date ({s})"),
            _ => "not installed".to_string(),
        };
        // The way out names what would install it: --yes does not install
        // profiles only optional suite items ask for.
        let how = if !self.req.install {
            "`engine run` never installs: run `engine benchmark` or `engine install"
        } else if self.optional_only(&p.id) {
            "optional in this suite, so `benchmark` does not install it: run `engine install"
        } else {
            "pass --yes to install it, or run `engine install"
        };
        NotInstalled::Files { why, how: format!("{how} {}`", self.install_args()) }
    }

    /// Downloads and build steps of the profiles whose packages are there.
    fn files(&mut self) {
        let todo: Vec<usize> = (0..self.plans.len())
            .filter(|&i| {
                let p = &self.plans[i];
                !self.unmet.contains_key(&p.id) && !matches!(p.status(), Status::Nothing | Status::Installed(_))
            })
            .collect();
        if todo.is_empty() {
            return;
        }
        let go: Vec<usize> = todo.iter().copied().filter(|&i| !self.optional_only(&self.plans[i].id)).collect();
        let names: Vec<String> = todo.iter().map(|&i| self.plans[i].reference()).collect();
        let bytes: u64 = todo.iter().flat_map(|&i| self.plans[i].downloads.iter().filter_map(|d| d.size)).sum();
        let what = format!(
            "{} (downloads up to {}, into {})",
            names.join(", "),
            engine::units::format_bytes_binary(bytes),
            self.cx.home.installed().display()
        );
        if !self.req.install || go.is_empty() || !self.ask(&what) {
            for &i in &todo {
                self.unmet.insert(self.plans[i].id.clone(), self.not_installed(&self.plans[i]));
            }
            return;
        }
        self.install(&go);
        for &i in &todo {
            if !go.contains(&i) {
                self.unmet.insert(self.plans[i].id.clone(), self.not_installed(&self.plans[i]));
            }
        }
    }

    /// Installs the plans `go`.
    fn install(&mut self, go: &[usize]) {
        if let Err(e) = interrupt::install() {
            self.events.message(&format!("warning: cannot install signal handlers: {e}"));
        }
        let settings = engine::install::download::Settings {
            progress: self.req.progress.cloned(),
            ..self.cx.settings.downloads.clone()
        };
        let plans: Vec<Plan> = go.iter().map(|&i| self.plans[i].clone()).collect();
        let installer = match Installer::new(self.cx.home.clone(), settings) {
            Ok(i) => i.with_confinement(confinement(self.cx, &plans)),
            Err(e) => {
                for p in &plans {
                    self.unmet.insert(p.id.clone(), NotInstalled::Failed(e.to_string()));
                }
                return;
            }
        };
        for (p, r) in plans.iter().zip(installer.install(&plans, false)) {
            match r {
                Ok(d) => self.events.message(&format!("installed {} in {:.1} s", d.reference, d.seconds)),
                Err(e) => {
                    self.events.message(&format!("error: cannot install {}: {e}", p.reference()));
                    self.unmet.insert(p.id.clone(), NotInstalled::Failed(e.to_string()));
                }
            }
        }
    }
}
