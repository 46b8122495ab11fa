//! Waiting for a condition in tests: poll it until it holds or a deadline passes, instead of
//! sleeping for a fixed time and hoping.

use std::time::{Duration, Instant};

/// How often `wait_for` checks its condition at first.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// How often once it has waited `POLL_FAST_FOR`: a condition checked by running `bosun` (a
/// process, a daemon's answer) costs a few milliseconds of CPU each time, and a suite whose
/// tests wait seconds for real clients on two cores is bound by CPU.
pub const POLL_SLOW_INTERVAL: Duration = Duration::from_millis(100);
/// How long `wait_for` checks at `POLL_INTERVAL`.
pub const POLL_FAST_FOR: Duration = Duration::from_secs(1);

/// Checks `condition` every `POLL_INTERVAL` (after `POLL_FAST_FOR`, every `POLL_SLOW_INTERVAL`)
/// until it returns `Some`, and returns that value; `None` once `timeout` has passed without it.
pub fn wait_for<T>(timeout: Duration, mut condition: impl FnMut() -> Option<T>) -> Option<T> {
    let began = Instant::now();
    let deadline = began + timeout;
    loop {
        if let Some(value) = condition() {
            return Some(value);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        let every = if now - began < POLL_FAST_FOR { POLL_INTERVAL } else { POLL_SLOW_INTERVAL };
        std::thread::sleep(every.min(deadline - now));
    }
}

/// Like `wait_for` for a plain condition: whether it held before `timeout` passed.
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    wait_for(timeout, || condition().then_some(())).is_some()
}
