//! The `template` parser fed arbitrary tool output (see `common::fuzz_parser`):
//! one of the built-in profiles' template parsers, or a fuzzed pattern, on
//! fuzzed output. A value is finite and not negative, or the result is an
//! error; never a panic.
#![no_main]
use engine::model::profile::ParserDef;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::fuzz_parser("template", data, |pattern, b| ParserDef {
        template: Some(pattern),
        line_hint: (b & 2 != 0).then(|| "MB/s".to_string()),
        line_before_hint: (b & 4 != 0).then(|| "Count".to_string()),
        pick: common::pick(b >> 3),
        ..common::def()
    })
});
