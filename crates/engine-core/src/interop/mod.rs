//! Results made by other tools.

pub mod matching;
pub mod pts;
