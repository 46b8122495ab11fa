//! Reading the `events` table back: one row decoded, and the rows after a seq scanned in order,
//! with what cannot be read told apart as damage or as a newer bosun's event.

use bosun_core::{Event, Timestamp};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::error::Category;

use super::StoreError;

/// One recorded event.
pub(super) struct Row {
    pub seq: u64,
    pub at: Timestamp,
    pub event: Event,
    /// The last event of the transaction that recorded it.
    pub tx_end: bool,
}

/// Calls `f` with each row after `after`, in order. A missing seq, an unreadable row, a body that
/// is not JSON or an event missing a field or holding one of the wrong type is damage; an event
/// of a kind (or holding a value of a kind) this bosun does not know is a newer bosun's, not damage.
pub(super) fn scan(
    conn: &Connection,
    after: u64,
    f: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    scan_range(conn, after, i64::MAX as u64, f)
}

/// As `scan`, up to and including `last`.
pub(super) fn scan_range(
    conn: &Connection,
    after: u64,
    last: u64,
    f: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT seq, at, body, tx_end FROM events WHERE seq > ?1 AND seq <= ?2 ORDER BY seq")?;
    let rows = stmt.query([after as i64, last.min(i64::MAX as u64) as i64])?;
    in_order(rows, after, f)
}

/// Calls `f` with at most `limit` rows after seq `after`, in order.
pub(super) fn scan_after(
    conn: &Connection,
    after: u64,
    limit: usize,
    f: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT seq, at, body, tx_end FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2")?;
    let rows = stmt.query([after.min(i64::MAX as u64) as i64, limit.min(i64::MAX as usize) as i64])?;
    in_order(rows, after, f)
}

/// Each row of `rows` to `f`, checking that the seqs follow on from `after` with none missing.
fn in_order(
    mut rows: rusqlite::Rows<'_>,
    after: u64,
    mut f: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut expected = after + 1;
    while let Some(row) = rows.next()? {
        let row = decode(row)?;
        if row.seq != expected {
            return Err(StoreError::Damaged(format!("event {expected} is missing (the next is {})", row.seq)));
        }
        expected += 1;
        f(row)?;
    }
    Ok(())
}

fn decode(row: &rusqlite::Row) -> Result<Row, StoreError> {
    let seq = row.get::<_, i64>(0)? as u64;
    let damaged = |what: String| StoreError::Damaged(format!("event {seq}: {what}"));
    let at = row.get::<_, i64>(1).map_err(|e| damaged(e.to_string()))?;
    let tx_end = row.get::<_, bool>(3).map_err(|e| damaged(e.to_string()))?;
    let body = match row.get_ref(2)? {
        ValueRef::Text(b) | ValueRef::Blob(b) => b,
        other => return Err(damaged(format!("a body of type {}", other.data_type()))),
    };
    let event = serde_json::from_slice(body).map_err(|error| match error.classify() {
        Category::Data if newer(&error) => StoreError::Decode { seq, error },
        Category::Data => damaged(format!("a body that is no event ({error})")),
        Category::Syntax | Category::Eof | Category::Io => damaged(format!("a body that is not JSON ({error})")),
    })?;
    Ok(Row { seq, at: Timestamp::from_millis(at as u64), event, tx_end })
}

/// Whether a body that is JSON but no event could be a newer bosun's: one names kinds this bosun
/// does not know, and adds fields (which are ignored), but never drops one an older bosun needs.
/// serde tells the cases apart only in its message.
fn newer(error: &serde_json::Error) -> bool {
    error.to_string().starts_with("unknown variant")
}
