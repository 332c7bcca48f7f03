//! The `json_pointer` parser fed arbitrary tool output (see `common::fuzz_parser`):
//! one of the built-in profiles' json_pointer parsers, or a fuzzed pattern, on
//! fuzzed output. A value is finite and not negative, or the result is an
//! error; never a panic.
#![no_main]
use engine::model::profile::ParserDef;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::fuzz_parser("json_pointer", data, |pattern, _| ParserDef { json_pointer: Some(pattern), ..common::def() })
});
