//! `io`: the fio-class workload. Sequential or random reads, writes or a mix
//! over one file per job, at a block size and queue depth, with O_DIRECT or
//! through the page cache, time-based (with a ramp) or one pass over the
//! file; engines `io_uring` (the default where the kernel offers it) and
//! `psync`. It reports bandwidth (MB/s = 10^6 bytes/s), IOPS, completion
//! latency (mean, p50, p99, p99.9, in µs) and CPU time per I/O.
//!
//! Each job (thread) has its own file, `io-<job>.dat`, laid out before a
//! test that reads (with incompressible data, synced) and allocated before
//! one that only writes, as fio does. Buffered reads start cold: the file's
//! pages are dropped from the page cache before the run.

mod hist;
mod job;
pub mod layout;
mod procs;
mod psync;
mod slices;
mod uring;
mod wire;

use engine_sdk::{Config, Context, Error, Report, Workload};
use job::{Job, Tally};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    IoUring,
    Psync,
}

#[derive(Debug)]
pub(crate) struct Io {
    pub sequential: bool,
    /// Percentage of reads: 100 read, 0 write, between for a mix.
    pub read_pct: u32,
    pub bs: u64,
    /// Block sizes and weights (`bssplit`), or `[(bs, 100)]`.
    pub split: Vec<(u64, u32)>,
    pub depth: u32,
    pub jobs: u32,
    pub direct: bool,
    pub size: u64,
    /// Zero: one pass over the file (size-based).
    pub runtime: Duration,
    pub ramp: Duration,
    pub fsync_every: u64,
    /// `None`: io_uring where available, else psync.
    pub engine: Option<Engine>,
}

impl Workload for Io {
    const KEYS: &'static [&'static str] = &[
        "rw",
        "rwmixread",
        "bs",
        "bssplit",
        "iodepth",
        "numjobs",
        "direct",
        "size",
        "runtime",
        "ramp_time",
        "fsync",
        "ioengine",
    ];
    const RESULTS: &'static [&'static str] = &[
        "seconds",
        "bandwidth",
        "iops",
        "read_bandwidth",
        "write_bandwidth",
        "lat_mean",
        "lat_p50",
        "lat_p99",
        "lat_p999",
        "cpu_per_io",
    ];

    fn new(c: &Config) -> Result<Self, Error> {
        c.only(Self::KEYS)?;
        let rw = c.choice_or("rw", &["read", "write", "randread", "randwrite", "rw", "randrw"], "randread")?;
        let mix = c.parse_or::<u32>("rwmixread", 50)?;
        if mix > 100 {
            return Err(Error::config("rwmixread", format!("{mix} is not a percentage")));
        }
        let read_pct = match rw {
            "read" | "randread" => 100,
            "write" | "randwrite" => 0,
            _ => mix,
        };
        let bs = c.size_or("bs", 4096)?;
        if bs == 0 || bs > 64 << 20 {
            return Err(Error::config("bs", format!("{bs} bytes: use a block size from 1 byte to 64 MiB")));
        }
        let split = match c.text("bssplit").filter(|s| !s.is_empty()) {
            None => vec![(bs, 100)],
            Some(s) => parse_split(s)?,
        };
        let bs = split.iter().map(|s| s.0).max().unwrap_or(bs);
        let depth = c.parse_or::<u32>("iodepth", 16)?;
        if depth == 0 || depth > 4096 {
            return Err(Error::config("iodepth", format!("{depth}: use 1 to 4096")));
        }
        let jobs = c.parse_or::<u32>("numjobs", 1)?;
        if jobs == 0 || jobs > 256 {
            return Err(Error::config("numjobs", format!("{jobs}: use 1 to 256")));
        }
        let size = c.size_or("size", 1 << 30)?;
        if size < bs {
            return Err(Error::config("size", format!("{size} bytes is smaller than one block of {bs}")));
        }
        let engine = match c.choice_or("ioengine", &["io_uring", "psync", "auto"], "auto")? {
            "io_uring" => Some(Engine::IoUring),
            "psync" => Some(Engine::Psync),
            _ => None,
        };
        Ok(Io {
            sequential: matches!(rw, "read" | "write" | "rw"),
            read_pct,
            bs,
            split,
            depth,
            jobs,
            direct: c.bool_or("direct", true)?,
            size: size / bs * bs,
            runtime: c.duration_or("runtime", Duration::from_secs(20))?,
            ramp: c.duration_or("ramp_time", Duration::ZERO)?,
            fsync_every: c.parse_or::<u64>("fsync", 0)?,
            engine,
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        let dir = cx.scratch_dir();
        self.check_alignment(layout::logical_block_size(dir))?;
        let engine = self.pick_engine(cx)?;
        let files = self.lay_out(dir, cx)?;
        let io0 = proc_io();
        let start = Instant::now();
        let count_from = start + self.ramp;
        let results = self.run_jobs(cx, engine, &files, count_from);
        let io1 = proc_io();
        if cx.cancelled() {
            return Err(Error::cancelled());
        }
        let mut t = Tally::default();
        let mut slices = Vec::new();
        for r in results {
            let mut r = r?;
            t.merge(&r);
            slices.extend(r.slices.take());
        }
        slices::report(cx, count_from, slices, self.read_pct > 0, self.read_pct < 100);
        let end = t.last.unwrap_or_else(Instant::now);
        let secs = end.saturating_duration_since(if self.ramp.is_zero() { start } else { count_from }).as_secs_f64();
        let total_ops = t.reads + t.writes;
        if total_ops == 0 || secs <= 0.0 {
            return Err(Error::failed("no I/O completed in the measured time; lengthen runtime or shorten ramp_time"));
        }
        let mut report = self.report(&t, secs, engine);
        if let (Some(a), Some(b)) = (io0, io1) {
            report = report.line(format!(
                "kernel (/proc/self/io, with the job processes it reaped) during the test: read_bytes +{} write_bytes +{}",
                b.0.saturating_sub(a.0),
                b.1.saturating_sub(a.1)
            ));
        }
        Ok(report)
    }
}

impl Io {
    /// Direct I/O moves whole blocks: every block size must be a multiple of
    /// the device's logical block size `lbs`.
    fn check_alignment(&self, lbs: u64) -> Result<(), Error> {
        if self.direct
            && let Some(&(bad, _)) = self.split.iter().find(|(bs, _)| !bs.is_multiple_of(lbs))
        {
            return Err(Error::config(
                if self.split.len() > 1 { "bssplit" } else { "bs" },
                format!(
                    "{bad} bytes is not a multiple of the device's logical block size, {lbs} bytes: direct I/O moves whole blocks"
                ),
            ));
        }
        Ok(())
    }

    /// The engine asked for, or io_uring where the kernel offers it, else psync.
    fn pick_engine(&self, cx: &dyn Context) -> Result<Engine, Error> {
        Ok(match self.engine {
            Some(Engine::IoUring) => {
                uring::available().map_err(|e| Error::unsupported(format!("io_uring is not available here: {e}")))?;
                Engine::IoUring
            }
            Some(Engine::Psync) => Engine::Psync,
            None => match uring::available() {
                Ok(()) => Engine::IoUring,
                Err(e) => {
                    cx.log(&format!("io_uring is not available ({e}): using psync"));
                    Engine::Psync
                }
            },
        })
    }

    /// Lays out one file per job in `dir`, then opens them for the test.
    fn lay_out(&self, dir: &std::path::Path, cx: &dyn Context) -> Result<Vec<(PathBuf, File)>, Error> {
        let writes_only = self.read_pct == 0;
        let mut files = Vec::new();
        for j in 0..self.jobs {
            let path = dir.join(format!("io-{j}.dat"));
            layout::lay_out(&path, self.size, !writes_only, 0x5EED ^ j as u64)?;
            if cx.cancelled() {
                return Err(Error::cancelled());
            }
            let f = layout::open(&path, self.read_pct < 100, self.direct)?;
            // Cold page cache for buffered reads; for direct I/O, no cached
            // pages the kernel would have to check on every request (fio's
            // `invalidate=1` does the same).
            layout::evict(&f);
            files.push((path, f));
        }
        Ok(files)
    }

    /// Runs a job per file, counting from `count_from`: one job on its own
    /// thread, more each in a process of its own session, as fio runs them
    /// ([`procs`] says why).
    fn run_jobs(
        &self,
        cx: &dyn Context,
        engine: Engine,
        files: &[(PathBuf, File)],
        count_from: Instant,
    ) -> Vec<Result<Tally, Error>> {
        let own_stop = AtomicBool::new(false);
        let shared = match files.len() > 1 {
            true => match procs::SharedStop::new() {
                Ok(s) => Some(s),
                Err(e) => return vec![Err(e)],
            },
            false => None,
        };
        let stop = shared.as_ref().map_or(&own_stop, procs::SharedStop::flag);
        let until = (!self.runtime.is_zero()).then(|| count_from + self.runtime);
        let work: fn(&Job<'_>, &str) -> Result<Tally, Error> = match engine {
            Engine::IoUring => uring::run,
            Engine::Psync => psync::run,
        };
        std::thread::scope(|s| {
            let handles: Vec<_> = files
                .iter()
                .enumerate()
                .map(|(j, (path, f))| {
                    let job = Job {
                        file: f,
                        size: self.size,
                        bs: self.bs,
                        split: &self.split,
                        depth: self.depth,
                        sequential: self.sequential,
                        read_pct: self.read_pct,
                        fsync_every: self.fsync_every,
                        seed: 0x9E37_79B9_7F4A_7C15 ^ (j as u64 + 1),
                        count_from,
                        until,
                        stop,
                        every: cx.interval_every(),
                    };
                    let name = path.file_name().unwrap_or_default().to_string_lossy().to_string();
                    let apart = shared.is_some();
                    s.spawn(move || if apart { procs::run(&job, &name, work) } else { work(&job, &name) })
                })
                .collect();
            super::join_watching(cx, stop, handles, "an I/O job", None)
        })
    }

    /// The values of the merged tally `t` over `secs`, and the line that says what ran.
    fn report(&self, t: &Tally, secs: f64, engine: Engine) -> Report {
        let total_ops = t.reads + t.writes;
        let bytes = t.read_bytes + t.write_bytes;
        let us = |ns: f64| ns / 1000.0;
        Report::new()
            .value("seconds", secs)
            .value("bandwidth", bytes as f64 / secs / 1e6)
            .value("iops", total_ops as f64 / secs)
            .value("read_bandwidth", t.read_bytes as f64 / secs / 1e6)
            .value("write_bandwidth", t.write_bytes as f64 / secs / 1e6)
            .value("lat_mean", us(t.lat.mean()))
            .value("lat_p50", us(t.lat.quantile(0.5)))
            .value("lat_p99", us(t.lat.quantile(0.99)))
            .value("lat_p999", us(t.lat.quantile(0.999)))
            .value("cpu_per_io", t.cpu.as_secs_f64() * 1e6 / total_ops as f64)
            .line(format!(
                "{} {} bs={} iodepth={} numjobs={} direct={} size={} engine={:?}: {} reads ({} bytes), {} writes ({} bytes), {} fsyncs in {secs:.6} s",
                if self.sequential { "sequential" } else { "random" },
                match self.read_pct { 100 => "read".to_string(), 0 => "write".to_string(), p => format!("mix {p}% read") },
                self.bs,
                self.depth,
                self.jobs,
                self.direct,
                self.size,
                engine,
                t.reads,
                t.read_bytes,
                t.writes,
                t.write_bytes,
                t.fsyncs,
            ))
    }
}

/// `512/10:4k/60:64k/30` → block sizes and their percentages (summing to 100).
fn parse_split(s: &str) -> Result<Vec<(u64, u32)>, Error> {
    let bad = |m: String| Error::config("bssplit", m);
    let mut out = Vec::new();
    for part in s.split(':').filter(|p| !p.trim().is_empty()) {
        let (bs, pct) = part.split_once('/').ok_or_else(|| bad(format!("`{part}` is not SIZE/PERCENT")))?;
        let b = engine_sdk::Config::from_iter([("x", bs)])
            .size_or("x", 0)
            .map_err(|_| bad(format!("`{bs}` is not a size")))?;
        let p: u32 = pct.trim().parse().map_err(|_| bad(format!("`{pct}` is not a percentage")))?;
        if b == 0 || b > 64 << 20 {
            return Err(bad(format!("{b} bytes: use block sizes from 1 byte to 64 MiB")));
        }
        out.push((b, p));
    }
    let total: u32 = out.iter().map(|x| x.1).sum();
    if out.is_empty() || total != 100 {
        return Err(bad(format!("the percentages add up to {total}, not 100")));
    }
    Ok(out)
}

/// `read_bytes` and `write_bytes` of /proc/self/io: what the kernel sent to storage for us.
fn proc_io() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    let get = |k: &str| text.lines().find_map(|l| l.strip_prefix(k)).and_then(|v| v.trim().parse().ok());
    Some((get("read_bytes:")?, get("write_bytes:")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::testing::Cx;

    fn io(pairs: &[(&str, &str)]) -> Result<Io, Error> {
        Io::new(&pairs.iter().map(|(k, v)| (*k, *v)).collect())
    }

    #[test]
    fn config_errors_name_the_key() {
        assert_eq!(io(&[("rw", "sideways")]).unwrap_err().key.as_deref(), Some("rw"));
        assert!(io(&[("bs", "0")]).unwrap_err().to_string().starts_with("config `bs`"));
        assert!(io(&[("size", "1k"), ("bs", "4k")]).unwrap_err().to_string().contains("smaller than one block"));
        assert!(io(&[("blocksize", "4k")]).unwrap_err().to_string().contains("unknown key"));
        let w = io(&[("rw", "randrw"), ("rwmixread", "70"), ("size", "10000"), ("bs", "4k")]).unwrap();
        assert_eq!((w.read_pct, w.size, w.sequential), (70, 8192, false));
    }

    /// One pass over a file (size-based): exactly size/bs operations of bs
    /// bytes, on both engines, buffered and direct.
    #[test]
    fn a_pass_moves_exactly_the_bytes_asked() {
        for engine in ["psync", "io_uring"] {
            for (rw, direct) in [("write", "no"), ("randwrite", "yes"), ("read", "yes"), ("randread", "no")] {
                let d = tempfile::tempdir().unwrap();
                let mut w = io(&[
                    ("rw", rw),
                    ("bs", "4k"),
                    ("size", "1m"),
                    ("runtime", "0"),
                    ("direct", direct),
                    ("ioengine", engine),
                    ("iodepth", "4"),
                    ("numjobs", "2"),
                ])
                .unwrap();
                let r = match w.run(&Cx::new(d.path())) {
                    Err(e) if engine == "io_uring" && e.to_string().contains("not available") => continue,
                    r => r.unwrap(),
                };
                let read = rw.contains("read");
                let (ops, bytes) = (2 * 256, 2 * (1u64 << 20));
                let want = if read {
                    format!("{ops} reads ({bytes} bytes), 0 writes (0 bytes)")
                } else {
                    format!("0 reads (0 bytes), {ops} writes ({bytes} bytes)")
                };
                assert!(r.log.contains(&want), "{engine} {rw}: {}", r.log);
                let iops = r.get("iops").unwrap();
                assert!(iops > 0.0 && (r.get("bandwidth").unwrap() * 1e6 / iops - 4096.0).abs() < 1e-6);
                assert!(r.get("lat_p50").unwrap() <= r.get("lat_p99").unwrap());
                assert_eq!(std::fs::metadata(d.path().join("io-1.dat")).unwrap().len(), 1 << 20);
            }
        }
    }

    #[test]
    fn time_based_runs_for_about_the_runtime() {
        let d = tempfile::tempdir().unwrap();
        let mut w =
            io(&[("rw", "randread"), ("bs", "4k"), ("size", "1m"), ("runtime", "300ms"), ("direct", "no")]).unwrap();
        let t0 = Instant::now();
        let r = w.run(&Cx::new(d.path())).unwrap();
        let took = t0.elapsed();
        assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(5), "{took:?}");
        assert!(r.get("iops").unwrap() > 100.0, "{}", r.log);
    }
}
