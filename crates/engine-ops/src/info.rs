//! `engine info REF`: what a profile offers (and what of it this machine
//! has), what a suite runs, or what a saved result can re-run. The CLI
//! prints what this returns.

use crate::benchmark::Estimate;
use crate::{Context, Failure};
use engine::catalog::reference::{Resolved, look_up};
use engine::model::profile::LoadedProfile;
use engine::runner::requirements::{self, Unmet};
use engine::stats::AdaptivePlan;
use std::path::PathBuf;
use std::sync::Arc;

/// What `engine info` found, and what the person asking should know.
pub struct About {
    pub notes: Vec<String>,
    pub info: Info,
}

pub enum Info {
    Profile(Box<ProfileInfo>),
    Suite(SuiteInfo),
    Saved { name: String, tests: Vec<String>, missing: Vec<String> },
}

/// One profile and this machine's side of it.
pub struct ProfileInfo {
    pub profile: Arc<LoadedProfile>,
    /// Profiles of the same id this one hides (it comes first on the search path).
    pub shadows: Vec<String>,
    /// Its stopping rule with no flags.
    pub plan: AdaptivePlan,
    /// Each program it needs, with what is missing about it.
    pub programs: Vec<(String, Option<Unmet>)>,
    pub install: Option<InstallInfo>,
}

/// Whether its install section is installed, and which of its packages are present.
pub struct InstallInfo {
    /// The profile's id, which `engine install` takes.
    pub id: String,
    pub dir: PathBuf,
    pub installed: bool,
    /// One per `install.packages` entry, in order.
    pub packages_present: Vec<bool>,
}

/// A suite (or a profile with presets): its items and their tests in batch mode.
pub struct SuiteInfo {
    pub items: Vec<SuiteItemInfo>,
    pub tests: usize,
    /// As `--dry-run` would estimate it (earlier runs here, else fixed run times).
    pub estimate: Option<Estimate>,
}

pub struct SuiteItemInfo {
    pub reference: String,
    /// `option=entry,entry`.
    pub presets: Vec<String>,
    pub tests: usize,
    pub optional: bool,
}

pub fn info(cx: &Context, reference: &str) -> Result<About, Failure> {
    let found = look_up(reference, cx.catalog(), &cx.store)?;
    let info = match found.resolved {
        Resolved::Planned(mut items)
            if items.len() == 1 && items[0].presets.is_empty() && !reference.starts_with("suite/") =>
        {
            Info::Profile(Box::new(profile_info(cx, items.remove(0).profile)))
        }
        Resolved::Planned(items) => {
            let items: Vec<SuiteItemInfo> = items
                .iter()
                .map(|it| SuiteItemInfo {
                    reference: it.profile.reference(),
                    presets: it.presets.iter().map(|p| format!("{}={}", p.option, p.entries.join(","))).collect(),
                    tests: engine::expand::expand(&it.profile, &it.presets, &engine::expand::Batch, false)
                        .map(|t| t.len())
                        .unwrap_or(0),
                    optional: it.optional,
                })
                .collect();
            let estimate = crate::benchmark::estimate_refs(cx, &[reference.to_string()]).pop().and_then(Result::ok);
            Info::Suite(SuiteInfo { tests: items.iter().map(|i| i.tests).sum(), items, estimate })
        }
        Resolved::Saved { name, tests, missing } => {
            Info::Saved { name, tests: tests.iter().map(|t| t.label()).collect(), missing }
        }
    };
    Ok(About { notes: found.notes, info })
}

fn profile_info(cx: &Context, lp: Arc<LoadedProfile>) -> ProfileInfo {
    let p = &lp.profile;
    let shadows = if lp.display.starts_with("<built-in>") { Vec::new() } else { cx.catalog().shadowed(&p.id) };
    let missing = requirements::missing_programs(p);
    let mut names: Vec<String> = p.requirements.programs.iter().map(|r| r.name.clone()).collect();
    for prog in p.executor.programs() {
        if !names.contains(&prog) {
            names.push(prog);
        }
    }
    let programs = names
        .into_iter()
        .map(|name| {
            let unmet =
                missing.iter().find(|u| matches!(u, Unmet::Program { program, .. } if *program == name)).cloned();
            (name, unmet)
        })
        .collect();
    let install = p.install.as_ref().map(|inst| InstallInfo {
        id: p.id.clone(),
        dir: engine::install::dir_of(&cx.home.installed(), p),
        installed: engine::install::is_installed(&cx.home.installed(), p),
        packages_present: inst
            .packages
            .iter()
            .map(|item| cx.packages().get(item.name()).is_some_and(|x| x.present()))
            .collect(),
    });
    ProfileInfo { plan: p.trials.plan(None, None), shadows, programs, install, profile: lp }
}

/// What `p` still needs before it can run here, as `engine list profiles`
/// shows it: `install` when what it builds or downloads is not there yet,
/// then each missing program (or other unmet requirement).
pub fn lacks(cx: &Context, p: &engine::model::profile::Profile) -> Vec<String> {
    let mut missing: Vec<String> = requirements::missing_programs(p)
        .into_iter()
        .map(|u| match u {
            Unmet::Program { program, .. } => program,
            other => other.to_string(),
        })
        .collect();
    if !engine::install::is_installed(&cx.home.installed(), p) {
        missing.insert(0, "install".to_string());
    }
    missing
}

/// What `engine system-info` shows: the capture results would record of
/// this machine (or of a captured tree at `root`), for `target_dir` (its
/// nearest existing parent: the default target may not exist yet), and how
/// long each part of the capture took.
pub struct SystemView {
    pub info: engine::model::system::SystemInfo,
    pub timings: Vec<(&'static str, std::time::Duration)>,
    pub total: std::time::Duration,
}

pub fn system(cx: &Context, target_dir: Option<PathBuf>, root: Option<&std::path::Path>) -> SystemView {
    use engine::sysinfo::source::Fs;
    let mut probe = target_dir.unwrap_or_else(|| cx.home.default_target_dir());
    if root.is_none() {
        while !probe.exists() && probe.pop() {}
    }
    let src = match root {
        Some(r) => Fs::at(r),
        None => Fs::live(),
    };
    let t0 = std::time::Instant::now();
    let (info, timings) = engine::sysinfo::collect(&src, Some(&probe), &[], &cx.settings.environ);
    SystemView { info, timings, total: t0.elapsed() }
}

impl SystemView {
    /// The "Hardware" and "Software" tables.
    pub fn sections(&self) -> [(&'static str, indexmap::IndexMap<String, String>); 2] {
        [
            ("Hardware", engine::sysinfo::render::hardware(&self.info)),
            ("Software", engine::sysinfo::render::software(&self.info)),
        ]
    }

    /// What a reader of the numbers should know of this system.
    pub fn notes(&self) -> indexmap::IndexMap<String, String> {
        engine::sysinfo::render::notes(&self.info)
    }
}
