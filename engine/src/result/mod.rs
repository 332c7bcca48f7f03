//! Result files: the model, identity of tests, and atomic storage.

pub mod edit;
pub mod model;
pub mod store;
pub mod validate;

pub use model::{
    FailedTest, LeftOut, OptionChoice, PtsOrigin, RepositoryRef, ResultEntry, ResultFile, System, TestResult,
};
pub use store::{Store, StoreError};
