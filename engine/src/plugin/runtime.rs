//! The one wasmtime engine of the process: compiler settings every cached
//! artifact depends on, and the epoch ticker that bounds a plugin's time.

use std::sync::OnceLock;
use std::time::Duration;

/// How often the epoch advances: the resolution of time limits, of
/// Ctrl-C reaching a plugin that never calls the host, and the cost of
/// the checks (one callback per tick while a plugin runs).
pub(crate) const TICK: Duration = Duration::from_millis(10);

/// The engine, made on first use, with its ticker thread.
pub(crate) fn engine() -> &'static wasmtime::Engine {
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
        let lock = include_str!("../../../Cargo.lock");
        let at = lock.find("name = \"wasmtime\"\nversion = \"").expect("wasmtime in Cargo.lock");
        let version = lock[at..].lines().nth(1).unwrap().trim_start_matches("version = ").trim_matches('"');
        assert_eq!(version, super::WASMTIME_VERSION);
    }
}
