//! `engine validate PATH…`: profile and suite files checked as engine
//! would load them (a suite's references resolved through the catalog).

use crate::{Context, Failure, exit};
use engine::catalog::reference::is_suite_file;
use engine::catalog::{ResolveError, flatten_suite};
use engine::model::profile::Origin;
use engine::profile::load;
use std::path::{Path, PathBuf};

/// The files `paths` name: each file as given, each folder searched for
/// `.yaml`/`.yml` files (sorted). A path that does not exist is a usage error.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut out = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(Failure::new(exit::USAGE, format!("{} does not exist", p.display())));
        }
        collect(p, &mut out);
    }
    Ok(out)
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                collect(&e, out);
            }
        }
    } else {
        out.push(p.to_path_buf());
    }
}

/// `None` when `f` is a valid profile or suite; else what is wrong, as
/// the person reads it (`file:line:col: …`, or the file, the error and a hint).
pub fn check(cx: &Context, f: &Path) -> Option<String> {
    let catalog = cx.catalog();
    let display = f.display().to_string();
    let text = match std::fs::read_to_string(f) {
        Ok(t) => t,
        Err(e) => return Some(format!("{display}: cannot read: {e}")),
    };
    let result = if is_suite_file(f) {
        load::suite_from_path(f)
            .map_err(Into::into)
            .and_then(|s| flatten_suite(catalog, &s, &mut Vec::new()).map(|_| ()))
    } else {
        load::profile_from_str(&text, &display, Origin::File(f.to_path_buf()), catalog.packages())
            .map(|_| ())
            .map_err(ResolveError::Invalid)
    };
    match result {
        Ok(()) => None,
        Err(ResolveError::Invalid(d)) => Some(d.to_string()),
        Err(e) => Some(match e.hint() {
            Some(h) => format!("{display}: {e}\n  hint: {h}"),
            None => format!("{display}: {e}"),
        }),
    }
}
