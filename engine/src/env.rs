//! Every environment variable engine reads, in one place.

/// State directory: results, installed tests, download cache, journal.
/// Default: `$XDG_DATA_HOME/engine`, else `~/.local/share/engine`.
pub const ENGINE_HOME: &str = "ENGINE_HOME";
/// Extra profile folders, `:`-separated; each holds `test-profiles/` and/or `suites/`.
/// Searched before the user folder and the built-in profiles.
pub const ENGINE_PROFILE_PATH: &str = "ENGINE_PROFILE_PATH";
/// Standard XDG data folder.
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// Home folder, for the default of `ENGINE_HOME`.
pub const HOME: &str = "HOME";
/// Disables colour in terminal output when set (https://no-color.org).
pub const NO_COLOR: &str = "NO_COLOR";
/// Terminal width for reports when stdout is not a terminal (default 80).
pub const COLUMNS: &str = "COLUMNS";
