//! Snapshots of the state, so that a start folds only the events recorded after the newest one.
//! Each is the state as JSON in a BLOB, keyed by the seq of the last event folded into it; only
//! the newest two are kept, and one that does not decode is passed over for an older one.

use bosun_core::State;
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection};

use super::StoreError;

/// How many snapshots are kept.
const KEEP: i64 = 2;

/// Records `state` and drops all but the newest snapshots, in one transaction.
pub(super) fn write(conn: &mut Connection, state: &State) -> Result<(), StoreError> {
    let body = serde_json::to_vec(state).map_err(StoreError::Encode)?;
    let tx = conn.transaction()?;
    tx.execute("INSERT OR REPLACE INTO snapshots (seq, body) VALUES (?1, ?2)", params![state.seq as i64, body])?;
    tx.execute(
        "DELETE FROM snapshots WHERE seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?1)",
        [KEEP],
    )?;
    tx.commit()?;
    Ok(())
}

/// The seq of the newest snapshot, 0 when there is none.
pub(super) fn newest_seq(conn: &Connection) -> Result<u64, StoreError> {
    Ok(conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM snapshots", [], |r| r.get::<_, i64>(0))? as u64)
}

/// The newest snapshot that decodes and is not ahead of the log (ending at `last_seq`).
pub(super) fn newest(conn: &Connection, last_seq: u64) -> Result<Option<State>, StoreError> {
    let mut stmt = conn.prepare("SELECT seq, body FROM snapshots ORDER BY seq DESC")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let seq = row.get::<_, i64>(0)? as u64;
        if seq > last_seq {
            tracing::warn!(snapshot = seq, log = last_seq, "snapshot passed over: it is ahead of the log");
            continue;
        }
        let decoded = match row.get_ref(1)? {
            ValueRef::Blob(b) | ValueRef::Text(b) => serde_json::from_slice::<State>(b).map_err(|e| e.to_string()),
            other => Err(format!("a body of type {}", other.data_type())),
        };
        match decoded {
            Ok(state) if state.seq == seq => return Ok(Some(state)),
            Ok(state) => tracing::warn!(snapshot = seq, state = state.seq, "snapshot passed over: another seq's state"),
            Err(e) => tracing::warn!(snapshot = seq, "snapshot passed over: it cannot be decoded ({e})"),
        }
    }
    Ok(None)
}
