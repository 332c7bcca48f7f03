//! A command line written back from parsed flags, a word at a time: each
//! part of a benchmark's flags writes its own (`benchmark_args/`), and the
//! whole line is put together in `command_line`.

use clap::ValueEnum;
use engine_model::model::template::quote;

/// How clap spells `v` on the command line.
pub fn value_name<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value().map(|p| p.get_name().to_string()).unwrap_or_default()
}

/// A command line being written, a word at a time (each quoted for a shell).
pub struct Line(pub Vec<String>);

impl Line {
    /// `--flag value`, or `--flag=value` when the value starts with `-`
    /// (it would read as a flag).
    pub fn opt<T: std::fmt::Display>(&mut self, flag: &str, v: Option<T>) {
        if let Some(v) = v.map(|v| v.to_string()) {
            match v.starts_with('-') {
                true => self.0.push(format!("{flag}={}", quote(&v))),
                false => self.0.extend([flag.to_string(), quote(&v)]),
            }
        }
    }
    pub fn each<T: std::fmt::Display>(&mut self, flag: &str, vs: &[T]) {
        vs.iter().for_each(|v| self.opt(flag, Some(v)));
    }
    pub fn flag(&mut self, flag: &str, on: bool) {
        if on {
            self.0.push(flag.to_string());
        }
    }
}
