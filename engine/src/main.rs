//! The `engine` binary: parse the command line, run the command, map the
//! outcome to an exit code (documented in the book, "Exit codes").

mod cli;

use clap::Parser;
use std::io::IsTerminal;

fn main() {
    // PTS's command names (`compare-results`) get the engine command that
    // does it, not clap's "unrecognized subcommand".
    if let Some(msg) = std::env::args().nth(1).and_then(|w| cli::pts_names::answer(&w)) {
        eprintln!("engine: {msg}");
        std::process::exit(2);
    }
    let args = cli::Cli::parse();
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(f) => {
            let red = std::io::stderr().is_terminal() && std::env::var_os(engine_sys::env::NO_COLOR).is_none();
            let label = if red { "\x1b[1;31merror\x1b[0m" } else { "error" };
            // The message may quote a profile, a result or a command: made
            // inert here; the label's colour is engine's own.
            eprintln!("{label}: {}", engine_sys::text::terminal(&f.message));
            if let Some(h) = &f.hint {
                eprintln!("  hint: {}", engine_sys::text::terminal(h));
            }
            f.code
        }
    };
    // Interrupted: 128 + the signal that asked, as a shell would say it.
    let code = if code == 130 { engine_sys::interrupt::exit_code() } else { code };
    std::process::exit(code);
}
