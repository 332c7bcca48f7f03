//! Test profiles and suites: the YAML format, loading with positioned
//! diagnostics, semantic checks, placeholders, and lookup by reference.

pub mod diag;
pub mod load;
pub mod model;
pub mod resolve;
pub mod template;
pub mod validate;
pub mod yaml_index;

pub use diag::{Diagnostic, Diagnostics};
pub use load::{LoadedProfile, LoadedSuite};
