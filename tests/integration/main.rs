//! Integration tests: they run the real `engine` binary in a temporary
//! ENGINE_HOME and target directory, with real tools from Debian.

mod common;

mod compare;

mod authoring;
mod benchmark;
mod builtin;
mod cli;
mod failures;
mod first_users;
mod fleet;
mod fuzz_regressions;
mod hardening;
mod httpd;
mod install;
mod loopdev;
mod malformed;
mod parsers;
mod plugins;
mod readme;
mod repo;
mod schemas;
mod seeds;
mod sweeps;
mod sysinfo;
mod trust;
