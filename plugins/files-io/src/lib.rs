//! I/O workload: writes `files` files of `size` bytes in `block`-sized
//! writes to the scratch directory, fsyncs each, then reads them all back
//! and checks their contents. `api: files` (the default) moves each block
//! with one of engine's bulk calls (`Context::open_file`), `api: std` goes
//! through `std::fs` (WASI's file streams, 64 KiB per call). Reports write and read MB/s (10^6 bytes/s);
//! the read-back is mostly served from the page cache, as in a program
//! that reads what it just wrote.

use engine_sdk::{Config, Context, Error, Report, Workload};
use std::io::{Read, Write};

pub struct FilesIo {
    files: u32,
    size: u64,
    block: usize,
    fsync: bool,
    api: Api,
}

/// How the files are written and read.
#[derive(Clone, Copy, PartialEq)]
enum Api {
    /// `Context::open_file`: engine's bulk calls, a block per call.
    Files,
    /// `std::fs`, over WASI's file streams in a plugin.
    Std,
}

impl Workload for FilesIo {
    const KEYS: &'static [&'static str] = &["files", "size", "block", "fsync", "api"];
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
        let api = match config.choice_or("api", &["files", "std"], "files")? {
            "std" => Api::Std,
            _ => Api::Files,
        };
        Ok(FilesIo {
            files,
            size: config.size_or("size", 8 << 20)?,
            block: block as usize,
            fsync: config.bool_or("fsync", true)?,
            api,
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let buf: Vec<u8> = (0..self.block).map(|i| (i % 251) as u8).collect();
        let total = self.size * self.files as u64;

        let t0 = cx.elapsed();
        for n in 0..self.files {
            let name = format!("file-{n}");
            match self.api {
                Api::Files => self.write_blocks(cx, &name, &buf)?,
                Api::Std => self.write_std(cx, &name, &buf)?,
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
            let name = format!("file-{n}");
            let got = match self.api {
                Api::Files => read_blocks(cx, &name, &buf)?,
                Api::Std => read_std(cx, &name, &buf, &mut back)?,
            };
            if got != self.size {
                return Err(Error::failed(format!("{name} has {got} bytes, {} were written", self.size)));
            }
        }
        let read = (cx.elapsed() - t1).as_secs_f64().max(1e-9);
        let api = if self.api == Api::Files { "files" } else { "std" };
        Ok(Report::new().value("write", total as f64 / write / 1e6).value("read", total as f64 / read / 1e6).line(
            format!(
                "{} files of {} bytes, blocks of {}, fsync {}, api {api}",
                self.files, self.size, self.block, self.fsync
            ),
        ))
    }
}

impl FilesIo {
    fn write_blocks(&self, cx: &dyn Context, name: &str, buf: &[u8]) -> Result<(), Error> {
        let mut f = cx.open_file(name, true)?;
        let mut at = 0;
        while at < self.size {
            let k = (self.size - at).min(buf.len() as u64) as usize;
            f.write_at(at, &buf[..k])?;
            at += k as u64;
        }
        if self.fsync {
            f.sync()?;
        }
        Ok(())
    }

    fn write_std(&self, cx: &dyn Context, name: &str, buf: &[u8]) -> Result<(), Error> {
        let path = cx.scratch_dir().join(name);
        let mut f = std::fs::File::create(&path).map_err(|e| Error::io(&format!("create {}", path.display()), &e))?;
        let mut left = self.size;
        while left > 0 {
            let k = left.min(buf.len() as u64) as usize;
            f.write_all(&buf[..k]).map_err(|e| Error::io("write", &e))?;
            left -= k as u64;
        }
        if self.fsync {
            f.sync_all().map_err(|e| Error::io("fsync", &e))?;
        }
        Ok(())
    }
}

/// Reads `name` back a block at a time; returns its size.
fn read_blocks(cx: &dyn Context, name: &str, buf: &[u8]) -> Result<u64, Error> {
    let mut f = cx.open_file(name, false)?;
    let mut got = 0u64;
    loop {
        // Blocks may come back in pieces; ask for the rest of the block.
        let off = (got % buf.len() as u64) as usize;
        let block = f.read_block(got, buf.len() - off)?;
        if block.is_empty() {
            return Ok(got);
        }
        check(name, block, &buf[off..off + block.len()])?;
        got += block.len() as u64;
    }
}

fn read_std(cx: &dyn Context, name: &str, buf: &[u8], back: &mut [u8]) -> Result<u64, Error> {
    let path = cx.scratch_dir().join(name);
    let mut f = std::fs::File::open(&path).map_err(|e| Error::io(&format!("open {}", path.display()), &e))?;
    let mut got = 0u64;
    loop {
        let k = f.read(back).map_err(|e| Error::io("read", &e))?;
        if k == 0 {
            return Ok(got);
        }
        // Blocks were written whole from offset 0, so each read starts at a
        // multiple of the pattern's origin in `buf` (reads may be short).
        let off = (got % buf.len() as u64) as usize;
        if k <= buf.len() - off {
            check(name, &back[..k], &buf[off..off + k])?;
        }
        got += k as u64;
    }
}

fn check(name: &str, got: &[u8], want: &[u8]) -> Result<(), Error> {
    if !engine_sdk::same_bytes(got, want) {
        return Err(Error::failed(format!("{name} reads back other bytes than were written")));
    }
    Ok(())
}

engine_sdk::export_workload!(FilesIo);
