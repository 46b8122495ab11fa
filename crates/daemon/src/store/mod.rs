//! The event log: one SQLite database in WAL mode with `synchronous=FULL`, an append-only
//! `events` table numbered from 1 without gaps, and the newest `snapshots` of the state. `append`
//! returns only once the events are on disk; `load` starts from the newest snapshot that decodes
//! and folds the events after it. A damaged database is salvaged at open or load.

mod header;
mod reader;
mod row;
mod salvage;
mod snapshot;

use std::path::{Path, PathBuf};

use bosun_core::{apply, Event, State, Timestamp};
use rusqlite::{params, Connection, ErrorCode};

pub use reader::LogReader;

/// How many events are recorded between two snapshots, unless told otherwise.
pub const SNAPSHOT_EVERY: u64 = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("event store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("event {seq} in the store cannot be read ({error}): was it written by a newer bosun?")]
    Decode { seq: u64, error: serde_json::Error },
    #[error("the event store is damaged: {0}")]
    Damaged(String),
    #[error("cannot encode for the event store: {0}")]
    Encode(serde_json::Error),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error("the disk holding {} is full: free some space; nothing was recorded", .dir.display())]
    Full { dir: PathBuf },
    #[error("cannot write to the event store {} ({source}): nothing was recorded", .db.display())]
    Write { db: PathBuf, source: rusqlite::Error },
}

impl StoreError {
    /// Damage to the file, which salvaging gets past (unlike a full disk, a lock or a newer
    /// bosun's events).
    fn is_damage(&self) -> bool {
        match self {
            StoreError::Damaged(_) => true,
            // A schema format number no SQLite wrote since 2006 is a damaged header.
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(_, Some(m))) if m == "unsupported file format" => true,
            StoreError::Sqlite(e) => {
                matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase))
            }
            _ => false,
        }
    }
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The seq of the last recorded event (0 when there is none).
    last_seq: u64,
    snapshot_every: u64,
    /// The seq of the newest snapshot (0 when there is none).
    snapshot_seq: u64,
}

impl Store {
    /// Opens (or creates) the store; a damaged one is salvaged first.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        salvage::finish(path)?;
        let conn = match connect(path).and_then(|conn| check(&conn).and_then(|()| writable(&conn, path)).map(|()| conn))
        {
            Ok(conn) => conn,
            Err(e) if e.is_damage() => {
                salvage::salvage(path, &e)?;
                connect(path)?
            }
            Err(e) => return Err(e),
        };
        let last_seq = last_seq(&conn)?;
        let snapshot_seq = snapshot::newest_seq(&conn)?;
        Ok(Self { conn, path: path.to_owned(), last_seq, snapshot_every: SNAPSHOT_EVERY, snapshot_seq })
    }

    /// Takes a snapshot every `n` events instead (0: never).
    pub fn snapshot_every(mut self, n: u64) -> Self {
        self.snapshot_every = if n == 0 { u64::MAX } else { n };
        self
    }

    /// Caps the database at `pages` pages, as a quota would: an append beyond fails as on a
    /// full disk (SQLite's own SQLITE_FULL).
    pub fn max_pages(self, pages: u64) -> Result<Self, StoreError> {
        self.conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))?;
        Ok(self)
    }

    /// Appends the events in one transaction; on return they are durable. When it fails, nothing
    /// of them is recorded, and a full disk says so.
    pub fn append<'a>(&mut self, at: Timestamp, events: impl IntoIterator<Item = &'a Event>) -> Result<(), StoreError> {
        let full = |dir: &Path| StoreError::Full { dir: dir.to_owned() };
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
        match self.append_events(at, events) {
            Err(StoreError::Sqlite(e)) if e.sqlite_error_code() == Some(ErrorCode::DiskFull) => Err(full(&dir)),
            Err(StoreError::Sqlite(source)) => Err(StoreError::Write { db: self.path.clone(), source }),
            other => other,
        }
    }

    fn append_events<'a>(
        &mut self,
        at: Timestamp,
        events: impl IntoIterator<Item = &'a Event>,
    ) -> Result<(), StoreError> {
        let mut events = events.into_iter().peekable();
        if events.peek().is_none() {
            return Ok(());
        }
        if crate::faults::disk_full() {
            let source = rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL);
            return Err(rusqlite::Error::SqliteFailure(source, Some("BOSUN_FAULT: disk full".into())).into());
        }
        let tx = self.conn.transaction()?;
        let mut seq = self.last_seq;
        {
            let mut stmt = tx.prepare_cached("INSERT INTO events (seq, at, body, tx_end) VALUES (?1, ?2, ?3, ?4)")?;
            while let Some(event) = events.next() {
                let body = serde_json::to_string(event).map_err(StoreError::Encode)?;
                seq += 1;
                stmt.execute(params![seq as i64, at.as_millis() as i64, body, events.peek().is_none()])?;
            }
        }
        tx.commit()?;
        self.last_seq = seq;
        Ok(())
    }

    /// The state as recorded: the newest snapshot that decodes, and the events after it folded
    /// in. A damaged log is salvaged and loaded again.
    pub fn load(&mut self) -> Result<State, StoreError> {
        match self.fold() {
            Err(e) if e.is_damage() => {
                // The connection must be closed before the files are moved: closing checkpoints
                // into, and deletes, the WAL by its name.
                drop(std::mem::replace(&mut self.conn, Connection::open_in_memory()?));
                salvage::salvage(&self.path, &e)?;
                let every = self.snapshot_every;
                *self = Store::open(&self.path)?;
                self.snapshot_every = every;
                self.fold()
            }
            other => other,
        }
    }

    fn fold(&mut self) -> Result<State, StoreError> {
        self.last_seq = last_seq(&self.conn)?;
        let mut state = snapshot::newest(&self.conn, self.last_seq)?.unwrap_or_default();
        row::scan(&self.conn, state.seq, |row| {
            apply(&mut state, &row.event);
            Ok(())
        })?;
        if state.seq != self.last_seq {
            return Err(StoreError::Damaged(format!("the log ends at event {} of {}", state.seq, self.last_seq)));
        }
        Ok(state)
    }

    /// Records a snapshot of `state` if `snapshot_every` events have been recorded since the
    /// last one; cheap when none is due. `state` must be the state after every recorded event.
    pub fn snapshot_if_due(&mut self, state: &State) -> Result<bool, StoreError> {
        if self.last_seq < self.snapshot_seq.saturating_add(self.snapshot_every) {
            return Ok(false);
        }
        if state.seq != self.last_seq {
            tracing::warn!(state = state.seq, log = self.last_seq, "no snapshot: the state is not the log's");
            return Ok(false);
        }
        snapshot::write(&mut self.conn, state)?;
        self.snapshot_seq = state.seq;
        Ok(true)
    }

    /// Calls `f` with each recorded event in order.
    pub fn for_each(&self, mut f: impl FnMut(Timestamp, Event)) -> Result<(), StoreError> {
        row::scan(&self.conn, 0, |row| {
            f(row.at, row.event);
            Ok(())
        })
    }

    /// How many events are recorded.
    pub fn count(&self) -> u64 {
        self.last_seq
    }
}

fn connect(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    create_schema(&conn)?;
    Ok(conn)
}

/// Creates the tables, and adds what a database made by an older bosun lacks.
fn create_schema(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS events (
             seq    INTEGER PRIMARY KEY,
             at     INTEGER NOT NULL,
             body   TEXT NOT NULL,
             tx_end INTEGER NOT NULL DEFAULT 1
         );
         CREATE TABLE IF NOT EXISTS snapshots (
             seq  INTEGER PRIMARY KEY,
             body BLOB NOT NULL
         );",
    )?;
    // `tx_end` marks the last event of each append; rows from before it existed count as whole.
    let has_tx_end: bool =
        conn.query_row("SELECT COUNT(*) FROM pragma_table_info('events') WHERE name = 'tx_end'", [], |r| r.get(0))?;
    if !has_tx_end {
        conn.execute_batch("ALTER TABLE events ADD COLUMN tx_end INTEGER NOT NULL DEFAULT 1")?;
    }
    Ok(())
}

/// Finds damage to the file's structure (not to what the rows say: `load` finds that).
fn check(conn: &Connection) -> Result<(), StoreError> {
    let mut stmt = conn.prepare("PRAGMA quick_check")?;
    let problems: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    if problems.len() != 1 || problems[0] != "ok" {
        return Err(StoreError::Damaged(problems.join("; ")));
    }
    Ok(())
}

/// Finds a database that refuses writes although its file takes them, as one whose header says
/// it was written by a format this SQLite cannot write does: a test write, rolled back.
fn writable(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let probe = (|| {
        let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        tx.pragma_update(None, "user_version", version)?;
        tx.rollback()
    })();
    match probe {
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::ReadOnly) => {
            match std::fs::OpenOptions::new().append(true).open(path) {
                Ok(_) => Err(StoreError::Damaged(format!("it refuses writes although its file takes them ({e})"))),
                Err(io) => Err(StoreError::Io {
                    what: format!("the event store {} cannot be written", path.display()),
                    source: io,
                }),
            }
        }
        // Another writer holds the lock: nothing is learnt, and nothing is wrong.
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => Ok(()),
        other => Ok(other?),
    }
}

fn last_seq(conn: &Connection) -> Result<u64, StoreError> {
    Ok(conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get::<_, i64>(0))? as u64)
}
