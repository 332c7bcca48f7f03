//! The workload contract of `engine`: what a workload sees and returns,
//! whether it is built into the engine or shipped as a WASM plugin.
//!
//! A workload is a type implementing [`Workload`]: it is made from its
//! [`Config`] (the profile's `config:` with the chosen option values filled
//! in) — which is where it rejects bad values, before the first trial — and
//! runs one trial at a time in a [`Context`] (scratch directory,
//! cancellation, progress, clock, log), returning a [`Report`]: one value per
//! result id of the profile. Units and "higher is better" come from the
//! profile, so a workload only measures.
//!
//! ```
//! use engine_sdk::{Config, Context, Error, Report, Workload};
//!
//! /// Writes `size` bytes to a file and fsyncs it; reports MB/s.
//! struct WriteOnce { size: u64 }
//!
//! impl Workload for WriteOnce {
//!     const KEYS: &'static [&'static str] = &["size"];
//!     const RESULTS: &'static [&'static str] = &["bandwidth"];
//!     fn new(config: &Config) -> Result<Self, Error> {
//!         config.only(Self::KEYS)?;
//!         Ok(WriteOnce { size: config.size_or("size", 1 << 20)? })
//!     }
//!     fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
//!         use std::io::Write;
//!         let path = cx.scratch_dir().join("data");
//!         let t0 = cx.elapsed();
//!         let mut f = std::fs::File::create(&path).map_err(|e| Error::io("create data", &e))?;
//!         f.write_all(&vec![0u8; self.size as usize]).map_err(|e| Error::io("write data", &e))?;
//!         f.sync_all().map_err(|e| Error::io("fsync data", &e))?;
//!         let secs = (cx.elapsed() - t0).as_secs_f64();
//!         Ok(Report::new().value("bandwidth", self.size as f64 / secs / 1e6))
//!     }
//! }
//! ```

mod bytes;
mod config;
mod context;
mod error;
#[cfg(feature = "guest")]
pub mod guest;
mod interval;
mod report;
pub mod units;

pub use bytes::same_bytes;
pub use config::Config;
pub use context::{Context, ScratchFile};
pub use error::{Error, ErrorKind};
pub use interval::{Figure, Rates, valid_name as valid_figure_name};
pub use report::{Measurement, Report};

/// A workload: made from its configuration, run once per trial.
pub trait Workload: Sized {
    /// The configuration keys it reads; the engine rejects others when the
    /// profile is loaded (`file:line:col`, with a did-you-mean).
    const KEYS: &'static [&'static str];
    /// The result ids it can return; a profile may declare any of them.
    const RESULTS: &'static [&'static str];

    /// Checks and takes the configuration. Called once per test, before the
    /// first trial: a bad value fails the test here, naming the key.
    fn new(config: &Config) -> Result<Self, Error>;

    /// One trial, in `cx.scratch_dir()` (fresh for every trial unless the
    /// profile says `scratch: per_test`). Returns a value per result id.
    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error>;
}

/// A [`Workload`] behind a pointer (what the engine's registry holds).
pub trait DynWorkload {
    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error>;
}

impl<W: Workload> DynWorkload for W {
    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        Workload::run(self, cx)
    }
}

/// Makes a boxed workload of type `W` from a configuration.
pub fn make<W: Workload + 'static>(config: &Config) -> Result<Box<dyn DynWorkload>, Error> {
    Ok(Box::new(W::new(config)?))
}

/// A trial's output as a parser sees it.
#[derive(Debug, Clone, Copy)]
pub struct TrialOutput<'a> {
    pub stdout: &'a str,
    pub stderr: &'a str,
    /// The program's exit code (`-1` when a signal ended it).
    pub exit_code: i32,
}

/// A parser for a tool's output whose text is awkward for a regex: made from
/// its configuration, it reads one trial's output into values per result id.
pub trait Parser: Sized {
    const KEYS: &'static [&'static str];
    const RESULTS: &'static [&'static str];
    fn new(config: &Config) -> Result<Self, Error>;
    fn parse(&self, output: &TrialOutput<'_>) -> Result<Report, Error>;
}

#[cfg(test)]
mod wit_tests {
    /// The export macros generate bindings from a copy of `wit/plugin.wit`
    /// (a macro cannot hand this crate's file to `generate!`).
    #[test]
    fn the_guest_macros_carry_the_wit_file() {
        let guest = include_str!("guest.rs");
        let wit = include_str!("../wit/plugin.wit");
        assert!(
            guest.contains(&format!("inline: r#\"{wit}\"#")),
            "copy sdk/wit/plugin.wit into `inline:` in sdk/src/guest.rs"
        );
    }
}
