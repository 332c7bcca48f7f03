//! engine's model: what a profile, a suite and a result file are (the JSON
//! Schemas' source), the units values are in, the statistics rule every
//! number goes through, and the events a run tells the outside.
//!
//! This is the layer other tools link to. It may use `engine-sys` and
//! nothing else of engine; the compiler holds that (engine's capabilities,
//! operations and command line are crates above it).

pub mod events;
pub mod model;
pub mod stats;
pub mod units;
