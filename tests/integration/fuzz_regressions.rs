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

/// result_load: a value saved as `11.852191546057819` read back as
/// `11.85219154605782` (serde_json's fast float parser may be off by one
/// unit in the last place), so every load and save changed stored results.
/// serde_json's `float_roundtrip` reads every float exactly.
#[test]
fn result_load_floats_survive_load_and_save_exactly() {
    // The input the fuzzer found (the PTS fixture, imported, then mutated).
    let text =
        std::fs::read(crate::common::repo().join("tests/fixtures/fuzz/result-load-float-roundtrip.json")).unwrap();
    let path = std::path::Path::new("result.json");
    let f = engine::store::parse(&text, path).unwrap();
    let once = serde_json::to_vec_pretty(&f).unwrap();
    let again = engine::store::parse(&once, path).unwrap();
    assert_eq!(
        String::from_utf8(serde_json::to_vec_pretty(&again).unwrap()).unwrap(),
        String::from_utf8(once).unwrap()
    );
    assert!(String::from_utf8_lossy(&serde_json::to_vec(&again).unwrap()).contains("11.852191546057819"));
}
