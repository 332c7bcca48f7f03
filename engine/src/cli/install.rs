//! `engine install` and `engine install-deps`: the flags turned into
//! `ops::install` requests, and what was installed, printed.

use super::term::{Shown, TermEvents};
use super::ui::{self, Prompts};
use super::{Failure, exit};
use clap::Args;
use engine_ops::Context;
use engine_ops::install::{self, Installed, Request, describe_missing};
use std::io::IsTerminal;

#[derive(Args, Debug)]
pub struct InstallArgs {
    /// Profiles or suites to install (`tiobench`, `suite/disk`, a saved result)
    #[arg(required = true, value_name = "REF")]
    pub refs: Vec<String>,
    /// Reinstall even when the install is current
    #[arg(long)]
    pub force: bool,
    /// Which entries the install is for, as in `engine benchmark`: `--option source=debian`
    #[arg(long = "option", short = 'o', value_name = "KEY=A,B")]
    pub options: Vec<engine_ops::benchmark::Preset>,
}

#[derive(Args, Debug)]
pub struct InstallDepsArgs {
    /// Profiles or suites whose system packages to install (`suite/disk`)
    #[arg(required = true, value_name = "REF")]
    pub refs: Vec<String>,
    /// Print the package manager's command instead of running it
    #[arg(long)]
    pub dry_run: bool,
    /// Which entries the packages are for: `--option source=debian`
    #[arg(long = "option", short = 'o', value_name = "KEY=A,B")]
    pub options: Vec<engine_ops::benchmark::Preset>,
}

fn events() -> TermEvents {
    TermEvents::new(std::io::stderr().is_terminal(), Shown::Nothing, ui::width(), Prompts::new())
}

pub fn run_install(cx: &Context, args: InstallArgs) -> Result<i32, Failure> {
    let progress = Some(super::downloads::progress());
    let req = Request { refs: args.refs, options: args.options, force: args.force, progress };
    let (code, done) = install::install(cx, &req, &events())?;
    for d in done {
        match d {
            Installed::Nothing(r) => outln!("{r}: nothing to install"),
            Installed::Already { reference, dir } => outln!("{reference}: already installed ({})", dir.display()),
            Installed::Done(d) => {
                outln!("{}: installed in {:.1} s into {}", d.reference, d.seconds, d.dir.display());
                for (f, o) in &d.fetched {
                    outln!("  {f} from {o}");
                }
            }
            Installed::Failed { reference, error } => errln!("error: {reference}: {error}"),
        }
    }
    Ok(code)
}

pub fn run_install_deps(cx: &Context, args: InstallDepsArgs) -> Result<i32, Failure> {
    let req = Request { refs: args.refs, options: args.options, ..Request::default() };
    let d = install::install_deps(cx, &req, args.dry_run, &events())?;
    let needs = &d.needs;
    if needs.is_satisfied() {
        let mut names = needs.present.clone();
        names.sort();
        outln!("all {} package(s) present: {}", names.len(), names.join(", "));
        return Ok(exit::OK);
    }
    if !needs.present.is_empty() {
        outln!("present: {}", needs.present.join(", "));
    }
    if d.installed {
        outln!("installed: {}", needs.packages().join(" "));
        return Ok(exit::OK);
    }
    for l in describe_missing(needs, d.family, d.root) {
        outln!("{l}");
    }
    if !d.root && !needs.missing.is_empty() {
        outln!("(engine is not root, so it did not run the command)");
    }
    Ok(if args.dry_run && needs.unmapped.is_empty() { exit::OK } else { exit::INSTALL_FAILED })
}
