//! `engine completions SHELL`: a completion script for bash, zsh, fish,
//! elvish or PowerShell, generated from the command definitions.

use super::{Cli, Failure, exit};
use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> Result<i32, Failure> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "engine", &mut std::io::stdout());
    Ok(exit::OK)
}
