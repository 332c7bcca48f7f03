//! I/O workload: writes `files` files of `size` bytes in `block`-sized
//! writes to the scratch directory, fsyncs each, then reads them all back
//! and checks their contents. Reports write and read MB/s (10^6 bytes/s);
//! the read-back is mostly served from the page cache, as in a program
//! that reads what it just wrote.

use engine_sdk::{Config, Context, Error, Report, Workload};
use std::io::{Read, Write};

pub struct FilesIo {
    files: u32,
    size: u64,
    block: usize,
    fsync: bool,
}

impl Workload for FilesIo {
    const KEYS: &'static [&'static str] = &["files", "size", "block", "fsync"];
    const RESULTS: &'static [&'static str] = &["write", "read"];

    fn new(config: &Config) -> Result<Self, Error> {
        config.only(Self::KEYS)?;
        let files = config.parse_or("files", 4u32)?;
        if files == 0 {
            return Err(Error::config("files", "must be at least 1"));
        }
        let block = config.size_or("block", 1 << 20)?;
        if block == 0 || block > 64 << 20 {
            return Err(Error::config("block", "must be between 1 byte and 64MiB"));
        }
        Ok(FilesIo {
            files,
            size: config.size_or("size", 8 << 20)?,
            block: block as usize,
            fsync: config.bool_or("fsync", true)?,
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let dir = cx.scratch_dir();
        let buf: Vec<u8> = (0..self.block).map(|i| (i % 251) as u8).collect();
        let total = self.size * self.files as u64;

        let t0 = cx.elapsed();
        for n in 0..self.files {
            let path = dir.join(format!("file-{n}"));
            let mut f =
                std::fs::File::create(&path).map_err(|e| Error::io(&format!("create {}", path.display()), &e))?;
            let mut left = self.size;
            while left > 0 {
                let k = left.min(buf.len() as u64) as usize;
                f.write_all(&buf[..k]).map_err(|e| Error::io("write", &e))?;
                left -= k as u64;
            }
            if self.fsync {
                f.sync_all().map_err(|e| Error::io("fsync", &e))?;
            }
            if cx.cancelled() {
                return Err(Error::cancelled());
            }
            cx.progress((n + 1) as f64 / (2 * self.files) as f64, "writing");
        }
        let write = (cx.elapsed() - t0).as_secs_f64().max(1e-9);

        let t1 = cx.elapsed();
        let mut back = vec![0u8; self.block];
        for n in 0..self.files {
            let path = dir.join(format!("file-{n}"));
            let mut f = std::fs::File::open(&path).map_err(|e| Error::io(&format!("open {}", path.display()), &e))?;
            let mut got = 0u64;
            loop {
                let k = f.read(&mut back).map_err(|e| Error::io("read", &e))?;
                if k == 0 {
                    break;
                }
                // Blocks were written whole from offset 0, so each read
                // starts at a multiple of the pattern's origin in `buf`.
                let off = (got % buf.len() as u64) as usize;
                if k <= buf.len() - off && back[..k] != buf[off..off + k] {
                    return Err(Error::failed(format!("{} reads back other bytes than were written", path.display())));
                }
                got += k as u64;
            }
            if got != self.size {
                return Err(Error::failed(format!("{} has {got} bytes, {} were written", path.display(), self.size)));
            }
        }
        let read = (cx.elapsed() - t1).as_secs_f64().max(1e-9);
        Ok(Report::new().value("write", total as f64 / write / 1e6).value("read", total as f64 / read / 1e6).line(
            format!("{} files of {} bytes, blocks of {}, fsync {}", self.files, self.size, self.block, self.fsync),
        ))
    }
}

engine_sdk::export_workload!(FilesIo);
