//! Integration tests: they run the real `engine` binary in a temporary
//! ENGINE_HOME and target directory, with real tools from Debian. One module
//! per capability; `common`, `httpd` and `loopdev` are shared helpers.

mod common;
mod httpd;
mod loopdev;

mod attacks;
mod authoring;
mod book;
mod cli;
mod compare;
mod concurrency;
mod config;
mod counters;
mod failures;
mod fidelity;
mod fleet;
mod history;
mod install;
mod interruption;
mod layout;
mod monitors;
mod orchestration;
mod package;
mod parsers;
mod pipeline;
mod plugins;
mod profiles;
mod progress;
mod pts_import;
mod repo;
mod results;
mod robustness;
mod sandbox;
mod schemas;
mod serve;
mod servers;
mod setups;
mod shipped_profiles;
mod statistics;
mod sweeps;
mod sysinfo;
mod trials;
mod workloads;
