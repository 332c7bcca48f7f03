//! result.json loader (lenient load and repair): any bytes load or give an
//! error with a position. A file that loads is saved and loaded again, and
//! must come back the same (what repair produced is stable).
#![no_main]
use engine::store::parse;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz/result.json");
    match parse(data, path) {
        Ok(f) => {
            let json = serde_json::to_vec_pretty(&f).expect("a loaded result serializes");
            let again = parse(&json, path).expect("a saved result loads");
            assert!(again.repaired.is_empty(), "saving a repaired file left damage: {:?}", again.repaired);
            let twice = serde_json::to_vec_pretty(&again).unwrap();
            if twice != json {
                let at = twice.iter().zip(&json).position(|(a, b)| a != b).unwrap_or(json.len().min(twice.len()));
                let ctx =
                    |b: &[u8]| String::from_utf8_lossy(&b[at.saturating_sub(80)..(at + 80).min(b.len())]).into_owned();
                panic!(
                    "a result file changes when saved and loaded again:\n{}\n--- vs ---\n{}",
                    ctx(&json),
                    ctx(&twice)
                );
            }
            // Every view of it renders.
            let _ = engine::report::text::analysis_only(&f, &engine::report::View::default(), 80);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
