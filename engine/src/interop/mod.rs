//! Results made by other tools.

pub mod pts;
