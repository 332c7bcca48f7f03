//! engine: a declarative, plugin-based benchmark engine for Linux storage and
//! systems. Its layers, bottom up (docs/architecture.md says why the cut is
//! where it is):
//!
//! - `engine-sys` (crate): the operating system (processes, signals, locks,
//!   atomic writes, hashing), `env` (every variable engine reads) and `home`
//!   (what lives where in ENGINE_HOME). Re-exported here as `sys`, `env`, `home`.
//! - `engine-model` (crate): `units`, `stats` (the statistics rule), `model`
//!   (profiles, suites, result files: the schemas' source) and `events` (what
//!   a run tells the outside). Re-exported here under the same names.
//! - capabilities: `profile` (loading and validation), `catalog` (finding
//!   profiles and suites by reference), `expand`, `install`, `parse`, `plugin`,
//!   `workloads`, `runner`, `state` (system states and their undo), `sweep`,
//!   `sysinfo`, `monitor` (time series around every trial), `store` (saved
//!   results), `analysis`, `report`, `repo`,
//!   `interop`, `authoring`, `schema`.
//! - `ops`: the commands as library functions, built on a `Context`.
//!
//! The public surface is what the crate's three users call, nothing else:
//! the binary (`engine/src/cli/`: `ops::*` and its requests and outcomes, the
//! text helpers of `sys::text`, the typed flag values of `sweep`, `expand`,
//! `units`), the integration tests (`tests/integration/`: loaders, stores,
//! exporters and the capabilities they drive in-process) and the fuzz targets
//! (`fuzz/`: the parsers of every input from outside). Every other function
//! is `pub(crate)` (a `pub fn` the crate alone calls was 761 of them; it is
//! 168 now), and so is every type, trait and constant none of them names
//! and no public function shows (525 were `pub`, 380 are: 145 narrowed);
//! `cargo check --all-targets` and the fuzz workspace's check fail when
//! something they use is narrowed, and the `private_interfaces` lint when a
//! public function would show a narrowed type. Fields follow their type.

// The two bottom layers are crates of their own (`crates/`), so the
// compiler refuses a wrong-way import; their modules keep their paths here.
pub use engine_model::{events, model, stats, units};
pub use engine_sys::{self as sys, env, home};

pub mod analysis;
pub mod authoring;
pub mod catalog;
pub mod config;
pub mod expand;
pub mod install;
pub mod interop;
pub mod monitor;
pub mod ops;
pub mod parse;
pub mod plugin;
pub mod profile;
pub mod repo;
pub mod report;
pub mod runner;
pub mod schema;
pub mod state;
pub mod store;
pub mod sweep;
pub mod sysinfo;
pub mod workloads;
