//! The statistics rule, in one place (README.md, "Statistics"):
//! summary statistics, MAD-based outliers, and when to add trials.

pub mod adaptive;
pub mod outlier;
pub mod summary;

pub use adaptive::{AdaptivePlan, Decision};
pub use summary::Summary;
