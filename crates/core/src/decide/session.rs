//! Decisions about agents and their sessions: start-up, messages (one in flight per agent, in
//! order), kills, and deaths however they are reported.

use super::{inspect, kill as kill_effect, send, Decision};
use crate::{
    Agent, AgentId, DeathReason, Event, ExitStatus, Message, MessageId, MessageState, Rejection, SessionName,
    SessionState, State, Timestamp, WorkspaceState,
};

pub(super) fn kill(state: &State, agent: &AgentId, d: &mut Decision) -> Result<(), Rejection> {
    let a = live_agent(state, agent)?;
    if !a.kill_requested {
        d.event(Event::AgentKillRequested { id: a.id.clone() });
    }
    d.effect(kill_effect(a));
    Ok(())
}

pub(super) fn send_text(
    state: &State,
    agent: &AgentId,
    text: &str,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let a = live_agent(state, agent)?;
    let message = Message {
        id: state.next_message_id(),
        agent: a.id.clone(),
        text: text.to_owned(),
        state: MessageState::Queued,
        at: now,
    };
    // Typed only when nothing else is on its way to this agent: two deliveries at once would
    // interleave their keystrokes.
    if a.state != SessionState::Starting && queued(state, &a.id).next().is_none() {
        d.effect(send(a, &message));
    }
    d.event(Event::MessageQueued { message });
    Ok(())
}

pub(super) fn spawned(state: &State, agent: &AgentId, pid: Option<u32>, now: Timestamp, d: &mut Decision) {
    match state.agents.get(agent) {
        Some(a) if a.state == SessionState::Starting => {
            came_up(state, a, Event::AgentRunning { id: a.id.clone(), pid, at: now }, d)
        }
        // Spawned after it was killed while starting: end it.
        Some(a) if a.state.is_dead() && a.kill_requested => d.effect(kill_effect(a)),
        _ => {}
    }
}

/// A starting agent's session is up: record it, type its first waiting message, and end it at
/// once if a kill was asked for meanwhile.
pub(super) fn came_up(state: &State, a: &Agent, event: Event, d: &mut Decision) {
    d.event(event);
    if let Some(m) = queued(state, &a.id).next() {
        d.effect(send(a, m));
    }
    if a.kill_requested {
        d.effect(kill_effect(a));
    }
}

pub(super) fn spawn_failed(state: &State, agent: &AgentId, error: &str, now: Timestamp, d: &mut Decision) {
    if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
        let error = Some(format!("session could not be started: {error}"));
        died(state, a, DeathReason::FailedToStart, error, now, d);
    }
}

pub(super) fn exited(state: &State, session: &SessionName, status: ExitStatus, now: Timestamp, d: &mut Decision) {
    if let Some(a) = state.agent_by_session(session).filter(|a| !a.state.is_dead()) {
        ended(state, a, status, now, d);
    }
}

pub(super) fn killed(state: &State, agent: &AgentId, now: Timestamp, d: &mut Decision) {
    if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
        died(state, a, DeathReason::Killed, None, now, d);
    }
}

pub(super) fn kill_failed(state: &State, agent: &AgentId, error: &str, d: &mut Decision) {
    if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
        d.event(Event::AgentKillFailed { id: a.id.clone(), error: error.to_owned() });
    }
}

/// A delivery finished (or failed): record it, then type the agent's next waiting message.
pub(super) fn text_done(state: &State, message: MessageId, error: Option<&String>, d: &mut Decision) {
    let Some(m) = state.messages.get(&message).filter(|m| m.state == MessageState::Queued) else { return };
    d.event(match error {
        None => Event::MessageDelivered { id: message },
        Some(e) => Event::MessageFailed { id: message, error: e.clone() },
    });
    if let Some(a) =
        state.agents.get(&m.agent).filter(|a| matches!(a.state, SessionState::Running | SessionState::Idle))
    {
        if let Some(next) = queued(state, &a.id).find(|n| n.id != message) {
            d.effect(send(a, next));
        }
    }
}

/// An agent's process ended with `status`; Killed whatever the status when a kill was asked.
pub(super) fn ended(state: &State, agent: &Agent, status: ExitStatus, now: Timestamp, d: &mut Decision) {
    let reason = if agent.kill_requested { DeathReason::Killed } else { status.reason() };
    died(state, agent, reason, None, now, d);
}

/// Records an agent's death, fails its undelivered messages and has its workspace checked.
pub(super) fn died(
    state: &State,
    agent: &Agent,
    reason: DeathReason,
    error: Option<String>,
    now: Timestamp,
    d: &mut Decision,
) {
    d.event(Event::AgentDied { id: agent.id.clone(), reason, at: now, error });
    for m in queued(state, &agent.id) {
        d.event(Event::MessageFailed { id: m.id, error: "the agent ended before it was delivered".into() });
    }
    if let Some(ws) = state.workspaces.get(&agent.workspace) {
        if ws.state == (WorkspaceState::InUse { agent: agent.id.clone() }) {
            d.effect(inspect(ws));
        }
    }
}

fn live_agent<'a>(state: &'a State, id: &AgentId) -> Result<&'a Agent, Rejection> {
    let a = state.agents.get(id).ok_or_else(|| Rejection::NoSuchAgent(id.to_string()))?;
    if a.state.is_dead() {
        return Err(Rejection::AgentDead { id: a.id.clone(), state: a.state.label() });
    }
    Ok(a)
}

/// The agent's undelivered messages, oldest first.
pub(super) fn queued<'a>(state: &'a State, agent: &'a AgentId) -> impl Iterator<Item = &'a Message> {
    state.messages.values().filter(move |m| &m.agent == agent && m.state == MessageState::Queued)
}
