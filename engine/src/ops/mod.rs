//! The commands as library functions. Each takes the [`Context`] built once
//! at the edge, a typed request, and the [`Events`] that tell the outside,
//! and returns an outcome that knows its exit code; each reads as a short
//! list of named phases, one module per phase. The binary only turns
//! arguments into requests and outcomes into exit codes.

pub mod benchmark;
pub mod cache;
pub mod context;
pub mod failure;
pub mod gate;
pub mod history;
pub mod info;
pub mod install;
pub mod monitor;
pub mod plugin;
pub mod recover;
pub mod repo;
pub mod result;
pub mod sandbox;

pub use crate::events::Events;
pub use benchmark::benchmark;
pub use context::{Context, Settings};
pub use failure::{Failure, exit};
