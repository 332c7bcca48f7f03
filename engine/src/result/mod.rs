//! Result files: the model, identity of tests, and atomic storage.

pub mod edit;
pub mod model;
pub mod store;

pub use model::{FailedTest, OptionChoice, PtsOrigin, RepositoryRef, ResultEntry, ResultFile, System, TestResult};
pub use store::{Store, StoreError};
