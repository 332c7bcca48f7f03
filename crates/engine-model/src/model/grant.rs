//! What the user grants a shared profile beyond engine's defaults for one
//! run (`--grant KEY=VALUE`, the book, "Sandbox"). A profile from a repository
//! or imported from PTS cannot loosen its own confinement — more writable
//! places, processes, memory, scratch space, time, plugin memory or plugin
//! time than the defaults give — unless the user names the grant here; the
//! result's Sandbox Notes record what was granted.

use std::path::PathBuf;
use std::time::Duration;

/// Grants by name; each `None`/empty is "the defaults".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// `writable=DIR`: directories (existing, absolute) it may also write.
    pub writable: Vec<PathBuf>,
    /// `processes=N`: most processes per command.
    pub processes: Option<u64>,
    /// `memory=SIZE`: most memory per command (or per plugin instance).
    pub memory: Option<u64>,
    /// `scratch=SIZE`: most space the test's directories may take.
    pub scratch: Option<u64>,
    /// `time=DURATION`: longest a command (or a plugin call, or a test's
    /// trial budget) may run.
    pub time: Option<Duration>,
    /// `trials=N`: most trials a test may schedule whatever its budget
    /// (`trials.times`, `min`, `warmup`).
    pub trials: Option<u32>,
    /// `read=PATH`: host paths (absolute) it may also read.
    pub read: Vec<PathBuf>,
    /// `io_uring=yes`: its commands may use io_uring.
    pub io_uring: bool,
    /// `builtin-command=yes`: a built-in workload may start the program the
    /// profile names (`startup-time`'s `command`), which runs unconfined.
    pub builtin_command: bool,
}

/// One step of a path to a profile's field (for messages that point at it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(&'static str),
    Index(usize),
}

impl Seg {
    pub fn key(k: &'static str) -> Seg {
        Seg::Key(k)
    }
}

/// The keys `--grant` takes, with what each value is.
pub const KEYS: [(&str, &str); 9] = [
    ("writable", "an absolute directory"),
    ("read", "an absolute path"),
    ("io_uring", "yes"),
    ("builtin-command", "yes (the program runs unconfined)"),
    ("processes", "a number"),
    ("memory", "a size such as 8GiB"),
    ("scratch", "a size such as 20GB"),
    ("time", "a duration such as 2h"),
    ("trials", "a number"),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    #[error("`--grant {0}` is not KEY=VALUE")]
    Form(String),
    #[error("`--grant {key}=…`: unknown key `{key}`")]
    Key { key: String },
    #[error("`--grant {key}={value}`: {why}")]
    Value { key: String, value: String, why: String },
}

impl GrantError {
    pub fn hint(&self) -> String {
        let keys: Vec<String> = KEYS.iter().map(|(k, v)| format!("{k}= ({v})")).collect();
        format!("grants are {}", keys.join(", "))
    }
}

impl Grants {
    /// Parses every `--grant` given, in order (later ones win).
    pub fn parse(items: &[String]) -> Result<Grants, GrantError> {
        let mut g = Grants::default();
        for item in items {
            let (key, value) = item.split_once('=').ok_or_else(|| GrantError::Form(item.clone()))?;
            let bad = |why: String| GrantError::Value { key: key.into(), value: value.into(), why };
            match key {
                "writable" => {
                    let p = PathBuf::from(value);
                    if !p.is_absolute() || !p.is_dir() {
                        return Err(bad("not an existing absolute directory".into()));
                    }
                    g.writable.push(p);
                }
                "read" => {
                    let p = PathBuf::from(value);
                    if !p.is_absolute() {
                        return Err(bad("not an absolute path".into()));
                    }
                    g.read.push(p);
                }
                "io_uring" | "builtin-command" => {
                    if value != "yes" {
                        return Err(bad("the only value is `yes`".into()));
                    }
                    if key == "io_uring" {
                        g.io_uring = true;
                    } else {
                        g.builtin_command = true;
                    }
                }
                "processes" => g.processes = Some(value.parse().map_err(|_| bad("not a whole number".into()))?),
                "memory" => g.memory = Some(crate::units::parse_size(value).map_err(|e| bad(e.to_string()))?),
                "scratch" => g.scratch = Some(crate::units::parse_size(value).map_err(|e| bad(e.to_string()))?),
                "time" => g.time = Some(crate::units::parse_duration(value).map_err(|e| bad(e.to_string()))?),
                "trials" => g.trials = Some(value.parse().map_err(|_| bad("not a whole number".into()))?),
                _ => return Err(GrantError::Key { key: key.into() }),
            }
        }
        Ok(g)
    }

    /// Both sets of grants; `other`'s values win where both give one.
    pub fn merge(mut self, other: Grants) -> Grants {
        self.writable.extend(other.writable);
        self.read.extend(other.read);
        self.io_uring |= other.io_uring;
        self.builtin_command |= other.builtin_command;
        self.processes = other.processes.or(self.processes);
        self.memory = other.memory.or(self.memory);
        self.scratch = other.scratch.or(self.scratch);
        self.time = other.time.or(self.time);
        self.trials = other.trials.or(self.trials);
        self
    }

    /// The `--grant` values that give exactly this.
    pub fn args(&self) -> Vec<String> {
        let mut v: Vec<String> = self.writable.iter().map(|w| format!("writable={}", w.display())).collect();
        v.extend(self.read.iter().map(|r| format!("read={}", r.display())));
        v.extend(self.io_uring.then(|| "io_uring=yes".to_string()));
        v.extend(self.builtin_command.then(|| "builtin-command=yes".to_string()));
        v.extend(self.processes.map(|n| format!("processes={n}")));
        v.extend(self.memory.map(|m| format!("memory={}", crate::units::exact_size(m))));
        v.extend(self.scratch.map(|m| format!("scratch={}", crate::units::exact_size(m))));
        v.extend(self.time.map(|t| format!("time={}", crate::units::exact_duration(t))));
        v.extend(self.trials.map(|n| format!("trials={n}")));
        v
    }

    /// What was granted, in words (empty: nothing).
    pub fn describe(&self) -> Vec<String> {
        let mut v: Vec<String> = self.writable.iter().map(|w| format!("writable={}", w.display())).collect();
        v.extend(self.read.iter().map(|r| format!("read={}", r.display())));
        v.extend(self.io_uring.then(|| "io_uring=yes".to_string()));
        v.extend(self.builtin_command.then(|| "builtin-command=yes".to_string()));
        v.extend(self.processes.map(|n| format!("processes={n}")));
        v.extend(self.memory.map(|m| format!("memory={}", crate::units::format_bytes_binary(m))));
        v.extend(self.scratch.map(|m| format!("scratch={}", crate::units::format_bytes_binary(m))));
        v.extend(self.time.map(|t| format!("time={}", humantime::format_duration(t))));
        v.extend(self.trials.map(|n| format!("trials={n}")));
        v
    }

    pub fn is_empty(&self) -> bool {
        *self == Grants::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_parse_by_name_and_refuse_the_rest() {
        let g = Grants::parse(&["memory=8GiB".into(), "time=2h".into(), "writable=/tmp".into(), "processes=9".into()])
            .unwrap();
        assert_eq!(g.memory, Some(8 << 30));
        assert_eq!(g.time, Some(Duration::from_secs(7200)));
        assert_eq!(g.writable, vec![PathBuf::from("/tmp")]);
        assert_eq!(g.describe(), ["writable=/tmp", "processes=9", "memory=8.0 GiB", "time=2h"]);
        assert!(matches!(Grants::parse(&["network=all".into()]), Err(GrantError::Key { .. })));
        assert!(matches!(Grants::parse(&["memory".into()]), Err(GrantError::Form(_))));
        assert!(matches!(Grants::parse(&["writable=relative".into()]), Err(GrantError::Value { .. })));
        assert!(matches!(Grants::parse(&["memory=lots".into()]), Err(GrantError::Value { .. })));
        assert!(Grants::parse(&[]).unwrap().is_empty());
        let g = Grants::parse(&["read=/srv/data".into(), "io_uring=yes".into()]).unwrap();
        assert_eq!((g.read.clone(), g.io_uring), (vec![PathBuf::from("/srv/data")], true));
        assert_eq!(Grants::parse(&g.args()).unwrap(), g, "args give back the same grants");
        assert!(matches!(Grants::parse(&["io_uring=no".into()]), Err(GrantError::Value { .. })));
        assert!(matches!(Grants::parse(&["read=etc".into()]), Err(GrantError::Value { .. })));
    }
}
