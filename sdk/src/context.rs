//! What a running trial can ask of the engine.

use crate::{Error, Figure};
use std::path::Path;
use std::time::Duration;

/// The trial's surroundings. The engine implements it natively for built-in
/// workloads and across the sandbox for WASM plugins.
pub trait Context {
    /// The trial's scratch directory: the only place a workload writes.
    fn scratch_dir(&self) -> &Path;
    /// The directory the user pointed the run at (the device under test).
    fn target_dir(&self) -> &Path;
    /// Time since the trial started, from a monotonic clock.
    fn elapsed(&self) -> Duration;
    /// Whether the user asked to stop (Ctrl-C): return soon, with an error.
    fn cancelled(&self) -> bool;
    /// How far the trial is (0 to 1), with a short note; shown on a terminal.
    fn progress(&self, _fraction: f64, _note: &str) {}
    /// A line for the trial's log.
    fn log(&self, _line: &str) {}
    /// How often the engine records the workload's own figures (the
    /// monitors' interval); `None` when it does not, and a workload skips
    /// the bookkeeping.
    fn interval_every(&self) -> Option<Duration> {
        None
    }
    /// The workload's own figures over the interval that ended `at` (time
    /// since the trial started, as [`Context::elapsed`]); it began where the
    /// last one ended, or at the trial's start. See [`crate::Rates`].
    fn interval(&self, _at: Duration, _figures: &[Figure]) {}
    /// Flushes dirty pages and drops the page cache (needs root); an error
    /// says why it cannot (not root, or not offered to plugins).
    fn drop_caches(&self) -> Result<(), Error> {
        Err(Error::unsupported("dropping the page cache is not offered here"))
    }
    /// Opens `name` (a path relative to the scratch directory) for bulk I/O
    /// by offset. With `create` the file is made or emptied and opened for
    /// reading and writing; without, an existing file is opened read-only.
    /// In a WASM plugin each call of the returned file is one host call that
    /// moves the whole block, which `std::fs` over WASI cannot (64 KiB per
    /// call there); natively it is `pread`/`pwrite`.
    fn open_file(&self, name: &str, create: bool) -> Result<Box<dyn ScratchFile>, Error> {
        let path = self.scratch_dir().join(name);
        let file = if create {
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path)
        } else {
            std::fs::File::open(&path)
        };
        let file = file.map_err(|e| Error::io(&format!("open {}", path.display()), &e))?;
        Ok(Box::new(StdFile { file, name: name.to_string(), buf: Vec::new() }))
    }
}

/// A file opened by [`Context::open_file`].
pub trait ScratchFile {
    /// Up to `max` bytes at `offset`, in a buffer the file keeps until the
    /// next call: the fastest way to look at what a file holds (in a plugin
    /// the host's bytes land there with no further copy). May return fewer
    /// than asked; empty only at the end of the file. An offset past the end
    /// is an error.
    fn read_block(&mut self, offset: u64, max: usize) -> Result<&[u8], Error>;
    /// Reads into `buf` at `offset`; returns how many bytes were read, fewer
    /// than `buf.len()` only at the end of the file.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, Error> {
        let mut got = 0;
        while got < buf.len() {
            let block = self.read_block(offset + got as u64, buf.len() - got)?;
            if block.is_empty() {
                break;
            }
            buf[got..got + block.len()].copy_from_slice(block);
            got += block.len();
        }
        Ok(got)
    }
    /// Writes all of `data` at `offset`.
    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<(), Error>;
    /// Flushes the file's data and metadata to the device (fsync).
    fn sync(&mut self) -> Result<(), Error>;
    /// The file's size in bytes.
    fn size(&self) -> Result<u64, Error>;
}

/// [`ScratchFile`] on a `std::fs::File`: what built-in workloads and native
/// builds of a plugin's code use.
struct StdFile {
    file: std::fs::File,
    name: String,
    /// What `read_block` returns.
    buf: Vec<u8>,
}

impl StdFile {
    fn err(&self, op: &str, e: &std::io::Error) -> Error {
        Error::io(&format!("{op} {}", self.name), e)
    }
}

impl ScratchFile for StdFile {
    fn read_block(&mut self, offset: u64, max: usize) -> Result<&[u8], Error> {
        let mut buf = std::mem::take(&mut self.buf);
        if buf.len() < max {
            buf.resize(max, 0);
        }
        let n = self.read_at(offset, &mut buf[..max]);
        self.buf = buf;
        Ok(&self.buf[..n?])
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, Error> {
        let mut got = 0;
        while got < buf.len() {
            match at::read(&self.file, &mut buf[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.err("read", &e)),
            }
        }
        // As a plugin's read: past the end is a mistake, at the end is EOF.
        if got == 0 && !buf.is_empty() {
            let size = self.size()?;
            if offset > size {
                return Err(Error::failed(format!(
                    "read {}: offset {offset} is past the end ({size} bytes)",
                    self.name
                )));
            }
        }
        Ok(got)
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<(), Error> {
        at::write_all(&self.file, data, offset).map_err(|e| self.err("write", &e))
    }
    fn sync(&mut self) -> Result<(), Error> {
        self.file.sync_all().map_err(|e| self.err("fsync", &e))
    }
    fn size(&self) -> Result<u64, Error> {
        self.file.metadata().map(|m| m.len()).map_err(|e| self.err("stat", &e))
    }
}

/// Positioned reads and writes: `pread`/`pwrite` on Unix; elsewhere (the
/// default method compiled into a plugin, which overrides it) seek, then
/// read or write.
mod at {
    use std::fs::File;
    use std::io::Result;

    #[cfg(unix)]
    pub fn read(f: &File, buf: &mut [u8], offset: u64) -> Result<usize> {
        std::os::unix::fs::FileExt::read_at(f, buf, offset)
    }
    #[cfg(unix)]
    pub fn write_all(f: &File, data: &[u8], offset: u64) -> Result<()> {
        std::os::unix::fs::FileExt::write_all_at(f, data, offset)
    }
    #[cfg(not(unix))]
    pub fn read(mut f: &File, buf: &mut [u8], offset: u64) -> Result<usize> {
        use std::io::{Read, Seek, SeekFrom};
        f.seek(SeekFrom::Start(offset))?;
        f.read(buf)
    }
    #[cfg(not(unix))]
    pub fn write_all(mut f: &File, data: &[u8], offset: u64) -> Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        f.seek(SeekFrom::Start(offset))?;
        f.write_all(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    struct Dir(std::path::PathBuf);
    impl Context for Dir {
        fn scratch_dir(&self) -> &Path {
            &self.0
        }
        fn target_dir(&self) -> &Path {
            &self.0
        }
        fn elapsed(&self) -> Duration {
            Duration::ZERO
        }
        fn cancelled(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_native_scratch_file_reads_writes_and_refuses_past_the_end() {
        let dir = std::env::temp_dir().join(format!("engine-sdk-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cx = Dir(dir.clone());
        let mut f = cx.open_file("data", true).unwrap();
        f.write_at(0, b"hello, world").unwrap();
        f.write_at(7, b"WORLD").unwrap();
        f.sync().unwrap();
        assert_eq!(f.size().unwrap(), 12);
        assert_eq!(f.read_block(7, 100).unwrap(), b"WORLD");
        let mut buf = [0u8; 5];
        assert_eq!(f.read_at(0, &mut buf).unwrap(), 5);
        assert_eq!(&buf, b"hello");
        assert_eq!(f.read_block(12, 4).unwrap(), b"", "at the end: nothing");
        let e = f.read_block(13, 4).unwrap_err();
        assert_eq!(e.message, "read data: offset 13 is past the end (12 bytes)");
        let mut ro = cx.open_file("data", false).unwrap();
        assert!(ro.write_at(0, b"x").is_err(), "opened without create: read-only");
        assert!(cx.open_file("missing", false).err().unwrap().message.starts_with("open "));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
