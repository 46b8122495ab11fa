//! The IPC server: a Unix socket (mode 0600) taking length-prefixed JSON frames, one task per
//! connection. Only the daemon's own user is served, whatever the socket's mode was made. Requests
//! from a CLI of another version are refused, except to see or stop.

use std::sync::Arc;

use bosun_wire::{decode, encode, Envelope, ErrorKind, Response, WireError, VERSION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

use crate::handler::{handle, Context};

pub async fn serve(listener: UnixListener, ctx: Arc<Context>) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if let Err(why) = same_user(&stream) {
                        tracing::warn!("refused a connection: {why}");
                        continue;
                    }
                    let ctx = ctx.clone();
                    tokio::spawn(async move {
                        if let Err(e) = connection(stream, ctx).await {
                            tracing::debug!("connection ended: {e}");
                        }
                    });
                }
                Err(e) => tracing::warn!("accept failed: {e}"),
            },
            () = ctx.shutdown.notified() => {
                // Streams are told the stop is meant, and given a moment to say so.
                ctx.stopping.send_replace(true);
                let _ = tokio::time::timeout(STREAMS_END, ctx.streams.write()).await;
                return;
            }
        }
    }
}

/// The peer is this process's user (`SO_PEERCRED`): the socket's mode is not all that keeps
/// others out.
fn same_user(stream: &UnixStream) -> Result<(), String> {
    let me = nix::unistd::geteuid().as_raw();
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == me => Ok(()),
        Ok(cred) => Err(format!("its peer is uid {}, not this daemon's uid {me}", cred.uid())),
        Err(e) => Err(format!("cannot tell who its peer is: {e}")),
    }
}

/// The largest request read (a runbook's text rides along with `bosun run`).
pub const MAX_REQUEST: usize = 16 * 1024 * 1024;
/// How long a request's frame may take to arrive once its length has.
const FRAME_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a stop waits for event streams to send their last frame.
const STREAMS_END: std::time::Duration = std::time::Duration::from_millis(500);

async fn connection(mut stream: UnixStream, ctx: Arc<Context>) -> std::io::Result<()> {
    loop {
        let len = match stream.read_u32().await {
            Ok(n) => n as usize,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        };
        if len > MAX_REQUEST {
            return Err(std::io::Error::other(format!("a request of {len} bytes is over the limit")));
        }
        // Held only as it arrives, and only for so long: half-sent frames cost what was sent.
        let mut body = Vec::new();
        let read = tokio::time::timeout(FRAME_WAIT, (&mut stream).take(len as u64).read_to_end(&mut body)).await;
        match read {
            Ok(Ok(n)) if n == len => {}
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(std::io::Error::other("a request was not sent whole in time")),
        }
        let response = match decode::<Envelope>(&body) {
            Err(e) => Response::Error(WireError::new(ErrorKind::BadRequest, format!("malformed request: {e}"))),
            Ok(env) if env.version != VERSION && !env.request.version_independent() => {
                Response::Error(WireError::new(
                    ErrorKind::VersionMismatch,
                    format!(
                        "this bosun is {} but its daemon is {VERSION}: run `bosun daemon stop` (agents keep running) and try again",
                        env.version
                    ),
                ))
            }
            Ok(env) => {
                // A stream holds the connection until it ends.
                if let bosun_wire::Request::Events(q) = env.request {
                    return crate::handler::events::stream(&mut stream, &ctx, q).await;
                }
                let answer = handle(&ctx, env.request, env.id).await;
                if env.id.is_some() {
                    crate::faults::before_answer();
                }
                answer
            }
        };
        let frame = encode(&response).map_err(std::io::Error::other)?;
        stream.write_all(&frame).await?;
    }
}
