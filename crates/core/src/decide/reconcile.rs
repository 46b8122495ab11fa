//! Comparing the records with reality: at start (adopt, bury, resume) and in the periodic
//! session listing that catches deaths no hook reported.

use super::ground::{create, kill, remove, spawn, Decision};
use super::session::{came_up, ended, sending};
use super::workspace::inspect_if_released;
use crate::{
    Agent, Effect, Event, ExitStatus, Reality, SessionSeen, SessionState, State, Subject, Timestamp, Trigger,
    WorkspaceState,
};

/// Judges running agents by a listing of sessions taken when `as_of` events had been applied:
/// an agent that started running after that is not judged by it.
pub(super) fn observed(state: &State, sessions: &[SessionSeen], as_of: u64, now: Timestamp, d: &mut Decision) {
    let judged = state.agents.values().filter(|a| a.state.is_up() && a.state_seq <= as_of);
    for agent in judged {
        match seen(sessions, agent) {
            Some(SessionSeen { exit: Some(status), .. }) => ended(state, agent, *status, now, d),
            Some(_) => {}
            None => ended(state, agent, ExitStatus::UNKNOWN, now, d),
        }
    }
}

/// What the daemon found when it started: adopts live sessions, buries vanished ones, marks
/// missing directories stale and resumes what a crash interrupted.
pub(super) fn at_start(state: &State, reality: &Reality, now: Timestamp, d: &mut Decision) {
    super::job::resume_after_restart(state, d);
    super::queue::unmade_after_restart(state, d);
    super::plan::unmade_after_restart(state, now, d);
    super::merge::after_restart(state, d);
    for ws in state.workspaces.values() {
        let missing = ws.kind.on_this_disk() && reality.missing_dirs.contains(&ws.id);
        // An agent that lives on in a directory that is gone is not cut off from it here.
        let live_agent = state.agents.values().any(|a| {
            a.workspace == ws.id && !a.state.is_dead() && seen(&reality.sessions, a).is_some_and(|s| s.exit.is_none())
        });
        match &ws.state {
            WorkspaceState::Creating => d.effect(create(ws, true)),
            WorkspaceState::Removing { force, keep_branch } => {
                d.effect(remove(state, ws, *force, keep_branch.is_none()))
            }
            WorkspaceState::Stale | WorkspaceState::Waiting => {}
            _ if missing && !live_agent => d.event(Event::WorkspaceStale {
                id: ws.id.clone(),
                why: format!("its directory {} is gone", ws.path.display()),
            }),
            // Interrupted between the agent's death and the check of its workspace.
            _ => inspect_if_released(state, ws, d),
        }
    }
    super::pool::reconcile(state, &reality.slots, now, d);
    for agent in state.agents.values().filter(|a| !a.state.is_dead()) {
        match (seen(&reality.sessions, agent), &agent.state) {
            (Some(SessionSeen { exit: Some(status), .. }), _) => ended(state, agent, *status, now, d),
            // It came up while bosun was down, at a moment not known: it is taken to be up since
            // it was asked to start, so that what it reported meanwhile (spooled, told next)
            // is not taken for older than its coming up.
            (Some(s), SessionState::Starting) => {
                cut_off(state, agent, d);
                came_up(state, agent, s.pid, agent.state_since.min(now), d)
            }
            (Some(s), _) => adopt(state, agent, s, now, d),
            (None, SessionState::Starting) if !agent.kill_requested => {
                cut_off(state, agent, d);
                let ws_ready = state
                    .workspaces
                    .get(&agent.workspace)
                    .is_some_and(|ws| ws.state == WorkspaceState::InUse { agent: agent.id.clone() });
                match (ws_ready, agent.restarts) {
                    (true, 0) => d.effect(spawn(agent, None)),
                    // A restart interrupted by the crash is a restart still: resumed, not anew.
                    (true, _) => d.effect(super::recovery::restart_interrupted(agent)),
                    (false, _) => {}
                }
            }
            (None, _) => ended(state, agent, ExitStatus::UNKNOWN, now, d),
        }
    }
}

/// A running agent found alive again (recorded only when its process is not the one known: a
/// start changes nothing about the others). Its oldest waiting message may have been being typed
/// when bosun died: it is failed rather than typed twice, and the next one goes out.
fn adopt(state: &State, agent: &Agent, s: &SessionSeen, now: Timestamp, d: &mut Decision) {
    if s.pid.is_some() && s.pid != agent.pid {
        d.event(Event::AgentAdopted { id: agent.id.clone(), pid: s.pid, at: now });
    }
    // Its logs are followed again from their ends: what they said while bosun was down is past.
    d.effect(Effect::WatchLog {
        agent: agent.id.clone(),
        path: agent.output_log(),
        session_log: false,
        from_start: false,
    });
    d.effect(Effect::WatchWorkspace { agent: agent.id.clone(), path: agent.cwd.clone() });
    if let Some(log) = &agent.log {
        d.effect(Effect::WatchLog { agent: agent.id.clone(), path: log.clone(), session_log: true, from_start: false });
        // But for what its model calls used meanwhile, which the ledger keeps.
        d.effect(Effect::ReadUsage { agent: agent.id.clone(), path: log.clone() });
    }
    if cut_off(state, agent, d) {
        // Whether it reached the agent is unknown: one still where it was after the grace (idle,
        // at a dialog, failed) stays there for good, and its chain acts again.
        super::grace::again(state, agent, now, d);
    }
    super::classify::resume_after_restart(agent, d);
    super::recovery::gate_after_restart(state, agent, d);
    // Ended by bosun (killed, or its work done) just before the crash, its session still runs.
    if agent.kill_requested || agent.outcome.is_some() {
        d.effect(kill(agent));
    }
}

/// After a start (reconciled, and the reports kept while bosun was down told): what nothing will
/// move on is never left to wait forever. An agent is put to a person, saying what was lost; a
/// job (whose step's agent or job is over, or whose workspace is gone) fails saying so, to be
/// resumed.
pub(super) fn stuck_after_start(state: &State, now: Timestamp, d: &mut Decision) {
    for stuck in state.stuck() {
        let why = format!("bosun lost what would move it on: {}", stuck.lost);
        match &stuck.subject {
            Subject::Agent(id) => {
                if let Some(a) = state.agents.get(id) {
                    let trigger = match a.state {
                        SessionState::Idle => Trigger::Idle,
                        SessionState::Prompt { .. } => Trigger::Prompt,
                        SessionState::Error { .. } => Trigger::Error,
                        _ => Trigger::Dead,
                    };
                    super::escalation::escalate(state, a, trigger, why, now, d);
                }
            }
            Subject::Job(id) => super::job::lost(state, id, why, now, d),
        }
    }
}

/// The agent's message being typed when bosun died, if any, is failed rather than typed twice
/// (and no longer holds back those queued after it); whether it was cut off.
fn cut_off(state: &State, agent: &Agent, d: &mut Decision) -> bool {
    let Some(in_flight) = sending(state, &agent.id) else { return false };
    d.event(Event::MessageFailed {
        id: in_flight.id,
        error: "bosun restarted while delivering it; not retyped, to avoid sending it twice".into(),
    });
    true
}

fn seen<'a>(sessions: &'a [SessionSeen], agent: &Agent) -> Option<&'a SessionSeen> {
    sessions.iter().find(|s| s.session == agent.session)
}
