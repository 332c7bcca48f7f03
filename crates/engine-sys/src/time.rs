//! Timestamps as engine writes them: RFC 3339 in UTC.

use std::time::SystemTime;

/// Now, to the second (`2026-12-01T13:52:32Z`): result files, records, locks.
pub fn now() -> String {
    stamp(SystemTime::now())
}

/// `t` to the second.
pub fn stamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Now, to the millisecond: progress events.
pub fn now_millis() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Seconds since the Unix epoch.
pub fn unix_secs() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
