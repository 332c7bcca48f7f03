//! The result file itself, pretty-printed.

use super::{Exporter, View};
use crate::model::result::ResultFile;

pub struct Json;

impl Exporter for Json {
    fn export(&self, result: &ResultFile, _: &View) -> String {
        let mut s = serde_json::to_string_pretty(result).expect("result files serialize");
        s.push('\n');
        s
    }
}
