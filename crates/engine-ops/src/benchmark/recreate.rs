//! `--only-unsettled` on a sweep's result: the states of the identifiers
//! with unsettled tests are made again from the flags each was made by
//! (recorded with its system), so their new trials are measured where the
//! old ones were. Entries with no recorded state are re-run where the run
//! is, and the session refuses one measured elsewhere (`session::moved`).

use super::Request;
use crate::{Context, Failure};
use engine::model::result::{ResultFile, StateRecipe};
use engine::model::template::quote;
use engine::state::sweep::{DeviceSpec, Schedulers};
use engine::sys::text::one_line;
use std::collections::BTreeMap;

/// The request that re-creates the states of the unsettled identifiers of
/// result `name` (only `--identifier`'s when given), or `None` when they
/// have no recorded state or the user gave sweep flags of their own.
pub(super) fn request(cx: &Context, req: &Request, name: &str) -> Result<Option<Request>, Failure> {
    let s = &req.sweep;
    let own_flags =
        s.schedulers != Schedulers::Keep || !s.filesystems.is_empty() || s.device.is_some() || !s.settings.is_empty();
    if own_flags {
        return Ok(None);
    }
    let file = cx.store.load_lean(name)?;
    let mut wanted = engine::analysis::precision::unsettled(&file);
    if let Some(id) = &req.identifier {
        wanted.retain(|k, _| k == id);
    }
    let recipes = recipes(&file, &wanted);
    let Some(first) = recipes.iter().find_map(|(_, r)| *r) else { return Ok(None) };
    if let Some((id, _)) = recipes.iter().find(|(_, r)| r.is_none()) {
        return Err(Failure::usage(format!(
            "`{id}` in `{name}` has no recorded sweep state while others have: they cannot be re-run together"
        ))
        .hint("re-run one at a time: --only-unsettled --identifier ID"));
    }
    let all: Vec<&StateRecipe> = recipes.iter().filter_map(|(_, r)| *r).collect();
    let differ = |f: fn(&StateRecipe) -> String| all.iter().any(|r| f(r) != f(first));
    if differ(|r| format!("{:?}", r.device))
        || differ(|r| r.settings.join(" "))
        || differ(|r| format!("{:?}", r.prefix))
    {
        return Err(Failure::usage(format!(
            "the unsettled identifiers of `{name}` were made on different devices, queue settings or prefixes: one sweep cannot make them all"
        ))
        .hint("re-run one at a time: --only-unsettled --identifier ID"));
    }
    let unique = |f: fn(&StateRecipe) -> Option<&String>| {
        let mut v: Vec<String> = Vec::new();
        for r in &all {
            if let Some(x) = f(r)
                && !v.contains(x)
            {
                v.push(x.clone());
            }
        }
        v
    };
    // What a file records is shown on one line: it cannot forge lines of its own.
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        Failure::usage(one_line(&format!("`{name}` records a {what} engine cannot read back: {e}")).into_owned())
            .hint("run the sweep again with its flags instead of --only-unsettled")
    };
    let mut sweep = req.sweep.clone();
    let schedulers = unique(|r| r.scheduler.as_ref());
    if !schedulers.is_empty() {
        sweep.schedulers = schedulers.join(",").parse().map_err(|e| bad("scheduler", &e))?;
    }
    for f in unique(|r| r.filesystem.as_ref()) {
        for spec in engine::state::filesystem::FsSpec::parse_list(&f).map_err(|e| bad("file system", &e))? {
            if !sweep.filesystems.contains(&spec) {
                sweep.filesystems.push(spec);
            }
        }
    }
    if sweep.filesystems.len() > engine::state::scheduler::MAX_STATES {
        return Err(bad("list of file systems", &format!("more than {}", engine::state::scheduler::MAX_STATES)));
    }
    if let Some(d) = &first.device {
        let spec = d.parse::<DeviceSpec>().map_err(|e| bad("device", &e))?;
        sweep.device = Some(device(name, spec, first)?);
    }
    for set in &first.settings {
        sweep.settings.push(set.parse().map_err(|e| bad("queue setting", &e))?);
    }
    let target_dir = req.target_dir.clone();
    if first.device.is_none()
        && target_dir.is_none()
        && (sweep.schedulers != Schedulers::Keep || !sweep.settings.is_empty())
    {
        return Err(unnamed_target(&file, &recipes, name));
    }
    Ok(Some(Request { sweep, identifier: first.prefix.clone().map(Into::into), target_dir, ..req.clone() }))
}

/// The device a recipe names: a loop device engine makes; a device path
/// is refused, said why.
fn device(name: &str, spec: DeviceSpec, first: &StateRecipe) -> Result<DeviceSpec, Failure> {
    // A result file may come from anyone: engine makes a loop device
    // of its own, but formats no device a file names.
    if let DeviceSpec::Path(p) = &spec {
        let p = quote(p);
        return Err(Failure::usage(
            one_line(&format!(
                "the unsettled states of `{name}` were made on {p}: engine formats a device only when you name it"
            ))
            .into_owned(),
        )
        .hint(one_line(&format!("name it yourself: --only-unsettled --device {p} {}", others(first))).into_owned()));
    }
    Ok(spec)
}

/// A sweep without a device changed the disk under its target directory:
/// the file never chooses that directory (nor a disk through it); the
/// person names it, and the session checks it is where the entries were
/// measured (`session::moved`).
fn unnamed_target(file: &ResultFile, recipes: &[(&str, Option<&StateRecipe>)], name: &str) -> Failure {
    let was = recipes.iter().find_map(|(id, _)| file.system(id).and_then(|s| s.target_dir.clone()));
    let was = was.map_or("the directory it was measured in".to_string(), |d| quote(&d));
    Failure::usage(one_line(&format!(
        "the unsettled states of `{name}` set the scheduler or queue of the disk under {was}: engine changes a disk only under a directory you name"
    ))
    .into_owned())
    .hint(one_line(&format!("name it yourself: --only-unsettled --target-dir {was}")).into_owned())
}

/// A recipe's flags but the device.
fn others(r: &StateRecipe) -> String {
    StateRecipe { device: None, ..r.clone() }.to_string()
}

/// The recorded state of each identifier in `wanted`, in the result's
/// order (its first is the sweep's baseline).
fn recipes<'f>(
    file: &'f ResultFile,
    wanted: &BTreeMap<String, std::collections::HashSet<String>>,
) -> Vec<(&'f str, Option<&'f StateRecipe>)> {
    file.systems
        .iter()
        .filter(|s| wanted.contains_key(s.identifier.as_str()))
        .map(|s| (s.identifier.as_str(), s.state.as_ref()))
        .collect()
}

/// The flags a re-created sweep runs with, for `--dry-run` and the run's
/// first line: `--device loop:2G --filesystem ext4 --scheduler none,kyber`.
pub(super) fn describe(req: &Request) -> String {
    let s = &req.sweep;
    let mut parts = Vec::new();
    if let Some(d) = &s.device {
        parts.push(format!("--device {d}"));
    }
    for f in &s.filesystems {
        parts.push(format!("--filesystem {f}"));
    }
    if s.schedulers != Schedulers::Keep {
        parts.push(format!("--scheduler {}", s.schedulers));
    }
    parts.extend(s.settings.iter().map(|x| format!("--set {x}")));
    if let Some(t) = &req.target_dir {
        parts.push(format!("--target-dir {}", t.display()));
    }
    parts.join(" ")
}
