//! Sequential I/O workload: writes one file of `size` bytes in `block`-sized
//! writes (then one fsync), and reads it back block by block without
//! looking at the bytes: file I/O and nothing else, for comparing a plugin
//! with the same code built natively. `api: files` (the default) uses
//! engine's bulk calls (`Context::open_file`), `api: std` uses `std::fs`
//! (WASI's file streams in a plugin). Reports write and read MB/s (10^6 B/s).

use engine_sdk::{Config, Context, Error, Rates, Report, Workload};
use std::io::{Read, Write};

/// The figures of its own intervals: bytes as MB/s (10^6 B/s).
const WRITE: &[(&str, &str, f64)] = &[("write_mb_s", "MB/s", 1e6)];
const READ: &[(&str, &str, f64)] = &[("read_mb_s", "MB/s", 1e6)];

pub struct SeqIo {
    size: u64,
    block: usize,
    std: bool,
}

impl Workload for SeqIo {
    const KEYS: &'static [&'static str] = &["size", "block", "api"];
    const RESULTS: &'static [&'static str] = &["write", "read"];

    fn new(config: &Config) -> Result<Self, Error> {
        config.only(Self::KEYS)?;
        let block = config.size_or("block", 1 << 20)?;
        if block == 0 || block > 64 << 20 {
            return Err(Error::config("block", "must be between 1 byte and 64MiB"));
        }
        Ok(SeqIo {
            size: config.size_or("size", 256 << 20)?,
            block: block as usize,
            std: config.choice_or("api", &["files", "std"], "files")? == "std",
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let buf: Vec<u8> = (0..self.block).map(|i| (i % 251) as u8).collect();
        let t0 = cx.elapsed();
        if self.std {
            self.write_std(cx, &buf)?;
        } else {
            self.write_blocks(cx, &buf)?;
        }

        let write = (cx.elapsed() - t0).as_secs_f64().max(1e-9);
        let t1 = cx.elapsed();
        let got = if self.std { self.read_std(cx)? } else { self.read_blocks(cx)? };
        let read = (cx.elapsed() - t1).as_secs_f64().max(1e-9);
        if got != self.size {
            return Err(Error::failed(format!("data has {got} bytes, {} were written", self.size)));
        }
        let mb = self.size as f64 / 1e6;
        Ok(Report::new().value("write", mb / write).value("read", mb / read))
    }
}

impl SeqIo {
    /// Writes the file; its own intervals are the MB/s written in each.
    fn write_blocks(&self, cx: &dyn Context, buf: &[u8]) -> Result<(), Error> {
        let mut rates = Rates::new(cx, WRITE);
        let mut f = cx.open_file("data", true)?;
        let mut at = 0;
        while at < self.size {
            let k = (self.size - at).min(buf.len() as u64) as usize;
            f.write_at(at, &buf[..k])?;
            at += k as u64;
            rates.tick(cx, &[at]);
        }
        f.sync()?;
        rates.finish(cx, &[at]);
        Ok(())
    }

    /// Reads the file back; its own intervals are the MB/s read in each.
    fn read_blocks(&self, cx: &dyn Context) -> Result<u64, Error> {
        let mut rates = Rates::new(cx, READ);
        let mut f = cx.open_file("data", false)?;
        let mut at = 0u64;
        loop {
            let k = f.read_block(at, self.block)?.len();
            if k == 0 {
                rates.finish(cx, &[at]);
                return Ok(at);
            }
            at += k as u64;
            rates.tick(cx, &[at]);
        }
    }

    fn write_std(&self, cx: &dyn Context, buf: &[u8]) -> Result<(), Error> {
        let path = cx.scratch_dir().join("data");
        let mut f = std::fs::File::create(&path).map_err(|e| Error::io("create data", &e))?;
        let mut left = self.size;
        while left > 0 {
            let k = left.min(buf.len() as u64) as usize;
            f.write_all(&buf[..k]).map_err(|e| Error::io("write data", &e))?;
            left -= k as u64;
        }
        f.sync_all().map_err(|e| Error::io("fsync data", &e))
    }

    fn read_std(&self, cx: &dyn Context) -> Result<u64, Error> {
        let path = cx.scratch_dir().join("data");
        let mut f = std::fs::File::open(&path).map_err(|e| Error::io("open data", &e))?;
        let mut back = vec![0u8; self.block];
        let mut got = 0u64;
        loop {
            match f.read(&mut back).map_err(|e| Error::io("read data", &e))? {
                0 => return Ok(got),
                k => got += k as u64,
            }
        }
    }
}

engine_sdk::export_workload!(SeqIo);
