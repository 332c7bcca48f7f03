//! `engine info REF`: what a profile offers, or what a suite runs.

use super::resolve::{Resolved, resolve};
use super::{Failure, exit};
use clap::Args;
use engine::home::Home;
use engine::profile::LoadedProfile;
use engine::profile::model::Executor;
use engine::profile::resolve::Catalog;
use engine::result::Store;
use engine::runner::requirements;
use std::fmt::Write;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// A profile (`fio`), a suite (`suite/disk`), a saved result, or a path
    #[arg(value_name = "REF")]
    pub reference: String,
}

fn profile_info(lp: &LoadedProfile, out: &mut String) {
    let p = &lp.profile;
    let app = p.app_version.as_ref().map(|v| format!(" {v}")).unwrap_or_default();
    writeln!(out, "{}{app}  ({})", p.title, lp.reference()).unwrap();
    writeln!(out, "  file: {}", lp.display).unwrap();
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
    let Executor::External(x) = &p.executor;
    writeln!(out, "  runs: {} {}", x.program, x.args.join(" ")).unwrap();
    writeln!(out, "\nOptions:").unwrap();
    if p.options.is_empty() {
        writeln!(out, "  (none)").unwrap();
    }
    for o in &p.options {
        writeln!(out, "  {} ({}):", o.name, o.id).unwrap();
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
            writeln!(out, "   {default} {:24} {}", e.label, vals.join(" ")).unwrap();
        }
    }
    writeln!(out, "  (* = runs in batch mode)").unwrap();
    writeln!(out, "\nResults:").unwrap();
    for r in &p.results {
        writeln!(out, "  {:12} {} {}", r.id, r.unit, r.proportion.phrase()).unwrap();
    }
    let t = &p.trials;
    writeln!(
        out,
        "\nTrials: {} scheduled, up to {} while the 95 % CI of the mean is wider than ±{} %{}",
        t.times,
        t.max.unwrap_or(t.times * 4),
        t.target_ci,
        if t.warmup > 0 { format!(", {} warm-up", t.warmup) } else { String::new() }
    )
    .unwrap();
    writeln!(out, "\nRequirements:").unwrap();
    let missing = requirements::missing_programs(p);
    let mut progs: Vec<String> = p.requirements.programs.iter().map(|r| r.name.clone()).collect();
    if !progs.contains(&x.program) && !x.program.contains('/') && !x.program.contains("{{") {
        progs.push(x.program.clone());
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
        writeln!(out, "  free space: {s}").unwrap();
    }
}

pub fn run(args: InfoArgs) -> Result<i32, Failure> {
    let home = Home::from_env();
    let catalog = Catalog::from_env(&home.user_profiles());
    let store = Store::new(home.results());
    let mut out = String::new();
    match resolve(&args.reference, &catalog, &store)? {
        Resolved::Planned(items)
            if items.len() == 1 && items[0].presets.is_empty() && !args.reference.starts_with("suite/") =>
        {
            profile_info(&items[0].profile, &mut out)
        }
        Resolved::Planned(items) => {
            writeln!(out, "{}: {} profile item(s)", args.reference, items.len()).unwrap();
            for it in items {
                let presets: Vec<String> =
                    it.presets.iter().map(|p| format!("{}={}", p.option, p.entries.join(","))).collect();
                writeln!(out, "  {} {}", it.profile.reference(), presets.join(" ")).unwrap();
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
    print!("{out}");
    Ok(exit::OK)
}
