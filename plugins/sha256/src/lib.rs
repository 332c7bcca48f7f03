//! CPU workload: the sha256 of `size` bytes in memory, in `chunk`-sized
//! updates. Reports MB/s (10^6 bytes/s) and seconds; only hashing is timed.

use engine_sdk::{Config, Context, Error, Report, Workload};
use sha2::{Digest, Sha256};

pub struct Sha256Workload {
    data: Vec<u8>,
    chunk: usize,
}

impl Workload for Sha256Workload {
    const KEYS: &'static [&'static str] = &["size", "chunk"];
    const RESULTS: &'static [&'static str] = &["throughput", "seconds"];

    fn new(config: &Config) -> Result<Self, Error> {
        config.only(Self::KEYS)?;
        let size = config.size_or("size", 64 << 20)? as usize;
        let chunk = config.size_or("chunk", 1 << 20)?.max(64) as usize;
        // Not zeros: a pattern a compressor or a clever CPU cannot shortcut.
        let data = (0..size).map(|i| (i as u32).wrapping_mul(2654435761).to_le_bytes()[3]).collect();
        Ok(Sha256Workload { data, chunk })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let t0 = cx.elapsed();
        let mut h = Sha256::new();
        for (i, c) in self.data.chunks(self.chunk).enumerate() {
            if i % 64 == 0 && cx.cancelled() {
                return Err(Error::cancelled());
            }
            h.update(c);
        }
        let digest = h.finalize();
        let secs = (cx.elapsed() - t0).as_secs_f64().max(1e-9);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Report::new()
            .value("throughput", self.data.len() as f64 / secs / 1e6)
            .value("seconds", secs)
            .line(format!("sha256 of {} bytes: {hex}", self.data.len())))
    }
}

engine_sdk::export_workload!(Sha256Workload);
