//! `engine validate PATH…`: check profile and suite files.

use super::{Failure, exit};
use clap::Args;
use engine_ops::{Context, validate};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Files or folders (folders are searched for `profile.yaml` and suite files)
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

pub fn run(cx: &Context, args: ValidateArgs) -> Result<i32, Failure> {
    let (mut ok, mut bad) = (0, 0);
    for f in validate::files(&args.paths)? {
        match validate::check(cx, &f) {
            None => {
                ok += 1;
                outln!("{}: ok", f.display());
            }
            Some(problem) => {
                bad += 1;
                errln!("{problem}");
            }
        }
    }
    errln!("{} file(s) checked: {ok} valid, {bad} invalid", ok + bad);
    Ok(if bad > 0 { exit::INVALID } else { exit::OK })
}
