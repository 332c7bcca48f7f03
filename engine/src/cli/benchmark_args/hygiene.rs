//! Hygiene's flags: what is done around every trial and test, and how a
//! run shares the machine with another.

use super::super::args;
use super::super::line::Line;
use clap::Args;
use engine_model::units::exact_duration;
use engine_ops::benchmark::Hygiene;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct HygieneArgs {
    /// Sync and drop the page cache before every trial
    #[arg(long, help_heading = "Hygiene")]
    pub drop_caches: bool,
    /// Run even while another engine benchmark runs on this machine (with any
    /// ENGINE_HOME): a warning instead of a refusal; the two measure each other
    #[arg(long, help_heading = "Hygiene")]
    pub allow_concurrent: bool,
    /// When another engine benchmark runs on this machine, wait for it to
    /// finish (saying for whom) instead of refusing
    #[arg(long, help_heading = "Hygiene", conflicts_with = "allow_concurrent")]
    pub wait: bool,
    /// fstrim the target file system before every test
    #[arg(long, help_heading = "Hygiene")]
    pub fstrim: bool,
    /// Pause before every test (`5s`)
    #[arg(long, value_name = "DURATION", value_parser = args::duration, help_heading = "Hygiene")]
    pub settle: Option<Duration>,
}

impl HygieneArgs {
    pub fn hygiene(&self) -> Hygiene {
        Hygiene { drop_caches: self.drop_caches, fstrim: self.fstrim, settle: self.settle }
    }

    pub fn render(&self, out: &mut Line) {
        out.flag("--drop-caches", self.drop_caches);
        out.flag("--allow-concurrent", self.allow_concurrent);
        out.flag("--wait", self.wait);
        out.flag("--fstrim", self.fstrim);
        out.opt("--settle", self.settle.map(exact_duration));
    }
}
