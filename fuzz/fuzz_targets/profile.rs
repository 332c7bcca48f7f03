//! Profile loader: any bytes as a profile.yaml must load or give
//! diagnostics with a position and a hint — never panic. A profile that
//! loads is also expanded into its tests (the next thing engine does).
#![no_main]
use engine::expand::{Batch, expand};
use engine::model::profile::Origin;
use engine::profile::load::{Packages, profile_from_str};
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, LazyLock};

static PACKAGES: LazyLock<Packages> = LazyLock::new(Packages::builtin);

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match profile_from_str(text, "fuzz/profile.yaml", Origin::Builtin, &PACKAGES) {
        Ok(p) => {
            let p = Arc::new(p);
            if let Ok(tests) = expand(&p, &[], &Batch, false) {
                for t in tests.iter().take(64) {
                    let _ = (t.key(), t.label(), t.description(), t.bindings());
                }
            }
        }
        Err(d) => {
            assert!(!d.is_empty(), "an error without a diagnostic");
            for x in d.iter() {
                assert!(x.line >= 1, "diagnostic without a line: {x}");
                let _ = x.to_string();
            }
        }
    }
});
