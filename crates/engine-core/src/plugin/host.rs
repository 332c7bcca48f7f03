//! The sandbox a plugin runs in: generated bindings of `sdk/wit`, the host
//! imports (`engine:plugin/host`), and a WASI preview 2 context that offers
//! the scratch directory and nothing else.

use super::limits::{Interrupted, Limiter, Limits, Stopped, TimeUp};
use crate::sys::safepath::Dir;
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

pub use super::bindings::{parser_world, wit, workload_world};

/// Where the scratch directory appears inside the sandbox.
pub(crate) const SCRATCH: &str = "/scratch";
/// Most bytes a plugin may write in one call, over its stdout, stderr,
/// log, progress notes and report lines together; more fails its test (a
/// plugin that floods its output is broken, not measured).
pub const OUTPUT_CAP: usize = 16 << 20;
/// Most WASI resources (open files, directories, streams) a plugin may
/// hold at once: the bulk API's file limit, plus its standard streams and
/// preopen.
pub const MAX_RESOURCES: usize = super::bulk::MAX_OPEN + 16;

/// What a plugin may touch during one call.
pub struct Sandbox<'a> {
    /// Preopened as `/scratch` through its descriptor (never a path a
    /// plugin could have changed); `None` gives no directory (parsers).
    pub scratch: Option<&'a Dir>,
    /// The environment the profile passes (nothing else is inherited).
    pub env: &'a [(String, String)],
    pub limits: Limits,
    /// Whether the user asked to stop (Ctrl-C).
    pub interrupted: fn() -> bool,
    /// How often a workload's own figures are recorded; `None`: not.
    pub interval: Option<std::time::Duration>,
    /// Set when engine stops the call (the test outgrew its space).
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// A store's data: WASI state, limits, and what the host imports record.
pub struct State {
    wasi: WasiCtx,
    pub(super) table: ResourceTable,
    /// `engine:plugin/files`: the scratch directory the calls resolve from.
    pub(super) files: super::bulk::Files,
    limiter: Limiter,
    start: Instant,
    deadline: super::runtime::Deadline,
    interrupted: fn() -> bool,
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    pub log: String,
    pub progress: Option<(f64, String)>,
    /// Bytes of log lines and progress notes so far (towards [`OUTPUT_CAP`]).
    pub written: usize,
    /// The plugin logged more than [`OUTPUT_CAP`]: its test fails, as one
    /// that writes that much to stdout or stderr does.
    pub log_overflow: bool,
    pub(super) interval: Option<std::time::Duration>,
    /// The workload's own intervals (`host.interval`).
    pub intervals: crate::model::series::Reported,
}

impl super::bulk::FilesView for State {
    fn table(&self) -> &ResourceTable {
        &self.table
    }
    fn files_mut(&mut self) -> (&mut ResourceTable, &mut super::bulk::Files) {
        (&mut self.table, &mut self.files)
    }
}

/// Longest progress note kept (a note is a few words).
const NOTE_CAP: usize = 200;

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl workload_world::engine::plugin::host::Host for State {
    fn elapsed_ns(&mut self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
    fn cancelled(&mut self) -> bool {
        (self.interrupted)() || Instant::now() >= self.deadline.get()
    }
    fn progress(&mut self, fraction: f64, note: String) {
        self.written += note.len();
        if self.written > OUTPUT_CAP {
            self.log_overflow = true;
            return;
        }
        let mut note = note;
        if note.len() > NOTE_CAP {
            let cut = (0..=NOTE_CAP).rev().find(|i| note.is_char_boundary(*i)).unwrap_or(0);
            note.truncate(cut);
            note.push('…');
        }
        self.progress = Some((fraction, note));
    }
    fn log(&mut self, line: String) {
        self.written += line.len() + 1;
        if self.written > OUTPUT_CAP {
            self.log_overflow = true;
            return;
        }
        // One record per call: a line break inside cannot forge another.
        self.log.push_str("log: ");
        self.log.push_str(&crate::sys::text::one_line(&line));
        self.log.push('\n');
    }
    fn interval_ms(&mut self) -> u32 {
        self.interval.map_or(0, |d| u32::try_from(d.as_millis()).unwrap_or(u32::MAX).max(1))
    }
    fn interval(&mut self, at_ns: u64, figures: Vec<workload_world::engine::plugin::types::Figure>) {
        // The figures are the plugin's text: they count towards its output.
        self.written += figures.iter().map(|f| f.name.len() + f.unit.len() + 8).sum::<usize>();
        if self.written > OUTPUT_CAP {
            self.log_overflow = true;
            return;
        }
        if self.interval.is_some() {
            let at = std::time::Duration::from_nanos(at_ns);
            self.intervals.push(at, figures.iter().map(|f| (f.name.as_str(), f.unit.as_str(), f.value)));
        }
    }
}

impl workload_world::engine::plugin::types::Host for State {}

/// The linker every plugin is instantiated with: WASI preview 2 (its
/// filesystem limited by the context to the preopen, its sockets denied by
/// the context), the host interface, and bulk file I/O in the preopen.
pub(crate) fn linker() -> Result<Linker<State>, wasmtime::Error> {
    let mut l = Linker::new(super::runtime::engine());
    wasmtime_wasi::p2::add_to_linker_async(&mut l)?;
    workload_world::engine::plugin::host::add_to_linker::<State, HasSelf<State>>(&mut l, |s| s)?;
    super::bulk::add_to_linker(&mut l)?;
    Ok(l)
}

/// A store for one call, and the pipes that capture the plugin's output.
pub struct Call {
    pub store: Store<State>,
    pub stdout: MemoryOutputPipe,
    pub stderr: MemoryOutputPipe,
}

impl Call {
    pub(crate) fn new(sb: &Sandbox<'_>) -> Result<Call, std::io::Error> {
        let stdout = MemoryOutputPipe::new(OUTPUT_CAP);
        let stderr = MemoryOutputPipe::new(OUTPUT_CAP);
        let mut b = WasiCtxBuilder::new();
        // Blocking file calls run on this thread instead of hopping through
        // an async runtime: I/O plugins measure the disk, not the hop.
        b.allow_blocking_current_thread(true);
        b.stdout(stdout.clone()).stderr(stderr.clone());
        b.envs(sb.env);
        b.arg("plugin");
        b.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
        if let Some(dir) = sb.scratch {
            b.preopened_dir(dir.fd_path(), SCRATCH, FsPerms::ReadWrite).map_err(std::io::Error::other)?;
            b.initial_cwd(SCRATCH);
        }
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        let now = Instant::now();
        let state = State {
            wasi: b.build(),
            table,
            files: super::bulk::Files::new(sb.scratch)?,
            limiter: Limiter::new(sb.limits.memory),
            start: now,
            deadline: super::runtime::Deadline::new(now + sb.limits.time),
            interrupted: sb.interrupted,
            stop: sb.stop.clone(),
            log: String::new(),
            written: 0,
            log_overflow: false,
            progress: None,
            interval: sb.interval,
            intervals: crate::model::series::Reported::new(now),
        };
        let mut store = Store::new(super::runtime::engine(), state);
        store.limiter(|s| &mut s.limiter);
        // Every tick, look at the clock and at Ctrl-C; a plugin that never
        // calls the host still ends.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|cx| {
            let s = cx.data();
            if (s.interrupted)() {
                Err(wasmtime::Error::new(Interrupted))
            } else if s.stop.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed)) {
                Err(wasmtime::Error::new(Stopped))
            } else if Instant::now() >= s.deadline.get() {
                Err(wasmtime::Error::new(TimeUp))
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        Ok(Call { store, stdout, stderr })
    }

    /// Restarts the clock (after instantiation, which is not the plugin's time).
    pub(crate) fn restart_clock(&mut self, limits: Limits) {
        let now = Instant::now();
        let s = self.store.data_mut();
        s.start = now;
        s.deadline.set(now + limits.time);
        s.intervals.origin = now;
    }

    /// The call's deadline, as its watcher sees it.
    pub(crate) fn deadline(&self) -> super::runtime::Deadline {
        self.store.data().deadline.clone()
    }

    /// Whether everything it wrote — stdout, stderr, log lines and notes,
    /// and `extra` (its report's lines) — is over [`OUTPUT_CAP`] (a full pipe
    /// reads as closed to it, a write past the end traps).
    pub(crate) fn overflowed(&self, extra: usize) -> bool {
        let total = self.stdout.contents().len() + self.stderr.contents().len() + self.store.data().written + extra;
        total >= OUTPUT_CAP
    }

    pub(crate) fn output(&self) -> (String, String) {
        let text =
            |p: &MemoryOutputPipe| crate::sys::bounded::decode(&p.contents(), crate::sys::bounded::STREAM, false).0;
        (text(&self.stdout), text(&self.stderr))
    }
}
