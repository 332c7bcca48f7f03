//! The `psync` engine: one pread/pwrite at a time per job.

use super::job::{Job, Pattern, Tally, thread_cpu};
use super::layout::{Aligned, fill_random};
use engine_sdk::Error;
use std::os::unix::fs::FileExt;
use std::time::Instant;

pub(crate) fn run(job: &Job<'_>, name: &str) -> Result<Tally, Error> {
    let cpu0 = thread_cpu();
    let mut buf = Aligned::new(job.bs as usize);
    fill_random(buf.as_mut_slice(), job.seed);
    let mut p = Pattern::new(job);
    let mut t = Tally::new(job);
    let mut since_sync = 0;
    while p.more(job, Instant::now()) {
        let (off, len, write) = p.next();
        let start = Instant::now();
        let len = len as usize;
        let r = if write {
            job.file.write_at(&buf.as_slice()[..len], off)
        } else {
            job.file.read_at(&mut buf.as_mut_slice()[..len], off)
        };
        let n =
            r.map_err(|e| Error::io(&format!("{} {name} at offset {off}", if write { "write" } else { "read" }), &e))?;
        if n != len {
            return Err(Error::failed(format!(
                "short {} of {n} bytes at offset {off} of {name}",
                if write { "write" } else { "read" }
            )));
        }
        t.done(job, write, n as u64, start, Instant::now());
        if write && job.fsync_every > 0 {
            since_sync += 1;
            if since_sync >= job.fsync_every {
                job.file.sync_data().map_err(|e| Error::io(&format!("fsync {name}"), &e))?;
                t.fsyncs += 1;
                since_sync = 0;
            }
        }
    }
    Ok(t.end(cpu0))
}
