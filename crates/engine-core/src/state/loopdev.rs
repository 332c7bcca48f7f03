//! A loop device over a sparse file engine creates (`--device loop:4G`), for
//! file-system sweeps without a spare disk. The guard detaches it and deletes
//! the file.

pub use super::change::loopdev::LoopDevice;
use super::journal::Shared;
use super::{Guard, SpecError, StateError};
use std::path::Path;
use std::process::Command;

/// A loop device engine makes: its size, and whether it keeps the page
/// cache of its backing file (`loop:4G,cached`) instead of direct I/O on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub size: u64,
    pub cached: bool,
}

/// An attached loop device.
pub struct Attached {
    pub guard: Guard,
    pub device: String,
    /// Direct I/O was asked for and the backing file system refused it: the
    /// device is cached after all (a warning for the run).
    pub fell_back: Option<String>,
}

/// Creates a `size`-byte file in `dir`, attaches a loop device to it —
/// with direct I/O on the file (`losetup --direct-io=on`) unless `cached`,
/// so what a test writes reaches the disk under the file instead of the
/// page cache — and returns it with the guard that undoes both.
pub fn create(dir: &Path, spec: Spec, journal: &Shared) -> Result<Attached, StateError> {
    let size = spec.size;
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
    let dio = if spec.cached { "--direct-io=off" } else { "--direct-io=on" };
    let o = crate::sys::process::dies_with_engine(Command::new("losetup").args(["--find", "--show", dio]).arg(&file))
        .output()
        .map_err(|e| StateError::Apply(format!("cannot run losetup: {e}")))?;
    if !o.status.success() {
        return Err(StateError::Apply(format!("losetup failed: {}", String::from_utf8_lossy(&o.stderr).trim())));
    }
    let device = String::from_utf8_lossy(&o.stdout).trim().to_string();
    // losetup attaches the device even where the file system under the
    // file refuses O_DIRECT (tmpfs); the kernel says which it got.
    let name = device.trim_start_matches("/dev/");
    let dio_on = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).is_ok_and(|s| s.trim() == "1");
    let fell_back = (!spec.cached && !dio_on).then(|| {
        format!(
            "the file system under {} refuses direct I/O: {device} goes through the page cache (results may be memory's, not the disk's)",
            file.display()
        )
    });
    Ok(Attached { guard: g, device, fell_back })
}

/// How identifiers name a loop device, as `loop:SIZE` is written (`loop
/// 4G`, `loop 320M`, `loop 4G cached`): by what it is, not by its number.
pub fn label(spec: Spec) -> String {
    let cached = if spec.cached { " cached" } else { "" };
    let size = spec.size;
    for (unit, f) in [("T", 1u64 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if size >= f && size.is_multiple_of(f) {
            return format!("loop {}{unit}{cached}", size / f);
        }
    }
    format!("loop {size}B{cached}")
}

/// Parses `loop:4G` (binary units, as fio and truncate read them: 4G = 4
/// GiB), and `loop:4G,cached` for a device that keeps the page cache.
pub(crate) fn parse_spec(s: &str) -> Option<Result<Spec, SpecError>> {
    let rest = s.strip_prefix("loop:")?;
    let (size, cached) = match rest.split_once(',') {
        None => (rest, false),
        Some((size, "cached")) => (size, true),
        Some((_, other)) => {
            return Some(Err(SpecError(format!(
                "`{other}`: the only word after a loop size is `cached` (loop:4G,cached)"
            ))));
        }
    };
    Some(parse_size(size).map(|size| Spec { size, cached }))
}

fn parse_size(size: &str) -> Result<u64, SpecError> {
    // The shared grammar: `4G` (powers of 2, as losetup and fio read it) or an exact unit.
    let bytes = crate::units::parse_size(size).map_err(|e| SpecError(e.to_string()));
    bytes.and_then(|b| {
        if b < (16 << 20) {
            Err(SpecError(format!("`{size}` is too small for a file system; use at least 16M")))
        } else {
            Ok(b)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let direct = |size| Some(Ok(Spec { size, cached: false }));
        assert_eq!(parse_spec("loop:4G"), direct(4 << 30));
        assert_eq!(parse_spec("loop:300M"), direct(300 << 20));
        assert_eq!(parse_spec("loop:1GB"), direct(1_000_000_000));
        assert_eq!(parse_spec("loop:2G,cached"), Some(Ok(Spec { size: 2 << 30, cached: true })));
        assert!(parse_spec("loop:2G,fast").unwrap().is_err());
        assert!(parse_spec("loop:1M").unwrap().is_err());
        assert!(parse_spec("loop:lots").unwrap().is_err());
        assert_eq!(parse_spec("/dev/sdb"), None);
    }

    #[test]
    fn labels_say_what_the_device_is() {
        let l = |size, cached| label(Spec { size, cached });
        assert_eq!(l(4 << 30, false), "loop 4G");
        assert_eq!(l(320 << 20, false), "loop 320M");
        assert_eq!(l(4 << 30, true), "loop 4G cached");
        assert_eq!(l(1_000_000_000, false), "loop 1000000000B");
    }
}
