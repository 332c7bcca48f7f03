//! The result file itself, pretty-printed; with `--baseline ID`, each
//! identifier's comparison against it too (`comparisons[]`). Without one the
//! output is the stored file, byte for byte as `result.json` holds it.

use super::{Exporter, View};
use crate::model::result::ResultFile;

pub struct Json;

impl Exporter for Json {
    fn export(&self, result: &ResultFile, view: &View) -> String {
        let found = if view.baseline.is_some() { super::view::comparison_records(result, view) } else { Vec::new() };
        let with;
        let result = if found.is_empty() {
            result
        } else {
            with = ResultFile { comparisons: found, ..result.clone() };
            &with
        };
        let mut s = serde_json::to_string_pretty(result).expect("result files serialize");
        s.push('\n');
        s
    }
}
