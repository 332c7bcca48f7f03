//! Suite loader: any bytes as a suite file must load or give positioned
//! diagnostics; a suite that loads is flattened against the built-in
//! profiles (presets applied by name), as `engine benchmark suite/x` does.
#![no_main]
use engine::catalog::{Catalog, flatten_suite};
use engine::profile::load::suite_from_str;
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    Catalog::new(
        &[],
        std::path::Path::new("/nonexistent"),
        std::sync::Arc::new(engine::profile::load::Packages::builtin()),
        Default::default(),
    )
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match suite_from_str(text, "fuzz", "fuzz/suites/fuzz.yaml") {
        Ok(s) => {
            let _ = flatten_suite(&CATALOG, &s, &mut Vec::new()).map_err(|e| e.to_string());
        }
        Err(d) => {
            assert!(!d.is_empty());
            for x in d.iter() {
                assert!(x.line >= 1, "diagnostic without a line: {x}");
            }
        }
    }
});
