//! How agent events fold into the state: each agent's life (created, running, observed, dead,
//! resumed) and its turns (dialogs, permissions, what it said, verdicts, recovery).

use crate::{Agent, Event, SessionState, State, Timestamp};

/// The agent's life: its session, process, state and log.
pub(super) fn apply(state: &mut State, event: &Event, seq: u64) {
    match event {
        Event::AgentCreated { agent } => {
            state.agents.insert(agent.id.clone(), (**agent).clone());
        }
        Event::AgentRunning { id, pid, at } | Event::AgentAdopted { id, pid, at } => {
            if let Some(agent) = state.agents.get_mut(id) {
                if agent.state == SessionState::Starting {
                    set_agent_state(agent, SessionState::Running, *at, seq);
                }
                if pid.is_some() {
                    agent.pid = *pid;
                }
            }
        }
        Event::AgentObserved { id, state: new, source, at, observation, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.asks = match (new, observation) {
                    (SessionState::Prompt { .. }, Some(crate::Observation::Prompt { asks, .. })) => asks.clone(),
                    _ => None,
                };
                // What it said belongs to the turn before: a new turn says its own.
                if *new == SessionState::Running {
                    agent.said = None;
                }
                // A turn that ends, or one that starts after it failed, is past the limit.
                let past_limit = *new == SessionState::Idle
                    || *new == SessionState::Running && matches!(agent.state, SessionState::Error { .. });
                if past_limit {
                    agent.limited_until = None;
                }
                set_agent_state(agent, new.clone(), *at, seq);
                agent.source = Some(*source);
            }
        }
        Event::RateLimitReset { id, until, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.limited_until = Some(*until);
            }
        }
        Event::Heartbeat { id, heartbeat, at } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.heartbeats.insert(*heartbeat, *at);
            }
        }
        Event::AgentLogFound { id, path } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.log = Some(path.clone());
            }
        }
        Event::AgentConversationFound { id, conversation } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.driver.found_conversation(conversation);
            }
        }
        Event::AgentKillRequested { id } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.kill_requested = true;
            }
        }
        Event::AgentKillFailed { id, error } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.error = Some(format!("kill failed: {error}"));
            }
        }
        Event::WorkSaved { agent, saved } => {
            if let Some(a) = state.agents.get_mut(agent) {
                a.saved = Some(saved.clone());
            }
        }
        Event::AgentDied { id, reason, at, error } => {
            if let Some(agent) = state.agents.get_mut(id) {
                set_agent_state(agent, SessionState::Dead { reason: reason.clone() }, *at, seq);
                if error.is_some() {
                    agent.error = error.clone();
                }
            }
        }
        Event::AgentResuming { id, at, session, message } => {
            if let Some(agent) = state.agents.get_mut(id) {
                set_agent_state(agent, SessionState::Starting, *at, seq);
                agent.restarts += 1;
                agent.answering = None;
                agent.resume_message = message.clone();
                agent.pid = None;
                agent.session = session.clone();
                agent.source = None;
                // A new pod saves anew.
                agent.saved = None;
                // A restarted Codex writes a new rollout log.
                if agent.driver.behaviour().new_log_per_session() {
                    agent.log = None;
                }
            }
        }
        Event::AgentFinished { id, outcome, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.outcome = Some(*outcome);
                agent.kill_requested = true;
            }
        }
        _ => {}
    }
}

/// The agent's turns: the dialogs it is answered in, the permissions it asked, what it said,
/// the verdicts on its turns and how far each recovery went.
pub(super) fn turn(state: &mut State, event: &Event, seq: u64) {
    match event {
        Event::RecoveryStep { id, trigger, progress, class, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                match class {
                    Some(c) => agent.class_recovery.insert(*c, *progress),
                    None => agent.recovery.insert(*trigger, *progress),
                };
            }
        }
        // Answered, the agent goes on with its turn until its driver says otherwise.
        Event::DialogAnswered { id, at, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                set_agent_state(agent, SessionState::Running, *at, seq);
                agent.source = Some(crate::Source::Screen);
                agent.asks = None;
                agent.answering = None;
            }
        }
        Event::DialogLeft { id, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.answering = None;
            }
        }
        Event::DialogKeys { id, want, option, menu, picked, at, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                let presses = agent.answering.as_ref().filter(|a| a.want == *want).map_or(0, |a| a.presses);
                agent.answering = Some(crate::Answering {
                    want: *want,
                    presses: presses + 1,
                    pressed_at: Some(*at),
                    picked_at: picked.then_some(*at),
                    menu: menu.clone(),
                    option: option.clone(),
                });
            }
        }
        Event::PermissionAnswered { id, decision } => {
            if let Some(agent) = state.agents.get_mut(id) {
                if agent.permissions.len() >= crate::DECISIONS_KEPT {
                    agent.permissions.remove(0);
                }
                agent.permissions.push(decision.clone());
            }
        }
        Event::CallBlocked { id, call } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.blocked = Some(call.clone());
            }
        }
        Event::PermissionModeReported { id, mode } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.permission_mode = Some(mode.clone());
            }
        }
        Event::AgentSaid { id, text } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.said = Some(text.clone());
            }
        }
        Event::TurnClassifying { id, turn } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.classifying = Some(*turn);
            }
        }
        // A verdict for a turn the agent has already left is history, not its current verdict.
        Event::TurnClassified { id, verdict, turn, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                if agent.classifying == Some(*turn) {
                    agent.classifying = None;
                }
                if agent.state_seq == *turn {
                    agent.verdict = Some(verdict.clone());
                    agent.verdict_turn = Some(*turn);
                }
            }
        }
        Event::RecoveryReset { id, trigger } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.recovery.remove(trigger);
                if *trigger == crate::Trigger::Idle {
                    agent.class_recovery.clear();
                }
            }
        }
        _ => {}
    }
}

fn set_agent_state(agent: &mut Agent, new: SessionState, at: Timestamp, seq: u64) {
    if agent.state != new {
        // A dialog being answered ends with the state it held the agent in.
        agent.answering = None;
        agent.state = new;
        agent.state_since = at;
        agent.state_seq = seq;
    }
}

/// What agents spent, at which prices, and their budgets' hold on them.
pub(super) fn spend(state: &mut State, event: &Event) {
    match event {
        Event::UsageRecorded { id, used, at } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.usage.record(used, *at);
            }
        }
        Event::UsageModel { id, model } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.usage.model = Some(model.clone());
            }
        }
        Event::BudgetUnseen { id, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.budget_unseen_told = true;
            }
        }
        Event::BudgetNear { id, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.budget_told = true;
            }
        }
        Event::AgentPaused { id, pause } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.paused = Some(pause.clone());
            }
        }
        Event::AgentUnpaused { id, budget, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.paused = None;
                agent.budget_told = budget.spent(&agent.usage).is_near();
                agent.policy.budget = Some(*budget);
            }
        }
        _ => {}
    }
}
