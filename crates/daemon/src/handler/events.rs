//! The event stream (`Request::Events`): recorded events sent as they are recorded, from a
//! given seq, so a client that reconnects from the last seq it saw misses nothing. The log is
//! the one source: each wake-up from the engine reads what was appended since the last event
//! sent, so nothing is sent twice or skipped, however events are batched.

use std::sync::Arc;

use bosun_core::replay::Recorded;
use bosun_core::JobScope;
use bosun_wire::{encode, ErrorKind, EventsQuery, Response, WireError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::sync::broadcast::error::RecvError;

use super::{query, Context};
use crate::store::{LogReader, StoreError};

/// The most events sent from one read of the log, so a stream of a long log starts at once and
/// holds little.
const BATCH: usize = 4096;

/// Streams what `q` asks for to the client on `stream`, until the client goes or, without
/// `follow`, the last recorded event was sent.
pub async fn stream(stream: &mut UnixStream, ctx: &Arc<Context>, q: EventsQuery) -> std::io::Result<()> {
    let _open = ctx.streams.read().await;
    let mut stopping = ctx.stopping.subscribe();
    // Subscribed before the first read: whatever is recorded after it wakes the loop.
    let mut woken = ctx.engine.subscribe();
    let (scope, seq) = match scope(ctx, &q).await {
        Ok(found) => found,
        Err(e) => return send(stream, &Response::Error(e)).await,
    };
    let mut scope = scope;
    // The seq after which to send: a `from` of 0 means the next one recorded.
    let mut after = if q.from == 0 { seq } else { q.from - 1 };
    let db = ctx.dirs.db();
    loop {
        let (read, last, kept) = {
            let (db, scope) = (db.clone(), scope.take());
            tokio::task::spawn_blocking(move || read(&db, after, scope))
                .await
                .map_err(std::io::Error::other)?
                .map_err(|e| std::io::Error::other(e.to_string()))?
        };
        scope = kept;
        for r in read {
            send(stream, &Response::Event(Box::new(r))).await?;
        }
        let caught_up = last == after;
        after = last;
        if !caught_up {
            continue;
        }
        if !q.follow {
            return send(stream, &Response::Ok).await;
        }
        let mut probe = [0u8; 1];
        tokio::select! {
            r = woken.recv() => match r {
                Ok(_) | Err(RecvError::Lagged(_)) => while woken.try_recv().is_ok() {},
                Err(RecvError::Closed) => return Ok(()),
            },
            // The client sends nothing more: a read returns only when it has gone.
            _ = stream.read(&mut probe) => return Ok(()),
            () = async { _ = stopping.wait_for(|stop| *stop).await; } => return send(stream, &Response::Stopped).await,
        }
    }
}

/// The records the query names (None: every one), and the seq of the last recorded event.
async fn scope(ctx: &Arc<Context>, q: &EventsQuery) -> Result<(Option<JobScope>, u64), WireError> {
    let (agent, job) = (q.agent.clone(), q.job.clone());
    query(ctx, move |s| {
        let lost =
            |what: &str| WireError::new(ErrorKind::Failed, format!("{what} vanished while it was being looked at"));
        let scope = match (agent, job) {
            (Some(_), Some(_)) => {
                return Err(WireError::new(ErrorKind::BadRequest, "give an agent or a job, not both"));
            }
            (Some(a), None) => {
                let id = s.find_agent(&a)?.id.clone();
                Some(JobScope::of_agent(s, &id).ok_or_else(|| lost("the agent"))?)
            }
            (None, Some(j)) => {
                let id = s.find_job(&j)?.spec.id.clone();
                Some(JobScope::of(s, &id).ok_or_else(|| lost("the job"))?)
            }
            (None, None) => None,
        };
        Ok((scope, s.seq))
    })
    .await
}

/// At most `BATCH` recorded events after `after` that `scope` concerns, the seq of the last one
/// read (concerning or not), and the scope as they taught it.
fn read(
    db: &std::path::Path,
    after: u64,
    mut scope: Option<JobScope>,
) -> Result<(Vec<Recorded>, u64, Option<JobScope>), StoreError> {
    let reader = LogReader::open(db)?;
    let (mut out, mut last) = (Vec::new(), after);
    reader.scan_after(after, BATCH, |seq, at, event| {
        last = seq;
        if scope.as_mut().is_none_or(|s| s.concerns(event)) {
            out.push(Recorded { seq, at: at.as_millis(), event: event.clone() });
        }
        Ok(())
    })?;
    Ok((out, last, scope))
}

async fn send(stream: &mut UnixStream, response: &Response) -> std::io::Result<()> {
    let frame = encode(response).map_err(std::io::Error::other)?;
    stream.write_all(&frame).await
}
