//! `store`: the event store on its own (no daemon): append throughput with one fsync'd
//! transaction per request and with 64 requests per transaction, and the start-up time (open and
//! load) of a store holding a million events, with the snapshots the daemon takes and without.

use std::path::Path;
use std::time::{Duration, Instant};

use bosun_core::{Event, Timestamp};
use bosun_daemon::Store;
use bosun_testkit::history::History;

use crate::Figure;

const STARTUP_EVENTS: usize = 1_000_000;

pub fn figures() -> Vec<Figure> {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut figures = Vec::new();
    let mut history = History::new();
    let (requests, elapsed) = append(&dir.path().join("one.db"), &history.events(20_000), 1);
    figures.push(rate(
        "append, 1 request (1 event) per fsync'd transaction: requests/s = events/s",
        requests,
        elapsed,
        "",
    ));
    let (requests, elapsed) = append(&dir.path().join("batched.db"), &history.events(200_000), 64);
    figures.push(rate(
        "append, 64 requests (1 event each) per fsync'd transaction: requests/s = events/s",
        requests,
        elapsed,
        "",
    ));

    let db = dir.path().join("million.db");
    let took = record(&db, STARTUP_EVENTS);
    println!("store: {STARTUP_EVENTS} events recorded in {:.1} s", took.as_secs_f64());
    let size = std::fs::metadata(&db).map_or(0, |m| m.len());
    figures.push(Figure::value("store: database with 1M events", format!("{} MB", size / 1_000_000), "", ""));
    figures.push(Figure::new("start-up (open + load), 1M events, with snapshots", startup(&db), "< 2000 ms", ""));
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute("DELETE FROM snapshots", []).expect("drop snapshots");
    drop(conn);
    figures.push(Figure::new("start-up (open + load), 1M events, no snapshot (full fold)", startup(&db), "", ""));
    figures
}

/// Appends `events` one request (one event) at a time, `per_tx` requests per transaction, for
/// at most five seconds; returns how many requests were recorded and how long it took.
fn append(path: &Path, events: &[Event], per_tx: usize) -> (usize, Duration) {
    let mut store = Store::open(path).expect("open");
    let started = Instant::now();
    let mut done = 0;
    for (i, chunk) in events.chunks(per_tx).enumerate() {
        store.append(Timestamp::from_millis(i as u64), chunk).expect("append");
        done += chunk.len();
        if started.elapsed() > Duration::from_secs(5) {
            break;
        }
    }
    (done, started.elapsed())
}

/// Records `n` events of a realistic history, taking snapshots as the daemon does.
fn record(path: &Path, n: usize) -> Duration {
    let started = Instant::now();
    let mut store = Store::open(path).expect("open");
    let mut history = History::new();
    let mut recorded = 0;
    let mut batch = Vec::new();
    while recorded < n {
        while batch.len() < 1_000 && recorded + batch.len() < n {
            batch.extend(history.next_input());
        }
        store.append(Timestamp::from_millis(recorded as u64), &batch).expect("append");
        recorded += batch.len();
        batch.clear();
        store.snapshot_if_due(history.state()).expect("snapshot");
    }
    started.elapsed()
}

fn startup(path: &Path) -> Vec<Duration> {
    (0..5)
        .map(|_| {
            let started = Instant::now();
            let state = Store::open(path).and_then(|mut s| s.load()).expect("load");
            let took = started.elapsed();
            assert!(state.seq >= STARTUP_EVENTS as u64);
            took
        })
        .collect()
}

fn rate(name: &str, n: usize, elapsed: Duration, target: &'static str) -> Figure {
    Figure::value(name, format!("{:.0}/s", n as f64 / elapsed.as_secs_f64()), target, "")
}
