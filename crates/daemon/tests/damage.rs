//! A damaged store: SQLite drops a torn or corrupted WAL tail by itself; a damaged main database
//! is salvaged up to its last whole append, the damaged file kept aside. Each test says exactly
//! which events survive.

use std::path::{Path, PathBuf};

use bosun_core::{Event, State, Timestamp, WorkspaceId};
use bosun_daemon::Store;

/// Event `n` of the tests: a failed workspace removal whose git error is long enough (3000
/// bytes) that each event fills a page of its own, and names `n` so that it can be found in the file.
fn event(n: usize) -> Event {
    let id = WorkspaceId::new(&bosun_core::Name::parse("w").unwrap(), &bosun_core::Nonce::from_bits(n as u64));
    Event::WorkspaceRemoveFailed {
        id,
        error: format!("<event-{n}>{}", "fatal: cannot lock ref ".repeat(130)),
        dirty: true,
    }
}

/// Appends: [1], [2, 3], [4, 5] (events numbered from 1, as the log does).
fn appends() -> Vec<Vec<Event>> {
    vec![vec![event(1)], vec![event(2), event(3)], vec![event(4), event(5)]]
}

/// The numbers of `events`, as `event` gave them.
fn numbers(events: &[Event]) -> Vec<usize> {
    events
        .iter()
        .map(|e| match e {
            Event::WorkspaceRemoveFailed { error, .. } => error[7..error.find('>').unwrap()].parse().unwrap(),
            other => panic!("not a test event: {other:?}"),
        })
        .collect()
}

/// Opens the store at `path` as the daemon does; returns every event it then holds, after
/// checking that they fold into the loaded state.
fn recovered(path: &Path) -> Vec<usize> {
    let mut store = Store::open(path).unwrap();
    let state = store.load().unwrap();
    let mut back = Vec::new();
    store.for_each(|_, e| back.push(e)).unwrap();
    let mut folded = State::default();
    back.iter().for_each(|e| bosun_core::apply(&mut folded, e));
    assert_eq!(state, folded);
    numbers(&back)
}

fn record(store: &mut Store) {
    for (i, events) in appends().iter().enumerate() {
        store.append(Timestamp::from_millis(i as u64), events).unwrap();
    }
}

/// Records the appends and copies the database and its WAL while the store is still open, so
/// that nothing has been checkpointed: the copy holds them in its WAL only.
fn recorded_in_wal(dir: &Path) -> (PathBuf, PathBuf) {
    let live = dir.join("live.db");
    let mut store = Store::open(&live).unwrap().snapshot_every(0);
    record(&mut store);
    let (db, wal) = (dir.join("bosun.db"), dir.join("bosun.db-wal"));
    std::fs::copy(&live, &db).unwrap();
    std::fs::copy(dir.join("live.db-wal"), &wal).unwrap();
    drop(store);
    let in_db = std::fs::read(&db).unwrap();
    assert!(find(&in_db, "<event-1>").is_none(), "nothing checkpointed into the database yet");
    (db, wal)
}

/// Records the appends and closes the store, which checkpoints them all into the database.
fn recorded_in_db(dir: &Path) -> PathBuf {
    let db = dir.join("bosun.db");
    record(&mut Store::open(&db).unwrap().snapshot_every(0));
    assert!(!dir.join("bosun.db-wal").exists(), "checkpointed and gone");
    db
}

fn find(bytes: &[u8], text: &str) -> Option<usize> {
    bytes.windows(text.len()).position(|w| w == text.as_bytes())
}

fn page_size(db: &[u8]) -> usize {
    match u16::from_be_bytes([db[16], db[17]]) {
        1 => 65536,
        n => n as usize,
    }
}

/// The names of the files in `dir` holding a damaged database moved aside.
fn damaged(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("bosun.db.damaged-") && !n.ends_with("-wal") && !n.ends_with("-shm"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_wal_cut_in_the_middle_of_its_last_frame_loses_the_last_append_only() {
    let dir = tempfile::tempdir().unwrap();
    let (db, wal) = recorded_in_wal(dir.path());
    let len = std::fs::metadata(&wal).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&wal).unwrap().set_len(len - 2000).unwrap();
    assert_eq!(recovered(&db), (1..=3).collect::<Vec<_>>());
    assert!(damaged(dir.path()).is_empty(), "SQLite dropped the torn tail: nothing to salvage");
}

#[test]
fn a_wal_whose_last_frame_is_corrupted_loses_the_last_append_only() {
    let dir = tempfile::tempdir().unwrap();
    let (db, wal) = recorded_in_wal(dir.path());
    let mut bytes = std::fs::read(&wal).unwrap();
    let len = bytes.len();
    bytes[len - 100] ^= 0xff;
    bytes[len - 99] ^= 0x5a;
    std::fs::write(&wal, bytes).unwrap();
    assert_eq!(recovered(&db), (1..=3).collect::<Vec<_>>());
    assert!(damaged(dir.path()).is_empty());
}

#[test]
fn a_database_missing_its_last_page_is_salvaged_to_its_last_whole_append() {
    let dir = tempfile::tempdir().unwrap();
    let db = recorded_in_db(dir.path());
    let bytes = std::fs::read(&db).unwrap();
    let page = page_size(&bytes);
    let last = &bytes[bytes.len() - page..];
    assert!(
        find(last, "<event-5>").is_some() && find(last, "<event-4>").is_none(),
        "event 5 alone is on the last page"
    );
    std::fs::OpenOptions::new().write(true).open(&db).unwrap().set_len((bytes.len() - page) as u64).unwrap();

    // Event 4 is readable, but the append it was part of is not whole.
    assert_eq!(recovered(&db), (1..=3).collect::<Vec<_>>());
    let aside = damaged(dir.path());
    assert_eq!(aside.len(), 1, "the damaged database is kept: {aside:?}");
    assert_eq!(std::fs::metadata(dir.path().join(&aside[0])).unwrap().len(), (bytes.len() - page) as u64);
    assert_eq!(recovered(&db), (1..=3).collect::<Vec<_>>(), "the salvaged database opens cleanly");
    assert_eq!(damaged(dir.path()), aside, "and needs no second salvage");
}

#[test]
fn a_database_whose_last_page_is_garbage_is_salvaged_to_its_last_whole_append() {
    let dir = tempfile::tempdir().unwrap();
    let db = recorded_in_db(dir.path());
    let mut bytes = std::fs::read(&db).unwrap();
    let page = page_size(&bytes);
    let len = bytes.len();
    bytes[len - page..].fill(0xa5);
    std::fs::write(&db, &bytes).unwrap();
    assert_eq!(recovered(&db), (1..=3).collect::<Vec<_>>());
    assert_eq!(damaged(dir.path()).len(), 1);
}

#[test]
fn an_event_whose_body_is_garbled_ends_what_is_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let db = recorded_in_db(dir.path());
    let mut bytes = std::fs::read(&db).unwrap();
    // A control character inside a JSON string: the page is sound, the body is not JSON.
    let at = find(&bytes, "<event-3>").unwrap();
    bytes[at] = 0x01;
    std::fs::write(&db, &bytes).unwrap();

    // Event 2 is readable, but its append lost event 3; 4 and 5 come after the unreadable one.
    assert_eq!(recovered(&db), vec![1]);
    assert_eq!(damaged(dir.path()).len(), 1);
}

#[test]
fn a_salvage_interrupted_before_the_fresh_database_took_its_place_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    let db = recorded_in_db(dir.path());
    std::fs::rename(&db, dir.path().join("bosun.db.salvaged")).unwrap();
    // A WAL left by the damaged database must not be replayed into the salvaged one.
    std::fs::write(dir.path().join("bosun.db-wal"), b"stale").unwrap();
    assert_eq!(recovered(&db), (1..=5).collect::<Vec<_>>());
    assert!(!dir.path().join("bosun.db-wal").exists());
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    let aside = names.iter().filter(|n| n.to_string_lossy().starts_with("bosun.db.damaged-")).count();
    assert_eq!(aside, 1, "the stale WAL is kept aside: {names:?}");
}

/// Rewrites the body of event `seq` with `edit` applied to its JSON, as a hand edit would.
fn edit_event(db: &Path, seq: u64, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let body: String = conn.query_row("SELECT body FROM events WHERE seq = ?1", [seq as i64], |r| r.get(0)).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&body).unwrap();
    edit(json.as_object_mut().unwrap());
    conn.execute("UPDATE events SET body = ?1 WHERE seq = ?2", rusqlite::params![json.to_string(), seq as i64])
        .unwrap();
}

#[test]
fn an_event_missing_a_field_ends_what_is_salvaged_and_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let db = recorded_in_db(dir.path());
    edit_event(&db, 4, |e| {
        e.remove("dirty");
    });

    // Event 4's append [4, 5] is not whole without it: the first three are kept.
    assert_eq!(recovered(&db), (1..=3).collect::<Vec<_>>());
    let aside = damaged(dir.path());
    assert_eq!(aside.len(), 1, "the damaged database is kept: {aside:?}");
    let kept = rusqlite::Connection::open(dir.path().join(&aside[0])).unwrap();
    let n: i64 = kept.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 5, "with every event it held");
    assert_eq!(recovered(&db), (1..=3).collect::<Vec<_>>(), "the salvaged database opens cleanly");
    assert_eq!(damaged(dir.path()), aside, "and needs no second salvage");
}

#[test]
fn an_event_holding_a_field_of_the_wrong_type_ends_what_is_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let db = recorded_in_db(dir.path());
    edit_event(&db, 2, |e| {
        e.insert("dirty".into(), "yes".into());
    });
    assert_eq!(recovered(&db), vec![1]);
    assert_eq!(damaged(dir.path()).len(), 1);
}

/// Whether the store at `path` opens, loads, takes an append and keeps it: what went wrong if not.
fn usable(path: &Path) -> Result<u64, String> {
    let mut store = Store::open(path).map_err(|e| format!("open: {e}"))?;
    store.load().map_err(|e| format!("load: {e}"))?;
    store.append(Timestamp::from_millis(9), &[event(6)]).map_err(|e| format!("append: {e}"))?;
    drop(store);
    let mut store = Store::open(path).map_err(|e| format!("reopen: {e}"))?;
    store.load().map_err(|e| format!("reload: {e}"))?;
    Ok(store.count())
}

#[test]
fn a_database_with_any_byte_of_its_header_overwritten_opens_and_takes_appends() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = std::fs::read(recorded_in_db(dir.path())).unwrap();
    let mut failures = Vec::new();
    for at in 0..100 {
        for value in [pristine[at] ^ 0xff, 0x00, 0x07] {
            if value == pristine[at] {
                continue;
            }
            let case = tempfile::tempdir().unwrap();
            let db = case.path().join("bosun.db");
            let mut bytes = pristine.clone();
            bytes[at] = value;
            std::fs::write(&db, &bytes).unwrap();
            match usable(&db) {
                Ok(6) => {}
                Ok(n) => failures.push(format!("byte {at} = {value:#04x}: {} of the 5 events kept", n - 1)),
                Err(e) => failures.push(format!("byte {at} = {value:#04x}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
