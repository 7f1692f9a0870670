//! SIGUSR1 and SIGTERM ask for a checkpoint: the handler only raises a flag, which the
//! window loop reads at every window boundary (`super::drive` makes it a pause request that
//! travels in the per-window allreduce, so all ranks stop at the same boundary).

use anyhow::{bail, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Async-signal-safe: one atomic store.
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether SIGUSR1 or SIGTERM arrived (since `install`).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Raises the flag as a signal would (tests, see `super::TEST_RAISE_ENV`).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Replaces the default action of SIGUSR1 and SIGTERM (end the process) with raising the flag.
pub fn install() -> Result<()> {
    for sig in [libc::SIGUSR1, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler
        // only stores to an atomic.
        let ok = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut()) == 0
        };
        if !ok {
            bail!(
                "cannot install the handler of signal {sig}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(())
}
