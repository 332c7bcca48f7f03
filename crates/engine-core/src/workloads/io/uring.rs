//! The `io_uring` engine: `depth` operations in flight per job, on
//! registered (fixed) buffers and a registered file, submitted in batches.

use super::job::{Job, Pattern, Tally, thread_cpu};
use super::layout::{Aligned, fill_random};
use engine_sdk::Error;
use io_uring::{IoUring, opcode, squeue, types};
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Whether this kernel (and its seccomp policy) lets us make a ring.
pub(crate) fn available() -> std::io::Result<()> {
    IoUring::new(2).map(drop)
}

struct Slot {
    buf: Aligned,
    started: Instant,
    offset: u64,
    len: u64,
    write: bool,
}

pub(crate) fn run(job: &Job<'_>, name: &str) -> Result<Tally, Error> {
    let cpu0 = thread_cpu();
    let depth = job.depth.max(1);
    // One thread submits and reaps, so completions' task work can wait
    // until it asks for them (DEFER_TASKRUN, 6.1+) instead of interrupting
    // it (COOP_TASKRUN, 5.19+), as fio sets up its rings; older kernels get
    // what they have. Without them a completion at depth 1 cost a wake-up
    // more: 19 µs of CPU per I/O against fio's 9 here.
    let mut ring: IoUring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_coop_taskrun()
        .build(depth)
        .or_else(|_| IoUring::builder().setup_coop_taskrun().build(depth))
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
    Ok(result?.end(cpu0))
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
    let mut d = Driver {
        job,
        name,
        fixed,
        registered_file,
        p: Pattern::new(job),
        t: Tally::new(job),
        in_flight: 0,
        free: (0..slots.len()).rev().collect(),
        since_sync: 0,
        stopped: false,
        done: Vec::with_capacity(slots.len()),
        failed: None,
    };
    loop {
        // Fill the queue, unless an fsync is due: then drain first.
        if !d.stopped && !d.sync_due() {
            d.fill(ring, slots, in_flight_left)?;
        }
        if d.in_flight == 0 {
            if d.sync_due() {
                d.sync()?;
                continue;
            }
            break;
        }
        d.wait(ring, in_flight_left)?;
        d.reap(ring, slots);
    }
    if let Some(e) = d.failed {
        return Err(e);
    }
    if job.fsync_every > 0 && d.since_sync > 0 {
        d.sync()?;
    }
    Ok(d.t)
}

/// The state of one job's ring: which slots are free, what is in flight,
/// what was counted. Every allocation is made before the first operation.
struct Driver<'j, 'a> {
    job: &'j Job<'a>,
    name: &'j str,
    /// The buffers are registered (fixed).
    fixed: bool,
    /// The file is registered (index 0).
    registered_file: bool,
    p: Pattern,
    t: Tally,
    in_flight: u32,
    free: Vec<usize>,
    /// Writes since the last fsync.
    since_sync: u64,
    /// Nothing more is issued (the job is done, or an operation failed).
    stopped: bool,
    /// Completions reaped at once: (slot, result).
    done: Vec<(usize, i32)>,
    failed: Option<Error>,
}

impl Driver<'_, '_> {
    /// Whether `fsync_every` writes were issued since the last fsync.
    #[inline]
    fn sync_due(&self) -> bool {
        self.job.fsync_every > 0 && self.since_sync >= self.job.fsync_every
    }

    /// Syncs the file's data.
    fn sync(&mut self) -> Result<(), Error> {
        self.job.file.sync_data().map_err(|e| Error::io(&format!("fsync {}", self.name), &e))?;
        self.t.fsyncs += 1;
        self.since_sync = 0;
        Ok(())
    }

    /// Issues operations into the free slots until none is left, the job is
    /// done, or an fsync is due.
    #[inline]
    fn fill(&mut self, ring: &mut IoUring, slots: &mut [Slot], in_flight_left: &mut bool) -> Result<(), Error> {
        let now = Instant::now();
        while let Some(&i) = self.free.last() {
            if !self.p.more(self.job, now) {
                self.stopped = true;
                break;
            }
            self.free.pop();
            let (off, len, write) = self.p.next();
            let s = &mut slots[i];
            s.offset = off;
            s.len = len;
            s.write = write;
            s.started = now;
            let entry = self.entry(i, s.buf.as_ptr(), off, len as u32, write);
            // SAFETY: the buffer stays valid and untouched until its completion is reaped.
            unsafe { ring.submission().push(&entry.user_data(i as u64)) }
                .map_err(|_| Error::failed("io_uring submission queue full"))?;
            self.in_flight += 1;
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
                self.since_sync += 1;
                if self.sync_due() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// The submission entry of one operation on slot `i`'s buffer `buf`:
    /// on the registered buffer and file where there are.
    #[inline]
    fn entry(&self, i: usize, buf: *mut u8, off: u64, len: u32, write: bool) -> squeue::Entry {
        let fd = types::Fd(self.job.file.as_raw_fd());
        match (write, self.fixed, self.registered_file) {
            (true, true, true) => opcode::WriteFixed::new(types::Fixed(0), buf, len, i as u16).offset(off).build(),
            (false, true, true) => opcode::ReadFixed::new(types::Fixed(0), buf, len, i as u16).offset(off).build(),
            (true, true, false) => opcode::WriteFixed::new(fd, buf, len, i as u16).offset(off).build(),
            (false, true, false) => opcode::ReadFixed::new(fd, buf, len, i as u16).offset(off).build(),
            (true, false, _) => opcode::Write::new(fd, buf, len).offset(off).build(),
            (false, false, _) => opcode::Read::new(fd, buf, len).offset(off).build(),
        }
    }

    /// Waits for at least one completion.
    #[inline]
    fn wait(&self, ring: &mut IoUring, in_flight_left: &mut bool) -> Result<(), Error> {
        match ring.submit_and_wait(1) {
            Ok(_) => Ok(()),
            // A signal (Ctrl-C) interrupts the wait; the operations go on.
            Err(e) if matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock) => Ok(()),
            Err(e) => {
                *in_flight_left = self.in_flight > 0;
                Err(Error::io("io_uring submit", &e))
            }
        }
    }

    /// Counts the completed operations and frees their slots. After an
    /// error, issues nothing more and reaps what is in flight: the kernel
    /// may still be writing into those buffers.
    #[inline]
    fn reap(&mut self, ring: &mut IoUring, slots: &[Slot]) {
        let now = Instant::now();
        self.done.clear();
        self.done.extend(ring.completion().map(|c| (c.user_data() as usize, c.result())));
        for &(i, res) in &self.done {
            self.in_flight -= 1;
            self.free.push(i);
            if self.failed.is_some() {
                continue;
            }
            let s = &slots[i];
            let what = if s.write { "write" } else { "read" };
            if res < 0 {
                self.failed = Some(Error::io(
                    &format!("{what} {} at offset {}", self.name, s.offset),
                    &std::io::Error::from_raw_os_error(-res),
                ));
            } else if res as u64 != s.len {
                self.failed =
                    Some(Error::failed(format!("short {what} of {res} bytes at offset {} of {}", s.offset, self.name)));
            } else {
                self.t.done(self.job, s.write, res as u64, s.started, now);
            }
            if self.failed.is_some() {
                self.stopped = true;
            }
        }
    }
}
