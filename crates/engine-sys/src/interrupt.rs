//! Ctrl-C and SIGTERM. The first asks the run to stop cleanly: the running
//! trial's process group gets SIGTERM and a grace period, completed results
//! are kept, scratch directories are removed. A second one kills the trial's
//! process group at once (from the signal handler itself) and skips the grace
//! period — the run still removes its scratch directory and restores system
//! state on the way out. A third ends the process immediately.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static HARD: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// The first signal that asked to stop (0: none).
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Process group of the trial running now (0: none).
static CHILD: AtomicI32 = AtomicI32::new(0);

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The signals [`install`] handles (a child resets them before it runs its program).
pub const HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers, early in a command that runs tests or downloads;
/// later calls do nothing (each signal must count once).
pub fn install() -> std::io::Result<()> {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    for sig in HANDLED {
        // SAFETY: the action only touches atomics and calls kill(2) and
        // _exit(2), which are async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, move || on_signal(sig))?;
        }
    }
    Ok(())
}

fn on_signal(sig: libc::c_int) {
    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let n = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
    STOP.store(true, Ordering::SeqCst);
    if n >= 2 {
        HARD.store(true, Ordering::SeqCst);
        let pg = CHILD.load(Ordering::SeqCst);
        if pg > 0 {
            // SAFETY: kill(2) is async-signal-safe; a negative pid names the group.
            unsafe {
                libc::kill(-pg, libc::SIGKILL);
            }
        }
    }
    if n >= 3 {
        // SAFETY: _exit(2) is async-signal-safe.
        unsafe { libc::_exit(128 + FIRST.load(Ordering::SeqCst).max(2)) };
    }
}

/// The exit code of a run a signal stopped: 128 + the first signal (130
/// for Ctrl-C, 143 for SIGTERM, 129 for a hang-up), as a shell reports it.
pub fn exit_code() -> i32 {
    match FIRST.load(Ordering::SeqCst) {
        0 => 130,
        sig => 128 + sig,
    }
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Whether a second stop was asked for: no grace period for anything.
pub fn urgent() -> bool {
    HARD.load(Ordering::Relaxed)
}

/// Names the process group of the trial now running (0 when none), so a
/// second Ctrl-C can kill it from the signal handler.
pub fn set_child(pgid: i32) {
    CHILD.store(pgid, Ordering::SeqCst);
}
