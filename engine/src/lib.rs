//! engine: a declarative, plugin-based benchmark engine for Linux storage and
//! systems. Modules are layered; each uses only the layers below it
//! (README.md, "Layout"):
//!
//! - `sys`: the operating system (processes, signals, locks, atomic writes, hashing).
//! - model: `units`, `stats` (the statistics rule), `model` (profiles, suites,
//!   result files: the schemas' source), `home` (what lives where in ENGINE_HOME),
//!   `events` (what a run tells the outside).
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

pub mod analysis;
pub mod authoring;
pub mod catalog;
pub mod config;
pub mod env;
pub mod events;
pub mod expand;
pub mod home;
pub mod install;
pub mod interop;
pub mod model;
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
pub mod stats;
pub mod store;
pub mod sweep;
pub mod sys;
pub mod sysinfo;
pub mod units;
pub mod workloads;
