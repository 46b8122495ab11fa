//! A second, read-only connection to the event log, for reading it off the engine thread (WAL
//! lets it read while the engine appends): the events up to a seq, in order.

use std::path::Path;

use bosun_core::{Event, Timestamp};
use rusqlite::{Connection, OpenFlags};

use super::{row, StoreError};

pub struct LogReader {
    conn: Connection,
}

impl LogReader {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        Ok(Self { conn })
    }

    /// Calls `f` with each recorded event up to and including `last`, in order, with its seq
    /// and when it was recorded.
    pub fn scan_until(
        &self,
        last: u64,
        mut f: impl FnMut(u64, Timestamp, &Event) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        row::scan_range(&self.conn, 0, last, |row| f(row.seq, row.at, &row.event))
    }

    /// Calls `f` with at most `limit` recorded events after seq `after`, in order.
    pub fn scan_after(
        &self,
        after: u64,
        limit: usize,
        mut f: impl FnMut(u64, Timestamp, &Event) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        row::scan_after(&self.conn, after, limit, |row| f(row.seq, row.at, &row.event))
    }

    /// The `count` events from seq `first` on.
    pub fn events(&self, first: u64, count: u32) -> Result<Vec<Event>, StoreError> {
        let mut events = Vec::new();
        let (after, last) = (first.saturating_sub(1), first.saturating_sub(1) + u64::from(count));
        row::scan_range(&self.conn, after, last, |row| {
            events.push(row.event);
            Ok(())
        })?;
        Ok(events)
    }
}
