//! The profile and suite file formats: these serde types are the one source of
//! truth; `schemas/*.schema.json` are generated from them.

mod executor;
mod file;
mod install;
mod loaded;
mod options;
mod results;
mod sandbox;
mod suite;
mod trials;

pub use executor::*;
pub use file::*;
pub use install::*;
pub use loaded::*;
pub use options::*;
pub use results::*;
pub use sandbox::*;
pub use suite::*;
pub use trials::*;
