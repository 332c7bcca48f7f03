//! Ctrl-C and SIGTERM: the first one asks the run to stop cleanly (the running
//! trial's process group is killed, completed results are kept); a second
//! SIGINT ends the process at once.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn flag() -> &'static Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Installs the handlers; call once, early in `main` of a command that runs tests.
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let f = flag().clone();
    // Order matters: the conditional shutdown sees the flag before it is set.
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, f.clone())?;
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register(sig, f.clone())?;
    }
    Ok(())
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    flag().load(Ordering::Relaxed)
}

/// Asks for a stop (tests and internal errors).
pub fn request() {
    flag().store(true, Ordering::Relaxed);
}
