//! The `io_uring` engine: `depth` operations in flight per job, on
//! registered (fixed) buffers and a registered file, submitted in batches.

use super::job::{Job, Pattern, Tally, thread_cpu};
use super::layout::{Aligned, fill_random};
use engine_sdk::Error;
use io_uring::{IoUring, opcode, types};
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Whether this kernel (and its seccomp policy) lets us make a ring.
pub fn available() -> Result<(), String> {
    IoUring::new(2).map(drop).map_err(|e| e.to_string())
}

struct Slot {
    buf: Aligned,
    started: Instant,
    offset: u64,
    len: u64,
    write: bool,
}

pub fn run(job: &Job<'_>, name: &str) -> Result<Tally, Error> {
    let cpu0 = thread_cpu();
    let depth = job.depth.max(1);
    // One thread submits and reaps: tell the kernel (5.19+), else a plain ring.
    let mut ring: IoUring = IoUring::builder()
        .setup_single_issuer()
        .build(depth)
        .or_else(|_| IoUring::new(depth))
        .map_err(|e| Error::io("set up io_uring", &e))?;
    let mut slots: Vec<Slot> = (0..depth)
        .map(|i| {
            let mut buf = Aligned::new(job.bs as usize);
            fill_random(buf.as_mut_slice(), job.seed ^ (i as u64 + 1));
            Slot { buf, started: Instant::now(), offset: 0, len: 0, write: false }
        })
        .collect();
    let iovecs: Vec<libc::iovec> =
        slots.iter().map(|s| libc::iovec { iov_base: s.buf.as_ptr().cast(), iov_len: job.bs as usize }).collect();
    // SAFETY: the buffers outlive the ring (dropped after it, below) and are not moved.
    let fixed = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
    let registered_file = ring.submitter().register_files(&[job.file.as_raw_fd()]).is_ok();

    let mut in_flight_left = false;
    let result = drive(&mut ring, &mut slots, job, name, fixed, registered_file, &mut in_flight_left);
    // A ring is torn down asynchronously after close, holding its
    // registered file (and the file system: "target is busy", space not
    // freed) a while longer. Unregistering releases them now, on every path.
    if registered_file {
        let _ = ring.submitter().unregister_files();
    }
    if fixed {
        let _ = ring.submitter().unregister_buffers();
    }
    drop(ring);
    if in_flight_left {
        // The kernel may still write into these buffers: never free them.
        std::mem::forget(slots);
    } else {
        drop(slots);
    }
    let mut t = result?;
    t.cpu = thread_cpu() - cpu0;
    Ok(t)
}

/// Keeps `depth` operations in flight until the job is done.
fn drive(
    ring: &mut IoUring,
    slots: &mut [Slot],
    job: &Job<'_>,
    name: &str,
    fixed: bool,
    registered_file: bool,
    in_flight_left: &mut bool,
) -> Result<Tally, Error> {
    let depth = slots.len() as u32;
    let mut p = Pattern::new(job);
    let mut t = Tally::default();
    let mut in_flight = 0u32;
    let mut free: Vec<usize> = (0..depth as usize).rev().collect();
    let mut since_sync = 0u64;
    let mut stopped = false;
    let mut done: Vec<(usize, i32)> = Vec::with_capacity(depth as usize);
    let mut failed: Option<Error> = None;
    loop {
        // Fill the queue, unless an fsync is due: then drain first.
        let sync_due = job.fsync_every > 0 && since_sync >= job.fsync_every;
        if !stopped && !sync_due {
            let now = Instant::now();
            while let Some(&i) = free.last() {
                if !p.more(job, now) {
                    stopped = true;
                    break;
                }
                free.pop();
                let (off, len, write) = p.next();
                let s = &mut slots[i];
                s.offset = off;
                s.len = len;
                s.write = write;
                s.started = now;
                let len = len as u32;
                let buf = s.buf.as_ptr();
                let entry = match (write, fixed, registered_file) {
                    (true, true, true) => {
                        opcode::WriteFixed::new(types::Fixed(0), buf, len, i as u16).offset(off).build()
                    }
                    (false, true, true) => {
                        opcode::ReadFixed::new(types::Fixed(0), buf, len, i as u16).offset(off).build()
                    }
                    (true, true, false) => {
                        opcode::WriteFixed::new(types::Fd(job.file.as_raw_fd()), buf, len, i as u16).offset(off).build()
                    }
                    (false, true, false) => {
                        opcode::ReadFixed::new(types::Fd(job.file.as_raw_fd()), buf, len, i as u16).offset(off).build()
                    }
                    (true, false, _) => {
                        opcode::Write::new(types::Fd(job.file.as_raw_fd()), buf, len).offset(off).build()
                    }
                    (false, false, _) => {
                        opcode::Read::new(types::Fd(job.file.as_raw_fd()), buf, len).offset(off).build()
                    }
                };
                // SAFETY: the buffer stays valid and untouched until its completion is reaped.
                unsafe { ring.submission().push(&entry.user_data(i as u64)) }
                    .map_err(|_| Error::failed("io_uring submission queue full"))?;
                in_flight += 1;
                // Hand each operation to the kernel as soon as it is ready, as
                // fio does: batching the refills delays them behind one another
                // and cost 10–15 % of IOPS at depth 32 on this VM.
                match ring.submit() {
                    Ok(_) => {}
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock) => {}
                    Err(e) => {
                        *in_flight_left = true;
                        return Err(Error::io("io_uring submit", &e));
                    }
                }
                if write {
                    since_sync += 1;
                    if job.fsync_every > 0 && since_sync >= job.fsync_every {
                        break;
                    }
                }
            }
        }
        if in_flight == 0 {
            if job.fsync_every > 0 && since_sync >= job.fsync_every {
                job.file.sync_data().map_err(|e| Error::io(&format!("fsync {name}"), &e))?;
                t.fsyncs += 1;
                since_sync = 0;
                continue;
            }
            break;
        }
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            // A signal (Ctrl-C) interrupts the wait; the operations go on.
            Err(e) if matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock) => {}
            Err(e) => {
                *in_flight_left = in_flight > 0;
                return Err(Error::io("io_uring submit", &e));
            }
        }
        let now = Instant::now();
        done.clear();
        done.extend(ring.completion().map(|c| (c.user_data() as usize, c.result())));
        for &(i, res) in &done {
            in_flight -= 1;
            free.push(i);
            if failed.is_some() {
                continue;
            }
            let s = &slots[i];
            let what = if s.write { "write" } else { "read" };
            if res < 0 {
                failed = Some(Error::io(
                    &format!("{what} {name} at offset {}", s.offset),
                    &std::io::Error::from_raw_os_error(-res),
                ));
            } else if res as u64 != s.len {
                failed = Some(Error::failed(format!("short {what} of {res} bytes at offset {} of {name}", s.offset)));
            } else {
                t.done(job, s.write, res as u64, s.started, now);
            }
            // After an error, issue nothing more and reap what is in flight:
            // the kernel may still be writing into those buffers.
            if failed.is_some() {
                stopped = true;
            }
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if job.fsync_every > 0 && since_sync > 0 {
        job.file.sync_data().map_err(|e| Error::io(&format!("fsync {name}"), &e))?;
        t.fsyncs += 1;
    }
    Ok(t)
}
