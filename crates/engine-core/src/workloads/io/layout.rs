//! Files for the I/O workload: aligned buffers, the device's logical block
//! size (what O_DIRECT needs), opening with O_DIRECT with a clear error when
//! the file system refuses it, and laying a file out before a read test.

use engine_sdk::Error;
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Buffer alignment: a page, which satisfies every O_DIRECT device.
pub(crate) const ALIGN: usize = 4096;

/// A zero-initialised buffer aligned for O_DIRECT.
pub(crate) struct Aligned {
    ptr: *mut u8,
    len: usize,
}

// The buffer is plain memory owned by one thread at a time.
unsafe impl Send for Aligned {}

impl Aligned {
    pub(crate) fn new(len: usize) -> Aligned {
        let layout = Layout::from_size_align(len.max(1), ALIGN).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory for a {len}-byte buffer");
        Aligned { ptr, len }
    }
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, Layout::from_size_align(self.len.max(1), ALIGN).unwrap()) }
    }
}

/// Fills `buf` with bytes that do not compress (xorshift), so a device that
/// compresses or deduplicates cannot shortcut the test.
pub(crate) fn fill_random(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

/// The logical block size of the device holding `dir` (from sysfs), 512 when unknown.
pub(crate) fn logical_block_size(dir: &Path) -> u64 {
    let Ok(m) = std::fs::metadata(dir) else { return 512 };
    let dev = m.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    for q in [format!("{base}/queue/logical_block_size"), format!("{base}/../queue/logical_block_size")] {
        if let Some(n) = std::fs::read_to_string(q).ok().and_then(|s| s.trim().parse().ok()) {
            return n;
        }
    }
    512
}

/// The file system type holding `dir` (`ext4`, `tmpfs`), for messages.
pub(crate) fn fs_type(dir: &Path) -> String {
    let canon = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut best: Option<(usize, String)> = None;
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let (Some(mp), Some(fs)) = (left.split_whitespace().nth(4), right.split_whitespace().next()) else { continue };
        let mp = mp.replace("\\040", " ");
        if canon.starts_with(&mp) && best.as_ref().is_none_or(|(l, _)| mp.len() >= *l) {
            best = Some((mp.len(), fs.to_string()));
        }
    }
    best.map(|b| b.1).unwrap_or_else(|| "unknown".into())
}

/// Opens `path` for the test, with O_DIRECT when asked. A file system that
/// refuses O_DIRECT gets an error that says so, not a bare EINVAL.
pub(crate) fn open(path: &Path, write: bool, direct: bool) -> Result<File, Error> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(write);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path).map_err(|e| {
        if direct && e.raw_os_error() == Some(libc::EINVAL) {
            let dir = path.parent().unwrap_or(path);
            Error::unsupported(format!(
                "{} ({}) refuses direct I/O (O_DIRECT); run with `direct: no`, or point the target at a disk's file system",
                dir.display(),
                fs_type(dir)
            ))
        } else {
            Error::io(&format!("open {}", path.display()), &e)
        }
    })
}

/// Creates `path` with `size` bytes: written with incompressible data when
/// it will be read (so reads hit real blocks), otherwise allocated.
pub(crate) fn lay_out(path: &Path, size: u64, written: bool, seed: u64) -> Result<(), Error> {
    let f = File::create(path).map_err(|e| Error::io(&format!("create {}", path.display()), &e))?;
    let what = format!("lay out {}", path.display());
    if !written {
        // SAFETY: fallocate on a descriptor we own.
        let rc = unsafe { libc::posix_fallocate(f.as_raw_fd_compat(), 0, size as libc::off_t) };
        if rc == 0 {
            return Ok(());
        }
        if rc != libc::EOPNOTSUPP && rc != libc::EINVAL {
            return Err(Error::io(&what, &std::io::Error::from_raw_os_error(rc)));
        }
    }
    let chunk = (1u64 << 20).min(size.max(1)) as usize;
    let mut buf = vec![0u8; chunk];
    let mut off = 0u64;
    while off < size {
        let n = chunk.min((size - off) as usize);
        fill_random(&mut buf[..n], seed ^ off);
        f.write_all_at(&buf[..n], off).map_err(|e| Error::io(&what, &e))?;
        off += n as u64;
    }
    f.sync_all().map_err(|e| Error::io(&what, &e))
}

trait RawFdCompat {
    fn as_raw_fd_compat(&self) -> i32;
}
impl RawFdCompat for File {
    fn as_raw_fd_compat(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.as_raw_fd()
    }
}

/// Drops `path`'s pages from the page cache, so buffered reads start cold.
pub(crate) fn evict(f: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: fadvise on a descriptor we own; a failure only leaves pages cached.
    unsafe {
        libc::fdatasync(f.as_raw_fd());
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_and_layout() {
        let mut b = Aligned::new(8192);
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        fill_random(b.as_mut_slice(), 1);
        assert!(b.as_slice().iter().any(|&x| x != 0));
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        lay_out(&p, 3 << 20, true, 7).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 3 << 20);
        lay_out(&p, 1 << 20, false, 7).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
        assert!(logical_block_size(d.path()) >= 512);
    }
}
