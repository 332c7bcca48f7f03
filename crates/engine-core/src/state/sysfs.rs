//! A sysfs attribute set to a value (`--set queue/read_ahead_kb=128`,
//! `--set iosched/slice_idle=0`), journaled and read back.

pub use super::change::sysfs::SysfsValue;
use super::journal::Shared;
use super::{Guard, SpecError, StateError, SystemState};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// Path under the device's sysfs folder: `queue/read_ahead_kb`, `iosched/low_latency` (under `queue/`).
    pub attr: String,
    pub value: String,
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.attr, self.value)
    }
}

/// `--set queue/read_ahead_kb=128`.
impl std::str::FromStr for Setting {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        Setting::parse(s)
    }
}

impl Setting {
    /// Parses `queue/read_ahead_kb=128` or `iosched/slice_idle=0`.
    pub(crate) fn parse(s: &str) -> Result<Setting, SpecError> {
        let (k, v) = s.split_once('=').ok_or_else(|| SpecError(format!("`--set {s}` has no `=`")))?;
        // One attribute by name, `queue/NAME` or `iosched/NAME`: no other
        // path reaches sysfs, whatever a result file or a flag spells
        // (`queue/./scheduler`, `queue//x` and `..` name no attribute).
        let k = k.trim();
        let name_ok = |n: &str| {
            !n.is_empty()
                && n.len() <= 64
                && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        };
        let ok = match k.split_once('/') {
            Some(("queue" | "iosched", name)) => name_ok(name),
            _ => false,
        };
        if !ok {
            return Err(SpecError(format!(
                "`--set {}`: the attribute is queue/NAME or iosched/NAME, NAME of a-z, 0-9 and _ (queue/read_ahead_kb, iosched/slice_idle)",
                crate::sys::text::one_line(s)
            )));
        }
        let v = v.trim();
        if v.is_empty() || v.len() > 64 || v.chars().any(char::is_control) {
            return Err(SpecError(format!(
                "`--set {}`: the value is one line of at most 64 characters",
                crate::sys::text::one_line(s)
            )));
        }
        // The scheduler file reads back as `none [mq-deadline] kyber`, which
        // cannot be written back: schedulers have their own flag and journal entry.
        if k == "queue/scheduler" {
            return Err(SpecError(format!(
                "`--set {}`: set the I/O scheduler with `--scheduler {}` (it is journaled and restored by name)",
                crate::sys::text::one_line(s),
                crate::sys::text::one_line(v)
            )));
        }
        Ok(Setting { attr: k.to_string(), value: v.to_string() })
    }

    pub fn is_iosched(&self) -> bool {
        self.attr.starts_with("iosched/")
    }

    /// The attribute's file for a device's queue folder (`/sys/block/sda/queue`).
    pub(crate) fn path(&self, queue: &str) -> String {
        match self.attr.strip_prefix("queue/") {
            Some(rest) => format!("{queue}/{rest}"),
            None => format!("{queue}/{}", self.attr),
        }
    }
}

/// Reads `path` and checks it shows `wanted` (bracketed choices count).
pub(crate) fn verify(what: &str, path: &str, wanted: &str) -> Result<(), StateError> {
    let got = std::fs::read_to_string(path).map_err(|e| StateError::Apply(format!("cannot read back {path}: {e}")))?;
    let got = got.trim();
    let ok = got == wanted
        || got.split_whitespace().any(|w| w == format!("[{wanted}]"))
        || (wanted.parse::<f64>().ok().is_some() && got.parse::<f64>().ok() == wanted.parse::<f64>().ok());
    if ok {
        Ok(())
    } else {
        Err(StateError::NotInForce {
            what: what.to_string(),
            wanted: wanted.to_string(),
            got: got.to_string(),
            path: path.to_string(),
        })
    }
}

/// Writes `value` to `path`, journaling the old value first, and reads it back.
pub(crate) fn set(guard: &mut Guard, path: &str, value: &str) -> Result<(), StateError> {
    let original = std::fs::read_to_string(path).map_err(|e| StateError::Apply(format!("cannot read {path}: {e}")))?;
    guard.record(SysfsValue { path: path.to_string(), original: original.trim().to_string() })?;
    std::fs::write(path, value).map_err(|e| StateError::Apply(format!("cannot write {value:?} to {path}: {e}")))?;
    verify(path, path, value)
}

/// Settings applied to every device of the sweep.
pub struct Settings {
    pub queues: Vec<String>,
    pub settings: Vec<Setting>,
}

impl SystemState for Settings {
    fn label(&self) -> String {
        self.settings
            .iter()
            .map(|s| format!("{}={}", s.attr.rsplit('/').next().unwrap_or(&s.attr), s.value))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn apply(&self, journal: &Shared) -> Result<Guard, StateError> {
        let mut g = Guard::new(journal);
        for q in &self.queues {
            for s in &self.settings {
                set(&mut g, &s.path(q), &s.value)?;
            }
        }
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_settings() {
        let s = Setting::parse("queue/read_ahead_kb=128").unwrap();
        assert_eq!(s.path("/sys/block/sda/queue"), "/sys/block/sda/queue/read_ahead_kb");
        let t = Setting::parse("iosched/slice_idle=0").unwrap();
        assert!(t.is_iosched());
        assert_eq!(t.path("/sys/block/sda/queue"), "/sys/block/sda/queue/iosched/slice_idle");
        assert!(Setting::parse("queue/../../etc=1").is_err());
        assert!(Setting::parse("device/delete=1").is_err());
        assert!(Setting::parse("queue/x").is_err());
        // Red team: spellings of the scheduler file and other paths.
        for bad in [
            "queue/./scheduler=kyber",
            "queue//scheduler=kyber",
            "queue/ ./scheduler=kyber",
            "queue/iosched/x=1",
            "/queue/nr_requests=4",
            "queue/NR=1",
            "queue/nr_requests=4\nx",
        ] {
            assert!(Setting::parse(bad).is_err(), "{bad}");
        }
        let e = Setting::parse("queue/scheduler=bfq").unwrap_err();
        assert!(e.0.contains("--scheduler bfq"), "{e}");
    }
}
