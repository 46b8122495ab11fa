//! Crash points for the fault harness: with `BOSUN_FAULT=before:N` the daemon kills itself with
//! SIGKILL as it is about to carry out its Nth effect (its events durable, the effect not run);
//! with `after:N`, once the Nth effect has run but before its outcome is recorded; with
//! `unanswered:N`, once the Nth request sent with an id is carried out, before it is answered.
//! With `full:PATH`, the store's appends fail as on a full disk (SQLITE_FULL) while a file exists
//! at PATH. With `before:KIND` or `after:KIND` (an effect's name, such as `KillSession`), around
//! the first effect of that kind; with `at:STEP`, at a named step of a sequence a handler runs
//! (`merge:merged`: the merge made in git, not yet recorded). Unset, as for every user, it costs
//! one branch per effect, per answer, per step and per append.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Where, around an effect, the crash comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum When {
    Before,
    After,
    Unanswered,
    Full,
    At,
}

struct Point {
    when: When,
    nth: u64,
    /// For `full`: the file whose presence fills the disk.
    file: Option<std::path::PathBuf>,
    /// For `before`, `after`: the kind of effect counted (every kind when none); for `at`, the
    /// step.
    name: Option<String>,
}

static POINT: OnceLock<Option<Point>> = OnceLock::new();
static COUNT: AtomicU64 = AtomicU64::new(0);
static ANSWERS: AtomicU64 = AtomicU64::new(0);

fn point() -> Option<&'static Point> {
    POINT
        .get_or_init(|| {
            let spec = std::env::var("BOSUN_FAULT").ok()?;
            let (when, nth) = spec.split_once(':')?;
            let named = |when| Some(Point { when, nth: 1, file: None, name: Some(nth.to_owned()) });
            let when = match when {
                "full" => return Some(Point { when: When::Full, nth: 0, file: Some(nth.into()), name: None }),
                "at" => return named(When::At),
                "before" => When::Before,
                "after" => When::After,
                "unanswered" => When::Unanswered,
                _ => return None,
            };
            match nth.parse() {
                Ok(nth) => Some(Point { when, nth, file: None, name: None }),
                Err(_) => named(when),
            }
        })
        .as_ref()
}

/// An effect is about to be carried out: its number (among those of its kind when the point
/// names one), after crashing if this is the point.
pub fn before(effect: &bosun_core::Effect) -> u64 {
    let counted = point().is_none_or(|p| p.name.as_deref().is_none_or(|kind| kind_of(effect) == kind));
    if !counted {
        return 0;
    }
    let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
    crash_at(When::Before, n);
    n
}

/// The `n`th effect ran: crashes if this is the point, before its outcome is recorded.
pub fn after(n: u64) {
    crash_at(When::After, n);
}

/// A handler reached step `name` of a sequence: crashes if this is the point.
pub fn step(name: &str) {
    if point().is_some_and(|p| p.when == When::At && p.name.as_deref() == Some(name)) {
        crash_at(When::At, 1);
    }
}

/// The name of an effect's kind, as its variant is named (`KillSession`).
fn kind_of(effect: &bosun_core::Effect) -> String {
    let debug = format!("{effect:?}");
    debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned()
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
