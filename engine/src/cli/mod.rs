//! The command line: clap definitions (one file per command) turned into
//! the typed requests of `engine_ops`, the terminal and JSON displays of a
//! run (`term`, `progress_json`), and outcomes turned into exit codes.
//!
//! Everything the commands write to a terminal goes through `outln!`,
//! `out!` and `errln!` (not `println!`, `print!`, `eprintln!`): their text
//! passes `engine_sys::text::terminal`, so a title, a label, an error or
//! a command's output from someone else shows its control characters as
//! escapes instead of sending them. Reports written with `-o` or piped are
//! made inert by their exporter.

/// `println!` with the text made inert for a terminal.
macro_rules! outln {
    () => { println!() };
    ($($arg:tt)*) => { println!("{}", engine_sys::text::terminal(&format!($($arg)*))) };
}

/// `print!` with the text made inert for a terminal.
macro_rules! out {
    ($($arg:tt)*) => { print!("{}", engine_sys::text::terminal(&format!($($arg)*))) };
}

/// `eprintln!` with the text made inert for a terminal.
macro_rules! errln {
    () => { eprintln!() };
    ($($arg:tt)*) => { eprintln!("{}", engine_sys::text::terminal(&format!($($arg)*))) };
}

mod args;
mod benchmark;
mod benchmark_args;
mod cache;
mod command_line;
mod completions;
mod config;
mod downloads;
mod history;
mod info;
mod install;
mod line;
mod list;
mod man;
mod monitor;
mod odd;
mod plugin;
mod profile;
mod progress_json;
pub(crate) mod pts_names;
mod push;
mod recover;
mod repo;
mod result;
mod serve;
mod system_info;
mod term;
mod ui;
mod validate;

use clap::{Parser, Subcommand};

pub use engine_ops::{Failure, exit};

/// A declarative benchmark engine for Linux storage and systems.
///
/// Profiles (YAML) describe a benchmark; engine runs it enough times to trust
/// the number, and stores every trial with its statistics in a result file that
/// other systems can append to.
#[derive(Parser, Debug)]
#[command(name = "engine", version, about, long_about, max_term_width = 100)]
#[command(after_help = after_help())]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check what the tests need, then run them and save their results
    Benchmark(benchmark_args::BenchmarkArgs),
    /// Run tests and save their results, without the install step (says what is missing)
    Run(benchmark_args::BenchmarkArgs),
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
    /// Browse the saved results in a web browser (search, compare, history,
    /// fleets, systems) and receive results pushed from CI and other machines
    Serve(serve::ServeArgs),
    /// Profile repositories: add, list, update, remove; keygen and publish for publishers
    #[command(subcommand)]
    Repo(repo::RepoCommand),
    /// Your defaults for benchmark's flags (target directory, identifier, budget, …) in
    /// $XDG_CONFIG_HOME/engine/config.toml: list, get, set, unset
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// Undo system-state changes a killed run left behind (schedulers, tunables, mounts, loop devices)
    Recover(recover::RecoverArgs),
    /// Describe this machine as results record it: hardware, software, and the devices under the target directory
    SystemInfo(system_info::SystemInfoArgs),
    /// Print a shell completion script: `engine completions bash > /etc/bash_completion.d/engine`
    Completions(completions::CompletionsArgs),
    /// Write, build and inspect WASM plugins (workloads and parsers in one `.wasm` file)
    #[command(subcommand)]
    Plugin(plugin::PluginCommand),
    /// Write man pages for engine and every command into a folder (for packagers)
    #[command(hide = true)]
    Man(man::ManArgs),
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<i32, Failure> {
    let cx = engine_ops::Context::from_env();
    match cli.command {
        Command::Benchmark(a) => benchmark::run(&cx, a, true),
        Command::Run(a) => benchmark::run(&cx, a, false),
        Command::Install(a) => install::run_install(&cx, a),
        Command::InstallDeps(a) => install::run_install_deps(&cx, a),
        Command::Cache(c) => cache::run(&cx, c),
        Command::List(a) => list::run(&cx, a),
        Command::Info(a) => info::run(&cx, a),
        Command::Validate(a) => validate::run(&cx, a),
        Command::Result(c) => result::run(&cx, c),
        Command::Serve(a) => serve::run(cx, a),
        Command::Repo(c) => repo::run(&cx, c),
        Command::Profile(c) => profile::run(&cx, c),
        Command::SystemInfo(a) => system_info::run(&cx, a),
        Command::Recover(a) => recover::run(&cx, a),
        Command::Config(c) => config::run(&cx, c),
        Command::Completions(a) => completions::run(a),
        Command::Plugin(c) => plugin::run(&cx, c),
        Command::Man(a) => man::run(a),
    }
}

/// What `engine --help` ends with: where state lives, and every exit code
/// (from `ops::failure::exit`, the one table).
fn after_help() -> String {
    format!(
        "State lives in ENGINE_HOME (default: $XDG_DATA_HOME/engine or ~/.local/share/engine).\n{}\n\
         The manual is the book in the source's book/ folder (chapters \"Getting started\", \"Running\n\
         benchmarks\", \"Comparing\", \"Profile format\", \"Reference\"); `mdbook build book` makes it.",
        engine_ops::exit::summary()
    )
}
