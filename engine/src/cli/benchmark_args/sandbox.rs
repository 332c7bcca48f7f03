//! The sandbox's flags: which profiles run confined, and what a shared
//! profile is granted beyond the defaults.

use super::super::args;
use super::super::line::Line;
use clap::Args;
use engine_model::model::grant::Grants;
use engine_ops::benchmark::Sandbox;

#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    /// Run every external profile confined (namespaces, read-only root, a cgroup;
    /// the book, "The sandbox"); profiles from a repository and `sandbox: true` ones always are
    #[arg(long, conflicts_with = "no_sandbox", help_heading = "Sandbox")]
    pub sandbox: bool,
    /// Run no profile confined, repository profiles included (asks on a terminal,
    /// elsewhere needs -y; the result file says so)
    #[arg(long, help_heading = "Sandbox")]
    pub no_sandbox: bool,
    /// Give a profile from a repository (or imported from PTS) more than the sandbox's
    /// defaults, by name (repeatable): `writable=DIR`, `processes=N`, `memory=SIZE`,
    /// `scratch=SIZE`, `time=DURATION` (a plugin's memory and time, a test's trial budget too),
    /// `trials=N` (trials forced whatever the budget); the result's
    /// Sandbox Notes record it. Without it such a profile asking for more is refused
    #[arg(long = "grant", value_name = "KEY=VALUE", value_parser = args::grant, help_heading = "Sandbox")]
    pub grants: Vec<engine_model::model::grant::Grants>,
}

impl SandboxArgs {
    pub fn mode(&self) -> Sandbox {
        match (self.sandbox, self.no_sandbox) {
            (true, _) => Sandbox::On,
            (_, true) => Sandbox::Off,
            _ => Sandbox::Auto,
        }
    }

    /// Every `--grant`, as one.
    pub fn grants(self) -> Grants {
        self.grants.into_iter().fold(Grants::default(), Grants::merge)
    }

    pub fn render(&self, out: &mut Line) {
        out.flag("--sandbox", self.sandbox);
        out.flag("--no-sandbox", self.no_sandbox);
        out.each("--grant", &self.grants.iter().flat_map(|g| g.args()).collect::<Vec<_>>());
    }
}
