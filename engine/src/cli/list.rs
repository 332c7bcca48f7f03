//! `engine list profiles|suites|results`.

use super::{Failure, exit};
use clap::{Args, ValueEnum};
use engine_model::model::version::{compare as compare_versions, newest};
use engine_ops::Context;
use engine_ops::vocab::catalog::Catalog;
use engine_sys::text::{one_line, pad, width};
use std::collections::HashMap;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// What to list
    pub what: What,
    /// Results only: those with an identifier tagged KEY=VALUE (repeatable: all must match)
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::args::tag)]
    pub tags: Vec<(String, String)>,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum What {
    Profiles,
    Suites,
    Results,
}

/// The newest version of each profile id across the repositories: (repository, version).
fn newest_in_repos(catalog: &Catalog) -> HashMap<&str, (&str, &str)> {
    let mut out: HashMap<&str, (&str, &str)> = HashMap::new();
    for l in &catalog.repos().list {
        for e in &l.index.profiles {
            let Some(v) = newest(&e.versions, |v| v.version.as_str(), None) else { continue };
            let cand = (l.conf.name.as_str(), v.version.as_str());
            out.entry(e.id.as_str())
                .and_modify(|best| {
                    if compare_versions(cand.1, best.1).is_gt() {
                        *best = cand;
                    }
                })
                .or_insert(cand);
        }
    }
    out
}

/// A version of profile `id` newer than `version` in some repository
/// (`team/fio@1.3.0`), the newest one.
fn newer(best: &HashMap<&str, (&str, &str)>, id: &str, version: &str) -> Option<String> {
    let (n, v) = best.get(id)?;
    compare_versions(v, version).is_gt().then(|| format!("{n}/{id}@{v}"))
}

/// `ready`, or `needs fio, dbench`.
fn status(missing: &[String]) -> String {
    if missing.is_empty() { "ready".to_string() } else { format!("needs {}", missing.join(", ")) }
}

/// One line of `list profiles`: reference, type, executor, status, title.
type Row = (String, String, &'static str, String, String);

/// The profiles on the search path; broken ones are reported and counted.
fn local_profiles(cx: &Context, catalog: &Catalog, best: &HashMap<&str, (&str, &str)>, broken: &mut usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in catalog.all_profiles() {
        let p = match p {
            Ok(p) => p,
            Err(d) => {
                *broken += 1;
                errln!("{d}");
                continue;
            }
        };
        let missing = engine_ops::info::lacks(cx, &p.profile);
        let mut title = p.profile.title.clone();
        let hidden = catalog.shadowed(&p.profile.id);
        if !hidden.is_empty() {
            title.push_str(&format!(" (shadows {})", hidden.join(", ")));
        }
        if let Some(n) = newer(best, &p.profile.id, &p.profile.version) {
            title.push_str(&format!(" (newer: {n})"));
        }
        let kind = format!("{:?}", p.profile.test_type).to_lowercase();
        rows.push((p.reference(), kind, p.profile.executor.kind(), status(&missing), title));
    }
    rows
}

/// Repository profiles, from their signed indexes (nothing is unpacked to
/// list them): the newest version of each.
fn repo_profiles(catalog: &Catalog, best: &HashMap<&str, (&str, &str)>) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut found: HashMap<String, bool> = HashMap::new();
    for l in &catalog.repos().list {
        for e in &l.index.profiles {
            let Some(v) = newest(&e.versions, |v| v.version.as_str(), None) else { continue };
            let missing: Vec<String> = v
                .programs
                .iter()
                .filter(|prog| !*found.entry(prog.to_string()).or_insert_with(|| which::which(prog.as_str()).is_ok()))
                .cloned()
                .collect();
            let mut title = v.title.clone();
            if let Some(n) = newer(best, &e.id, &v.version) {
                title.push_str(&format!(" (newer: {n})"));
            }
            let executor = match v.executor.as_str() {
                "external" => "external",
                "wasm" => "wasm",
                _ => "builtin",
            };
            let reference = format!("{}/{}@{}", l.conf.name, e.id, v.version);
            rows.push((reference, v.test_type.clone(), executor, status(&missing), title));
        }
    }
    rows
}

fn profiles(cx: &Context, catalog: &Catalog, out: &mut String, broken: &mut usize) {
    let best = newest_in_repos(catalog);
    let mut rows = local_profiles(cx, catalog, &best, broken);
    rows.extend(repo_profiles(catalog, &best));
    // A row a line: an index's or a profile's text cannot start another.
    let rows: Vec<[String; 5]> = rows
        .into_iter()
        .map(|(r, kind, exec, status, title)| {
            [r, kind, exec.to_string(), status, title].map(|c| one_line(&c).into_owned())
        })
        .collect();
    let w = rows.iter().map(|r| width(&r[0])).max().unwrap_or(0);
    let sw = rows.iter().map(|r| width(&r[3])).max().unwrap_or(0);
    for [r, kind, exec, status, title] in rows {
        out.push_str(&format!("{}  {kind:9}  {exec:8}  {}  {title}\n", pad(&r, w), pad(&status, sw)));
    }
}

/// Each suite with how many tests it runs in batch mode (nested suites and
/// option lists expanded) and what `--dry-run` would estimate for it.
fn suites(cx: &Context, out: &mut String, broken: &mut usize) {
    let catalog = cx.catalog();
    let ids: Vec<String> = catalog.all_suites().into_iter().map(|(id, _)| id).collect();
    let refs: Vec<String> = ids.iter().map(|id| format!("suite/{id}")).collect();
    let estimates = engine_ops::benchmark::estimate_refs(cx, &refs);
    let mut rows: Vec<(String, String)> = Vec::new();
    for ((id, r), est) in ids.iter().zip(refs).zip(estimates) {
        let title = match (catalog.suite(id), est) {
            (Ok(s), Ok(e)) => format!("{} ({} tests; {})", s.suite.title, e.tests.len(), e.summary()),
            // Counted as --dry-run counts, or said why it cannot be.
            (Ok(s), Err(why)) => format!("{} (cannot expand: {why})", s.suite.title),
            (Err(e), _) => {
                *broken += 1;
                format!("invalid: {e}")
            }
        };
        rows.push((r, title));
    }
    let mut published = Vec::new();
    for l in &catalog.repos().list {
        for e in &l.index.suites {
            if let Some(v) = newest(&e.versions, |v| v.version.as_str(), None) {
                published.push((format!("{}/suite/{}@{}", l.conf.name, e.id, v.version), v.title.clone()));
            }
        }
    }
    // Counted as their own tests, like the local ones.
    let refs: Vec<String> = published.iter().map(|(r, _)| r.clone()).collect();
    for ((r, title), est) in published.into_iter().zip(engine_ops::benchmark::estimate_refs(cx, &refs)) {
        let title = match est {
            Ok(e) => format!("{title} ({} tests; {})", e.tests.len(), e.summary()),
            Err(why) => format!("{title} (cannot expand: {why})"),
        };
        rows.push((r, title));
    }
    let rows: Vec<(String, String)> =
        rows.into_iter().map(|(id, title)| (one_line(&id).into_owned(), one_line(&title).into_owned())).collect();
    let w = rows.iter().map(|r| width(&r.0)).max().unwrap_or(0);
    for (id, title) in rows {
        out.push_str(&format!("{}  {title}\n", pad(&id, w)));
    }
}

/// The saved results, then those the added repositories publish (run or
/// shown by `REPO/results/NAME`).
fn results(cx: &Context, tags: &[(String, String)], out: &mut String, broken: &mut usize) {
    let store = &cx.store;
    let tagged = |f: &engine_model::model::result::ResultFile| {
        f.systems.iter().any(|s| tags.iter().all(|(k, v)| s.tags.get(k) == Some(v)))
    };
    for name in store.list() {
        match store.load_lean(&name) {
            Ok(f) if !tags.is_empty() && !tagged(&f) => {}
            Ok(f) => {
                let mut failed: Vec<&str> = f.failures.iter().map(|x| x.profile.as_str()).collect();
                failed.dedup();
                let ids: Vec<&str> = f.systems.iter().map(|s| s.identifier.as_str()).collect();
                out.push_str(&format!(
                    "{name}  {} identifier(s), {} result(s){}{}\n",
                    f.systems.len(),
                    f.results.len(),
                    match f.failures.len() {
                        0 => String::new(),
                        n => format!(", {n} failed or skipped ({})", one_line(&failed.join(", "))),
                    },
                    if ids.is_empty() { String::new() } else { format!(": {}", one_line(&ids.join(", "))) }
                ))
            }
            Err(e) => {
                *broken += 1;
                errln!("{name}: {e}");
            }
        }
    }
    // Shared results carry no tags in the index: listed only without a filter.
    for l in cx.catalog().repos().list.iter().filter(|_| tags.is_empty()) {
        for e in &l.index.results {
            if let Some(v) = newest(&e.versions, |v| v.version.as_str(), None) {
                out.push_str(&format!(
                    "{}/results/{}@{}  shared: {} identifier(s), {} result(s): {}\n",
                    l.conf.name,
                    e.name,
                    v.version,
                    v.identifiers.len(),
                    v.results,
                    one_line(&v.identifiers.join(", "))
                ));
            }
        }
    }
}

pub fn run(cx: &Context, args: ListArgs) -> Result<i32, Failure> {
    let catalog = cx.catalog();
    for w in &catalog.repos().warnings {
        errln!("warning: {w}");
    }
    let mut out = String::new();
    let (mut broken, mut broken_results) = (0, 0);
    if !args.tags.is_empty() && !matches!(args.what, What::Results) {
        return Err(Failure::new(exit::USAGE, "--tag filters results").hint("engine list results --tag KEY=VALUE"));
    }
    match args.what {
        What::Profiles => profiles(cx, catalog, &mut out, &mut broken),
        What::Suites => suites(cx, &mut out, &mut broken),
        What::Results => results(cx, &args.tags, &mut out, &mut broken_results),
    }
    out!("{out}");
    // An invalid profile or suite is exit 3 (as `engine validate`); a
    // result file that cannot be read is an error like any unreadable file.
    Ok(if broken > 0 {
        exit::INVALID
    } else if broken_results > 0 {
        exit::ERROR
    } else {
        exit::OK
    })
}
