//! Waiting for a condition in tests: poll it until it holds or a deadline passes, instead of
//! sleeping for a fixed time and hoping.

use std::time::{Duration, Instant};

/// How often `wait_for` checks its condition.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Checks `condition` every `POLL_INTERVAL` until it returns `Some`, and returns that value;
/// `None` once `timeout` has passed without it.
pub fn wait_for<T>(timeout: Duration, mut condition: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = condition() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Like `wait_for` for a plain condition: whether it held before `timeout` passed.
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    wait_for(timeout, || condition().then_some(())).is_some()
}
