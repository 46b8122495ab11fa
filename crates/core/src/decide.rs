//! `decide`: given what bosun knows and what just happened, the facts to record and the effects
//! to carry out. Pure and total: the same state, input and time always give the same decision.

use crate::{
    Agent, AgentId, AgentSpec, BranchKept, DeathReason, Effect, Event, ExitStatus, Input, Message, MessageState,
    Reality, Rejection, SessionName, SessionSeen, SessionState, State, Timestamp, Workspace, WorkspaceId,
    WorkspaceKind, WorkspaceProbe, WorkspaceState,
};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub events: Vec<Event>,
    pub effects: Vec<Effect>,
}

impl Decision {
    fn event(&mut self, e: Event) {
        self.events.push(e);
    }
    fn effect(&mut self, e: Effect) {
        self.effects.push(e);
    }
}

pub fn decide(state: &State, input: &Input, now: Timestamp) -> Result<Decision, Rejection> {
    let mut d = Decision::default();
    match input {
        Input::StartAgent(spec) => start_agent(state, spec, now, &mut d)?,
        Input::KillAgent { agent } => {
            let a = live_agent(state, agent)?;
            if !a.kill_requested {
                d.event(Event::AgentKillRequested { id: a.id.clone() });
            }
            d.effect(Effect::KillSession { agent: a.id.clone(), session: a.session.clone() });
        }
        Input::SendText { agent, text } => {
            let a = live_agent(state, agent)?;
            let message = Message {
                id: state.next_message_id(),
                agent: a.id.clone(),
                text: text.clone(),
                state: MessageState::Queued,
                at: now,
            };
            if a.state != SessionState::Starting {
                d.effect(send(a, &message));
            }
            d.event(Event::MessageQueued { message });
        }
        Input::RemoveWorkspace { id, force, probe } => remove_workspace(state, id, *force, *probe, &mut d)?,
        Input::WorkspaceCreated { id } => {
            if let Some(ws) = creating(state, id) {
                d.event(Event::WorkspaceReady { id: ws.id.clone(), at: now });
                if let Some(agent) = waiting_agent(state, id) {
                    d.event(Event::WorkspaceInUse { id: ws.id.clone(), agent: agent.id.clone() });
                    d.effect(spawn(agent));
                }
            }
        }
        Input::WorkspaceCreateFailed { id, error } => {
            if creating(state, id).is_some() {
                d.event(Event::WorkspaceCreateFailed { id: id.clone(), error: error.clone() });
                for agent in state.agents.values().filter(|a| &a.workspace == id && !a.state.is_dead()) {
                    let error = Some(format!("workspace could not be created: {error}"));
                    died(state, agent, DeathReason::FailedToStart, error, now, &mut d);
                }
            }
        }
        Input::SessionSpawned { agent, pid } => match state.agents.get(agent) {
            Some(a) if a.state == SessionState::Starting => {
                d.event(Event::AgentRunning { id: a.id.clone(), pid: *pid, at: now });
                for m in queued(state, &a.id) {
                    d.effect(send(a, m));
                }
                if a.kill_requested {
                    d.effect(Effect::KillSession { agent: a.id.clone(), session: a.session.clone() });
                }
            }
            // Spawned after it was killed while starting: end it.
            Some(a) if a.state.is_dead() && a.kill_requested => {
                d.effect(Effect::KillSession { agent: a.id.clone(), session: a.session.clone() })
            }
            _ => {}
        },
        Input::SessionSpawnFailed { agent, error } => {
            if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
                let error = Some(format!("session could not be started: {error}"));
                died(state, a, DeathReason::FailedToStart, error, now, &mut d);
            }
        }
        Input::SessionExited { session, status } => {
            if let Some(a) = live_session(state, session) {
                died(state, a, death(a, *status), None, now, &mut d);
            }
        }
        Input::SessionClosed { session } => {
            if let Some(a) = live_session(state, session) {
                died(state, a, death(a, ExitStatus::UNKNOWN), None, now, &mut d);
            }
        }
        Input::SessionKilled { agent } => {
            if let Some(a) = state.agents.get(agent).filter(|a| !a.state.is_dead()) {
                died(state, a, DeathReason::Killed, None, now, &mut d);
            }
        }
        Input::TextDelivered { message } => {
            if state.messages.get(message).is_some_and(|m| m.state == MessageState::Queued) {
                d.event(Event::MessageDelivered { id: *message });
            }
        }
        Input::TextFailed { message, error } => {
            if state.messages.get(message).is_some_and(|m| m.state == MessageState::Queued) {
                d.event(Event::MessageFailed { id: *message, error: error.clone() });
            }
        }
        Input::WorkspaceInspected { id, dirty } => {
            let in_use_by_dead = state.workspaces.get(id).is_some_and(|ws| match &ws.state {
                WorkspaceState::InUse { agent } => state.agents.get(agent).is_none_or(|a| a.state.is_dead()),
                _ => false,
            });
            if in_use_by_dead {
                d.event(Event::WorkspaceReleased { id: id.clone(), dirty: *dirty });
            }
        }
        Input::WorkspaceRemoved { id } => {
            if let Some(ws) = state.workspaces.get(id) {
                if let WorkspaceState::Removing { keep_branch, .. } = &ws.state {
                    d.event(Event::WorkspaceRemoved { id: id.clone(), branch_kept: keep_branch.clone() });
                }
            }
        }
        Input::WorkspaceRemoveFailed { id, error, dirty } => {
            if state.workspaces.get(id).is_some_and(|ws| matches!(ws.state, WorkspaceState::Removing { .. })) {
                d.event(Event::WorkspaceRemoveFailed { id: id.clone(), error: error.clone(), dirty: *dirty });
            }
        }
        Input::SessionsObserved { sessions, taken_at } => {
            let judged = state
                .agents
                .values()
                .filter(|a| matches!(a.state, SessionState::Running | SessionState::Idle) && a.state_since < *taken_at);
            for agent in judged {
                match sessions.iter().find(|s| s.session == agent.session) {
                    Some(SessionSeen { exit: Some(status), .. }) => {
                        died(state, agent, death(agent, *status), None, now, &mut d)
                    }
                    Some(_) => {}
                    None => died(state, agent, death(agent, ExitStatus::UNKNOWN), None, now, &mut d),
                }
            }
        }
        Input::Reconcile(reality) => reconcile(state, reality, now, &mut d),
    }
    Ok(d)
}

fn start_agent(state: &State, spec: &AgentSpec, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let ws_id = WorkspaceId::new(&spec.name, &spec.nonce);
    let agent_id = AgentId::new(&spec.nonce);
    if state.workspaces.contains_key(&ws_id) {
        return Err(Rejection::AlreadyExists(format!("workspace {ws_id}")));
    }
    if state.agents.contains_key(&agent_id) {
        return Err(Rejection::AlreadyExists(format!("agent {agent_id}")));
    }
    let path = spec.workspaces_root.join(ws_id.as_str());
    let workspace = Workspace {
        id: ws_id.clone(),
        name: spec.name.clone(),
        nonce: spec.nonce.clone(),
        path: path.clone(),
        kind: spec.kind.clone(),
        state: WorkspaceState::Creating,
        created_at: now,
        settings_from: spec.settings_from.clone(),
        error: None,
    };
    let mut env = spec.env.clone();
    env.insert("BOSUN_AGENT_ID".into(), agent_id.to_string());
    env.insert("BOSUN_WORKSPACE".into(), path.display().to_string());
    let agent = Agent {
        session: agent_id.session(),
        id: agent_id,
        name: spec.name.clone(),
        workspace: ws_id.clone(),
        cwd: path.clone(),
        command: spec.command.clone(),
        env,
        state: SessionState::Starting,
        created_at: now,
        state_since: now,
        pid: None,
        kill_requested: false,
        error: None,
    };
    d.effect(create(&workspace));
    d.event(Event::WorkspaceCreating { workspace });
    d.event(Event::AgentCreated { agent });
    Ok(())
}

fn remove_workspace(
    state: &State,
    id: &WorkspaceId,
    force: bool,
    probe: WorkspaceProbe,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let ws = state.workspaces.get(id).ok_or_else(|| Rejection::NoSuchWorkspace(id.to_string()))?;
    match &ws.state {
        WorkspaceState::Creating | WorkspaceState::Removing { .. } => {
            return Err(Rejection::WorkspaceBusy { id: id.clone(), state: ws.state.label() })
        }
        WorkspaceState::InUse { agent } => {
            return Err(Rejection::WorkspaceInUse { id: id.clone(), agent: agent.clone() })
        }
        WorkspaceState::Dirty if !force => return Err(Rejection::WorkspaceDirty(id.clone())),
        _ if probe.dirty && !force => return Err(Rejection::WorkspaceDirty(id.clone())),
        _ => {}
    }
    let keep_branch = match (&ws.kind, probe.commits_ahead) {
        (WorkspaceKind::Worktree { branch, .. }, n) if n > 0 => Some(BranchKept { branch: branch.clone(), commits: n }),
        _ => None,
    };
    d.event(Event::WorkspaceRemoving { id: id.clone(), force, keep_branch: keep_branch.clone() });
    d.effect(remove(ws, force, keep_branch.is_none()));
    // The sessions of its dead agents were kept for `peek`; they go with the workspace.
    for a in state.agents.values().filter(|a| &a.workspace == id) {
        d.effect(Effect::KillSession { agent: a.id.clone(), session: a.session.clone() });
    }
    Ok(())
}

/// Compares the records with what the daemon found at start: adopts live sessions, buries
/// vanished ones, marks missing directories stale and resumes what a crash interrupted.
fn reconcile(state: &State, reality: &Reality, now: Timestamp, d: &mut Decision) {
    for ws in state.workspaces.values() {
        let missing = reality.missing_dirs.contains(&ws.id);
        match &ws.state {
            WorkspaceState::Creating => d.effect(create(ws)),
            WorkspaceState::Removing { force, keep_branch } => d.effect(remove(ws, *force, keep_branch.is_none())),
            WorkspaceState::Stale => {}
            _ if missing => d.event(Event::WorkspaceStale {
                id: ws.id.clone(),
                why: format!("its directory {} is gone", ws.path.display()),
            }),
            // Interrupted between the agent's death and the check of its workspace.
            WorkspaceState::InUse { agent } if state.agents.get(agent).is_none_or(|a| a.state.is_dead()) => {
                d.effect(inspect(ws))
            }
            _ => {}
        }
    }
    for agent in state.agents.values().filter(|a| !a.state.is_dead()) {
        let seen = reality.sessions.iter().find(|s| s.session == agent.session);
        match (seen, &agent.state) {
            (Some(SessionSeen { exit: Some(status), .. }), _) => {
                died(state, agent, death(agent, *status), None, now, d)
            }
            (Some(s), SessionState::Starting) => {
                d.event(Event::AgentRunning { id: agent.id.clone(), pid: s.pid, at: now });
                if agent.kill_requested {
                    d.effect(Effect::KillSession { agent: agent.id.clone(), session: agent.session.clone() });
                }
            }
            (Some(s), _) => {
                d.event(Event::AgentAdopted { id: agent.id.clone(), pid: s.pid, at: now });
                if agent.kill_requested {
                    d.effect(Effect::KillSession { agent: agent.id.clone(), session: agent.session.clone() });
                }
            }
            (None, SessionState::Starting) if !agent.kill_requested => {
                let ws_ready = state
                    .workspaces
                    .get(&agent.workspace)
                    .is_some_and(|ws| ws.state == WorkspaceState::InUse { agent: agent.id.clone() });
                if ws_ready {
                    d.effect(spawn(agent));
                }
            }
            (None, _) => died(state, agent, death(agent, ExitStatus::UNKNOWN), None, now, d),
        }
    }
    // A message whose delivery was under way may or may not have been typed: never type it twice.
    for m in state.messages.values().filter(|m| m.state == MessageState::Queued) {
        let started = state.agents.get(&m.agent).is_some_and(|a| a.state != SessionState::Starting);
        if started {
            d.event(Event::MessageFailed {
                id: m.id,
                error: "bosun restarted while delivering it; not retyped, to avoid sending it twice".into(),
            });
        }
    }
}

/// Records an agent's death, fails its undelivered messages and has its workspace checked.
fn died(state: &State, agent: &Agent, reason: DeathReason, error: Option<String>, now: Timestamp, d: &mut Decision) {
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

fn death(agent: &Agent, status: ExitStatus) -> DeathReason {
    if agent.kill_requested {
        DeathReason::Killed
    } else {
        status.reason()
    }
}

fn live_agent<'a>(state: &'a State, id: &AgentId) -> Result<&'a Agent, Rejection> {
    let a = state.agents.get(id).ok_or_else(|| Rejection::NoSuchAgent(id.to_string()))?;
    if a.state.is_dead() {
        return Err(Rejection::AgentDead { id: a.id.clone(), state: a.state.label() });
    }
    Ok(a)
}

fn live_session<'a>(state: &'a State, session: &SessionName) -> Option<&'a Agent> {
    state.agent_by_session(session).filter(|a| !a.state.is_dead())
}

fn creating<'a>(state: &'a State, id: &WorkspaceId) -> Option<&'a Workspace> {
    state.workspaces.get(id).filter(|ws| ws.state == WorkspaceState::Creating)
}

fn waiting_agent<'a>(state: &'a State, ws: &WorkspaceId) -> Option<&'a Agent> {
    state.agents.values().find(|a| &a.workspace == ws && a.state == SessionState::Starting && !a.kill_requested)
}

fn queued<'a>(state: &'a State, agent: &'a AgentId) -> impl Iterator<Item = &'a Message> {
    state.messages.values().filter(move |m| &m.agent == agent && m.state == MessageState::Queued)
}

fn create(ws: &Workspace) -> Effect {
    Effect::CreateWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        settings_from: ws.settings_from.clone(),
    }
}

fn remove(ws: &Workspace, force: bool, delete_branch: bool) -> Effect {
    Effect::RemoveWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        force,
        delete_branch,
        owned: ws.owned_files(),
    }
}

fn inspect(ws: &Workspace) -> Effect {
    Effect::InspectWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        owned: ws.owned_files(),
    }
}

fn spawn(agent: &Agent) -> Effect {
    Effect::SpawnSession {
        agent: agent.id.clone(),
        session: agent.session.clone(),
        cwd: agent.cwd.clone(),
        env: agent.env.clone(),
        command: agent.command.clone(),
    }
}

fn send(agent: &Agent, m: &Message) -> Effect {
    Effect::SendText { message: m.id, session: agent.session.clone(), text: m.text.clone() }
}
