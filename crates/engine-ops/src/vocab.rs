//! What the binary may still name from the capabilities besides the
//! operations, one item at a time: helpers of the commands that have no
//! operation of their own yet — `profile new`/`import-pts` (authoring,
//! schema, profile loading), `config`, `plugin`'s listing and limits,
//! `repo` signing, `monitor` rendering, the end-of-run report
//! (report text and views), downloads' progress, `list` (the catalog) and
//! `result edit`. The binary depends on this crate, the model and the
//! system only, so a capability not listed here does not compile in
//! `cli/`; the values a run's flags parse into are the request's own parts
//! in [`crate::benchmark`], result presentation is [`crate::present`],
//! `validate` is [`crate::validate`] and `system-info` [`crate::info::system`].
//! The list shrinks as the rest become operations (book/src/contributors/architecture.md).

pub mod authoring {
    pub use engine::authoring::{pts_import, scaffold};
}
pub mod catalog {
    pub use engine::catalog::Catalog;
}
pub mod config {
    pub use engine::config::{Config, ConfigError, Refused, Spec, load, set, spec, unset};
}
pub mod install {
    pub use engine::install::STATE_FILE;
    pub mod download {
        pub use engine::install::download::{Progress, ProgressSink};
    }
}
pub mod plugin {
    pub use engine::plugin::{INTERFACE_VERSION, Limits, cache, host, limits};
}
pub mod profile {
    pub use engine::profile::load;
    pub mod validate {
        pub use engine::profile::validate::{BUILTIN_VARS, is_valid_id};
    }
}
pub mod repo {
    pub use engine::repo::{Repos, describe_age, remove, sign};
}
pub mod report {
    pub use engine::report::{View, monitor, systems, text};
}
pub mod schema {
    pub use engine::schema::install;
}
pub mod store {
    pub use engine::store::{edit, write_atomic};
}
