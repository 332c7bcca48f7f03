//! The sandbox a plugin runs in: generated bindings of `sdk/wit`, the host
//! imports (`engine:plugin/host`), and a WASI preview 2 context that offers
//! the scratch directory and nothing else.

use super::limits::{Interrupted, Limiter, Limits, TimeUp};
use std::path::Path;
use std::time::Instant;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

pub mod workload_world {
    wasmtime::component::bindgen!({ path: "../sdk/wit", world: "workload-plugin" });
}

pub mod parser_world {
    wasmtime::component::bindgen!({
        path: "../sdk/wit",
        world: "parser-plugin",
        // One host implementation serves both worlds.
        with: {
            "engine:plugin/host": super::workload_world::engine::plugin::host,
            "engine:plugin/types": super::workload_world::engine::plugin::types,
        },
    });
}

pub use workload_world::engine::plugin::types as wit;

/// Where the scratch directory appears inside the sandbox.
pub const SCRATCH: &str = "/scratch";
/// Most bytes kept of a plugin's stdout, stderr and log each; writing more
/// traps (a plugin that floods its output is broken, not measured).
pub const OUTPUT_CAP: usize = 16 << 20;

/// What a plugin may touch during one call.
pub struct Sandbox<'a> {
    /// Preopened as `/scratch`; `None` gives no directory at all (parsers).
    pub scratch: Option<&'a Path>,
    /// The environment the profile passes (nothing else is inherited).
    pub env: &'a [(String, String)],
    pub limits: Limits,
    /// Whether the user asked to stop (Ctrl-C).
    pub interrupted: fn() -> bool,
}

/// A store's data: WASI state, limits, and what the host imports record.
pub struct State {
    wasi: WasiCtx,
    pub(super) table: ResourceTable,
    /// `engine:plugin/files`: the scratch directory the calls resolve from.
    pub(super) files: super::bulk::Files,
    limiter: Limiter,
    start: Instant,
    deadline: Instant,
    interrupted: fn() -> bool,
    pub log: String,
    pub progress: Option<(f64, String)>,
    /// The plugin logged more than [`OUTPUT_CAP`]: its test fails, as one
    /// that writes that much to stdout or stderr does.
    pub log_overflow: bool,
}

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
        (self.interrupted)() || Instant::now() >= self.deadline
    }
    fn progress(&mut self, fraction: f64, note: String) {
        self.progress = Some((fraction, note));
    }
    fn log(&mut self, line: String) {
        if self.log.len() + line.len() < OUTPUT_CAP {
            self.log.push_str(&line);
            self.log.push('\n');
        } else {
            self.log_overflow = true;
        }
    }
}

impl workload_world::engine::plugin::types::Host for State {}

/// The linker every plugin is instantiated with: WASI preview 2 (its
/// filesystem limited by the context to the preopen, its sockets denied by
/// the context), the host interface, and bulk file I/O in the preopen.
pub fn linker() -> Result<Linker<State>, wasmtime::Error> {
    let mut l = Linker::new(super::runtime::engine());
    wasmtime_wasi::p2::add_to_linker_sync(&mut l)?;
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
    pub fn new(sb: &Sandbox<'_>) -> Result<Call, std::io::Error> {
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
            b.preopened_dir(dir, SCRATCH, FsPerms::ReadWrite).map_err(std::io::Error::other)?;
            b.initial_cwd(SCRATCH);
        }
        let now = Instant::now();
        let state = State {
            wasi: b.build(),
            table: ResourceTable::new(),
            files: super::bulk::Files::new(sb.scratch)?,
            limiter: Limiter::new(sb.limits.memory),
            start: now,
            deadline: now + sb.limits.time,
            interrupted: sb.interrupted,
            log: String::new(),
            log_overflow: false,
            progress: None,
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
            } else if Instant::now() >= s.deadline {
                Err(wasmtime::Error::new(TimeUp))
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        Ok(Call { store, stdout, stderr })
    }

    /// Restarts the clock (after instantiation, which is not the plugin's time).
    pub fn restart_clock(&mut self, limits: Limits) {
        let now = Instant::now();
        let s = self.store.data_mut();
        s.start = now;
        s.deadline = now + limits.time;
    }

    /// Whether stdout or stderr filled up: the plugin wrote more than
    /// [`OUTPUT_CAP`] (a full pipe reads as closed to it, a write past the
    /// end traps).
    pub fn overflowed(&self) -> bool {
        self.stdout.contents().len() >= OUTPUT_CAP || self.stderr.contents().len() >= OUTPUT_CAP
    }

    pub fn output(&self) -> (String, String) {
        let text = |p: &MemoryOutputPipe| String::from_utf8_lossy(&p.contents()).into_owned();
        (text(&self.stdout), text(&self.stderr))
    }
}
