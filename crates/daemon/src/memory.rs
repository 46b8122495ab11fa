//! `bosun job export`: a job's run memory written into a directory — `events.jsonl`, the
//! recorded events that concern it in order, one a line, and `state.json`, its checkpoint. Both
//! are written beside their final names and renamed in, so a failure leaves the directory as it
//! was.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use bosun_core::replay::Recorded;
use bosun_core::{Checkpoint, Event, JobScope, Timestamp};
use serde::Serialize;

use crate::store::{LogReader, StoreError};

const EVENTS: &str = bosun_core::EVENTS_FILE;
const STATE: &str = bosun_core::CHECKPOINT_FILE;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{} already holds an export ({file}): pass --force to overwrite it", dir.display())]
    Exists { dir: PathBuf, file: &'static str },
    #[error("cannot write {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot encode the export: {0}")]
    Encode(#[from] serde_json::Error),
}

/// One line of `events.jsonl`: an event as the log recorded it.
#[derive(Serialize)]
struct Line<'a> {
    seq: u64,
    at: Timestamp,
    event: &'a Event,
}

/// Writes the export of the job `scope` and `checkpoint` describe into `dir`, reading the log
/// at `db` up to the checkpoint's seq; returns how many events it wrote.
pub fn export(
    db: &Path,
    dir: &Path,
    force: bool,
    mut scope: JobScope,
    checkpoint: &Checkpoint,
) -> Result<u64, ExportError> {
    if !force {
        if let Some(file) = [STATE, EVENTS].into_iter().find(|f| dir.join(f).exists()) {
            return Err(ExportError::Exists { dir: dir.to_owned(), file });
        }
    }
    let reader = LogReader::open(db)?;
    std::fs::create_dir_all(dir).map_err(|source| ExportError::Io { path: dir.to_owned(), source })?;
    let partial = |name: &str| dir.join(format!(".{name}.partial"));
    let written = write_both(&reader, dir, &partial, &mut scope, checkpoint);
    if written.is_err() {
        for name in [EVENTS, STATE] {
            let _ = std::fs::remove_file(partial(name));
        }
    }
    written
}

fn write_both(
    reader: &LogReader,
    dir: &Path,
    partial: &dyn Fn(&str) -> PathBuf,
    scope: &mut JobScope,
    checkpoint: &Checkpoint,
) -> Result<u64, ExportError> {
    let mut count = 0;
    write_file(&partial(EVENTS), |w| {
        reader.scan_until(checkpoint.seq, |seq, at, event| {
            if scope.concerns(event) {
                count += 1;
                let io = |source| StoreError::Io { what: "writing events.jsonl".into(), source };
                serde_json::to_writer(&mut *w, &Line { seq, at, event }).map_err(StoreError::Encode)?;
                w.write_all(b"\n").map_err(io)?;
            }
            Ok(())
        })?;
        Ok(())
    })?;
    write_file(&partial(STATE), |w| {
        serde_json::to_writer_pretty(&mut *w, checkpoint)?;
        w.write_all(b"\n").map_err(|source| ExportError::Io { path: dir.join(STATE), source })
    })?;
    for name in [EVENTS, STATE] {
        let path = dir.join(name);
        std::fs::rename(partial(name), &path).map_err(|source| ExportError::Io { path, source })?;
    }
    Ok(count)
}

/// Creates `path`, has `fill` write it, and makes it durable.
fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    let io = |source| ExportError::Io { path: path.to_owned(), source };
    let mut w = BufWriter::new(File::create(path).map_err(io)?);
    fill(&mut w)?;
    let file = w.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)
}

/// The recorded events of the job `scope` describes, up to `last`, in order.
pub fn events(db: &Path, last: u64, mut scope: JobScope) -> Result<Vec<Recorded>, StoreError> {
    let reader = LogReader::open(db)?;
    let mut out = Vec::new();
    reader.scan_until(last, |seq, at, event| {
        if scope.concerns(event) {
            out.push(Recorded { seq, at: at.as_millis(), event: event.clone() });
        }
        Ok(())
    })?;
    Ok(out)
}
