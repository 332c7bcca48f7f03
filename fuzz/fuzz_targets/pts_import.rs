//! PTS composite.xml importer: any bytes (as `engine result import` reads
//! them: UTF-8 or an error) import or fail with a positioned error; the
//! built-in profiles are there to match results against.
#![no_main]
use engine::catalog::Catalog;
use engine::interop::pts::import_with;
use engine::model::profile::LoadedProfile;
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, LazyLock};

static PROFILES: LazyLock<Vec<Arc<LoadedProfile>>> = LazyLock::new(|| {
    let c = Catalog::new(
        &[],
        std::path::Path::new("/nonexistent"),
        std::sync::Arc::new(engine::profile::load::Packages::builtin()),
        Default::default(),
    );
    c.all_profiles().into_iter().flatten().map(Arc::new).collect()
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match import_with(text, "fuzz/composite.xml", &PROFILES) {
        Ok(f) => {
            // What `engine result import` does next: store it.
            let json = serde_json::to_vec(&f).expect("an imported result serializes");
            engine::store::parse(&json, std::path::Path::new("fuzz/result.json"))
                .expect("an imported result reads back");
        }
        Err(e) => assert!(e.line >= 1 && e.col >= 1, "{e}"),
    }
});
