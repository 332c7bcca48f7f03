//! A loop device over a sparse file engine creates (`--device loop:4G`), for
//! file-system sweeps without a spare disk. The guard detaches it and deletes
//! the file.

use super::change::{Undo, UndoError, run};
use super::journal::Shared;
use super::{Guard, SpecError, StateError};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

/// Loop devices over `backing_file` that engine attached; the file is
/// removed too when engine created it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopDevice {
    pub backing_file: String,
    pub remove_file: bool,
}

impl Undo for LoopDevice {
    fn describe(&self) -> String {
        let delete = if self.remove_file { " and delete it" } else { "" };
        format!("detach loop devices over {}{delete}", self.backing_file)
    }

    fn undo(&self) -> Result<(), UndoError> {
        let list = run("losetup", &["-j", &self.backing_file]).unwrap_or_default();
        for line in list.lines() {
            if let Some(dev) = line.split(':').next().filter(|d| d.starts_with("/dev/")) {
                run("losetup", &["-d", dev])?;
            }
        }
        if self.remove_file {
            match std::fs::remove_file(&self.backing_file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(UndoError(format!("cannot delete {}: {e}", self.backing_file))),
            }
        }
        Ok(())
    }
}

/// Creates a `size`-byte file in `dir`, attaches a loop device to it, and
/// returns the device path (`/dev/loop3`) with the guard that undoes both.
pub fn create(dir: &Path, size: u64, journal: &Shared) -> Result<(Guard, String), StateError> {
    std::fs::create_dir_all(dir).map_err(|e| StateError::Apply(format!("cannot create {}: {e}", dir.display())))?;
    let file = dir.join(format!(
        "engine-loop-{}-{}.img",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros()).unwrap_or(0)
    ));
    let mut g = Guard::new(journal);
    g.record(LoopDevice { backing_file: file.display().to_string(), remove_file: true })?;
    // A fresh name, created exclusively: never a file (or a link) someone put there.
    let f = crate::sys::fs::create_exclusive(&file)
        .map_err(|e| StateError::Apply(format!("cannot create {}: {e}", file.display())))?;
    f.set_len(size).map_err(|e| StateError::Apply(format!("cannot size {}: {e}", file.display())))?;
    drop(f);
    let o = crate::sys::process::dies_with_engine(Command::new("losetup").args(["--find", "--show"]).arg(&file))
        .output()
        .map_err(|e| StateError::Apply(format!("cannot run losetup: {e}")))?;
    if !o.status.success() {
        return Err(StateError::Apply(format!("losetup failed: {}", String::from_utf8_lossy(&o.stderr).trim())));
    }
    let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
    Ok((g, dev))
}

/// How identifiers name a loop device of `size` bytes, as `loop:SIZE` is
/// written (`loop 4G`, `loop 320M`): by what it is, not by its number.
pub fn label(size: u64) -> String {
    for (unit, f) in [("T", 1u64 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if size >= f && size.is_multiple_of(f) {
            return format!("loop {}{unit}", size / f);
        }
    }
    format!("loop {size}B")
}

/// Parses `loop:4G` (binary units, as fio and truncate read them: 4G = 4 GiB).
pub fn parse_spec(s: &str) -> Option<Result<u64, SpecError>> {
    let size = s.strip_prefix("loop:")?;
    let t = size.trim();
    let bytes = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() && !t.ends_with('B') => {
            let mult: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => {
                    return Some(Err(SpecError(format!(
                        "`{size}`: use K, M, G or T (powers of 2), or an exact unit such as 4GiB"
                    ))));
                }
            };
            t[..i].trim().parse::<u64>().map(|n| n * mult).map_err(|_| SpecError(format!("`{size}` is not a size")))
        }
        _ => crate::units::parse_size(t).map_err(|e| SpecError(e.to_string())),
    };
    Some(bytes.and_then(|b| {
        if b < (16 << 20) {
            Err(SpecError(format!("`{size}` is too small for a file system; use at least 16M")))
        } else {
            Ok(b)
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_spec("loop:4G"), Some(Ok(4 << 30)));
        assert_eq!(parse_spec("loop:300M"), Some(Ok(300 << 20)));
        assert_eq!(parse_spec("loop:1GB"), Some(Ok(1_000_000_000)));
        assert!(parse_spec("loop:1M").unwrap().is_err());
        assert!(parse_spec("loop:lots").unwrap().is_err());
        assert_eq!(parse_spec("/dev/sdb"), None);
    }

    #[test]
    fn labels_say_what_the_device_is() {
        assert_eq!(label(4 << 30), "loop 4G");
        assert_eq!(label(320 << 20), "loop 320M");
        assert_eq!(label(1_000_000_000), "loop 1000000000B");
    }
}
