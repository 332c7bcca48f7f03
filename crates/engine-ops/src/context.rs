//! What every operation works in: ENGINE_HOME, the profiles and suites in
//! reach, the saved results, and the settings the environment gives. Built
//! once at the edge ([`Context::from_env`] is the one place engine reads its
//! environment); everything below receives what it needs from here.

use engine::catalog::Catalog;
use engine::env;
use engine::home::Home;
use engine::install::download;
use engine::install::packages;
use engine::store::Store;
use engine::sysinfo::Environ;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Where every engine on this machine looks for a running benchmark
/// (`/run/lock` is a tmpfs every user may write to, emptied at boot).
pub(crate) const MACHINE_LOCK: &str = "/run/lock/engine-benchmark.lock";

/// Settings from the environment (the book, "Environment").
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Extra profile folders searched first (`ENGINE_PROFILE_PATH`).
    pub profile_path: Vec<PathBuf>,
    /// Timeouts, retries, parallel downloads, extra caches (`ENGINE_DOWNLOAD_*`).
    pub downloads: download::Settings,
    /// The os-release file that names the distribution (`ENGINE_OS_RELEASE`).
    pub os_release: Option<PathBuf>,
    /// The password of an encrypted repository signing key (`ENGINE_REPO_KEY_PASSWORD`).
    pub key_password: Option<String>,
    /// The machine-wide benchmark lock file (`ENGINE_MACHINE_LOCK`, default
    /// [`MACHINE_LOCK`]); `None` (a context not built from the environment)
    /// takes only ENGINE_HOME's lock.
    pub machine_lock: Option<PathBuf>,
    /// Where cgroup hierarchies are mounted (`ENGINE_CGROUP_ROOT`, default /sys/fs/cgroup).
    pub cgroup_root: Option<PathBuf>,
    /// Where the kernel lists this process's namespaces (`ENGINE_NAMESPACES_DIR`,
    /// default /proc/self/ns): the sandbox checks each kind it needs there.
    pub namespaces_dir: Option<PathBuf>,
    /// The environment engine was started with: what results record of it
    /// (variables profiles declare relevant, the desktop) comes from here.
    pub environ: Environ,
    /// The person's defaults file (`$XDG_CONFIG_HOME/engine/config.toml`,
    /// else `~/.config/engine/config.toml`); `None`: no file is read.
    pub config_file: Option<PathBuf>,
    /// The token `engine result push` sends (`ENGINE_UPLOAD_TOKEN`).
    pub upload_token: Option<String>,
}

/// ENGINE_HOME and what is reached through it.
pub struct Context {
    pub home: Home,
    pub store: Store,
    pub settings: Settings,
    catalog: OnceLock<Catalog>,
    packages: OnceLock<Arc<packages::Catalog>>,
}

impl Context {
    pub fn new(home: Home, settings: Settings) -> Context {
        Context {
            store: Store::new(home.results()),
            home,
            settings,
            catalog: OnceLock::new(),
            packages: OnceLock::new(),
        }
    }

    /// The context the environment describes.
    pub fn from_env() -> Context {
        let environ: Environ = std::env::vars_os()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
            .collect();
        let get = |k: &str| environ.get(k).filter(|v| !v.is_empty()).cloned();
        let root = if let Some(h) = get(env::ENGINE_HOME) {
            PathBuf::from(h)
        } else if let Some(x) = get(env::XDG_DATA_HOME) {
            PathBuf::from(x).join("engine")
        } else {
            PathBuf::from(get(env::HOME).unwrap_or_else(|| "/root".into())).join(".local/share/engine")
        };
        let settings = Settings {
            profile_path: get(env::ENGINE_PROFILE_PATH)
                .unwrap_or_default()
                .split(':')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect(),
            downloads: download::Settings::from_vars(|k| environ.get(k).cloned()),
            os_release: environ.get(env::ENGINE_OS_RELEASE).map(PathBuf::from),
            key_password: environ.get(env::ENGINE_REPO_KEY_PASSWORD).cloned(),
            machine_lock: Some(get(env::ENGINE_MACHINE_LOCK).unwrap_or_else(|| MACHINE_LOCK.into()).into()),
            cgroup_root: get(env::ENGINE_CGROUP_ROOT).map(PathBuf::from),
            namespaces_dir: get(env::ENGINE_NAMESPACES_DIR).map(PathBuf::from),
            config_file: Some(match get(env::XDG_CONFIG_HOME) {
                Some(x) => PathBuf::from(x).join("engine/config.toml"),
                None => {
                    PathBuf::from(get(env::HOME).unwrap_or_else(|| "/root".into())).join(".config/engine/config.toml")
                }
            }),
            upload_token: get(env::ENGINE_UPLOAD_TOKEN),
            environ: environ.clone(),
        };
        Context::new(Home { root }, settings)
    }

    /// The profiles and suites in reach (repositories read on first use).
    pub fn catalog(&self) -> &Catalog {
        self.catalog.get_or_init(|| {
            Catalog::new(
                &self.settings.profile_path,
                &self.home.user_profiles(),
                self.packages_arc(),
                self.settings.downloads.clone(),
            )
        })
    }

    /// Generic package names and what provides them here, with the user's
    /// `packages.yaml` on top.
    pub fn packages(&self) -> &packages::Catalog {
        self.packages.get_or_init(|| Arc::new(packages::Catalog::load(&self.home.root.join("packages.yaml"))))
    }

    fn packages_arc(&self) -> Arc<packages::Catalog> {
        self.packages();
        self.packages.get().expect("just made").clone()
    }

    /// The distribution family, for package names and commands.
    pub(crate) fn family(&self) -> Option<packages::Family> {
        packages::Family::detect(self.settings.os_release.as_deref())
    }
}

impl Context {
    /// This context with its saved results in `dir` instead of ENGINE_HOME's
    /// (`engine serve --results DIR`).
    pub fn with_results(mut self, dir: PathBuf) -> Context {
        self.store = Store::new(dir);
        self
    }

    /// The folder of the saved results.
    pub fn store_root(&self) -> PathBuf {
        self.store.root().to_path_buf()
    }
}
