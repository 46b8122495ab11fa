//! Salvage of a damaged database: the events readable in order up to the first that is not, cut
//! back to the last whole transaction, are written into a fresh database that takes the damaged
//! one's place; the damaged one (with its `-wal` and `-shm`) is kept beside it as
//! `<name>.damaged-<millis>`. Snapshots are not carried over: the next ones are taken anew.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OpenFlags};

use super::header;
use super::row::{self, Row};
use super::StoreError;

/// Replaces the damaged database at `path` (found so because of `why`) by what can be saved of it.
pub(super) fn salvage(path: &Path, why: &StoreError) -> Result<(), StoreError> {
    tracing::error!(db = %path.display(), "the event store is damaged ({why}): salvaging it");
    let (mut rows, stopped, claimed) = most_readable(path)?;
    let read = rows.len();
    let whole = rows.iter().rposition(|r| r.tx_end).map_or(0, |i| i + 1);
    rows.truncate(whole);
    let fresh = sibling(path, ".salvaged");
    remove_if_present(&fresh)?;
    remove_if_present(&sibling(&fresh, "-journal"))?;
    write_fresh(&fresh, &rows)?;
    let damaged = sibling(path, &format!(".damaged-{}", millis()));
    move_aside(path, &damaged)?;
    rename(&fresh, path)?;
    tracing::error!(
        db = %path.display(),
        kept = whole,
        dropped_of_a_torn_transaction = read - whole,
        first_unreadable = read + 1,
        unreadable = stopped.as_deref().unwrap_or("none"),
        log_claimed_to_end_at = claimed.map_or_else(|| "unknown".into(), |c| c.to_string()),
        damaged = %damaged.display(),
        "event store salvaged: events 1..={whole} kept, every later one lost; the damaged database is kept aside",
    );
    Ok(())
}

/// Completes a salvage interrupted after the damaged database was moved aside.
pub(super) fn finish(path: &Path) -> Result<(), StoreError> {
    let fresh = sibling(path, ".salvaged");
    if path.exists() || !fresh.exists() {
        return Ok(());
    }
    // A WAL left behind belongs to the damaged database and must not be replayed into this one.
    move_aside(path, &sibling(path, &format!(".damaged-{}", millis())))?;
    tracing::warn!(db = %path.display(), "finishing an interrupted salvage of the event store");
    rename(&fresh, path)
}

/// The rows readable in order, why reading stopped, the last seq the database claims to hold.
type Readable = (Vec<Row>, Option<String>, Option<u64>);

/// The rows readable from the database as it is or, when more are, from a copy whose header is
/// repaired (for each page size it could have, if its own is damaged).
fn most_readable(path: &Path) -> Result<Readable, StoreError> {
    let mut best = readable(path);
    let Ok(bytes) = std::fs::read(path) else { return Ok(best) };
    let copy = sibling(path, ".reading");
    for size in header::page_sizes(&bytes) {
        match header::repaired_copy(&bytes, size, &copy) {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                tracing::warn!("salvage: cannot write a copy with its header repaired: {e}");
                remove_if_present(&copy)?;
                break;
            }
            None => break,
        }
        let read = readable(&copy);
        remove_if_present(&copy)?;
        if read.0.len() > best.0.len() {
            tracing::warn!(page_size = size, "salvage: more events are readable with the header repaired");
            best = read;
        }
    }
    Ok(best)
}

/// The rows readable in order from the start, why reading stopped, and the last seq the
/// database claims to hold.
fn readable(path: &Path) -> Readable {
    let conn = match Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY) {
        Ok(conn) => conn,
        Err(e) => return (Vec::new(), Some(e.to_string()), None),
    };
    // SQLite refuses a file shorter than its header says unless the schema is writable (this
    // connection is read-only all the same): then it reads the pages that are there.
    if let Err(e) = conn.pragma_update(None, "writable_schema", true) {
        tracing::warn!("salvage: cannot read a truncated database: {e}");
    }
    let claimed = conn.query_row("SELECT MAX(seq) FROM events", [], |r| r.get::<_, i64>(0)).ok().map(|s| s as u64);
    let mut rows = Vec::new();
    let stopped = row::scan(&conn, 0, |row| {
        rows.push(row);
        Ok(())
    })
    .err()
    .map(|e| e.to_string());
    (rows, stopped, claimed)
}

fn write_fresh(path: &Path, rows: &[Row]) -> Result<(), StoreError> {
    let mut conn = Connection::open(path)?;
    // A rollback journal: once committed, the file alone holds everything, whatever its name.
    conn.pragma_update(None, "journal_mode", "DELETE")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    super::create_schema(&conn)?;
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare("INSERT INTO events (seq, at, body, tx_end) VALUES (?1, ?2, ?3, ?4)")?;
        for row in rows {
            let body = serde_json::to_string(&row.event).map_err(StoreError::Encode)?;
            stmt.execute(params![row.seq as i64, row.at.as_millis() as i64, body, row.tx_end])?;
        }
    }
    tx.commit()?;
    conn.close().map_err(|(_, e)| e)?;
    Ok(())
}

/// Moves the database at `path` to `to`, its WAL and shared memory first (so that no WAL is
/// ever left beside a database it does not belong to).
fn move_aside(path: &Path, to: &Path) -> Result<(), StoreError> {
    for suffix in ["-wal", "-shm"] {
        let file = sibling(path, suffix);
        if file.exists() {
            rename(&file, &sibling(to, suffix))?;
        }
    }
    if path.exists() {
        rename(path, to)?;
    }
    Ok(())
}

fn rename(from: &Path, to: &Path) -> Result<(), StoreError> {
    let what = || format!("cannot move {} to {}", from.display(), to.display());
    std::fs::rename(from, to).map_err(|source| StoreError::Io { what: what(), source })?;
    let dir = to.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| StoreError::Io { what: format!("cannot sync {}", dir.display()), source })
}

fn remove_if_present(path: &Path) -> Result<(), StoreError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(StoreError::Io { what: format!("cannot remove {}", path.display()), source: e })
        }
        _ => Ok(()),
    }
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn millis() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis())
}
