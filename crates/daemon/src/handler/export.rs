//! `bosun job export` and `bosun replay`: the job's scope (and checkpoint) are taken on the
//! engine thread, in one look at the state; the log is read (and the files written) on a
//! blocking thread, so a long log never holds the engine up.

use std::path::PathBuf;
use std::sync::Arc;

use bosun_core::{Checkpoint, JobScope};
use bosun_wire::{ErrorKind, Response, WireError};

use super::{bad, query, Answer, Context};
use crate::engine::now;
use crate::memory::{self, ExportError};

pub(super) async fn export(ctx: &Arc<Context>, job: String, dir: PathBuf, force: bool) -> Answer {
    if !dir.is_absolute() {
        return Err(bad(format!("{} is not an absolute path", dir.display())));
    }
    let at = now();
    let (scope, checkpoint) = query(ctx, move |s| {
        let id = s.find_job(&job)?.spec.id.clone();
        let lost = || WireError::new(ErrorKind::Failed, format!("job {id} vanished while it was being exported"));
        Ok((JobScope::of(s, &id).ok_or_else(lost)?, Checkpoint::of(s, &id, at).ok_or_else(lost)?))
    })
    .await?;
    let (db, seq) = (ctx.dirs.db(), checkpoint.seq);
    let target = dir.clone();
    let written = tokio::task::spawn_blocking(move || memory::export(&db, &target, force, scope, &checkpoint)).await;
    match written {
        Ok(Ok(events)) => Ok(Response::Exported { dir, events, seq }),
        Ok(Err(e)) => Err(export_error(e)),
        Err(e) => Err(WireError::new(ErrorKind::Failed, format!("internal task failed: {e}"))),
    }
}

fn export_error(e: ExportError) -> WireError {
    let kind = match e {
        ExportError::Exists { .. } => ErrorKind::Conflict,
        ExportError::Io { .. } | ExportError::Store(_) | ExportError::Encode(_) => ErrorKind::Failed,
    };
    WireError::new(kind, e.to_string())
}

/// Replays detection and classification over the job's recorded events.
pub(super) async fn replay(ctx: &Arc<Context>, job: String) -> Answer {
    let (id, scope, seq) = query(ctx, move |s| {
        let id = s.find_job(&job)?.spec.id.clone();
        let lost = || WireError::new(ErrorKind::Failed, format!("job {id} vanished while it was being read"));
        Ok((id.clone(), JobScope::of(s, &id).ok_or_else(lost)?, s.seq))
    })
    .await?;
    let db = ctx.dirs.db();
    let read = tokio::task::spawn_blocking(move || memory::events(&db, seq, scope)).await;
    match read {
        Ok(Ok(events)) => Ok(Response::Replayed { job: id, replayed: bosun_core::replay::replay(&events) }),
        Ok(Err(e)) => Err(WireError::new(ErrorKind::Failed, e.to_string())),
        Err(e) => Err(WireError::new(ErrorKind::Failed, format!("internal task failed: {e}"))),
    }
}
