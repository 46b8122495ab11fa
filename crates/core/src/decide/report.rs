//! Reports from an agent's own program (a Claude hook, a Codex notify call): read by its
//! driver, what it said classified, a permission its policy covers answered, a call its client
//! refused by itself recorded and taken to `on_prompt`, its permission mode noted, its state
//! observed.

use super::ground::{Cx, Decision};
use super::{classify, observe, recovery};
use crate::driver::Report;
use crate::{Agent, BlockedCall, Event, Observation, PermissionDecision, SessionState, State, Timestamp, Trigger};

/// `reported_at`: when the agent made the report (when it was spooled, for one kept while no
/// daemon answered).
pub(super) fn read(
    state: &State,
    a: &Agent,
    report: &Report,
    reported_at: Timestamp,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(reading) = a.driver.behaviour().read_report(Some(a), report) else { return };
    // Made after a message typed to the agent since it went idle: a turn's end that followed.
    let after_message = state.messages.values().any(|m| {
        m.agent == a.id && m.state == crate::MessageState::Delivered && m.at >= a.state_since && reported_at > m.at
    });
    let new_words = after_message || reading.said.as_deref().is_some_and(|said| classify::says_new(a, said));
    // The turn ended: what it said last is what its classification reads.
    if let Some(said) = &reading.said {
        classify::said(state, &a.id, said, d);
    }
    // A permission its policy covers is answered at once: no dialog shows.
    let answered = reading.permission.as_ref().and_then(|(tool, subject)| {
        let answer = crate::permission_answer(&a.policy.allow, &a.policy.deny, tool, subject.as_deref())?;
        let decision = PermissionDecision { at: now, tool: tool.clone(), subject: subject.clone(), answer };
        d.event(Event::PermissionAnswered { id: a.id.clone(), decision });
        Some(())
    });
    // What it reports took place when it made the report: one kept while bosun was down is
    // recorded at that moment, so that the next one it kept (made later) still counts as news.
    let now = reported_at.min(now);
    if let Some(mode) = reading.mode.filter(|m| a.permission_mode.as_ref() != Some(m)) {
        d.event(Event::PermissionModeReported { id: a.id.clone(), mode });
    }
    // The conversation its client named (opencode's session), which a resume continues wherever
    // it runs (its session log may be out of reach, in a pod).
    let named = a.driver.behaviour().named_conversation(report);
    if let Some(conversation) = named.filter(|c| a.driver.found() != Some(c.as_str())) {
        d.event(Event::AgentConversationFound { id: a.id.clone(), conversation });
    }
    // A call the client's classifier blocked asks nobody, and the agent goes on, or stops to
    // explain: it is the policy's, and a person's, to hear of, as a dialog is.
    if let Some(refused) = reading.blocked {
        let call = BlockedCall { at: now, call: refused };
        d.event(Event::CallBlocked { id: a.id.clone(), call: call.clone() });
        let blocked = Agent { blocked: Some(call), ..a.clone() };
        recovery::fire(state, &blocked, Trigger::Prompt, None, now, d);
    }
    if let Some((source, seen)) = reading.observation {
        let observation = if answered.is_some() { Observation::Working } else { seen };
        let cause = Some(report.cause());
        // A turn's end that says something new, or that was made after a message was typed to
        // the agent, while the agent is known idle: the report of that turn's start was lost
        // (to a crash of bosun while it was being told), the turn was not. It is taken as the
        // working it was, then as its end. (A report told twice says nothing new and was made
        // before the message its first telling brought.)
        if new_words && a.state == SessionState::Idle && observation == Observation::Idle {
            let working = SessionState::Running;
            d.event(Event::AgentObserved {
                id: a.id.clone(),
                state: working.clone(),
                source,
                at: now,
                observation: None,
                cause: None,
            });
            let turned = Agent { state: working, state_since: now, source: Some(source), ..a.clone() };
            return observe::observed(Cx { state, now }, &turned, source, &observation, reading.log.as_ref(), cause, d);
        }
        observe::observed(Cx { state, now }, a, source, &observation, reading.log.as_ref(), cause, d)
    }
}
