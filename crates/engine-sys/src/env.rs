//! Every environment variable engine reads, in one place. They are read
//! when the command's context is built (`ops::Context::from_env`) and nowhere else.

/// State directory: results, installed tests, download cache, journal.
/// Default: `$XDG_DATA_HOME/engine`, else `~/.local/share/engine`.
pub const ENGINE_HOME: &str = "ENGINE_HOME";
/// The token `engine result push` sends when no --token-file is given.
pub const ENGINE_UPLOAD_TOKEN: &str = "ENGINE_UPLOAD_TOKEN";
/// Extra profile folders, `:`-separated; each holds `test-profiles/` and/or `suites/`.
/// Searched before the user folder and the built-in profiles.
pub const ENGINE_PROFILE_PATH: &str = "ENGINE_PROFILE_PATH";
/// Standard XDG data folder.
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// Standard XDG config folder: engine's defaults are `$XDG_CONFIG_HOME/engine/config.toml`.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
/// Home folder, for the default of `ENGINE_HOME` and of the config file (`~/.config/engine/config.toml`).
pub const HOME: &str = "HOME";
/// Disables colour in terminal output when set (https://no-color.org).
pub const NO_COLOR: &str = "NO_COLOR";
/// Terminal width for reports when stdout is not a terminal (default 80).
pub const COLUMNS: &str = "COLUMNS";
/// The machine-wide benchmark lock (default `/run/lock/engine-benchmark.lock`):
/// one `engine benchmark` per machine whatever its ENGINE_HOME. Set it only
/// where "machine" means something smaller, e.g. one per container or test.
pub const ENGINE_MACHINE_LOCK: &str = "ENGINE_MACHINE_LOCK";
/// Where cgroup hierarchies are mounted (default /sys/fs/cgroup): the
/// sandbox makes each confined command's cgroup under engine's own there.
pub const ENGINE_CGROUP_ROOT: &str = "ENGINE_CGROUP_ROOT";
/// Where the sandbox looks for the namespace kinds it needs (default
/// /proc/self/ns); for containers that hide them, and for tests.
pub const ENGINE_NAMESPACES_DIR: &str = "ENGINE_NAMESPACES_DIR";

// Installing (the book, "Installing what profiles need").

/// Where downloads are looked for before the mirrors, `:`-separated: folders
/// (holding files by name or by sha256, as `engine cache fill DIR` writes
/// them) and base URLs (`http://lab-mirror/engine/`, asked for `BASE/<file>`).
pub const ENGINE_DOWNLOAD_CACHE: &str = "ENGINE_DOWNLOAD_CACHE";
/// Seconds a download may wait for the next bytes before that attempt
/// fails (default 30); also the connect timeout (default 15).
pub const ENGINE_DOWNLOAD_TIMEOUT: &str = "ENGINE_DOWNLOAD_TIMEOUT";
/// Attempts per mirror before the next one (default 3).
pub const ENGINE_DOWNLOAD_RETRIES: &str = "ENGINE_DOWNLOAD_RETRIES";
/// Downloads run at once (default 4).
pub const ENGINE_DOWNLOAD_JOBS: &str = "ENGINE_DOWNLOAD_JOBS";
/// The most one downloaded archive may unpack to, with units (`8GiB`;
/// default 4 GiB).
pub const ENGINE_DOWNLOAD_UNPACK_MAX: &str = "ENGINE_DOWNLOAD_UNPACK_MAX";
/// How many times its own size a downloaded archive may unpack to
/// (default 100; at least 8 MiB whatever the archive).
pub const ENGINE_DOWNLOAD_UNPACK_RATIO: &str = "ENGINE_DOWNLOAD_UNPACK_RATIO";
/// The os-release file that names the distribution family (default
/// `/etc/os-release`), for package names and commands.
pub const ENGINE_OS_RELEASE: &str = "ENGINE_OS_RELEASE";

// Profile repositories (the book, "Profile repositories").

/// The password of an encrypted minisign secret key (`engine repo publish`).
pub const ENGINE_REPO_KEY_PASSWORD: &str = "ENGINE_REPO_KEY_PASSWORD";
