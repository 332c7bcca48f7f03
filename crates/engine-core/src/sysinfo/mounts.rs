//! Which mount holds a path, from `/proc/self/mountinfo`.

use super::source::Source;
pub use crate::model::system::Mount;
use std::path::Path;

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 4 <= b.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 4]).unwrap_or("x"), 8)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses mountinfo text; malformed lines are skipped.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<Mount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let l: Vec<&str> = left.split_whitespace().collect();
        let r: Vec<&str> = right.split_whitespace().collect();
        if l.len() < 6 || r.len() < 2 {
            continue;
        }
        let mut options: Vec<String> = l[5].split(',').map(str::to_string).collect();
        if let Some(sb) = r.get(2) {
            options.extend(sb.split(',').map(str::to_string));
        }
        options.sort();
        options.dedup();
        out.push(Mount {
            mount_point: unescape(l[4]),
            fstype: r[0].to_string(),
            source: unescape(r[1]),
            dev: l[2].to_string(),
            options,
        });
    }
    out
}

/// The mount holding `path` (the longest mount point that is a prefix of it;
/// among equal ones the last, which is on top).
pub(crate) fn best_mount(mounts: &[Mount], path: &Path) -> Option<Mount> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (m.mount_point.len(), *i))
        .map(|(_, m)| m.clone())
}

/// The mounts of `src`.
pub(crate) fn mounts(src: &dyn Source) -> Vec<Mount> {
    src.read("/proc/self/mountinfo").map(|t| parse_mountinfo(&t)).unwrap_or_default()
}

/// The mount holding `path` in `src` (`path` is taken as already canonical).
pub(crate) fn mount_of(src: &dyn Source, path: &Path) -> Option<Mount> {
    best_mount(&mounts(src), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard,resv_strict
30 22 0:25 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=1024k
31 22 7:0 / /mnt/my\\040disk rw,noatime shared:6 - xfs /dev/loop0 rw,attr2
garbage line
";

    #[test]
    fn finds_the_longest_prefix() {
        let m = parse_mountinfo(INFO);
        assert_eq!(m.len(), 3);
        assert_eq!(best_mount(&m, Path::new("/tmp/x")).unwrap().fstype, "tmpfs");
        assert_eq!(best_mount(&m, Path::new("/tmpfoo")).unwrap().fstype, "ext4");
        let loopm = best_mount(&m, Path::new("/mnt/my disk/a")).unwrap();
        assert_eq!((loopm.source.as_str(), loopm.fstype.as_str(), loopm.dev.as_str()), ("/dev/loop0", "xfs", "7:0"));
        assert_eq!(best_mount(&m, Path::new("/home")).unwrap().sorted_options(), "discard,relatime,resv_strict,rw");
    }
}
