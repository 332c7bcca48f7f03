//! `engine install` and `engine install-deps`, and the install phase of
//! `engine benchmark` (which installs what is missing) and `engine run`
//! (which never installs and says what is missing).

use super::resolve::{Resolved, cli_presets, expand_failure, resolve};
use super::{Failure, exit};
use clap::Args;
use engine::expand::{self, Batch, Test};
use engine::home::Home;
use engine::install::packages::{self, Family, Needs};
use engine::install::{Installer, Plan, Status, download};
use engine::profile::load::LoadedProfile;
use engine::profile::resolve::Catalog;
use engine::result::Store;
use engine::runner::interrupt;
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::io::IsTerminal;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct InstallArgs {
    /// Profiles or suites to install (`tiobench`, `suite/disk`, a saved result)
    #[arg(required = true, value_name = "REF")]
    pub refs: Vec<String>,
    /// Reinstall even when the install is current
    #[arg(long)]
    pub force: bool,
    /// Which entries the install is for, as in `engine benchmark`: `--option source=debian`
    #[arg(long = "option", short = 'o', value_name = "KEY=A,B")]
    pub options: Vec<String>,
}

#[derive(Args, Debug)]
pub struct InstallDepsArgs {
    /// Profiles or suites whose system packages to install (`suite/disk`)
    #[arg(required = true, value_name = "REF")]
    pub refs: Vec<String>,
    /// Print the package manager's command instead of running it
    #[arg(long)]
    pub dry_run: bool,
    /// Which entries the packages are for: `--option source=debian`
    #[arg(long = "option", short = 'o', value_name = "KEY=A,B")]
    pub options: Vec<String>,
}

/// The tests `refs` name in batch mode (defaults, suite presets, `--option`).
pub fn batch_tests(
    refs: &[String],
    options: &[String],
    catalog: &Catalog,
    store: &Store,
) -> Result<Vec<Test>, Failure> {
    let presets = cli_presets(options)?;
    let mut tests = Vec::new();
    for r in refs {
        match resolve(r, catalog, store)? {
            Resolved::Planned(items) => {
                for item in items {
                    let mut all = item.presets.clone();
                    all.extend(
                        presets.iter().filter(|p| expand::find_option(&item.profile, &p.option).is_some()).cloned(),
                    );
                    tests.extend(
                        expand::expand(&item.profile, &all, &Batch, true)
                            .map_err(|e| expand_failure(e, exit::USAGE))?,
                    );
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
pub fn plans(home: &Home, tests: &[Test]) -> Vec<(Arc<LoadedProfile>, Plan)> {
    type Bindings = Vec<IndexMap<String, String>>;
    let mut by: IndexMap<String, (Arc<LoadedProfile>, Bindings)> = IndexMap::new();
    for t in tests {
        let e = by.entry(t.profile.reference()).or_insert_with(|| (t.profile.clone(), Vec::new()));
        e.1.push(t.bindings());
    }
    by.into_values()
        .map(|(lp, b)| {
            let plan = Plan::new(home, &lp, &b);
            (lp, plan)
        })
        .collect()
}

fn settings() -> download::Settings {
    let mut s = download::Settings::from_env();
    s.progress = std::io::stderr().is_terminal();
    s
}

fn size_of(plan: &Plan) -> u64 {
    plan.downloads.iter().filter_map(|d| d.size).sum()
}

/// The packages `plans` need, checked here.
fn package_needs(plans: &[&Plan], family: Option<Family>) -> Needs {
    let wanted: Vec<(String, packages::Package)> = plans.iter().flat_map(|p| p.packages.iter().cloned()).collect();
    packages::needs(&wanted, family)
}

fn family_name(f: Option<Family>) -> &'static str {
    f.map(Family::name).unwrap_or("this distribution (unknown family: see /etc/os-release)")
}

/// Lines saying what is missing and how to install it.
fn describe_missing(n: &Needs, family: Option<Family>, root: bool) -> Vec<String> {
    let mut out = Vec::new();
    if !n.missing.is_empty() {
        let names: Vec<String> = n.missing.iter().map(|(g, p)| format!("{g} ({})", p.join(", "))).collect();
        out.push(format!("missing packages: {}", names.join(", ")));
        if let Some(f) = family {
            out.push(format!("install them with:\n  {}", f.command_line(&n.packages(), root)));
        }
    }
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
            "no package of {} provides `{u}` ({what}): install it by hand, or map it in $ENGINE_HOME/packages.yaml",
            family_name(family)
        ));
    }
    out
}

pub fn run_install(args: InstallArgs) -> Result<i32, Failure> {
    let home = Home::from_env();
    let store = Store::new(home.results());
    let catalog = Catalog::from_env(&home.user_profiles());
    let tests = batch_tests(&args.refs, &args.options, &catalog, &store)?;
    let plans = plans(&home, &tests);
    interrupt::install().map_err(|e| Failure::new(exit::ERROR, format!("cannot install signal handlers: {e}")))?;
    // System packages first: build steps may need them.
    let family = Family::detect();
    let root = packages::is_root();
    let all: Vec<&Plan> = plans.iter().map(|(_, p)| p).collect();
    let needs = package_needs(&all, family);
    let mut code = exit::OK;
    if !needs.is_satisfied() {
        if root
            && needs.unmapped.is_empty()
            && let Some(f) = family
        {
            packages::install(f, &needs).map_err(|e| Failure::new(exit::INSTALL_FAILED, e.to_string()))?;
        } else {
            for l in describe_missing(&needs, family, root) {
                eprintln!("{l}");
            }
            code = exit::INSTALL_FAILED;
        }
    }
    let installer = Installer::new(home.clone(), settings()).map_err(|e| Failure::new(exit::ERROR, e.to_string()))?;
    let only: Vec<Plan> = plans.iter().map(|(_, p)| p.clone()).collect();
    let results = installer.install(&only, args.force);
    for (plan, r) in only.iter().zip(results) {
        match r {
            Ok(d) if !plan.has_files() => println!("{}: nothing to install", d.reference),
            Ok(d) if d.already => println!("{}: already installed ({})", d.reference, d.dir.display()),
            Ok(d) => {
                let from: Vec<String> = d.fetched.iter().map(|(f, o)| format!("{f} from {o}")).collect();
                println!("{}: installed in {:.1} s into {}", d.reference, d.seconds, d.dir.display());
                for f in from {
                    println!("  {f}");
                }
            }
            Err(engine::install::InstallError::Interrupted) => {
                eprintln!("{}: interrupted; nothing was installed", plan.reference());
                return Ok(exit::INTERRUPTED);
            }
            Err(e) => {
                eprintln!("error: {}: {e}", plan.reference());
                code = exit::INSTALL_FAILED;
            }
        }
    }
    if interrupt::requested() {
        return Ok(exit::INTERRUPTED);
    }
    Ok(code)
}

pub fn run_install_deps(args: InstallDepsArgs) -> Result<i32, Failure> {
    let home = Home::from_env();
    let store = Store::new(home.results());
    let catalog = Catalog::from_env(&home.user_profiles());
    let tests = batch_tests(&args.refs, &args.options, &catalog, &store)?;
    let plans = plans(&home, &tests);
    let family = Family::detect();
    let root = packages::is_root();
    let all: Vec<&Plan> = plans.iter().map(|(_, p)| p).collect();
    let needs = package_needs(&all, family);
    if let Some(e) = &packages::Catalog::global().overlay_error {
        eprintln!("warning: {e} (ignored)");
    }
    if needs.is_satisfied() {
        let mut names = needs.present.clone();
        names.sort();
        println!("all {} package(s) present: {}", names.len(), names.join(", "));
        return Ok(exit::OK);
    }
    if !needs.present.is_empty() {
        println!("present: {}", needs.present.join(", "));
    }
    if args.dry_run || !root || family.is_none() || !needs.unmapped.is_empty() {
        for l in describe_missing(&needs, family, root) {
            println!("{l}");
        }
        if !root && !needs.missing.is_empty() {
            println!("(engine is not root, so it did not run the command)");
        }
        return Ok(if args.dry_run && needs.unmapped.is_empty() { exit::OK } else { exit::INSTALL_FAILED });
    }
    let f = family.expect("checked above");
    packages::install(f, &needs).map_err(|e| Failure::new(exit::INSTALL_FAILED, e.to_string()))?;
    println!("installed: {}", needs.packages().join(" "));
    Ok(exit::OK)
}

/// The install phase of `engine benchmark` (`install`: may install) and
/// `engine run` (never installs). Returns, per profile id, why its tests
/// cannot run (not installed, packages missing, a failed install).
/// Profiles only optional suite items ask for are never installed here.
/// `install_args` is what `engine install` needs to install the same
/// entries (the refs and `--option`s the user gave): an install can depend
/// on a suite's presets (build-linux-kernel's `source`).
pub fn phase(
    tests: &[Test],
    optional: &HashSet<String>,
    install: bool,
    yes: bool,
    install_args: &str,
) -> HashMap<String, String> {
    let home = Home::from_env();
    let mut unmet: HashMap<String, String> = HashMap::new();
    let all = plans(&home, tests);
    let optional_only =
        |id: &str| tests.iter().filter(|t| t.profile.profile.id == id).all(|t| optional.contains(&t.key()));
    let family = Family::detect();
    let root = packages::is_root();
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut asked: Option<bool> = None;
    let mut ask = |what: &str| -> bool {
        if yes {
            return true;
        }
        if !install || !interactive {
            return false;
        }
        *asked.get_or_insert_with(|| {
            dialoguer::Confirm::new().with_prompt(format!("Install {what}?")).default(true).interact().unwrap_or(false)
        })
    };
    // Packages per profile (checked once per generic name). Programs named
    // without a generic package are left to the requirement check.
    let all: Vec<(Arc<LoadedProfile>, Plan)> = all
        .into_iter()
        .map(|(lp, mut p)| {
            let adhoc = p.adhoc.clone();
            p.packages.retain(|(n, _)| !adhoc.contains(n));
            (lp, p)
        })
        .collect();
    let mut pkg_missing: Vec<(&Plan, Needs)> = Vec::new();
    for (_, plan) in &all {
        let n = package_needs(&[plan], family);
        if !n.is_satisfied() {
            pkg_missing.push((plan, n));
        }
    }
    let wanted: Vec<&Plan> = pkg_missing.iter().filter(|(p, _)| !optional_only(&p.id)).map(|(p, _)| *p).collect();
    let needs = package_needs(&wanted, family);
    let mut packages_done = false;
    if install
        && !needs.missing.is_empty()
        && root
        && let Some(f) = family
    {
        let what = format!("system packages {}", needs.packages().join(" "));
        if ask(&what) {
            match packages::install(f, &needs) {
                Ok(()) => packages_done = true,
                Err(e) => eprintln!("error: {e}"),
            }
        }
    }
    for (plan, n) in &pkg_missing {
        let n = if packages_done { package_needs(&[plan], family) } else { n.clone() };
        if !n.is_satisfied() {
            unmet.insert(plan.id.clone(), describe_missing(&n, family, root).join("; ").replace("\n  ", " "));
        }
    }
    // Files.
    let todo: Vec<&Plan> = all
        .iter()
        .map(|(_, p)| p)
        .filter(|p| !unmet.contains_key(&p.id) && !matches!(p.status(), Status::Nothing | Status::Installed(_)))
        .collect();
    if todo.is_empty() {
        return unmet;
    }
    let names: Vec<String> = todo.iter().map(|p| p.reference()).collect();
    let bytes: u64 = todo.iter().map(|p| size_of(p)).sum();
    let what = format!(
        "{} (downloads up to {}, into {})",
        names.join(", "),
        engine::units::format_bytes_binary(bytes),
        home.installed().display()
    );
    let go: Vec<&Plan> = todo.iter().copied().filter(|p| !optional_only(&p.id)).collect();
    // The way out names what would install it: --yes does not install
    // profiles only optional suite items ask for.
    let how = |p: &Plan| {
        if !install {
            "`engine run` never installs: run `engine benchmark` or `engine install"
        } else if optional_only(&p.id) {
            "optional in this suite, so `benchmark` does not install it: run `engine install"
        } else {
            "pass --yes to install it, or run `engine install"
        }
    };
    let why = |p: &Plan| match p.status() {
        Status::Stale(s) => format!("install is out of date ({s})"),
        _ => "not installed".to_string(),
    };
    if !install || go.is_empty() || !ask(&what) {
        for p in &todo {
            unmet.insert(p.id.clone(), format!("{}: {} {install_args}`", why(p), how(p)));
        }
        return unmet;
    }
    if let Err(e) = interrupt::install() {
        eprintln!("warning: cannot install signal handlers: {e}");
    }
    let installer = match Installer::new(home.clone(), settings()) {
        Ok(i) => i,
        Err(e) => {
            for p in &go {
                unmet.insert(p.id.clone(), e.to_string());
            }
            return unmet;
        }
    };
    let plans: Vec<Plan> = go.iter().map(|p| (*p).clone()).collect();
    for (p, r) in plans.iter().zip(installer.install(&plans, false)) {
        match r {
            Ok(d) => eprintln!("installed {} in {:.1} s", d.reference, d.seconds),
            Err(e) => {
                eprintln!("error: cannot install {}: {e}", p.reference());
                unmet.insert(p.id.clone(), format!("install failed: {e}"));
            }
        }
    }
    for p in &todo {
        if optional_only(&p.id) && !go.iter().any(|g| g.id == p.id) {
            unmet.insert(p.id.clone(), format!("{}: {} {install_args}`", why(p), how(p)));
        }
    }
    unmet
}
