//! The event log: one SQLite database in WAL mode with `synchronous=FULL`, an append-only
//! `events` table. `append` returns only once the events are on disk.

use std::path::Path;

use bosun_core::{apply, Event, State, Timestamp};
use rusqlite::{params, Connection};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("event store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("event {seq} in the store cannot be read ({error}): was it written by a newer bosun?")]
    Decode { seq: i64, error: serde_json::Error },
    #[error("event cannot be encoded: {0}")]
    Encode(serde_json::Error),
}

pub struct Store {
    conn: Connection,
    count: u64,
}

impl Store {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS events (
                 seq  INTEGER PRIMARY KEY,
                 at   INTEGER NOT NULL,
                 body TEXT NOT NULL
             );",
        )?;
        let count: i64 = conn.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))?;
        Ok(Self { conn, count: count as u64 })
    }

    /// Appends the events in one transaction; on return they are durable.
    pub fn append(&mut self, at: Timestamp, events: &[Event]) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached("INSERT INTO events (at, body) VALUES (?1, ?2)")?;
            for event in events {
                let body = serde_json::to_string(event).map_err(StoreError::Encode)?;
                stmt.execute(params![at.as_millis() as i64, body])?;
            }
        }
        tx.commit()?;
        self.count += events.len() as u64;
        Ok(())
    }

    /// Folds every recorded event into a fresh state.
    pub fn load(&self) -> Result<State, StoreError> {
        let mut state = State::default();
        self.for_each(|_, event| apply(&mut state, &event))?;
        Ok(state)
    }

    /// Calls `f` with each recorded event in order.
    pub fn for_each(&self, mut f: impl FnMut(Timestamp, Event)) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare("SELECT seq, at, body FROM events ORDER BY seq")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let at: i64 = row.get(1)?;
            let body: String = row.get(2)?;
            let event = serde_json::from_str(&body).map_err(|error| StoreError::Decode { seq, error })?;
            f(Timestamp::from_millis(at as u64), event);
        }
        Ok(())
    }

    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bosun_core::{MessageId, WorkspaceId};

    #[test]
    fn appended_events_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bosun.db");
        let events = vec![
            Event::MessageDelivered { id: MessageId(1) },
            Event::WorkspaceRemoveFailed {
                id: WorkspaceId::new(&bosun_core::Name::parse("a").unwrap(), &bosun_core::Nonce::from_bits(7)),
                error: "x".into(),
                dirty: true,
            },
        ];
        {
            let mut store = Store::open(&path).unwrap();
            store.append(Timestamp::from_millis(5), &events).unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.count(), 2);
        let mut back = Vec::new();
        store.for_each(|at, e| back.push((at, e))).unwrap();
        assert_eq!(back, events.into_iter().map(|e| (Timestamp::from_millis(5), e)).collect::<Vec<_>>());
    }
}
