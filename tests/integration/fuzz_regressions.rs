//! Inputs that made a fuzz target (`fuzz/`, `scripts/fuzz.sh`) crash, each
//! kept as a regular test of the code it broke, through the same entry point
//! the target uses.

use std::time::Duration;

/// plugin_config: a duration whose number is too large for a Duration
/// panicked in `Duration::from_secs_f64`; now it is a config error.
#[test]
fn plugin_config_huge_duration_is_an_error() {
    let c: engine_sdk::Config = [("runtime", "99999999999999999999999999h"), ("t2", "1e300")].into_iter().collect();
    let e = c.duration_or("runtime", Duration::from_secs(1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "config `runtime`: `99999999999999999999999999h` is not a duration; write 500ms, 20s or 2m"
    );
    assert!(c.duration_or("t2", Duration::ZERO).is_err());
}
