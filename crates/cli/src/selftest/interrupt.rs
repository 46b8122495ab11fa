//! Ctrl-C (and SIGTERM, SIGHUP) during a self-test: noted, not obeyed at once, so that the
//! checks stop at their next look and the self-test takes down what it made before it exits.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn note(_: nix::libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// From now on an interrupt is only noted.
pub fn catch() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(SigHandler::Handler(note), SaFlags::SA_RESTART, SigSet::empty());
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let _ = unsafe { sigaction(signal, &action) };
    }
}

/// Whether an interrupt came.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
