//! `engine info REF`: what a profile offers, or what a suite runs.

use super::{Failure, exit};
use clap::Args;
use engine::catalog::reference::{Resolved, look_up};
use engine::model::profile::{LoadedProfile, Profile, Scalar};
use engine::ops::Context;
use engine::runner::requirements;
use engine::sys::text::one_line;
use indexmap::IndexMap;
use std::fmt::Write;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// A profile (`fio`), a suite (`suite/disk`), a saved result, or a path
    #[arg(value_name = "REF")]
    pub reference: String,
}

fn profile_info(cx: &Context, lp: &LoadedProfile, out: &mut String) {
    header(cx, lp, out);
    options(&lp.profile, out);
    writeln!(out, "\nResults:").unwrap();
    for r in &lp.profile.results {
        writeln!(out, "  {:12} {} {}", one_line(&r.id), one_line(&r.unit), r.proportion.phrase()).unwrap();
    }
    let t = &lp.profile.trials;
    let plan = t.plan(None, None);
    writeln!(
        out,
        "\nTrials: {} scheduled, more while the 95 % CI of the mean is wider than ±{} % and the budget of {} can reach it (at most {}){}",
        t.times,
        t.target_ci,
        engine::stats::adaptive::seconds(plan.budget),
        plan.most(),
        if t.warmup > 0 { format!(", {} warm-up", t.warmup) } else { String::new() }
    )
    .unwrap();
    requirements_of(lp, out);
    install_of(cx, &lp.profile, out);
}

/// Title, where it comes from, what it is and how it runs.
fn header(cx: &Context, lp: &LoadedProfile, out: &mut String) {
    let p = &lp.profile;
    let app = p.app_version.as_ref().map(|v| format!(" {v}")).unwrap_or_default();
    writeln!(out, "{}  ({})", one_line(&format!("{}{app}", p.title)), lp.reference()).unwrap();
    writeln!(out, "  file: {}", lp.display).unwrap();
    if let Some(r) = &lp.source {
        writeln!(out, "  repository: {} ({}, index sha256 {})", r.name, r.url, r.index_sha256).unwrap();
    }
    let hidden = cx.catalog().shadowed(&p.id);
    if !hidden.is_empty() && !lp.display.starts_with("<built-in>") {
        writeln!(out, "  shadows: {} (this file comes first on the search path)", hidden.join(", ")).unwrap();
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
    use engine::model::profile::ExecutorDef;
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
fn plugin_line(lp: &LoadedProfile, limits: &engine::model::profile::PluginLimits) -> String {
    use engine::plugin::{host, limits as l};
    let memory = limits.memory.as_ref().map(ToString::to_string).unwrap_or_else(|| engine::units::format_bytes_binary(l::DEFAULT_MEMORY));
    let time = limits.time.as_ref().map(ToString::to_string).unwrap_or_else(|| humantime::format_duration(l::DEFAULT_TIME).to_string());
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
fn requirements_of(lp: &LoadedProfile, out: &mut String) {
    let p = &lp.profile;
    writeln!(out, "\nRequirements:").unwrap();
    let missing = requirements::missing_programs(p);
    let mut progs: Vec<String> = p.requirements.programs.iter().map(|r| r.name.clone()).collect();
    for prog in p.executor.programs() {
        if !progs.contains(&prog) {
            progs.push(prog);
        }
    }
    for name in progs {
        let m = missing.iter().find(|u| matches!(u, requirements::Unmet::Program { program, .. } if *program == name));
        match m {
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
fn install_of(cx: &Context, p: &Profile, out: &mut String) {
    let Some(inst) = &p.install else { return };
    let dir = engine::install::dir_of(&cx.home.installed(), p);
    let status = if engine::install::is_installed(&cx.home.installed(), p) {
        format!("installed in {}", dir.display())
    } else {
        format!("not installed; `engine install {}`", p.id)
    };
    writeln!(out, "\nInstall ({status}):").unwrap();
    for item in &inst.packages {
        let mark = if cx.packages().get(item.name()).is_some_and(|x| x.present()) { "✓" } else { "✗" };
        writeln!(out, "  {mark} package {}{}", item.name(), item.when().map(when).unwrap_or_default()).unwrap();
    }
    for d in &inst.downloads {
        let size = d.size.map(|b| format!(", {}", engine::units::format_bytes_binary(b))).unwrap_or_default();
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
    engine::model::template::render(
        text,
        |n| {
            if engine::profile::validate::BUILTIN_VARS.contains(&n) {
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
    let Ok(names) = engine::model::template::names(text) else { return text.to_string() };
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
                && let Ok(s) = engine::model::template::render(text, |n| b.get(n).map(String::as_str), false)
            {
                shown.push(format!("{s} ({})", e.label));
            }
        }
    }
    if shown.is_empty() { text.to_string() } else { shown.join(", ") }
}

pub fn run(cx: &Context, args: InfoArgs) -> Result<i32, Failure> {
    let mut out = String::new();
    let found = look_up(&args.reference, cx.catalog(), &cx.store)?;
    for n in &found.notes {
        errln!("{n}");
    }
    match found.resolved {
        Resolved::Planned(items)
            if items.len() == 1 && items[0].presets.is_empty() && !args.reference.starts_with("suite/") =>
        {
            profile_info(cx, &items[0].profile, &mut out)
        }
        Resolved::Planned(items) => {
            let mut lines = Vec::new();
            let mut total = 0;
            for it in &items {
                let presets: Vec<String> =
                    it.presets.iter().map(|p| format!("{}={}", p.option, p.entries.join(","))).collect();
                let n = engine::expand::expand(&it.profile, &it.presets, &engine::expand::Batch, false)
                    .map(|t| t.len())
                    .unwrap_or(0);
                total += n;
                let opt = if it.optional { " (optional: runs where its tool is installed)" } else { "" };
                lines.push(format!("  {} {} → {n} test(s){opt}", it.profile.reference(), presets.join(" ")));
            }
            writeln!(out, "{}: {} profile item(s), {total} test(s) in batch mode", args.reference, items.len())
                .unwrap();
            for l in lines {
                writeln!(out, "{l}").unwrap();
            }
            // As `--dry-run` would estimate it (earlier runs here, else fixed run times).
            if let Some(Ok(e)) = engine::ops::benchmark::estimate_refs(cx, std::slice::from_ref(&args.reference)).pop()
            {
                writeln!(
                    out,
                    "time: {} (`engine benchmark {} --dry-run` lists each test)",
                    e.summary(),
                    args.reference
                )
                .unwrap();
            }
        }
        Resolved::Saved { name, tests, missing } => {
            writeln!(out, "saved result {name}: {} test(s) can be re-run", tests.len()).unwrap();
            for t in tests {
                writeln!(out, "  {}", t.label()).unwrap();
            }
            for m in missing {
                writeln!(out, "  cannot re-run: {m}").unwrap();
            }
        }
    }
    out!("{out}");
    Ok(exit::OK)
}
