//! Decisions about agents and their sessions: start-up, messages (typed only while the agent
//! waits for input, one at a time, in order), kills, and deaths however they are reported (what a
//! death sets off above, its `on_dead` chain and its job's step, reacts to `AgentDied`).

use std::collections::BTreeSet;

use super::ground::{clear_timers, inspect, kill as kill_effect, send, set_timer, Decision};
use crate::{
    apply, Agent, AgentId, DeathReason, Effect, Event, ExitStatus, Message, MessageId, MessageKind, MessageState,
    Outcome, Rejection, SessionName, SessionState, State, TimerKind, Timestamp, WorkspaceState,
};

/// How long after a message is typed the agent must be working, or Enter is pressed again.
pub const CONFIRM_MS: u64 = 3_000;
/// How long a Claude agent has to report in before bosun looks at its screen for a start-up
/// dialog.
pub const STARTUP_CHECK_MS: u64 = 1_500;
/// Heartbeats are recorded at most this often per kind.
pub const HEARTBEAT_EVERY_MS: u64 = 5_000;
/// How long a generic agent's output must stop before it counts as idle.
pub const QUIET_MS: u64 = 5_000;

pub(super) fn kill(state: &State, agent: &AgentId, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let a = live_agent(state, agent)?;
    // Waiting in a pool's line, it has no session yet: it leaves the line.
    if let Some(ws) = state.workspaces.get(&a.workspace).filter(|w| w.state == crate::WorkspaceState::Waiting) {
        d.event(Event::AgentKillRequested { id: a.id.clone() });
        d.event(Event::WorkspaceRemoved { id: ws.id.clone(), branch_kept: None });
        died(state, a, DeathReason::Killed, None, now, d);
        return Ok(());
    }
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
    raw: bool,
    at_once: bool,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    crate::message_text::check(text, raw)?;
    let a = live_agent(state, agent)?;
    if let Some(pause) = &a.paused {
        return Err(Rejection::Paused { id: a.id.clone(), budget: pause.budget.to_string() });
    }
    let waiting = deliverable(a, &a.state)
        && sending(state, &a.id).is_none()
        && queued(state, &a.id).next().is_none()
        && !settling(state, &a.id);
    if at_once && !waiting {
        let hint = match &a.state {
            SessionState::Prompt { .. } => ": it shows a dialog (answer it with `bosun answer`)",
            _ if a.answering.as_ref().is_some_and(|x| x.picked_at.is_none()) => {
                ": bosun is answering a dialog it shows"
            }
            _ => "",
        };
        return Err(Rejection::NotWaitingForInput { id: a.id.clone(), state: a.state.label(), hint });
    }
    push(state, a, text, MessageKind::User, raw, now, d);
    Ok(())
}

/// Queues a message for the agent; `dispatch` types it when the agent waits for input. A
/// message bosun made (a nudge, a resolution's text from a runbook value) is cleaned of keys
/// and cut to the limit; a person's was checked when it was asked for.
pub(super) fn queue(state: &State, a: &Agent, text: &str, kind: MessageKind, now: Timestamp, d: &mut Decision) {
    push(state, a, &crate::message_text::clean(text), kind, false, now, d);
}

fn push(state: &State, a: &Agent, text: &str, kind: MessageKind, raw: bool, now: Timestamp, d: &mut Decision) {
    let id = d.next_message(state);
    let message = Message {
        id,
        agent: a.id.clone(),
        text: text.to_owned(),
        state: MessageState::Queued,
        at: now,
        kind,
        sent_seq: 0,
        raw,
    };
    d.event(Event::MessageQueued { message });
}

/// After a decision: types the oldest waiting message of every agent it touched that, as the
/// decision leaves it, waits for input, is typing nothing, and is not still reacting to the
/// last message typed (its confirmation pending and its state unchanged since).
pub(super) fn dispatch(state: &State, d: &mut Decision) {
    let mut touched: BTreeSet<AgentId> = d.events.iter().filter_map(|e| agent_of(state, e)).collect();
    // A wait on a rate limit ended: the nudges its account's agents were held back go out.
    touched.extend(super::window::released(state, d));
    if touched.is_empty() {
        return;
    }
    let windows = super::window::Windows::of(state, d);
    // The touched agents as the decision leaves them: a small copy with the events applied.
    let mut after = State { seq: state.seq, last_timer: state.last_timer, ..State::default() };
    for id in &touched {
        if let Some(a) = state.agents.get(id) {
            after.agents.insert(id.clone(), a.clone());
        }
    }
    let mine = |agent: &AgentId| touched.contains(agent);
    after.messages = state.messages.iter().filter(|(_, m)| mine(&m.agent)).map(|(k, m)| (*k, m.clone())).collect();
    after.timers =
        state.timers.iter().filter(|(_, t)| t.kind.agent().is_some_and(mine)).map(|(k, t)| (*k, t.clone())).collect();
    for e in &d.events {
        apply(&mut after, e);
    }
    for a in after.agents.values() {
        let reacting = after
            .timers
            .values()
            .any(|t| matches!(&t.kind, TimerKind::Confirm { agent, seq, .. } if agent == &a.id && a.state_seq <= *seq));
        if !deliverable(a, &a.state) || sending(&after, &a.id).is_some() || reacting || settling(&after, &a.id) {
            continue;
        }
        if let Some(m) = queued(&after, &a.id).next() {
            // bosun's own nudges wait while another agent of the account waits out a rate limit.
            if m.kind == MessageKind::Nudge && windows.holds(a).is_some() {
                continue;
            }
            d.event(Event::MessageSending { id: m.id });
            d.effect(send(a, m));
        }
    }
}

/// The agent an event is about, when it could change whether one of its messages goes out.
fn agent_of(state: &State, e: &Event) -> Option<AgentId> {
    match e {
        Event::MessageQueued { message } => Some(message.agent.clone()),
        Event::AgentObserved { id, .. }
        | Event::AgentRunning { id, .. }
        | Event::AgentAdopted { id, .. }
        | Event::AgentUnpaused { id, .. } => Some(id.clone()),
        Event::MessageDelivered { id } | Event::MessageFailed { id, .. } => {
            state.messages.get(id).map(|m| m.agent.clone())
        }
        Event::TimerCleared { id } => state.timers.get(id).and_then(|t| t.kind.agent().cloned()),
        _ => None,
    }
}

/// Whether text typed now reaches the agent as input: it waits for input (idle, after an
/// error, or at a dialog). A generic agent without a prompt pattern cannot tell: once up, it
/// takes messages at once.
/// Whether a message may be typed into the agent now: it waits for input. Never while it shows
/// a dialog (its Enter would pick the dialog's selected option, "No, exit" on Claude's trust
/// dialog) or bosun is answering one: the message waits until the dialog is answered.
pub(super) fn deliverable(a: &Agent, state: &SessionState) -> bool {
    // Paused at its budget: nothing is typed into it.
    if a.paused.is_some() {
        return false;
    }
    let dialog = matches!(state, SessionState::Prompt { .. }) && !a.driver.behaviour().prompts_take_text();
    // The cursor on its way to an option: an Enter now would pick whatever it is on.
    let moving = a.answering.as_ref().is_some_and(|x| x.picked_at.is_none());
    if moving || dialog {
        return false;
    }
    if blind(a) {
        return state.is_up();
    }
    matches!(state, SessionState::Idle | SessionState::Error { .. } | SessionState::Prompt { .. })
}

/// Whether the agent's input is not ready yet after its client reported its start.
fn settling(state: &State, agent: &AgentId) -> bool {
    state.timers.values().any(|t| matches!(&t.kind, TimerKind::InputSettling { agent: a } if a == agent))
}

/// A generic agent without a prompt pattern: nothing tells when it waits for input.
fn blind(a: &Agent) -> bool {
    !a.driver.behaviour().tells_waiting(&a.driver)
}

pub(super) fn spawned(state: &State, agent: &AgentId, pid: Option<u32>, now: Timestamp, d: &mut Decision) {
    match state.agents.get(agent) {
        Some(a) if a.state == SessionState::Starting => came_up(state, a, pid, now, d),
        Some(a) if a.state.is_up() && pid.is_some() && a.pid.is_none() => {
            d.event(Event::AgentRunning { id: a.id.clone(), pid, at: now })
        }
        // Spawned after it was killed while starting: end it.
        Some(a) if a.state.is_dead() && a.kill_requested => d.effect(kill_effect(a)),
        _ => {}
    }
}

/// A starting agent's session is up: record it, follow its output (and its session log when
/// known), watch a Claude agent's start-up, and end it at once if a kill was asked meanwhile.
pub(super) fn came_up(state: &State, a: &Agent, pid: Option<u32>, now: Timestamp, d: &mut Decision) {
    d.event(Event::AgentRunning { id: a.id.clone(), pid, at: now });
    d.effect(Effect::WatchLog { agent: a.id.clone(), path: a.output_log(), session_log: false, from_start: true });
    d.effect(Effect::WatchWorkspace { agent: a.id.clone(), path: a.cwd.clone() });
    if let Some(log) = &a.log {
        d.effect(Effect::WatchLog { agent: a.id.clone(), path: log.clone(), session_log: true, from_start: false });
    }
    let start = a.driver.behaviour().start_up(a);
    if start.look_at_screen {
        let at = crate::Timestamp::from_millis(now.as_millis() + STARTUP_CHECK_MS);
        set_timer(state, d, TimerKind::Startup { agent: a.id.clone(), checks: 0 }, at);
    }
    if start.find_log {
        find_log(a, d);
    }
    if start.waits_for_input {
        d.event(Event::AgentObserved {
            id: a.id.clone(),
            state: SessionState::Idle,
            source: crate::Source::Log,
            at: now,
            observation: None,
            cause: None,
        });
    }
    if let (true, Some(prompt), 0) = (start.types_prompt, &a.prompt, a.restarts) {
        push(state, a, prompt, MessageKind::User, false, now, d);
    }
    if start.idle_when_quiet {
        let at = Timestamp::from_millis(now.as_millis() + QUIET_MS + HEARTBEAT_EVERY_MS);
        set_timer(state, d, TimerKind::Quiet { agent: a.id.clone() }, at);
    }
    if a.kill_requested {
        d.effect(kill_effect(a));
    }
}

/// Looks for the agent's session log where its driver keeps them (Codex's rollout logs),
/// unless it is known.
pub(super) fn find_log(a: &Agent, d: &mut Decision) {
    if a.log.is_some() {
        return;
    }
    let driver = a.driver.behaviour();
    if let Some(sessions) = driver.log_search(a) {
        d.effect(Effect::FindCodexLog { agent: a.id.clone(), sessions, cwd: driver.log_cwd(a), since: a.created_at });
    }
}

pub(super) fn spawn_failed(state: &State, agent: &AgentId, error: &str, now: Timestamp, d: &mut Decision) {
    if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
        let error = Some(format!("session could not be started: {error}"));
        died(state, a, DeathReason::FailedToStart, error, now, d);
    }
}

pub(super) fn exited(state: &State, session: &SessionName, status: ExitStatus, now: Timestamp, d: &mut Decision) {
    match state.agent_by_session(session) {
        Some(a) if !a.state.is_dead() => ended(state, a, status, now, d),
        // A pod gone before it said what its save did: nothing more will; it is taken as unsaved.
        Some(a) if save_pending(state, a, d) => pod_ended(state, session, status, &None, now, d),
        _ => {}
    }
}

/// Whether `agent` works in a pod whose save is not known yet (its host saves as it ends).
pub(super) fn save_pending(state: &State, agent: &Agent, d: &mut Decision) -> bool {
    let in_pod = state.workspaces.get(&agent.workspace).is_some_and(|w| matches!(w.kind, crate::WorkspaceKind::Pod(_)));
    in_pod && d.agent(state, &agent.id).is_some_and(|a| a.saved.is_none())
}

/// An agent's pod ended: its host saved what it could and ended with the agent (or was told to
/// end it). What the save did is recorded once, after the death it ends in; its workspace is
/// released as dirty unless the save left nothing only in the pod (see `pod::saved` for what
/// becomes of the pod).
pub(super) fn pod_ended(
    state: &State,
    session: &SessionName,
    status: ExitStatus,
    saved: &Option<crate::SavedWork>,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(a) = state.agent_by_session(session) else { return };
    if a.saved.is_some() {
        return;
    }
    let unknown = || crate::SavedWork { pushed: false, dirty: true, said: "its pod said nothing of its work".into() };
    let saved = saved.clone().unwrap_or_else(unknown);
    let dead = a.state.is_dead();
    if !dead {
        let reason = reason_when_ended(a, status).unwrap_or_else(|| status.reason());
        death(state, a, reason, None, Some(&saved), now, d);
    }
    let safe = saved.is_safe();
    d.event(Event::WorkSaved { agent: a.id.clone(), saved });
    // Released before its save was known (it was killed): what the save says now counts.
    let released = state.workspaces.get(&a.workspace).filter(|w| w.state == WorkspaceState::Dirty);
    if let Some(ws) = released.filter(|_| dead && safe) {
        d.event(Event::WorkspaceReleased { id: ws.id.clone(), dirty: false });
    }
}

pub(super) fn killed(state: &State, agent: &AgentId, now: Timestamp, d: &mut Decision) {
    if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
        died(state, a, reason_when_ended(a, ExitStatus::UNKNOWN).unwrap_or(DeathReason::Killed), None, now, d);
    }
}

/// bosun could not end the agent's session (a person is asked to end its process: see
/// `escalation::kill_failed`).
pub(super) fn kill_failed(state: &State, agent: &AgentId, error: &str, d: &mut Decision) {
    if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
        d.event(Event::AgentKillFailed { id: a.id.clone(), error: error.to_owned() });
    }
}

/// A message was typed (or could not be): record it, and have a typed one confirmed.
pub(super) fn text_done(state: &State, message: MessageId, error: Option<&String>, now: Timestamp, d: &mut Decision) {
    let Some(m) =
        state.messages.get(&message).filter(|m| matches!(m.state, MessageState::Sending | MessageState::Queued))
    else {
        return;
    };
    match error {
        None => {
            d.event(Event::MessageDelivered { id: message });
            // Only an agent that can say it is working can be seen not to be.
            let can_tell = state.agents.get(&m.agent).is_some_and(|a| !blind(a));
            if can_tell {
                let at = Timestamp::from_millis(now.as_millis() + CONFIRM_MS);
                let kind = TimerKind::Confirm { agent: m.agent.clone(), message, seq: m.sent_seq, again: false };
                set_timer(state, d, kind, at);
            }
        }
        Some(e) => {
            d.event(Event::MessageFailed { id: message, error: e.clone() });
            // Not typed: an agent waiting where its chain sent it is not moved by it.
            if let Some(a) = state.agents.get(&m.agent) {
                super::grace::again(state, a, now, d);
            }
        }
    }
}

/// An agent's process ended with `status`.
pub(super) fn ended(state: &State, agent: &Agent, status: ExitStatus, now: Timestamp, d: &mut Decision) {
    let reason = reason_when_ended(agent, status).unwrap_or_else(|| status.reason());
    died(state, agent, reason, None, now, d);
}

/// Why an agent that bosun itself ended is dead: its work done, or killed.
fn reason_when_ended(agent: &Agent, _status: ExitStatus) -> Option<DeathReason> {
    match (agent.outcome, agent.kill_requested) {
        (Some(Outcome::Done), _) => Some(DeathReason::Completed),
        (_, true) => Some(DeathReason::Killed),
        _ => None,
    }
}

/// Records an agent's death: fails its undelivered messages, clears its timers, stops reading
/// its logs and has its workspace checked. What follows from it (its `on_dead` chain, its
/// job's step) reacts to `AgentDied`.
pub(super) fn died(
    state: &State,
    agent: &Agent,
    reason: DeathReason,
    error: Option<String>,
    now: Timestamp,
    d: &mut Decision,
) {
    death(state, agent, reason, error, None, now, d);
}

/// `died`, for an agent whose pod said what its save did (`saved`), recorded next.
fn death(
    state: &State,
    agent: &Agent,
    reason: DeathReason,
    error: Option<String>,
    saved: Option<&crate::SavedWork>,
    now: Timestamp,
    d: &mut Decision,
) {
    d.event(Event::AgentDied { id: agent.id.clone(), reason, at: now, error });
    for m in state.messages.values().filter(|m| m.agent == agent.id) {
        if matches!(m.state, MessageState::Queued | MessageState::Sending) {
            d.event(Event::MessageFailed { id: m.id, error: "the agent ended before it was delivered".into() });
        }
    }
    clear_timers(state, agent, |_| true, d);
    d.effect(Effect::UnwatchLogs { agent: agent.id.clone() });
    if let Some(ws) = state.workspaces.get(&agent.workspace) {
        if ws.state == (WorkspaceState::InUse { agent: agent.id.clone() }) {
            match &ws.kind {
                // Nothing of it is here to look at: its pod's save says whether it is safe.
                crate::WorkspaceKind::Pod(_) => {
                    let safe = saved.is_some_and(crate::SavedWork::is_safe);
                    d.event(Event::WorkspaceReleased { id: ws.id.clone(), dirty: !safe });
                }
                _ => d.effect(inspect(state, ws)),
            }
        }
    }
}

pub(super) fn live_agent<'a>(state: &'a State, id: &AgentId) -> Result<&'a Agent, Rejection> {
    let a = state.agents.get(id).ok_or_else(|| Rejection::NoSuchAgent(id.to_string()))?;
    if a.state.is_dead() {
        return Err(Rejection::AgentDead { id: a.id.clone(), state: a.state.label() });
    }
    Ok(a)
}

/// The agent's messages waiting to be typed, oldest first.
pub(super) fn queued<'a>(state: &'a State, agent: &'a AgentId) -> impl Iterator<Item = &'a Message> {
    state.messages.values().filter(move |m| &m.agent == agent && m.state == MessageState::Queued)
}

/// The agent's message being typed, if any.
pub(super) fn sending<'a>(state: &'a State, agent: &AgentId) -> Option<&'a Message> {
    state.messages.values().find(|m| &m.agent == agent && m.state == MessageState::Sending)
}
