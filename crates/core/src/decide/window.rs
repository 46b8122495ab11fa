//! Shared rate-limit windows: while an agent waits out a rate limit (its `wait` is timed), the
//! other agents of its account (`Account`) are given no nudge of bosun's, and no new agent of
//! the account starts, until that wait is over; then the nudges held go out and the starts held
//! go on. Twenty agents on one account do not call the API while one of them knows it is shut.
//! An account an agent was moved off (`switch`) stays shut the same way until its reset.

use super::ground::{set_timer, spawn, Decision};
use crate::{Account, Agent, AgentId, Effect, Event, SessionState, State, TimerId, TimerKind, Timestamp};
use crate::{Timer, WorkspaceState};

/// The waits pending as a decision leaves them: who waits (none: an account left), on which
/// account, until when.
pub(super) struct Windows(Vec<(Option<AgentId>, Account, Timestamp)>);

impl Windows {
    pub(super) fn of(state: &State, d: &Decision) -> Self {
        let cleared: Vec<TimerId> = d
            .events
            .iter()
            .filter_map(|e| match e {
                Event::TimerCleared { id } => Some(*id),
                _ => None,
            })
            .collect();
        let set = d.events.iter().filter_map(|e| match e {
            Event::TimerSet { timer } => Some(timer),
            _ => None,
        });
        let pending = state.timers.values().chain(set).filter(|t| !cleared.contains(&t.id));
        Self(pending.filter_map(|t| wait(state, t)).collect())
    }

    /// When the last wait of another agent of `a`'s account ends, if one is pending.
    pub(super) fn holds(&self, a: &Agent) -> Option<Timestamp> {
        if self.0.is_empty() {
            return None;
        }
        let account = Account::of(a)?;
        self.0.iter().filter(|(id, acc, _)| id.as_ref() != Some(&a.id) && *acc == account).map(|(_, _, at)| *at).max()
    }

    /// Whether a wait is pending on `account`.
    pub(super) fn shut(&self, account: &Account) -> bool {
        self.0.iter().any(|(_, acc, _)| acc == account)
    }
}

fn wait(state: &State, t: &Timer) -> Option<(Option<AgentId>, Account, Timestamp)> {
    match &t.kind {
        TimerKind::Wake { agent, .. } => Some((Some(agent.clone()), Account::of(state.agents.get(agent)?)?, t.at)),
        TimerKind::Window { account } => Some((None, account.clone(), t.at)),
        _ => None,
    }
}

/// The agents whose messages may go out now that a wait of their account ended in this decision.
pub(super) fn released(state: &State, d: &Decision) -> Vec<AgentId> {
    let ended: Vec<Account> = d
        .events
        .iter()
        .filter_map(|e| match e {
            Event::TimerCleared { id } => state.timers.get(id).and_then(|t| wait(state, t)).map(|(_, acc, _)| acc),
            _ => None,
        })
        .collect();
    if ended.is_empty() {
        return Vec::new();
    }
    let on = |a: &Agent| Account::of(a).is_some_and(|acc| ended.contains(&acc));
    state.agents.values().filter(|a| on(a)).map(|a| a.id.clone()).collect()
}

/// A new agent whose account waits out a rate limit starts once the wait is over: its first
/// start this decision made is held, and timed.
pub(super) fn hold_starts(state: &State, d: &mut Decision) {
    let first_start = |e: &Effect| matches!(e, Effect::SpawnSession { replace: None, .. });
    if !d.effects.iter().any(first_start) {
        return;
    }
    let windows = Windows::of(state, d);
    let mut held = Vec::new();
    let starts: Vec<AgentId> = d
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::SpawnSession { agent, replace: None, .. } => Some(agent.clone()),
            _ => None,
        })
        .collect();
    for id in starts {
        let Some(a) = d.agent(state, &id).filter(|a| a.restarts == 0).cloned() else { continue };
        if let Some(at) = windows.holds(&a) {
            held.push((id, at));
        }
    }
    for (id, at) in held {
        d.effects.retain(|e| !matches!(e, Effect::SpawnSession { agent, replace: None, .. } if *agent == id));
        let timed = state.timers.values().any(|t| t.kind == TimerKind::HeldStart { agent: id.clone() });
        if !timed {
            let at = crate::rate_limit::wake_at(&id, 1, Some(at), at);
            set_timer(state, d, TimerKind::HeldStart { agent: id }, at);
        }
    }
}

/// A held start's time came: the agent starts, if it still waits to (the decision's
/// `hold_starts` holds it again if another wait of its account is still pending).
pub(super) fn start_held(state: &State, a: &Agent, d: &mut Decision) {
    let ready =
        state.workspaces.get(&a.workspace).is_some_and(|ws| ws.state == WorkspaceState::InUse { agent: a.id.clone() });
    if a.state == SessionState::Starting && !a.kill_requested && a.restarts == 0 && ready {
        d.effect(spawn(a, None));
    }
}
