//! Profile and suite files: YAML text → the typed model (`crate::model`) →
//! semantic checks, every problem reported as `file:line:col`, what is
//! wrong, and a hint.

mod every_error;
pub mod load;
pub mod validate;
pub mod yaml_index;
