//! The IPC server: a Unix socket (mode 0600) taking length-prefixed JSON frames, one task per
//! connection. Only the daemon's own user is served, whatever the socket's mode was made. Requests
//! from a CLI of another version are refused, except to see or stop. An agent's report channel
//! (`channels`) is served the same way, as that agent's: it may only report.

use std::sync::Arc;

use bosun_core::AgentId;
use bosun_wire::{decode, encode, Envelope, ErrorKind, HookEvent, Request, Response, WireError, VERSION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

use crate::handler::{handle, Context};

/// Whom a connection speaks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Speaker {
    /// Whoever this user is (the daemon's own socket).
    Anyone,
    /// One agent, and only for itself (its report channel): its hooks' reports, as its own
    /// whatever agent they name, and its session host's word that its program ended, for a
    /// session of its own. Nothing else.
    Agent(AgentId),
}

impl Speaker {
    /// `request` as this speaker may make it, or why not.
    pub fn admit(&self, request: Request) -> Result<Request, WireError> {
        let Self::Agent(id) = self else { return Ok(request) };
        let agent = id.to_string();
        match request {
            Request::Hook(HookEvent::Report { driver, generation, event, payload, spooled_at, .. }) => {
                Ok(Request::Hook(HookEvent::Report { driver, agent, generation, event, payload, spooled_at }))
            }
            Request::Hook(HookEvent::PaneDied { ref session, .. } | HookEvent::SessionClosed { ref session })
                if is_session_of(id, session) =>
            {
                Ok(request)
            }
            _ => Err(WireError::new(ErrorKind::BadRequest, "this socket takes only its own agent's reports")),
        }
    }
}

/// Whether `session` is one of `agent`'s (`bosun-<id>`, `bosun-<id>-rN`).
fn is_session_of(agent: &AgentId, session: &str) -> bool {
    let Some(rest) = session.strip_prefix("bosun-").and_then(|s| s.strip_prefix(agent.as_str())) else {
        return false;
    };
    rest.is_empty() || rest.strip_prefix("-r").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

pub async fn serve(listener: UnixListener, ctx: Arc<Context>) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    spawn_connection(stream, ctx.clone(), Speaker::Anyone);
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

/// Serves `stream` as `speaker`'s, on a task of its own, once its peer is this daemon's user.
pub fn spawn_connection(stream: UnixStream, ctx: Arc<Context>, speaker: Speaker) {
    if let Err(why) = same_user(&stream) {
        tracing::warn!("refused a connection: {why}");
        return;
    }
    tokio::spawn(async move {
        if let Err(e) = connection(stream, ctx, speaker).await {
            tracing::debug!("connection ended: {e}");
        }
    });
}

/// The peer is this process's user (`SO_PEERCRED`): the socket's mode is not all that keeps
/// others out.
fn same_user(stream: &UnixStream) -> Result<(), Stranger> {
    let me = nix::unistd::geteuid().as_raw();
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == me => Ok(()),
        Ok(cred) => Err(Stranger::Other { peer: cred.uid(), me }),
        Err(e) => Err(Stranger::Unknown(e)),
    }
}

/// Why a connection's peer is not let in.
#[derive(Debug, thiserror::Error)]
enum Stranger {
    #[error("its peer is uid {peer}, not this daemon's uid {me}")]
    Other { peer: u32, me: u32 },
    #[error("cannot tell who its peer is: {0}")]
    Unknown(std::io::Error),
}

/// The largest request read (a runbook's text rides along with `bosun run`).
pub const MAX_REQUEST: usize = 16 * 1024 * 1024;
/// How long a request's frame may take to arrive once its length has.
const FRAME_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long a stop waits for event streams to send their last frame.
const STREAMS_END: std::time::Duration = std::time::Duration::from_millis(500);

async fn connection(mut stream: UnixStream, ctx: Arc<Context>, speaker: Speaker) -> std::io::Result<()> {
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
            Ok(env) => match speaker.admit(env.request) {
                Err(refused) => Response::Error(refused),
                // A stream holds the connection until it ends.
                Ok(Request::Events(q)) => return crate::handler::events::stream(&mut stream, &ctx, q).await,
                Ok(request) => {
                    let answer = handle(&ctx, request, env.id).await;
                    if env.id.is_some() {
                        crate::faults::before_answer();
                    }
                    answer
                }
            },
        };
        let frame = encode(&response).map_err(std::io::Error::other)?;
        stream.write_all(&frame).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(driver: bosun_core::driver::DriverKind, agent: &str) -> Request {
        Request::Hook(HookEvent::Report {
            driver,
            agent: agent.into(),
            generation: Some(0),
            event: "Stop".into(),
            payload: "{}".into(),
            spooled_at: None,
        })
    }

    #[test]
    fn an_agents_channel_takes_only_its_own_reports_whatever_they_name() {
        let me: AgentId = serde_json::from_value("abc12345".into()).unwrap();
        let channel = Speaker::Agent(me.clone());
        for &driver in bosun_core::driver::DriverKind::ALL {
            let Ok(Request::Hook(HookEvent::Report { agent, driver: kept, .. })) =
                channel.admit(report(driver, "other999"))
            else {
                panic!()
            };
            assert_eq!((agent.as_str(), kept), ("abc12345", driver), "a report naming another agent is its own");
        }
        let died = |session: &str| {
            Request::Hook(HookEvent::PaneDied { session: session.into(), status: Some(0), signal: None })
        };
        for own in ["bosun-abc12345", "bosun-abc12345-r3"] {
            assert!(channel.admit(died(own)).is_ok(), "{own}");
        }
        for other in ["bosun-other999", "bosun-abc123456", "bosun-abc12345-r", "bosun-abc12345-r1x", "abc12345"] {
            assert!(channel.admit(died(other)).is_err(), "{other}");
        }
        let events = Request::Events(bosun_wire::EventsQuery { from: 0, follow: true, agent: None, job: None });
        for refused in [events, Request::Shutdown, Request::List, Request::PoolList] {
            let e = channel.admit(refused).unwrap_err();
            assert!(e.message.contains("only its own agent's reports"), "{e:?}");
        }
        assert_eq!(
            Speaker::Anyone.admit(Request::Shutdown).unwrap(),
            Request::Shutdown,
            "the daemon's socket takes any"
        );
    }
}
