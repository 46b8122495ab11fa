//! Reports from agents' own programs (Claude's hooks, Codex's notify), handed to the core as one
//! kind of input. What the agent's driver needs done first is done here (the end of its session
//! log read for what it said, when the report does not say), and its answer to a permission
//! request returned for the calling program to print.

use super::*;

/// How much of the end of a session log is read for what the agent said last.
const SAID_TAIL: u64 = 256 * 1024;

pub(super) async fn submit(
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
