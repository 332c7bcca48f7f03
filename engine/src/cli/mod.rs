//! The command line: clap definitions, one file per command, exit codes.

mod benchmark;
mod cache;
mod completions;
mod info;
mod install;
mod list;
mod plugin;
mod profile;
mod progress_json;
mod recover;
mod repo;
mod resolve;
mod result;
mod run_ui;
mod system_info;
mod ui;
mod validate;

use clap::{Parser, Subcommand};
use std::fmt;

/// Exit codes (also in README.md, "Exit codes").
pub mod exit {
    /// Everything asked for ran and was saved.
    pub const OK: i32 = 0;
    /// An error stopped the command (I/O, a result file that cannot be read or written).
    pub const ERROR: i32 = 1;
    /// Bad usage: unknown flag, unknown reference, bad `--option`, bad result name.
    pub const USAGE: i32 = 2;
    /// A profile or suite file is invalid (`engine validate` found errors).
    pub const INVALID: i32 = 3;
    /// Some tests failed or were skipped (missing program, not root); the others ran and were saved.
    pub const TESTS_FAILED: i32 = 4;
    /// Something could not be installed: a download, a checksum, an
    /// extraction or a build step failed (nothing partial was kept), or system
    /// packages are missing and engine is not root (the command is printed).
    pub const INSTALL_FAILED: i32 = 5;
    /// Interrupted by Ctrl-C or SIGTERM; completed tests were saved.
    pub const INTERRUPTED: i32 = 130;
}

/// An error that ends a command: what to print and which exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
    pub hint: Option<String>,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Failure { code, message: message.into(), hint: None }
    }
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// A declarative benchmark engine for Linux storage and systems.
///
/// Profiles (YAML) describe a benchmark; engine runs it enough times to trust
/// the number, and stores every trial with its statistics in a result file that
/// other systems can append to.
#[derive(Parser, Debug)]
#[command(name = "engine", version, about, long_about, max_term_width = 100)]
#[command(
    after_help = "State lives in ENGINE_HOME (default: $XDG_DATA_HOME/engine or ~/.local/share/engine).\nExit codes: 0 ok, 1 error, 2 usage, 3 invalid profile/suite, 4 some tests failed or skipped, 5 install failed, 130 interrupted."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check what the tests need, then run them and save their results
    Benchmark(benchmark::BenchmarkArgs),
    /// Run tests and save their results, without the install step (says what is missing)
    Run(benchmark::BenchmarkArgs),
    /// Install what profiles need: system packages, verified downloads, build steps (idempotent)
    Install(install::InstallArgs),
    /// Install the system packages profiles need (apt-get, dnf, pacman, zypper as root; else prints the command)
    InstallDeps(install::InstallDepsArgs),
    /// The download cache: fill it (or a folder for offline machines), list it, clean it
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// List profiles, suites or saved results
    List(list::ListArgs),
    /// Show a profile's options, entries, results and requirements, or a suite's tests
    Info(info::InfoArgs),
    /// Check profile and suite files; exits 3 on any error
    Validate(validate::ValidateArgs),
    /// Show, compare, edit and import saved results
    #[command(subcommand)]
    Result(result::ResultCommand),
    /// Write profiles: scaffold one from a command line, convert PTS test profiles
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    /// Profile repositories: add, list, update, remove; keygen and publish for publishers
    #[command(subcommand)]
    Repo(repo::RepoCommand),
    /// Undo system-state changes a killed run left behind (schedulers, tunables, mounts, loop devices)
    Recover(recover::RecoverArgs),
    /// Describe this machine as results record it: hardware, software, and the devices under the target directory
    SystemInfo(system_info::SystemInfoArgs),
    /// Print a shell completion script: `engine completions bash > /etc/bash_completion.d/engine`
    Completions(completions::CompletionsArgs),
    /// Write, build and inspect WASM plugins (workloads and parsers in one `.wasm` file)
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
}

/// A result-store error as the command line reports it: an unknown or
/// badly named result is bad usage; an unreadable file is an error, with
/// the way back to its last good version.
pub fn store_failure(e: engine::result::StoreError) -> Failure {
    use engine::result::{StoreError, store};
    let hint = match &e {
        StoreError::BadName(..) | StoreError::NotFound(_) => {
            Some("list saved results with `engine list results`".to_string())
        }
        StoreError::Invalid { path, .. } => Some(format!(
            "the last good version is kept as {}: restore it with `cp`, or remove the result with `engine result delete NAME`",
            store::backup_path(path).display()
        )),
        StoreError::Locked(_) => Some("wait for the other run to finish".to_string()),
        _ => None,
    };
    let code = match e {
        StoreError::BadName(..) | StoreError::NotFound(_) => exit::USAGE,
        _ => exit::ERROR,
    };
    let f = Failure::new(code, e.to_string());
    match hint {
        Some(h) => f.hint(h),
        None => f,
    }
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<i32, Failure> {
    match cli.command {
        Command::Benchmark(a) => benchmark::run(a, true),
        Command::Run(a) => benchmark::run(a, false),
        Command::Install(a) => install::run_install(a),
        Command::InstallDeps(a) => install::run_install_deps(a),
        Command::Cache(c) => cache::run(c),
        Command::List(a) => list::run(a),
        Command::Info(a) => info::run(a),
        Command::Validate(a) => validate::run(a),
        Command::Result(c) => result::run(c),
        Command::Repo(c) => repo::run(c),
        Command::Profile(c) => profile::run(c),
        Command::SystemInfo(a) => system_info::run(a),
        Command::Recover(a) => recover::run(a),
        Command::Completions(a) => completions::run(a),
        Command::Plugin(c) => plugin::run(c),
    }
}
