//! `engine man --out DIR` (hidden): man pages for engine and every
//! subcommand (`engine.1`, `engine-benchmark.1`, …), from the same
//! definitions as `--help`; scripts/package-deb.sh puts them in the package.

use super::{Cli, Failure, exit};
use clap::{Args, CommandFactory};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Folder to write the pages into (it must exist)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn run(args: ManArgs) -> Result<i32, Failure> {
    if !args.out.is_dir() {
        return Err(Failure::usage(format!("{} is not a folder", args.out.display())));
    }
    clap_mangen::generate_to(Cli::command(), &args.out)
        .map_err(|e| Failure::error(format!("cannot write the man pages to {}: {e}", args.out.display())))?;
    Ok(exit::OK)
}
