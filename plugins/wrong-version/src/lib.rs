//! A workload built against `engine:plugin@1.0.0` (wit/ is sdk/wit with
//! the version changed): engine must refuse it, naming both versions.

wit_bindgen::generate!({ path: "wit", world: "workload-plugin" });

use engine::plugin::types::{Error, Measurement, Report};
use exports::engine::plugin::workload::Guest;

struct Future;

impl Guest for Future {
    fn keys() -> Vec<String> {
        Vec::new()
    }
    fn results() -> Vec<String> {
        vec!["value".into()]
    }
    fn configure(_config: Vec<(String, String)>) -> Result<(), Error> {
        Ok(())
    }
    fn run() -> Result<Report, Error> {
        Ok(Report { measurements: vec![Measurement { result: "value".into(), value: 1.0 }], log: String::new() })
    }
}

export!(Future);
