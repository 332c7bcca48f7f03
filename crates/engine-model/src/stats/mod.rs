//! The statistics rule, in one place (the book, "Statistics"): summary
//! statistics, outliers, drift, shapes, and when to add trials.

pub mod adaptive;
pub mod changepoint;
pub mod levels;
pub mod outlier;
pub mod shape;
pub mod summary;
pub mod trend;
// The seeded generator the statistics' simulations share (here and in
// engine's analysis tests); not for engine's own runs.
#[doc(hidden)]
pub mod test_rng;

pub use adaptive::{AdaptivePlan, Decision};
pub use summary::Summary;
