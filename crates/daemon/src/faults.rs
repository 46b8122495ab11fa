//! Crash points for the fault harness: with `BOSUN_FAULT=before:N` the daemon kills itself with
//! SIGKILL as it is about to carry out its Nth effect (its events durable, the effect not run);
//! with `after:N`, once the Nth effect has run but before its outcome is recorded; with
//! `unanswered:N`, once the Nth request sent with an id is carried out, before it is answered.
//! With `full:PATH`, the store's appends fail as on a full disk (SQLITE_FULL) while a file exists
//! at PATH. Unset, as for every user, it costs one branch per effect, per answer and per append.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Where, around an effect, the crash comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum When {
    Before,
    After,
    Unanswered,
    Full,
}

struct Point {
    when: When,
    nth: u64,
    /// For `full`: the file whose presence fills the disk.
    file: Option<std::path::PathBuf>,
}

static POINT: OnceLock<Option<Point>> = OnceLock::new();
static COUNT: AtomicU64 = AtomicU64::new(0);
static ANSWERS: AtomicU64 = AtomicU64::new(0);

fn point() -> Option<&'static Point> {
    POINT
        .get_or_init(|| {
            let spec = std::env::var("BOSUN_FAULT").ok()?;
            let (when, nth) = spec.split_once(':')?;
            if when == "full" {
                return Some(Point { when: When::Full, nth: 0, file: Some(nth.into()) });
            }
            let when = match when {
                "before" => When::Before,
                "after" => When::After,
                "unanswered" => When::Unanswered,
                _ => return None,
            };
            Some(Point { when, nth: nth.parse().ok()?, file: None })
        })
        .as_ref()
}

/// An effect is about to be carried out: its number, after crashing if this is the point.
pub fn before() -> u64 {
    let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
    crash_at(When::Before, n);
    n
}

/// The `n`th effect ran: crashes if this is the point, before its outcome is recorded.
pub fn after(n: u64) {
    crash_at(When::After, n);
}

/// A request sent with an id was carried out and is about to be answered: crashes if this is
/// the point.
pub fn before_answer() {
    if point().is_some_and(|p| p.when == When::Unanswered) {
        crash_at(When::Unanswered, ANSWERS.fetch_add(1, Ordering::SeqCst) + 1);
    }
}

/// Whether the disk is to be taken as full for an append.
pub fn disk_full() -> bool {
    point().is_some_and(|p| p.when == When::Full && p.file.as_deref().is_some_and(std::path::Path::exists))
}

fn crash_at(when: When, n: u64) {
    if point().is_some_and(|p| p.when == when && p.nth == n) {
        tracing::warn!(?when, n, "BOSUN_FAULT: crashing on purpose");
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}
