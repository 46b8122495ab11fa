//! An idle turn classified: the guardrails on what the agent said, else its classifier command
//! (run as an effect, its failure tolerated), else the heuristic. The verdict is recorded with
//! its source and rule, and the agent's `on_idle` follows the class's own chain when it has one.

use super::ground::{Cx, Decision};
use super::recovery;
use crate::{
    after_command, guardrail, without_command, Agent, AgentId, Effect, Event, SessionState, State, Timestamp, Trigger,
    Verdict,
};

/// The most of a message kept: its end, where a turn says how it ended.
pub const SAID_MAX: usize = 4_000;

/// The agent's driver reported its last message.
pub(super) fn said(state: &State, agent: &AgentId, text: &str, d: &mut Decision) {
    let Some(a) = state.agents.get(agent).filter(|a| a.state.is_up()) else { return };
    if says_new(a, text) {
        d.event(Event::AgentSaid { id: a.id.clone(), text: tail(text.trim(), SAID_MAX).to_owned() });
    }
}

/// Whether `text` is a last message the agent has not said before (as kept: its end).
pub(super) fn says_new(a: &Agent, text: &str) -> bool {
    let text = tail(text.trim(), SAID_MAX);
    a.said.as_deref() != Some(text) && !text.is_empty()
}

/// The agent's turn ended and it is idle: without classification its `on_idle` fires as it is;
/// with it, the turn is classified first (at once, or once the classifier command answers).
pub(super) fn turn_ended(state: &State, a: &Agent, now: Timestamp, d: &mut Decision) {
    if !a.policy.classifies() {
        return recovery::fire(state, a, Trigger::Idle, None, now, d);
    }
    // The agent as this decision leaves it: what it said last (a report made in this very
    // decision counts) and the seq of the idle state it is in.
    let (said, turn) = match d.agent(state, &a.id) {
        Some(now) => (now.said.clone(), idle_seq(now)),
        None => (None, None),
    };
    let said = said.or_else(|| a.said.clone()).unwrap_or_default();
    let turn = turn.unwrap_or(a.state_seq);
    let rules = a.policy.classify.as_ref().map(|c| c.rules.as_slice()).unwrap_or_default();
    let command = a.policy.classify.as_ref().and_then(|c| c.command.clone()).filter(|c| !c.is_empty());
    match (guardrail(rules, &said), command) {
        (None, Some(command)) => {
            d.event(Event::TurnClassifying { id: a.id.clone(), turn });
            d.effect(Effect::Classify { agent: a.id.clone(), turn, command, cwd: a.cwd.clone(), said });
        }
        (verdict, _) => {
            let verdict = verdict.unwrap_or_else(|| without_command(rules, &said));
            decided(Cx { state, now }, a, turn, verdict, said, None, d);
        }
    }
}

/// The classifier command answered (or failed) for the agent's idle turn `turn`.
pub(super) fn answered(
    state: &State,
    agent: &AgentId,
    turn: u64,
    said: &str,
    answer: Result<String, String>,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(a) = state.agents.get(agent) else { return };
    let verdict = after_command(said, &answer);
    decided(Cx { state, now }, a, turn, verdict, said.to_owned(), Some(answer), d);
}

/// After a restart of bosun: a classifier command a crash cut off is run again for the turn
/// the agent is still idle in.
pub(super) fn resume_after_restart(a: &Agent, d: &mut Decision) {
    let command = a.policy.classify.as_ref().and_then(|c| c.command.clone()).filter(|c| !c.is_empty());
    if let (Some(turn), Some(command)) = (a.classifying, command) {
        if a.state == SessionState::Idle && a.state_seq == turn {
            let said = a.said.clone().unwrap_or_default();
            d.effect(Effect::Classify { agent: a.id.clone(), turn, command, cwd: a.cwd.clone(), said });
        }
    }
}

/// Records the verdict; the agent's chain acts on it if it is still in that idle turn.
fn decided(
    cx: Cx,
    a: &Agent,
    turn: u64,
    verdict: Verdict,
    said: String,
    answer: Option<Result<String, String>>,
    d: &mut Decision,
) {
    let Cx { state, now } = cx;
    let class = verdict.class;
    d.event(Event::TurnClassified { id: a.id.clone(), turn, verdict, said, answer, at: now });
    if d.agent(state, &a.id).and_then(idle_seq) == Some(turn) {
        recovery::fire_for(state, a, Trigger::Idle, None, Some(class), now, d);
    }
}

/// The `state_seq` of the idle state the agent is in, if it is idle.
fn idle_seq(a: &Agent) -> Option<u64> {
    (a.state == SessionState::Idle).then_some(a.state_seq)
}

/// The last `max` bytes of `s`, cut at a character boundary.
fn tail(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}
