//! The commands as library functions. Each takes the [`Context`] built once
//! at the edge, a typed request, and the [`Events`] that tell the outside,
//! and returns an outcome that knows its exit code; each reads as a short
//! list of named phases, one module per phase. The binary only turns
//! arguments into requests and outcomes into exit codes.
//!
//! This crate may use `engine-core` (the capabilities, library `engine`)
//! and, through it, the model and the system. The binary depends on this
//! crate, `engine-model` and `engine-sys` only: what it names of the
//! capabilities is listed, item by item, in [`vocab`].

pub mod benchmark;
pub mod browse;
pub mod cache;
pub mod context;
pub mod failure;
pub mod gate;
pub mod history;
pub mod info;
pub mod install;
pub mod monitor;
pub mod plugin;
pub mod present;
pub mod recover;
pub mod repo;
pub mod result;
pub mod sandbox;
pub mod validate;
pub mod vocab;

pub use benchmark::benchmark;
pub use context::{Context, Settings};
pub use engine::events::Events;
pub use failure::{Failure, exit};
