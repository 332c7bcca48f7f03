//! `startup-time`: the seeds' "Application Start-up Time". How long starting
//! an application takes from a cold cache while other I/O loads the same
//! disk — the latency the I/O scheduler is supposed to protect. The start is,
//! by default, a cold read of an application-sized set of files the workload
//! lays out (`files` files, `size` bytes in all, sizes spread like a
//! program's libraries and data); `command` runs a real program instead.
//! The background is `none`, sequential `reads`, or `reads-writes`
//! (readers and writers), each on its own large file, started a moment
//! before the clock. A cold start needs the page cache dropped: without root
//! the workload refuses rather than measure a warm start.

use engine_sdk::{Config, Context, Error, Report, Workload};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug)]
pub(crate) struct Startup {
    files: u32,
    size: u64,
    readers: u32,
    writers: u32,
    background_size: u64,
    command: Option<Vec<String>>,
    ramp: Duration,
}

impl Workload for Startup {
    const KEYS: &'static [&'static str] =
        &["files", "size", "background", "readers", "writers", "background_size", "command", "ramp_time"];
    const RESULTS: &'static [&'static str] = &["seconds"];

    fn new(c: &Config) -> Result<Self, Error> {
        c.only(Self::KEYS)?;
        let files = c.parse_or::<u32>("files", 150)?;
        if files == 0 {
            return Err(Error::config("files", "must be at least 1"));
        }
        let bg = c.choice_or("background", &["none", "reads", "reads-writes"], "reads")?;
        let readers = if bg == "none" { 0 } else { c.parse_or::<u32>("readers", 2)? };
        let writers = if bg == "reads-writes" { c.parse_or::<u32>("writers", 2)? } else { 0 };
        let command =
            c.text("command").filter(|s| !s.is_empty()).map(|s| s.split_whitespace().map(str::to_string).collect());
        Ok(Startup {
            files,
            size: c.size_or("size", 48 << 20)?,
            readers,
            writers,
            background_size: c.size_or("background_size", 1 << 30)?,
            command,
            ramp: c.duration_or("ramp_time", Duration::from_secs(1))?,
        })
    }

    fn run(&mut self, cx: &dyn Context) -> Result<Report, Error> {
        // Refuse before laying anything out: a warm start would be a wrong number.
        cx.drop_caches().map_err(|e| Error::unsupported(format!("a cold start needs the page cache dropped: {e}")))?;
        let dir = cx.scratch_dir();
        let app = dir.join("app");
        std::fs::create_dir(&app).map_err(|e| Error::io("mkdir app", &e))?;
        // Sizes fall off geometrically, as a program's few large libraries and many small files do.
        let weights: Vec<f64> = (0..self.files).map(|i| 0.93f64.powi(i as i32)).collect();
        let total: f64 = weights.iter().sum();
        let chunk = {
            let mut v = vec![0u8; 1 << 20];
            super::io::layout::fill_random(&mut v, 0xA99);
            v
        };
        let mut app_files = Vec::new();
        for (i, w) in weights.iter().enumerate() {
            let p = app.join(format!("lib{i}.so"));
            let size = ((self.size as f64 * w / total) as u64).max(1);
            write(&p, size, &chunk)?;
            app_files.push(p);
        }
        let bg: Vec<PathBuf> =
            (0..self.readers + self.writers).map(|i| dir.join(format!("background-{i}.dat"))).collect();
        for p in bg.iter().take(self.readers as usize) {
            write(p, self.background_size, &chunk)?;
        }
        if cx.cancelled() {
            return Err(Error::cancelled());
        }
        cx.drop_caches()?;
        let stop = AtomicBool::new(false);
        let moved = AtomicU64::new(0);
        let (secs, bg_result) = std::thread::scope(|s| -> Result<(f64, Vec<Result<(), Error>>), Error> {
            let mut handles = Vec::new();
            for (i, p) in bg.iter().enumerate() {
                let (stop, moved, size) = (&stop, &moved, self.background_size);
                let writer = i >= self.readers as usize;
                handles.push(s.spawn(move || {
                    if writer { writer_loop(p, size, stop, moved) } else { reader_loop(p, stop, moved) }
                }));
            }
            std::thread::sleep(self.ramp);
            let t0 = cx.elapsed();
            let started = match &self.command {
                None => read_all(&app_files),
                Some(cmd) => run(cmd, dir),
            };
            let secs = (cx.elapsed() - t0).as_secs_f64();
            stop.store(true, Ordering::Relaxed);
            let bg: Vec<Result<(), Error>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::failed("a background job panicked"))))
                .collect();
            started?;
            Ok((secs, bg))
        })?;
        for r in bg_result {
            r?;
        }
        Ok(Report::new().value("seconds", secs).line(format!(
            "start ({}) in {secs:.6} s with {} reader(s) and {} writer(s) in the background, which moved {} bytes",
            match &self.command {
                None => format!("cold read of {} files, {} bytes", self.files, self.size),
                Some(c) => c.join(" "),
            },
            self.readers,
            self.writers,
            moved.load(Ordering::Relaxed)
        )))
    }
}

fn write(p: &Path, size: u64, chunk: &[u8]) -> Result<(), Error> {
    let mut f = std::fs::File::create(p).map_err(|e| Error::io(&format!("create {}", p.display()), &e))?;
    let mut left = size as usize;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).map_err(|e| Error::io(&format!("write {}", p.display()), &e))?;
        left -= n;
    }
    f.sync_all().map_err(|e| Error::io(&format!("fsync {}", p.display()), &e))
}

fn read_all(files: &[PathBuf]) -> Result<(), Error> {
    let mut buf = vec![0u8; 1 << 17];
    for p in files {
        let mut f = crate::sys::fs::open_regular(p).map_err(|e| Error::io(&format!("open {}", p.display()), &e))?;
        while f.read(&mut buf).map_err(|e| Error::io(&format!("read {}", p.display()), &e))? > 0 {}
    }
    Ok(())
}

fn run(cmd: &[String], dir: &Path) -> Result<(), Error> {
    let mut c = std::process::Command::new(&cmd[0]);
    // Never the user's terminal (see sys::process::own_session).
    let st = crate::sys::process::own_session(&mut c)
        .args(&cmd[1..])
        .stdin(std::process::Stdio::null())
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| Error::io(&format!("start {}", cmd[0]), &e))?;
    if !st.success() {
        return Err(Error::failed(format!("{} exited with {st}", cmd.join(" "))));
    }
    Ok(())
}

/// Reads `p` sequentially until stopped, starting over (cold) at its end.
fn reader_loop(p: &Path, stop: &AtomicBool, moved: &AtomicU64) -> Result<(), Error> {
    use std::os::fd::AsRawFd;
    let mut f = crate::sys::fs::open_regular(p).map_err(|e| Error::io(&format!("open {}", p.display()), &e))?;
    let mut buf = vec![0u8; 1 << 20];
    while !stop.load(Ordering::Relaxed) {
        let n = f.read(&mut buf).map_err(|e| Error::io(&format!("read {}", p.display()), &e))?;
        if n == 0 {
            // SAFETY: fadvise on our descriptor.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            f.rewind().map_err(|e| Error::io("rewind", &e))?;
        }
        moved.fetch_add(n as u64, Ordering::Relaxed);
    }
    Ok(())
}

/// Writes `p` sequentially until stopped, syncing every 64 MiB, wrapping at `size`.
fn writer_loop(p: &Path, size: u64, stop: &AtomicBool, moved: &AtomicU64) -> Result<(), Error> {
    let mut f = std::fs::File::create(p).map_err(|e| Error::io(&format!("create {}", p.display()), &e))?;
    let mut buf = vec![0u8; 1 << 20];
    super::io::layout::fill_random(&mut buf, 0xB6);
    let mut at = 0u64;
    while !stop.load(Ordering::Relaxed) {
        f.write_all(&buf).map_err(|e| Error::io(&format!("write {}", p.display()), &e))?;
        at += buf.len() as u64;
        moved.fetch_add(buf.len() as u64, Ordering::Relaxed);
        if at.is_multiple_of(64 << 20) {
            f.sync_data().map_err(|e| Error::io(&format!("fsync {}", p.display()), &e))?;
        }
        if at >= size {
            f.rewind().map_err(|e| Error::io("rewind", &e))?;
            at = 0;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::testing::Cx;

    #[test]
    fn without_root_a_cold_start_is_refused() {
        // The test context cannot drop caches, as a non-root run cannot.
        let d = tempfile::tempdir().unwrap();
        let mut w = Startup::new(&[("files", "3"), ("size", "64k")].into_iter().collect()).unwrap();
        let e = w.run(&Cx::new(d.path())).unwrap_err();
        assert!(e.to_string().starts_with("a cold start needs the page cache dropped"), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "nothing laid out");
        assert!(Startup::new(&[("background", "heavy")].into_iter().collect()).is_err());
    }
}
