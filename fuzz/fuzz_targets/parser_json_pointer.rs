//! The `json_pointer` parser fed arbitrary tool output: the first byte picks a
//! mode. Even: one of the built-in profiles' json_pointer parsers (the next byte
//! says which) reads the rest as stdout and stderr. Odd: the rest's first
//! line is the profile's pattern and what follows is the output. A value is
//! finite and not negative, or the result is an error; never a panic.
#![no_main]
use engine::parse::Configured;
use engine::profile::model::{ParserDef, Pick};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

#[allow(dead_code)]
fn pick(b: u8) -> Pick {
    [Pick::Last, Pick::First, Pick::Mean, Pick::Sum][(b as usize >> 1) % 4]
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    if data[0] % 2 == 0 {
        let parsers = common::builtin("json_pointer");
        if parsers.is_empty() {
            return;
        }
        let p = parsers[data[1] as usize % parsers.len()];
        common::check(p, &String::from_utf8_lossy(&data[2..]));
    } else {
        let (pattern, output) = common::split(&data[1..]);
        let d = ParserDef { json_pointer: Some(pattern), ..common::def() };
        if let Ok(p) = Configured::build(&d, &common::fill, false) {
            common::check(&p, &output);
        }
    }
});
