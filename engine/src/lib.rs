//! engine: a declarative, plugin-based benchmark engine for Linux storage and
//! systems. The modules follow the flow of one benchmark:
//!
//! `profile` (YAML → checked model) → `expand` (options → tests) →
//! `runner` (executors, trials, the statistics rule from `stats`, parsers from
//! `parse`) → `result` (the stored record) → `report` (terminal, JSON).
//! `sysinfo` says what a result ran on; `schema` generates the JSON Schemas.

pub mod analysis;
pub mod authoring;
pub mod env;
pub mod events;
pub mod expand;
pub mod fsutil;
pub mod home;
pub mod hostlock;
pub mod install;
pub mod interop;
pub mod parse;
pub mod plugin;
pub mod profile;
pub mod repo;
pub mod report;
pub mod result;
pub mod resume;
pub mod runner;
pub mod schema;
pub mod session;
pub mod state;
pub mod stats;
pub mod sweep;
pub mod sysinfo;
pub mod units;
pub mod workloads;
