//! What the binary may name from the capabilities besides the operations,
//! one item at a time: the values its flags parse into (result names,
//! presets, the sweep's states, the sandbox mode, monitoring), the formats
//! and views of what it prints, and the few read-only helpers of the
//! `result`, `profile`, `config` and `repo` commands that have no operation
//! of their own yet. The binary depends on this crate, the model and the
//! system only, so a capability not listed here does not compile in `cli/`.
//! The list shrinks as those helpers become operations
//! (docs/architecture.md, "The cut").

pub mod analysis {
    pub mod history {
        pub use engine::analysis::history::{MIN_MAGNITUDE_PCT, Order, Query};
    }
}
pub mod authoring {
    pub use engine::authoring::{pts_import, scaffold};
}
pub mod catalog {
    pub use engine::catalog::{Catalog, ResolveError, flatten_suite};
    pub mod reference {
        pub use engine::catalog::reference::is_suite_file;
    }
}
pub mod config {
    pub use engine::config::{Config, ConfigError, Spec, load, set, spec, unset};
}
pub mod expand {
    pub use engine::expand::Preset;
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
    pub use engine::report::{View, history, monitor, systems, text};
}
pub mod schema {
    pub use engine::schema::install;
}
pub mod state {
    pub mod sysfs {
        pub use engine::state::sysfs::Setting;
    }
}
pub mod store {
    pub use engine::store::{ResultName, edit, write_atomic};
}
pub mod sweep {
    pub use engine::sweep::{DeviceSpec, FsList, Schedulers};
}
pub mod sysinfo {
    pub use engine::sysinfo::{collect, render, source};
}
