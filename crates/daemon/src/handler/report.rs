//! The reports of the hooks bosun installs: a tmux session's end, and any agent's own program's
//! report (Claude's hooks, Codex's notify, any hook-reporting driver's), taken by the agent's
//! driver (`take_report`: bounded and checked) and handed to the core as one kind of input. What
//! the driver needs done first is done here (the end of its session log read for what it said,
//! when the report does not say), and its answer to a permission request returned for the
//! calling program to print.

use bosun_core::driver::Report;
use bosun_wire::HookEvent;

use super::*;

/// What a hook reported, taken.
pub(super) async fn hook(ctx: &Arc<Context>, hook: HookEvent) -> Answer {
    let input = match hook {
        HookEvent::PaneDied { session, status, signal } => {
            let session = SessionName::from_reported(&session);
            // Anyone can run `bosun hook tmux pane-died`: a pane tmux shows alive is.
            if session_alive(ctx, &session).await {
                return Ok(Response::Ok);
            }
            Input::SessionExited { session, status: bosun_core::ExitStatus { code: status, signal } }
        }
        HookEvent::SessionClosed { session } => {
            let session = SessionName::from_reported(&session);
            if session_alive(ctx, &session).await {
                return Ok(Response::Ok);
            }
            Input::SessionClosed { session }
        }
        HookEvent::Report { driver, agent, generation, event, payload, spooled_at } => {
            let report = driver.behaviour().take_report(&event, &payload);
            return submit(ctx, agent, generation, spooled_at, report).await;
        }
    };
    super::submit(ctx, input).await?;
    Ok(Response::Ok)
}

/// How much of the end of a session log is read for what the agent said last.
const SAID_TAIL: u64 = 256 * 1024;

async fn submit(
    ctx: &Arc<Context>,
    agent: String,
    generation: Option<u32>,
    spooled_at: Option<u64>,
    report: Report,
) -> Answer {
    let probe = report.clone();
    let (agent, driver, log) = query(ctx, move |s| {
        let a = s.find_agent(&agent)?;
        Ok((a.id.clone(), a.driver.behaviour(), a.driver.behaviour().said_in_log(a, &probe)))
    })
    .await?;
    if let Some(log) = log {
        let tail = tokio::task::spawn_blocking(move || read_tail(&log, SAID_TAIL)).await;
        if let Some(text) = tail.ok().flatten().as_deref().and_then(|t| driver.said_in_tail(t)) {
            ctx.engine.submit(Input::Said { agent: agent.clone(), text }).await.map_err(engine_error)?;
        }
    }
    let spooled_at = spooled_at.map(bosun_core::Timestamp::from_millis);
    let asked = report.clone();
    let input = Input::Report { agent, generation, spooled_at, report };
    let events = ctx.engine.submit(input).await.map_err(engine_error)?;
    // A permission request its policy answered: the calling program prints the answer.
    let reply = events.iter().find_map(|e| match e {
        Event::PermissionAnswered { decision, .. } => driver.permission_reply(&asked, &decision.answer),
        _ => None,
    });
    Ok(reply.map_or(Response::Ok, |stdout| Response::HookReply { stdout }))
}

/// The last `max` bytes of the regular file at `path` (as text, a character cut in two
/// dropped). Opened without blocking (a FIFO there never hangs the daemon) and read bounded.
fn read_tail(path: &Path, max: u64) -> Option<String> {
    bosun_adapters::transcript::tail(path, max)
}
