//! engine's capabilities (the `engine-core` crate; its library keeps the
//! name `engine`): everything a benchmark run does, below the commands that
//! drive it. It owns `profile` (loading and validation), `catalog` (finding
//! profiles and suites by reference), `expand`, `install`, `parse`,
//! `plugin` (the WASM host), `workloads`, `runner`, `state` (every change
//! engine makes to the machine, its apply, undo and journal, and the sweep:
//! its plan, its loop over states and the switch the runner asks), `sysinfo`, `monitor` (time series around every
//! trial), `store` (saved results), `analysis`, `report`, `repo`,
//! `interop`, `authoring` and `schema`.
//!
//! It may use the two crates below it, re-exported here under their module
//! names: `engine-sys` (`sys`, `env`, `home`: the operating system, every
//! variable engine reads, what lives where in ENGINE_HOME) and
//! `engine-model` (`units`, `stats`, `model`, `events`). Above it are
//! `engine-ops` (the commands as library functions) and the binary, which
//! cannot name this crate at all: what it needs from here, `engine-ops`
//! lists in its `vocab` module (book/src/contributors/architecture.md says why the cuts are
//! where they are).
//!
//! The public surface is what this crate's users call: `engine-ops`, the
//! integration tests (`tests/integration/`: loaders, stores, exporters and
//! the capabilities they drive in-process) and the fuzz targets (`fuzz/`:
//! the parsers of every input from outside). Everything else is
//! `pub(crate)`; `cargo check --all-targets` and the fuzz workspace's check
//! fail when something they use is narrowed, and the `private_interfaces`
//! lint when a public function would show a narrowed type. Fields follow
//! their type.

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
pub mod parse;
pub mod plugin;
pub mod profile;
pub mod repo;
pub mod report;
pub mod runner;
pub mod schema;
pub mod state;
pub mod store;
pub mod sysinfo;
pub mod workloads;
