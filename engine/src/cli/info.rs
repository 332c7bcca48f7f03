//! `engine info REF`: what a profile offers, or what a suite runs.

use super::{Failure, exit};
use clap::Args;
use engine_model::model::profile::{LoadedProfile, Profile, Scalar};
use engine_ops::Context;
use engine_ops::info::{Info, InstallInfo, ProfileInfo, SuiteInfo};
use engine_sys::text::one_line;
use indexmap::IndexMap;
use std::fmt::Write;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// A profile (`fio`), a suite (`suite/disk`), a saved result, or a path
    #[arg(value_name = "REF")]
    pub reference: String,
}

fn profile_info(info: &ProfileInfo, out: &mut String) {
    let lp = &info.profile;
    header(info, out);
    options(&lp.profile, out);
    writeln!(out, "\nResults:").unwrap();
    for r in &lp.profile.results {
        writeln!(out, "  {:12} {} {}", one_line(&r.id), one_line(&r.unit), r.proportion.phrase()).unwrap();
    }
    let (t, plan) = (&lp.profile.trials, &info.plan);
    writeln!(
        out,
        "\nTrials: {} scheduled, more while the 95 % CI of the mean is wider than ±{} % and the budget of {} can reach it (at most {}){}",
        t.times,
        t.target_ci,
        engine_model::stats::adaptive::seconds(plan.budget),
        plan.most(),
        if t.warmup > 0 { format!(", {} warm-up", t.warmup) } else { String::new() }
    )
    .unwrap();
    requirements_of(info, out);
    if let (Some(inst), Some(state)) = (&lp.profile.install, &info.install) {
        install_of(inst, state, out);
    }
}

/// Title, where it comes from, what it is and how it runs.
fn header(info: &ProfileInfo, out: &mut String) {
    let (lp, p) = (&info.profile, &info.profile.profile);
    let app = p.app_version.as_ref().map(|v| format!(" {v}")).unwrap_or_default();
    writeln!(out, "{}  ({})", one_line(&format!("{}{app}", p.title)), lp.reference()).unwrap();
    writeln!(out, "  file: {}", lp.display).unwrap();
    if let Some(r) = &lp.source {
        writeln!(out, "  repository: {} ({}, index sha256 {})", r.name, r.url, r.index_sha256).unwrap();
    }
    if !info.shadows.is_empty() {
        writeln!(out, "  shadows: {} (this file comes first on the search path)", info.shadows.join(", ")).unwrap();
    }
    if !p.description.is_empty() {
        writeln!(out, "  {}", p.description.trim()).unwrap();
    }
    writeln!(out, "  type: {:?}", p.test_type).unwrap();
    if let Some(u) = &p.project_url {
        writeln!(out, "  project: {u}").unwrap();
    }
    if let Some(l) = &p.license {
        writeln!(out, "  license: {l}").unwrap();
    }
    writeln!(out, "  runs ({}): {}", p.executor.kind(), fill_known(&p.executor.describe(), lp)).unwrap();
    writeln!(out, "  sandbox: {}", sandbox_line(lp)).unwrap();
}

/// Whether it runs confined by default, and what it declares beyond the sandbox.
fn sandbox_line(lp: &LoadedProfile) -> String {
    use engine_model::model::profile::ExecutorDef;
    if let ExecutorDef::Wasm(w) = &lp.profile.executor {
        return plugin_line(lp, &w.limits);
    }
    if !matches!(lp.profile.executor, ExecutorDef::External(_)) {
        return "not needed (engine's own code)".into();
    }
    let why = match (&lp.source, lp.confined_by_default()) {
        (Some(_), _) => "confined (from a repository; --no-sandbox to run it unconfined)",
        (None, true) if lp.shared() => "confined (imported from PTS; --no-sandbox to run it unconfined)",
        (None, true) => "confined (the profile asks; --no-sandbox to run it unconfined)",
        (None, false) => "unconfined (a local or built-in profile; --sandbox to confine it)",
    };
    let extra: String =
        lp.profile.sandbox.as_ref().map(|s| s.extras().iter().map(|e| format!("; {e}")).collect()).unwrap_or_default();
    format!("{why}{extra}")
}

/// What a WASM plugin may use: wasmtime's sandbox, and per call its memory
/// (all memories and tables together), time, output and open files.
fn plugin_line(lp: &LoadedProfile, limits: &engine_model::model::profile::PluginLimits) -> String {
    use engine_ops::vocab::plugin::{host, limits as l};
    let memory = limits
        .memory
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| engine_model::units::format_bytes_binary(l::DEFAULT_MEMORY));
    let time = limits
        .time
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| humantime::format_duration(l::DEFAULT_TIME).to_string());
    let whose = if lp.shared() { ", at most the defaults unless --grant gives more" } else { "" };
    format!(
        "a WASM plugin in wasmtime: its scratch directory only, no network; per call {} of memory (all its memories and tables), {} of time, {} MiB of output, {} open files{whose}",
        one_line(&memory),
        one_line(&time),
        host::OUTPUT_CAP >> 20,
        host::MAX_RESOURCES,
    )
}

/// Each option's entries and the values they set; `*` marks what batch mode runs.
fn options(p: &Profile, out: &mut String) {
    writeln!(out, "\nOptions:").unwrap();
    if p.options.is_empty() {
        writeln!(out, "  (none)").unwrap();
    }
    for o in &p.options {
        writeln!(out, "  {} ({}):", one_line(&o.name), one_line(&o.id)).unwrap();
        for e in &o.entries {
            let mut vals: Vec<String> = Vec::new();
            if let Some(v) = &e.value {
                vals.push(format!("{}={v}", o.id));
            }
            vals.extend(e.values.iter().map(|(k, v)| format!("{k}={v}")));
            let default = if o.default.is_empty() || o.default.iter().any(|d| d.eq_ignore_ascii_case(&e.label)) {
                "*"
            } else {
                " "
            };
            writeln!(out, "   {default} {:24} {}", one_line(&e.label), one_line(&vals.join(" "))).unwrap();
        }
    }
    writeln!(out, "  (* = runs in batch mode)").unwrap();
}

/// The programs it needs (✓ found, ✗ missing), root, free space.
fn requirements_of(info: &ProfileInfo, out: &mut String) {
    let (lp, p) = (&info.profile, &info.profile.profile);
    writeln!(out, "\nRequirements:").unwrap();
    for (name, unmet) in &info.programs {
        match unmet {
            Some(u) => writeln!(out, "  ✗ {u}").unwrap(),
            None => writeln!(out, "  ✓ {name}").unwrap(),
        }
    }
    if p.requirements.root {
        writeln!(out, "  root: yes").unwrap();
    }
    if let Some(s) = &p.requirements.free_space {
        writeln!(out, "  free space: {}", fill_per_entry(s, lp)).unwrap();
    }
}

/// ` (when a=1, b=2)`.
fn when(w: &IndexMap<String, Scalar>) -> String {
    if w.is_empty() {
        return String::new();
    }
    let c: Vec<String> = w.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(" (when {})", c.join(", "))
}

/// What its install section installs, and whether it is installed.
fn install_of(inst: &engine_model::model::profile::Install, state: &InstallInfo, out: &mut String) {
    let status = if state.installed {
        format!("installed in {}", state.dir.display())
    } else {
        format!("not installed; `engine install {}`", state.id)
    };
    writeln!(out, "\nInstall ({status}):").unwrap();
    for (item, present) in inst.packages.iter().zip(&state.packages_present) {
        let mark = if *present { "✓" } else { "✗" };
        writeln!(out, "  {mark} package {}{}", item.name(), item.when().map(when).unwrap_or_default()).unwrap();
    }
    for d in &inst.downloads {
        let size = d.size.map(|b| format!(", {}", engine_model::units::format_bytes_binary(b))).unwrap_or_default();
        let pl = d.platform.as_ref().map(|x| format!(", platform {x}")).unwrap_or_default();
        writeln!(out, "  download {} ({} mirror(s){size}{pl}){}", d.file, d.urls.len(), when(&d.when)).unwrap();
    }
    for b in &inst.build {
        let cmd = b.shell.clone().or(b.program.clone()).unwrap_or_default();
        writeln!(out, "  build: {cmd}{}", when(&b.when)).unwrap();
    }
}

/// A text with `{{name}}` placeholders as the user will see it: built-ins
/// named in angle brackets, option values listed per entry when they vary.
fn fill_known(text: &str, lp: &LoadedProfile) -> String {
    let p = &lp.profile;
    engine_model::model::template::render(
        text,
        |n| {
            if engine_ops::vocab::profile::validate::BUILTIN_VARS.contains(&n) {
                return None;
            }
            let vals: Vec<&str> = values_of(p, n);
            (vals.len() == 1).then(|| vals[0])
        },
        false,
    )
    .unwrap_or_else(|_| text.to_string())
}

/// The named value `n` of every entry that sets it, deduplicated.
fn values_of<'a>(p: &'a Profile, n: &str) -> Vec<&'a str> {
    let mut vals: Vec<&str> = Vec::new();
    for o in &p.options {
        for e in &o.entries {
            let v = if o.id == n { e.value.as_ref().map(|v| v.as_str()) } else { None };
            if let Some(v) = v.or_else(|| e.values.get(n).map(|v| v.as_str()))
                && !vals.contains(&v)
            {
                vals.push(v);
            }
        }
    }
    vals
}

/// `{{space}}` in a requirement, shown as each entry's value: `120MB (100 Files, 1MB Size), 1100MB (…)`.
fn fill_per_entry(text: &str, lp: &LoadedProfile) -> String {
    let p = &lp.profile;
    let Ok(names) = engine_model::model::template::names(text) else { return text.to_string() };
    if names.is_empty() {
        return text.to_string();
    }
    let mut shown: Vec<String> = Vec::new();
    for o in &p.options {
        for e in &o.entries {
            let mut b = std::collections::HashMap::new();
            if let Some(v) = &e.value {
                b.insert(o.id.clone(), v.0.clone());
            }
            for (k, v) in &e.values {
                b.insert(k.clone(), v.0.clone());
            }
            if names.iter().all(|n| b.contains_key(*n))
                && let Ok(s) = engine_model::model::template::render(text, |n| b.get(n).map(String::as_str), false)
            {
                shown.push(format!("{s} ({})", e.label));
            }
        }
    }
    if shown.is_empty() { text.to_string() } else { shown.join(", ") }
}

pub fn run(cx: &Context, args: InfoArgs) -> Result<i32, Failure> {
    let mut out = String::new();
    let about = engine_ops::info::info(cx, &args.reference)?;
    for n in &about.notes {
        errln!("{n}");
    }
    match &about.info {
        Info::Profile(info) => profile_info(info, &mut out),
        Info::Suite(suite) => suite_info(&args.reference, suite, &mut out),
        Info::Saved { name, tests, missing } => {
            writeln!(out, "saved result {name}: {} test(s) can be re-run", tests.len()).unwrap();
            for t in tests {
                writeln!(out, "  {t}").unwrap();
            }
            for m in missing {
                writeln!(out, "  cannot re-run: {m}").unwrap();
            }
        }
    }
    out!("{out}");
    Ok(exit::OK)
}

fn suite_info(reference: &str, s: &SuiteInfo, out: &mut String) {
    writeln!(out, "{reference}: {} profile item(s), {} test(s) in batch mode", s.items.len(), s.tests).unwrap();
    for it in &s.items {
        let opt = if it.optional { " (optional: runs where its tool is installed)" } else { "" };
        writeln!(out, "  {} {} → {} test(s){opt}", it.reference, it.presets.join(" "), it.tests).unwrap();
    }
    if let Some(e) = &s.estimate {
        writeln!(out, "time: {} (`engine benchmark {reference} --dry-run` lists each test)", e.summary()).unwrap();
    }
}
