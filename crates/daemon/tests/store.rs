//! The event store: events survive reopening, older databases open, and snapshots give the
//! state a full fold gives, with a bad snapshot passed over for an older one or the whole log.

use std::path::{Path, PathBuf};

use bosun_core::{Event, MessageId, State, Timestamp};
use bosun_daemon::{Store, StoreError};
use bosun_testkit::history::History;

fn at(n: u64) -> Timestamp {
    Timestamp::from_millis(1_000 + n)
}

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bosun.db");
    (dir, path)
}

/// Records `inputs` inputs of a realistic history, one append each, taking snapshots as the
/// engine does; returns the state a full fold in memory gives.
fn record(path: &Path, every: u64, inputs: usize) -> State {
    let mut store = Store::open(path).unwrap().snapshot_every(every);
    let mut history = History::new();
    for i in 0..inputs {
        store.append(at(i as u64), &history.next_input()).unwrap();
        store.snapshot_if_due(history.state()).unwrap();
    }
    history.state().clone()
}

fn snapshots(path: &Path) -> Vec<u64> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT seq FROM snapshots ORDER BY seq").unwrap();
    stmt.query_map([], |r| r.get::<_, i64>(0)).unwrap().map(|s| s.unwrap() as u64).collect()
}

fn set_snapshot(path: &Path, seq: u64, body: &[u8]) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let n = conn.execute("UPDATE snapshots SET body = ?1 WHERE seq = ?2", rusqlite::params![body, seq as i64]).unwrap();
    assert_eq!(n, 1, "snapshot {seq} exists");
}

/// A snapshot of `seq` that no fold could have made: loading from it shows in `last_item`.
fn marked(path: &Path, seq: u64) -> Vec<u8> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let body: Vec<u8> =
        conn.query_row("SELECT body FROM snapshots WHERE seq = ?1", [seq as i64], |r| r.get(0)).unwrap();
    let mut state: State = serde_json::from_slice(&body).unwrap();
    state.last_item = 424_242;
    serde_json::to_vec(&state).unwrap()
}

#[test]
fn appended_events_survive_reopening() {
    let (_dir, path) = db();
    let events = vec![Event::MessageDelivered { id: MessageId(1) }, Event::MessageDelivered { id: MessageId(2) }];
    Store::open(&path).unwrap().append(at(5), &events).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.count(), 2);
    let mut back = Vec::new();
    store.for_each(|at, e| back.push((at, e))).unwrap();
    assert_eq!(back, events.into_iter().map(|e| (at(5), e)).collect::<Vec<_>>());
}

#[test]
fn a_database_of_an_older_bosun_opens_and_counts_its_rows_as_whole_appends() {
    let (_dir, path) = db();
    let events = History::new().events(30);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE events (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, body TEXT NOT NULL)")
            .unwrap();
        for e in &events {
            conn.execute("INSERT INTO events (at, body) VALUES (7, ?1)", [serde_json::to_string(e).unwrap()]).unwrap();
        }
    }
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.count(), 30);
    let mut folded = State::default();
    events.iter().for_each(|e| bosun_core::apply(&mut folded, e));
    assert_eq!(store.load().unwrap(), folded);
    store.append(at(8), &events[..2]).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let ends: i64 = conn.query_row("SELECT COUNT(*) FROM events WHERE tx_end = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(ends, 31, "30 old rows, and one new append");
}

#[test]
fn a_store_with_snapshots_loads_the_state_a_full_fold_gives() {
    let (_dir, path) = db();
    let folded = record(&path, 100, 700);
    let mut store = Store::open(&path).unwrap();
    assert!(store.count() > 700, "{} events", store.count());
    let kept = snapshots(&path);
    assert_eq!(kept.len(), 2, "only the newest two are kept: {kept:?}");
    assert!(store.count() - kept[1] < 100 + 4, "the newest is recent: {kept:?} of {}", store.count());
    assert_eq!(store.load().unwrap(), folded);
    let mut all = 0;
    store.for_each(|_, _| all += 1).unwrap();
    assert_eq!(all, store.count(), "compaction deletes no event");
}

#[test]
fn loading_starts_from_the_newest_snapshot() {
    let (_dir, path) = db();
    let folded = record(&path, 100, 400);
    let newest = snapshots(&path)[1];
    set_snapshot(&path, newest, &marked(&path, newest));
    let state = Store::open(&path).unwrap().load().unwrap();
    assert_eq!(state.last_item, 424_242, "the snapshot's state, not a fold of the whole log");
    assert_eq!(State { last_item: folded.last_item, ..state }, folded, "then the events after it");
}

#[test]
fn a_snapshot_that_does_not_decode_is_passed_over_for_the_one_before() {
    let (_dir, path) = db();
    let folded = record(&path, 100, 400);
    let [older, newest] = snapshots(&path)[..] else { panic!("two snapshots") };
    set_snapshot(&path, older, &marked(&path, older));
    set_snapshot(&path, newest, b"{\"seq\": garbage");
    let state = Store::open(&path).unwrap().load().unwrap();
    assert_eq!(state.last_item, 424_242, "the older snapshot was used");
    assert_eq!(State { last_item: folded.last_item, ..state }, folded);
}

#[test]
fn with_no_snapshot_that_decodes_the_whole_log_is_folded() {
    let (_dir, path) = db();
    let folded = record(&path, 100, 400);
    let [older, newest] = snapshots(&path)[..] else { panic!("two snapshots") };
    set_snapshot(&path, older, b"not json");
    // Decodes, but is another seq's state: as wrong as garbage.
    set_snapshot(&path, newest, &serde_json::to_vec(&State::default()).unwrap());
    assert_eq!(Store::open(&path).unwrap().load().unwrap(), folded);
}

#[test]
fn an_event_of_a_newer_bosun_stops_the_load_and_moves_nothing() {
    let (dir, path) = db();
    record(&path, 0, 10);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO events (at, body) VALUES (1, '{\"type\":\"from_the_future\"}')", []).unwrap();
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    let seq = store.count();
    match store.load() {
        Err(StoreError::Decode { seq: bad, .. }) => assert_eq!(bad, seq),
        other => panic!("expected a decode error, got {other:?}"),
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!names.iter().any(|n| n.to_string_lossy().contains("damaged")), "{names:?}");
}

#[test]
fn an_append_the_full_disk_has_no_room_for_is_refused_records_nothing_and_fits_once_there_is_room() {
    let (dir, path) = db();
    let batch =
        |n: u64| -> Vec<Event> { (0..50).map(|k| Event::MessageDelivered { id: MessageId(n * 100 + k) }).collect() };
    let mut store = Store::open(&path).unwrap().max_pages(8).unwrap();
    let mut n = 0;
    let refused = loop {
        match store.append(at(n), &batch(n)) {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
        assert!(n < 1000, "the capped database never filled");
    };
    assert!(n > 0, "some appends fit");
    assert!(matches!(refused, StoreError::Full { .. }), "{refused:?}");
    let message = refused.to_string();
    assert!(message.contains(&format!("the disk holding {} is full", dir.path().display())), "{message}");
    assert!(message.contains("nothing was recorded"), "{message}");
    assert_eq!(store.count(), n * 50);
    assert_eq!(store.load().unwrap().seq, n * 50, "the log is as it was before the refused append");
    drop(store);

    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.count(), n * 50, "nothing of the refused append is on disk");
    store.append(at(n), &batch(n)).unwrap();
    assert_eq!(store.load().unwrap().seq, (n + 1) * 50, "with room, the same append is recorded");
}
