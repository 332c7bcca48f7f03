//! `sandbox:`: whether a profile runs confined, and what it needs beyond the defaults.

use crate::units::Size;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `sandbox: true`, or `sandbox: {writable: [...], processes: N}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SandboxDef {
    On(bool),
    With(SandboxSpec),
}

// By hand rather than untagged: an error inside the mapping (a bad
// `memory`) keeps its own words and place instead of "no variant matched".
impl<'de> Deserialize<'de> for SandboxDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SandboxDef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("`true`, `false` or a mapping such as `{processes: 64}`")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<SandboxDef, E> {
                Ok(SandboxDef::On(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<SandboxDef, A::Error> {
                SandboxSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(SandboxDef::With)
            }
        }
        d.deserialize_any(V)
    }
}

/// What a confined test may have beyond the defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// Directories it may also write (they must exist).
    #[serde(default)]
    pub writable: Vec<String>,
    /// Most processes each command's tree may have (default 4096).
    #[serde(default)]
    pub processes: Option<u64>,
    /// Most memory the test's commands together may use (`4GiB`; default
    /// an eighth of the machine's, at least 1 GiB).
    #[serde(default)]
    pub memory: Option<Size>,
    /// More host paths (absolute, no symbolic link on the way) shown
    /// read-only beside the standard ones (`/usr`, a few `/etc` files,
    /// `/sys`); a shared profile needs `--grant read=PATH` outside `/opt`,
    /// `/usr/local` and `/etc/alternatives`.
    #[serde(default)]
    pub read: Vec<String>,
    /// Whether a shared profile's commands need io_uring, which its user
    /// then grants with `--grant io_uring=yes` (io_uring's operations are
    /// not seen by the system-call filter, so a confined command of a
    /// shared profile gets ENOSYS without both; a local profile has it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub io_uring: bool,
    /// Whether its commands need pseudo-terminals (a tool that insists on
    /// one): they get a devpts instance of their own (`/dev/pts`,
    /// `/dev/ptmx`), never the user's terminal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pty: bool,
}

impl SandboxDef {
    /// Whether the profile asks to run confined.
    pub fn on(&self) -> bool {
        matches!(self, SandboxDef::On(true) | SandboxDef::With(_))
    }

    pub fn writable(&self) -> Vec<String> {
        match self {
            SandboxDef::With(s) => s.writable.clone(),
            SandboxDef::On(_) => Vec::new(),
        }
    }

    pub fn read(&self) -> Vec<String> {
        match self {
            SandboxDef::With(s) => s.read.clone(),
            SandboxDef::On(_) => Vec::new(),
        }
    }

    /// Whether its commands get pseudo-terminals of their own.
    pub fn pty(&self) -> bool {
        matches!(self, SandboxDef::With(SandboxSpec { pty: true, .. }))
    }

    /// Whether its commands may use io_uring.
    pub fn io_uring(&self) -> bool {
        matches!(self, SandboxDef::With(SandboxSpec { io_uring: true, .. }))
    }

    pub fn processes(&self) -> Option<u64> {
        match self {
            SandboxDef::With(s) => s.processes,
            SandboxDef::On(_) => None,
        }
    }

    /// What it asks for beyond the sandbox's defaults, in words (empty: nothing).
    pub fn extras(&self) -> Vec<String> {
        let mut v = Vec::new();
        if !self.writable().is_empty() {
            v.push(format!("also writable: {}", self.writable().join(", ")));
        }
        if !self.read().is_empty() {
            v.push(format!("also readable: {}", self.read().join(", ")));
        }
        if self.io_uring() {
            v.push("io_uring".to_string());
        }
        if self.pty() {
            v.push("pseudo-terminals of its own".to_string());
        }
        if let Some(n) = self.processes() {
            v.push(format!("up to {n} processes"));
        }
        if let SandboxDef::With(SandboxSpec { memory: Some(m), .. }) = self {
            v.push(format!("up to {m} of memory"));
        }
        v
    }
}
