//! Escalations: raised by the `escalate` action, a used-up chain or a session bosun could not
//! end, with a notification; resolved by a person, optionally with a message for the agent.

use super::ground::{kill, Cx, Decision};
use super::session::{live_agent, queue};
use crate::{
    Agent, Effect, Escalation, EscalationId, Event, MessageKind, Notice, NoticeKind, Rejection, State, Timestamp,
    Trigger,
};

pub(super) fn escalate(state: &State, a: &Agent, trigger: Trigger, reason: String, now: Timestamp, d: &mut Decision) {
    let id = d.next_escalation(state);
    let webhook = webhook_of(state, a);
    let notice = Notice {
        kind: NoticeKind::Escalation,
        title: format!("bosun: {} needs a person ({id})", a.name),
        body: format!("{reason}. Resolve with `bosun resolve {id} [--message TEXT]`."),
        agent: Some(a.id.clone()),
        job: a.step.as_ref().map(|(job, _, _)| job.clone()),
        escalation: Some(id),
        at: now,
    };
    d.effect(Effect::Notify { notice, desktop: true, webhook });
    let escalation = Escalation { id, agent: a.id.clone(), trigger, reason, at: now, resolved: None };
    d.event(Event::EscalationRaised { escalation });
}

/// Where the agent's notices are POSTed: its own webhook, else that of the job it runs a step of.
pub(super) fn webhook_of(state: &State, a: &Agent) -> Option<crate::WebhookUrl> {
    a.policy.webhook.clone().or_else(|| {
        let (job, _, _) = a.step.as_ref()?;
        state.jobs.get(job)?.spec.notify.webhook.clone()
    })
}

/// bosun could not end the agent's session (`AgentKillFailed`): a person is asked to end its
/// process (resolving tries again), rather than have the agent and its job wait for a death
/// that may not come.
pub(super) fn kill_failed(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::AgentKillFailed { id, error } = e else { return };
    let Some(a) = cx.state.agents.get(id) else { return };
    let why = format!(
        "agent {} could not be ended ({}): end its process (session {}), then resolve, which tries again",
        a.id,
        error.trim(),
        a.session
    );
    escalate(cx.state, a, Trigger::Dead, why, cx.now, d);
}

/// A person resolved an escalation: its trigger's chain starts again, and a message, if any, is
/// typed into the agent when it waits for input.
pub(super) fn resolve(
    state: &State,
    id: EscalationId,
    message: Option<&str>,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let e = state.escalations.get(&id).ok_or(Rejection::NoSuchEscalation(id))?;
    if e.resolved.is_some() {
        return Err(Rejection::AlreadyResolved(id));
    }
    let agent = match message {
        Some(m) => {
            crate::message_text::check(m, false)?;
            Some(live_agent(state, &e.agent)?)
        }
        None => None,
    };
    d.event(Event::EscalationResolved { id, at: now, message: message.map(str::to_owned) });
    d.event(Event::RecoveryReset { id: e.agent.clone(), trigger: e.trigger });
    let ending = state.agents.get(&e.agent).filter(|a| a.kill_requested && a.state.is_up());
    match (agent, message, ending) {
        // One bosun could not end: it tries again.
        (_, _, Some(a)) => d.effect(kill(a)),
        // A message waits while the agent shows a dialog, which it never answers: an agent still
        // at the dialog goes on with its chain after the grace, as one closed without a word.
        (Some(a), Some(m), None) if !matches!(a.state, crate::SessionState::Prompt { .. }) => {
            queue(state, a, m, MessageKind::Resolve, now, d)
        }
        (Some(a), Some(m), None) => {
            queue(state, a, m, MessageKind::Resolve, now, d);
            let reset = crate::Agent { recovery: Default::default(), class_recovery: Default::default(), ..a.clone() };
            super::grace::again(state, &reset, now, d);
        }
        // Closed without a word: an agent still where it was asked about goes on with its chain
        // from its start after the grace, unless it shows life first.
        _ => {
            if let Some(a) = state.agents.get(&e.agent) {
                let reset =
                    crate::Agent { recovery: Default::default(), class_recovery: Default::default(), ..a.clone() };
                super::grace::again(state, &reset, now, d);
            }
        }
    }
    Ok(())
}
