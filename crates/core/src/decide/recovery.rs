//! Recovery chains: when a trigger fires (a death: `died`), the next step of its chain acts —
//! after its cooldown — until the chain is used up, when a person is asked. Gates pass (done) or
//! hand on to the next step.

use super::escalation::escalate;
use super::ground::{kill, set_timer, spawn_replacing, Cx, Decision};
use super::session::queue;
use crate::{
    Action, Agent, AgentError, AgentId, DeathReason, Effect, Event, MessageKind, Outcome, Progress, SessionState,
    State, TimerKind, Timestamp, Trigger, TurnClass, WorkspaceState,
};

/// Fires `trigger` for the agent: the chain's next step acts (or waits out its cooldown). An
/// idle agent's chain is its last turn's class's own, when it has one.
pub(super) fn fire(
    state: &State,
    a: &Agent,
    trigger: Trigger,
    error: Option<AgentError>,
    now: Timestamp,
    d: &mut Decision,
) {
    let class = a.verdict.as_ref().map(|v| v.class);
    fire_for(state, a, trigger, error, class, now, d);
}

/// Fires `trigger` with the idle turn's class known (it may be decided in this very decision).
pub(super) fn fire_for(
    state: &State,
    a: &Agent,
    trigger: Trigger,
    error: Option<AgentError>,
    class: Option<TurnClass>,
    now: Timestamp,
    d: &mut Decision,
) {
    let class = routed(a, trigger, class);
    let from = match class {
        Some(c) => a.class_recovery.get(&c),
        None => a.recovery.get(&trigger),
    };
    let from = from.copied().unwrap_or_default();
    fire_from(Cx { state, now }, a, trigger, error, class, from, d);
}

/// The class whose own chain an idle agent follows, if its policy has one for it.
fn routed(a: &Agent, trigger: Trigger, class: Option<TurnClass>) -> Option<TurnClass> {
    class.filter(|c| trigger == Trigger::Idle && a.policy.on_idle_class.contains_key(c))
}

fn fire_from(
    cx: Cx,
    a: &Agent,
    trigger: Trigger,
    error: Option<AgentError>,
    class: Option<TurnClass>,
    mut p: Progress,
    d: &mut Decision,
) {
    let Cx { state, now } = cx;
    // A paused agent is given nothing: no nudge, resume or gate until a person raises its budget.
    if a.outcome.is_some() || a.kill_requested || a.paused.is_some() {
        return;
    }
    // A step already waits out its cooldown for this trigger (or a rate limit): it acts for
    // this firing too.
    let cooling = state.timers.values().any(|t| {
        t.kind == TimerKind::Cooldown { agent: a.id.clone(), trigger, class }
            || matches!(&t.kind, TimerKind::Wake { agent, .. } if *agent == a.id && trigger == Trigger::Error)
    });
    if cooling {
        return;
    }
    let chain = &a.policy.chain_for(trigger, error, class).0;
    if chain.is_empty() {
        return;
    }
    while p.step < chain.len() && !chain[p.step].attempts.allows(p.used) {
        p = Progress { step: p.step + 1, used: 0 };
    }
    let Some(step) = chain.get(p.step) else {
        let open = state.open_escalations().any(|e| e.agent == a.id && e.trigger == trigger);
        if !open {
            escalate(state, a, trigger, format!("{} and its recovery chain is used up", what(a, trigger)), now, d);
        }
        return;
    };
    p.used += 1;
    let action = step.action.clone();
    d.event(Event::RecoveryStep { id: a.id.clone(), trigger, progress: p, action, at: now, class });
    // A wait times itself.
    if let Action::Wait { message } = &step.action {
        return wait(state, a, p.used, message.clone(), now, d);
    }
    if step.cooldown_ms > 0 {
        let at = Timestamp::from_millis(now.as_millis() + step.cooldown_ms);
        set_timer(state, d, TimerKind::Cooldown { agent: a.id.clone(), trigger, class }, at);
    } else {
        perform(state, a, trigger, &step.action, now, d);
    }
}

/// An agent died (`AgentDied`): unless bosun or a person ended it, its `on_dead` chain acts. A
/// restart that could not start, or a session gone without an exit status with no chain to
/// bring it back, is put to a person rather than tried again and again.
pub(super) fn died(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::AgentDied { id, reason, .. } = e else { return };
    // As it was before it died.
    let Some(agent) = cx.state.agents.get(id) else { return };
    let (state, now) = (cx.state, cx.now);
    let bosun_ended_it = agent.kill_requested || agent.outcome.is_some();
    match reason {
        DeathReason::FailedToStart if agent.restarts > 0 && !bosun_ended_it => {
            let why = format!("agent {} could not be restarted", agent.id);
            escalate(state, agent, Trigger::Dead, why, now, d);
        }
        DeathReason::FailedToStart => {}
        // Its session vanished without a word (bosun's tmux server is gone: the machine
        // restarted?) and no policy brings it back.
        DeathReason::Lost if !bosun_ended_it && agent.policy.on_dead.is_empty() => {
            let why = format!("agent {} was lost: its session is gone without an exit status", agent.id);
            escalate(state, agent, Trigger::Dead, why, now, d);
        }
        _ if !bosun_ended_it => fire(state, agent, Trigger::Dead, None, now, d),
        _ => {}
    }
}

/// After a restart of bosun: a gate a crash cut off is run again (a check run twice says the
/// same), for the chain that stands at it while the agent is still where it fired.
pub(super) fn gate_after_restart(state: &State, a: &Agent, d: &mut Decision) {
    let class = a.verdict.as_ref().map(|v| v.class);
    for trigger in [Trigger::Idle, Trigger::Error, Trigger::Prompt] {
        let class = routed(a, trigger, class);
        let cooling =
            state.timers.values().any(|t| t.kind == TimerKind::Cooldown { agent: a.id.clone(), trigger, class });
        let p = match class {
            Some(c) => a.class_recovery.get(&c),
            None => a.recovery.get(&trigger),
        };
        let Some(p) = p.filter(|_| in_trigger_state(a, trigger) && !cooling) else { continue };
        if let Some(Action::Gate { run }) =
            a.policy.chain_for(trigger, error_of(a), class).0.get(p.step).map(|s| &s.action)
        {
            d.effect(Effect::RunGate { agent: a.id.clone(), run: run.clone(), cwd: a.cwd.clone() });
        }
    }
}

/// Carries out one action for the agent.
pub(super) fn perform(state: &State, a: &Agent, trigger: Trigger, action: &Action, now: Timestamp, d: &mut Decision) {
    match action {
        Action::Nudge { message } => queue(state, a, &a.with_context(message), MessageKind::Nudge, now, d),
        Action::Resume { message } => resume(state, a, message.as_deref(), trigger != Trigger::Dead, now, d),
        Action::Gate { run } => {
            d.effect(Effect::RunGate { agent: a.id.clone(), run: run.clone(), cwd: a.cwd.clone() });
        }
        Action::Wait { message } => {
            let attempt = a.recovery.get(&trigger).map_or(1, |p| p.used);
            wait(state, a, attempt, message.clone(), now, d)
        }
        Action::Switch { message } => {
            let attempt = a.recovery.get(&trigger).map_or(1, |p| p.used);
            switch(state, a, attempt, message.clone(), now, d)
        }
        Action::Escalate => escalate(state, a, trigger, what(a, trigger), now, d),
        Action::Done => finish(a, Outcome::Done, now, d),
        Action::Fail => finish(a, Outcome::Failed, now, d),
    }
}

/// The `wait` step: the agent is woken once its rate limit has reset (its `attempt`th wait
/// since its chain began), by a timer, which a restart of bosun re-arms.
fn wait(state: &State, a: &Agent, attempt: u32, message: Option<String>, now: Timestamp, d: &mut Decision) {
    // The reset its client gave in this very decision counts.
    let until = d.agent(state, &a.id).map_or(a.limited_until, |now| now.limited_until);
    let at = crate::rate_limit::wake_at(&a.id, attempt, until, now);
    set_timer(state, d, TimerKind::Wake { agent: a.id.clone(), message }, at);
}

/// The `switch` step: the agent is resumed on the next account with room, its conversation
/// copied there first (`switch::moved`); when none has room, it waits as `wait` does.
fn switch(state: &State, a: &Agent, attempt: u32, message: Option<String>, now: Timestamp, d: &mut Decision) {
    let Some((moved, copies, switched)) = super::switch::moved(state, a, attempt, now, d) else {
        return wait(state, a, attempt, message, now, d);
    };
    let message = message.unwrap_or_else(|| crate::rate_limit::SWITCHED_MESSAGE.to_owned());
    resume(state, &moved, Some(&message), true, now, d);
    d.event(switched);
    for e in d.effects.iter_mut() {
        if let Effect::SpawnSession { agent, copies: c, .. } = e {
            if *agent == a.id {
                c.clone_from(&copies);
            }
        }
    }
}

/// A `wait` is over: an agent still failed is told that the limit has reset.
pub(super) fn woken(state: &State, a: &Agent, message: Option<&str>, now: Timestamp, d: &mut Decision) {
    if !matches!(a.state, SessionState::Error { .. }) || a.outcome.is_some() || a.kill_requested {
        return;
    }
    let text = message.unwrap_or(crate::rate_limit::WOKEN_MESSAGE);
    queue(state, a, &a.with_context(text), MessageKind::Nudge, now, d);
}

/// Restarts the agent in its workspace with its conversation resumed. A driver that takes a
/// first message on its command line gets it there; others have it typed once they are up.
/// An agent still `alive` is ended by bosun: the restart first waits for its transcript to hold
/// its last words, when its driver says it writes them late.
pub(super) fn resume(state: &State, a: &Agent, message: Option<&str>, alive: bool, now: Timestamp, d: &mut Decision) {
    let message = message.map(|m| a.with_context(m));
    let message = message.as_deref();
    let session = a.id.restarted_session(a.restarts + 1);
    let recorded = message.map(str::to_owned);
    d.event(Event::AgentResuming { id: a.id.clone(), at: now, session: session.clone(), message: recorded });
    if let Some(ws) = state.workspaces.get(&a.workspace) {
        if ws.state != (WorkspaceState::InUse { agent: a.id.clone() }) {
            d.event(Event::WorkspaceInUse { id: ws.id.clone(), agent: a.id.clone() });
        }
    }
    let next = Agent { session, restarts: a.restarts + 1, ..a.clone() };
    let old = Some(a.session.clone());
    // What it said in this very decision (the turn that just ended) counts.
    let said = d.agent(state, &a.id).and_then(|now| now.said.clone());
    let said = Agent { said: said.or_else(|| a.said.clone()), ..a.clone() };
    let hold = alive.then(|| a.driver.behaviour().resume_waits_for(&said)).flatten();
    let takes = takes_message(a);
    let mut spawn = spawn_replacing(&next, Some(if takes { message } else { None }), old);
    if let Effect::SpawnSession { hold: h, .. } = &mut spawn {
        *h = hold;
    }
    d.effect(spawn);
    if let (false, Some(m)) = (takes, message) {
        queue(state, a, m, MessageKind::Nudge, now, d);
    }
}

/// Whether the agent, resumed, takes its first message on its command line.
fn takes_message(a: &Agent) -> bool {
    a.driver.behaviour().conversation(a).is_some()
}

/// Whether its last restart gave it a message on its command line: its turn runs from the start.
pub(super) fn resumed_with_message(a: &Agent) -> bool {
    a.resume_message.is_some() && takes_message(a)
}

/// The restart a crash interrupted after it was recorded, carried out: the session before it
/// ended, the new one started with the message the `resume` step gave (a driver that takes no
/// message on its command line has it queued already).
pub(super) fn restart_interrupted(a: &Agent) -> Effect {
    let old = a.id.session_after(a.restarts.saturating_sub(1));
    let message = a.resume_message.clone().filter(|_| takes_message(a));
    spawn_replacing(a, Some(message.as_deref()), Some(old))
}

/// The `done` and `fail` actions: the agent's work is over; its session is ended.
fn finish(a: &Agent, outcome: Outcome, now: Timestamp, d: &mut Decision) {
    d.event(Event::AgentFinished { id: a.id.clone(), outcome, at: now });
    if a.state.is_up() {
        d.effect(kill(a));
    }
}

/// A gate ended: exit 0 means done; otherwise the chain goes on to its next step.
pub(super) fn gate_finished(
    state: &State,
    agent: &AgentId,
    run: &str,
    code: Option<i32>,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(a) = state.agents.get(agent) else { return };
    let passed = code == Some(0);
    d.event(Event::GateFinished { id: a.id.clone(), run: run.to_owned(), passed, code });
    let Some((trigger, _)) = gate_step(a, run) else { return };
    // The agent went back to work (or was ended) while the gate ran: its verdict is moot.
    if !in_trigger_state(a, trigger) {
        return;
    }
    if passed {
        finish(a, Outcome::Done, now, d);
        return;
    }
    let Some((trigger, p)) = gate_step(a, run) else { return };
    let class = routed(a, trigger, a.verdict.as_ref().map(|v| v.class));
    fire_from(Cx { state, now }, a, trigger, error_of(a), class, Progress { step: p.step + 1, used: 0 }, d);
}

/// The trigger whose chain stands at the gate `run`, and where.
fn gate_step(a: &Agent, run: &str) -> Option<(Trigger, Progress)> {
    let class = a.verdict.as_ref().map(|v| v.class);
    let at_gate = |t: Trigger, p: &Progress| {
        let chain = &a.policy.chain_for(t, error_of(a), routed(a, t, class)).0;
        chain.get(p.step).is_some_and(|s| matches!(&s.action, Action::Gate { run: r } if r == run))
    };
    let progress = |t: Trigger| match routed(a, t, class) {
        Some(c) => a.class_recovery.get(&c).copied(),
        None => a.recovery.get(&t).copied(),
    };
    [Trigger::Idle, Trigger::Dead, Trigger::Error, Trigger::Prompt]
        .into_iter()
        .find_map(|t| progress(t).filter(|p| at_gate(t, p)).map(|p| (t, p)))
}

/// Whether the agent is still in the state its trigger fired for.
fn in_trigger_state(a: &Agent, trigger: Trigger) -> bool {
    match trigger {
        Trigger::Idle => a.state == SessionState::Idle,
        Trigger::Error => matches!(a.state, SessionState::Error { .. }),
        Trigger::Prompt => matches!(a.state, SessionState::Prompt { .. }),
        Trigger::Dead => a.state.is_dead(),
        Trigger::Budget => a.paused.is_some(),
    }
}

/// A cooldown ended: the step it delayed acts, if the agent is still in the trigger's state.
pub(super) fn cooled_down(
    state: &State,
    a: &Agent,
    trigger: Trigger,
    class: Option<TurnClass>,
    now: Timestamp,
    d: &mut Decision,
) {
    // A class's step acts only while the agent's turn is still of that class.
    let same_class = class.is_none_or(|c| a.verdict.as_ref().is_some_and(|v| v.class == c));
    let still = in_trigger_state(a, trigger) && same_class && a.paused.is_none();
    let p = match class {
        Some(c) => a.class_recovery.get(&c),
        None => a.recovery.get(&trigger),
    };
    let Some(p) = p else { return };
    let step = a.policy.chain_for(trigger, error_of(a), class).0.get(p.step).cloned();
    if let (true, Some(step)) = (still, step) {
        perform(state, a, trigger, &step.action, now, d);
    }
}

fn error_of(a: &Agent) -> Option<AgentError> {
    match a.state {
        SessionState::Error { error } => Some(error),
        _ => None,
    }
}

/// What happened, for an escalation's reason.
fn what(a: &Agent, trigger: Trigger) -> String {
    match trigger {
        Trigger::Idle => format!("agent {} is idle", a.id),
        Trigger::Dead => format!("agent {} died ({})", a.id, a.state.label()),
        Trigger::Error => format!("agent {} failed ({})", a.id, a.state.label()),
        Trigger::Budget => format!("agent {} reached its budget", a.id),
        Trigger::Prompt => {
            let kind = match (&a.state, &a.blocked) {
                (SessionState::Prompt { kind }, _) => kind.label(),
                (_, Some(b)) => {
                    return format!("agent {}'s client blocked a call by itself: {}", a.id, b.call.describe())
                }
                _ => "a",
            };
            match &a.asks {
                Some(asks) => format!("agent {} waits at a {kind} dialog: {asks}", a.id),
                None => format!("agent {} waits at a {kind} dialog", a.id),
            }
        }
    }
}
