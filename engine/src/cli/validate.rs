//! `engine validate PATH…`: check profile and suite files.

use super::{Failure, exit};
use clap::Args;
use engine_model::model::profile::Origin;
use engine_ops::Context;
use engine_ops::vocab::catalog::ResolveError;
use engine_ops::vocab::catalog::reference::is_suite_file;
use engine_ops::vocab::profile::load;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Files or folders (folders are searched for `profile.yaml` and suite files)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
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

pub fn run(cx: &Context, args: ValidateArgs) -> Result<i32, Failure> {
    let catalog = cx.catalog();
    let mut files = Vec::new();
    for p in &args.paths {
        if !p.exists() {
            return Err(Failure::new(exit::USAGE, format!("{} does not exist", p.display())));
        }
        collect(p, &mut files);
    }
    let (mut ok, mut bad) = (0, 0);
    for f in &files {
        let display = f.display().to_string();
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                errln!("{display}: cannot read: {e}");
                bad += 1;
                continue;
            }
        };
        let result = if is_suite_file(f) {
            load::suite_from_path(f)
                .map_err(Into::into)
                .and_then(|s| engine_ops::vocab::catalog::flatten_suite(catalog, &s, &mut Vec::new()).map(|_| ()))
        } else {
            load::profile_from_str(&text, &display, Origin::File(f.clone()), catalog.packages())
                .map(|_| ())
                .map_err(ResolveError::Invalid)
        };
        match result {
            Ok(()) => {
                ok += 1;
                outln!("{display}: ok");
            }
            Err(ResolveError::Invalid(d)) => {
                bad += 1;
                errln!("{d}");
            }
            Err(e) => {
                bad += 1;
                match e.hint() {
                    Some(h) => errln!("{display}: {e}\n  hint: {h}"),
                    None => errln!("{display}: {e}"),
                }
            }
        }
    }
    errln!("{} file(s) checked: {ok} valid, {bad} invalid", ok + bad);
    Ok(if bad > 0 { exit::INVALID } else { exit::OK })
}
