//! The result file itself, pretty-printed; with `--baseline ID`, each
//! identifier's comparison against it too (`comparisons[]`). Without one the
//! output is the stored file, byte for byte as `result.json` holds it —
//! but for DEL, C1 and bidi controls, written as `\uXXXX` escapes (the same
//! value; `sys::text::json`) so the output is inert on a terminal.

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
        let s = serde_json::to_string_pretty(result).expect("result files serialize");
        crate::sys::text::json(&s).into_owned() + "\n"
    }
}
