//! The one wasmtime engine of the process: compiler settings every cached
//! artifact depends on, and the epoch ticker that bounds a plugin's time.

use std::future::Future;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often the epoch advances: the resolution of time limits, of
/// Ctrl-C reaching a plugin that never calls the host, and the cost of
/// the checks (one callback per tick while a plugin runs).
pub(crate) const TICK: Duration = Duration::from_millis(10);

/// The engine, made on first use, with its ticker thread.
pub fn engine() -> &'static wasmtime::Engine {
    static ENGINE: OnceLock<wasmtime::Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut c = wasmtime::Config::new();
        c.wasm_component_model(true);
        // Loops and calls check the epoch: how an infinite loop ends without
        // the slower fuel counting.
        c.epoch_interruption(true);
        c.cranelift_opt_level(wasmtime::OptLevel::Speed);
        let engine = wasmtime::Engine::new(&c).expect("the plugin engine's settings are valid");
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while let Some(e) = weak.upgrade() {
                    e.increment_epoch();
                    drop(e);
                    std::thread::sleep(TICK);
                }
            })
            .expect("can start the epoch thread");
        engine
    })
}

/// How long `block_on` lets a call overrun its deadline before it is
/// dropped: the epoch's own check stops running wasm first; this stops a
/// plugin parked in a host call (a sleep, a poll).
const GRACE: Duration = Duration::from_millis(50);

/// The plugin's deadline, shared by its store (the epoch check, `cancelled`)
/// and the watcher of its call; moved when the clock restarts after
/// instantiation.
#[derive(Clone, Debug)]
pub(crate) struct Deadline(std::sync::Arc<std::sync::Mutex<Instant>>);

impl Deadline {
    pub(crate) fn new(at: Instant) -> Deadline {
        Deadline(std::sync::Arc::new(std::sync::Mutex::new(at)))
    }
    pub(crate) fn get(&self) -> Instant {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    pub(crate) fn set(&self, at: Instant) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = at;
    }
}

/// Why a watched call was dropped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Stopped {
    TimeUp,
    Interrupted,
    /// Engine stopped it (`Sandbox::stop`).
    Engine,
}

/// Runs `work` (a plugin's call) on this thread's runtime until it ends,
/// its deadline passes or the user interrupts: then it is dropped
/// wherever it waits, and the store it borrowed is not used again.
pub(crate) fn watched<F: std::future::Future>(
    work: F,
    deadline: &Deadline,
    interrupted: fn() -> bool,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<F::Output, Stopped> {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime can be built");
    }
    let watch = async {
        loop {
            tokio::time::sleep(TICK).await;
            if interrupted() {
                return Stopped::Interrupted;
            }
            if stop.is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed)) {
                return Stopped::Engine;
            }
            if Instant::now() >= deadline.get() + GRACE {
                return Stopped::TimeUp;
            }
        }
    };
    RUNTIME.with(|rt| {
        rt.block_on(async {
            let (mut work, mut watch) = (std::pin::pin!(work), std::pin::pin!(watch));
            std::future::poll_fn(|cx| {
                if let std::task::Poll::Ready(r) = work.as_mut().poll(cx) {
                    return std::task::Poll::Ready(Ok(r));
                }
                watch.as_mut().poll(cx).map(Err)
            })
            .await
        })
    })
}

/// What compiled code depends on besides the component: engine and wasmtime
/// versions, target and settings, as one hex string for cache keys.
pub(crate) fn fingerprint() -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine().precompile_compatibility_hash().hash(&mut h);
    format!("engine-{}-wasmtime-{}-{:016x}", env!("CARGO_PKG_VERSION"), WASMTIME_VERSION, h.finish())
}

/// The wasmtime version linked in (checked against Cargo.lock by a test).
pub(crate) const WASMTIME_VERSION: &str = "48.0.8";

#[cfg(test)]
mod tests {
    #[test]
    fn the_wasmtime_version_is_the_locked_one() {
        let lock = include_str!("../../../../Cargo.lock");
        let at = lock.find("name = \"wasmtime\"\nversion = \"").expect("wasmtime in Cargo.lock");
        let version = lock[at..].lines().nth(1).unwrap().trim_start_matches("version = ").trim_matches('"');
        assert_eq!(version, super::WASMTIME_VERSION);
    }
}
