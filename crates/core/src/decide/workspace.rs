//! Decisions about workspaces: creating one for a new agent, releasing it when the agent ends,
//! and removing it without ever losing work.

use super::ground::{create, inspect, kill, remove as remove_effect, spawn, Decision};
use super::session::died;
use crate::{
    Agent, AgentId, AgentSpec, BranchKept, DeathReason, Event, Rejection, SessionState, State, Timestamp, Workspace,
    WorkspaceId, WorkspaceKind, WorkspaceProbe, WorkspaceState,
};

pub(super) fn start_agent(
    state: &State,
    spec: &AgentSpec,
    fork: Option<crate::Fork>,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let ws_id = WorkspaceId::new(&spec.name, &spec.nonce);
    let agent_id = AgentId::new(&spec.nonce);
    if state.workspaces.contains_key(&ws_id) {
        return Err(Rejection::AlreadyExists(format!("workspace {ws_id}")));
    }
    if state.agents.contains_key(&agent_id) {
        return Err(Rejection::AlreadyExists(format!("agent {agent_id}")));
    }
    // A name that is another agent's id would make `bosun kill NAME` end that other agent.
    if let Some(other) = state.agents.values().find(|a| a.id.as_str() == spec.name.as_str()) {
        return Err(Rejection::NameIsAnId { name: spec.name.to_string(), agent: other.id.clone() });
    }
    if let Some(branch) = spec.kind.branch() {
        if let Some(other) = state.workspaces.values().find(|w| w.branch() == Some(branch)) {
            return Err(Rejection::BranchTaken { branch: branch.to_owned(), workspace: other.id.clone() });
        }
    }
    // A pool's workspace is placed at its slot's path once bound.
    let path = match spec.pool {
        Some(_) => std::path::PathBuf::new(),
        None => spec.workspaces_root.join(ws_id.as_str()),
    };
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
    let new = crate::NewAgent {
        id: agent_id.clone(),
        name: spec.name.clone(),
        workspace: ws_id,
        cwd: path,
        command: spec.command.clone(),
        env,
        inherits: spec.inherits.clone(),
        driver: spec.driver.clone(),
        policy: spec.policy.clone(),
        prompt: spec.prompt.clone(),
        dir: spec.agents_root.join(agent_id.as_str()),
        hook_command: spec.hook_command.clone(),
        step: None,
        backend: spec.runtime.backend(spec.backend),
        runtime: spec.runtime.clone(),
    };
    let mut agent = Agent::starting(new, now);
    agent.fork = fork;
    // The agent is recorded before its workspace is placed: a slot bound in this same decision
    // gives it its path (its cwd and `BOSUN_WORKSPACE`) as it does to an agent that waited.
    d.event(Event::AgentCreated { agent: Box::new(agent) });
    match &spec.pool {
        Some(ask) => super::pool::place(state, workspace, ask, now, d)?,
        None => {
            d.effect(create(&workspace, false));
            d.event(Event::WorkspaceCreating { workspace });
        }
    }
    Ok(())
}

/// `bosun pool acquire`: a pool's workspace for a script, owned by no agent or job.
pub(super) fn acquire(
    state: &State,
    ask: &crate::PoolWorkspace,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let id = WorkspaceId::new(&ask.name, &ask.nonce);
    if state.workspaces.contains_key(&id) {
        return Err(Rejection::AlreadyExists(format!("workspace {id}")));
    }
    if let Some(branch) = ask.kind.branch() {
        if let Some(other) = state.workspaces.values().find(|w| w.branch() == Some(branch)) {
            return Err(Rejection::BranchTaken { branch: branch.to_owned(), workspace: other.id.clone() });
        }
    }
    let workspace = Workspace {
        id,
        name: ask.name.clone(),
        nonce: ask.nonce.clone(),
        path: std::path::PathBuf::new(),
        kind: ask.kind.clone(),
        state: WorkspaceState::Waiting,
        created_at: now,
        settings_from: None,
        error: None,
    };
    super::pool::place(state, workspace, &ask.ask, now, d)
}

pub(super) fn created(state: &State, id: &WorkspaceId, now: Timestamp, d: &mut Decision) {
    if creating(state, id).is_none() {
        return;
    }
    d.event(Event::WorkspaceReady { id: id.clone(), at: now });
    super::job::workspace_ready(state, id, now, d);
    let waiting =
        state.agents.values().find(|a| &a.workspace == id && a.state == SessionState::Starting && !a.kill_requested);
    if let Some(agent) = waiting {
        d.event(Event::WorkspaceInUse { id: id.clone(), agent: agent.id.clone() });
        d.effect(spawn(agent, None));
    }
    // Killed while its workspace was being made: it never starts, and is dead now.
    let killed = state.agents.values().filter(|a| &a.workspace == id && a.state == SessionState::Starting);
    for agent in killed.filter(|a| a.kill_requested) {
        died(state, agent, DeathReason::Killed, None, now, d);
    }
}

/// Creation failed: whatever part of it was made stays recorded (as Stale, with the error) so
/// `bosun workspace rm` can clean it up; a record with nothing behind it goes. Its agent never
/// starts.
pub(super) fn create_failed(
    state: &State,
    id: &WorkspaceId,
    error: &str,
    nothing_left: bool,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(ws) = creating(state, id) else { return };
    d.event(Event::WorkspaceCreateFailed { id: id.clone(), error: error.to_owned() });
    super::job::workspace_failed(state, id, error, now, d);
    for agent in state.agents.values().filter(|a| &a.workspace == id && !a.state.is_dead()) {
        let error = Some(format!("workspace could not be created: {error}"));
        died(state, agent, DeathReason::FailedToStart, error, now, d);
    }
    // A pool's workspace holds its slot until released.
    if nothing_left && !matches!(ws.kind, WorkspaceKind::Pool { .. }) {
        d.event(Event::WorkspaceRemoved { id: id.clone(), branch_kept: None });
    }
}

/// The workspace of an agent (or job) that ended was checked; `None` means it could not be,
/// which counts as dirty: never lose work. A pool's workspace whose task is over goes back to
/// its pool when it holds no uncommitted work.
pub(super) fn inspected(
    state: &State,
    id: &WorkspaceId,
    dirty: Option<bool>,
    ahead: u32,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(ws) = state.workspaces.get(id) else { return };
    let in_use_by_dead = match &ws.state {
        WorkspaceState::InUse { agent } => state.agents.get(agent).is_none_or(|a| a.state.is_dead()),
        _ => false,
    };
    let pooled = matches!(ws.kind, WorkspaceKind::Pool { .. });
    let idle = in_use_by_dead || ws.state == WorkspaceState::Ready;
    if pooled && idle && dirty == Some(false) && super::pool::task_over(state, id) {
        super::pool::release(state, ws, ahead, false, false, now, d);
    } else if in_use_by_dead {
        d.event(Event::WorkspaceReleased { id: id.clone(), dirty: dirty.unwrap_or(true) });
    }
}

pub(super) fn remove(
    state: &State,
    id: &WorkspaceId,
    force: bool,
    probe: WorkspaceProbe,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let ws = state.workspaces.get(id).ok_or_else(|| Rejection::NoSuchWorkspace(id.to_string()))?;
    // A pool's workspace goes back to its pool, which keeps the worktree.
    if let WorkspaceKind::Pool { slot: Some(slot), .. } = &ws.kind {
        return super::pool::release_request(state, slot, force, false, probe, now, d);
    }
    match &ws.state {
        WorkspaceState::Waiting | WorkspaceState::Creating | WorkspaceState::Removing { .. } => {
            return Err(Rejection::WorkspaceBusy { id: id.clone(), state: ws.state.label() })
        }
        WorkspaceState::InUse { agent } => {
            return Err(Rejection::WorkspaceInUse { id: id.clone(), agent: agent.clone() })
        }
        // What the probe finds now decides, not the mark left when its agent ended: work a
        // person committed since is no longer at risk. Where no look reaches, the mark stands.
        WorkspaceState::Dirty if !force && !ws.kind.seen_from_here() => {
            return Err(Rejection::WorkspaceDirty(id.clone()))
        }
        _ if probe.dirty && !force => return Err(Rejection::WorkspaceDirty(id.clone())),
        _ => {}
    }
    if let Some(job) = state.jobs.values().find(|j| j.workspace.as_ref() == Some(id) && !j.state.is_over()) {
        return Err(Rejection::WorkspaceOfJob { id: id.clone(), job: job.spec.id.clone() });
    }
    if let Some(live) = state.agents.values().find(|a| &a.workspace == id && !a.state.is_dead()) {
        return Err(Rejection::WorkspaceInUse { id: id.clone(), agent: live.id.clone() });
    }
    let keep_branch = match (&ws.kind, probe.commits_ahead) {
        (
            WorkspaceKind::Worktree { branch, .. }
            | WorkspaceKind::Volume { branch, .. }
            // With no remote, its branch is here, where its pods' work came back to.
            | WorkspaceKind::Pod { remote: None, branch, .. },
            n,
        ) if n > 0 => {
            Some(BranchKept { branch: branch.clone(), commits: n })
        }
        _ => None,
    };
    d.event(Event::WorkspaceRemoving { id: id.clone(), force, keep_branch: keep_branch.clone() });
    d.effect(remove_effect(state, ws, force, keep_branch.is_none()));
    // The sessions of its (dead) agents were kept for `peek`; they go with the workspace.
    for a in state.agents.values().filter(|a| &a.workspace == id) {
        d.effect(kill(a));
    }
    Ok(())
}

pub(super) fn removed(state: &State, id: &WorkspaceId, d: &mut Decision) {
    if let Some(WorkspaceState::Removing { keep_branch, .. }) = state.workspaces.get(id).map(|w| &w.state) {
        d.event(Event::WorkspaceRemoved { id: id.clone(), branch_kept: keep_branch.clone() });
    }
}

pub(super) fn remove_failed(state: &State, id: &WorkspaceId, error: &str, dirty: bool, d: &mut Decision) {
    if state.workspaces.get(id).is_some_and(|ws| matches!(ws.state, WorkspaceState::Removing { .. })) {
        d.event(Event::WorkspaceRemoveFailed { id: id.clone(), error: error.to_owned(), dirty });
    }
}

pub(super) fn inspect_if_released(state: &State, ws: &Workspace, d: &mut Decision) {
    if let WorkspaceState::InUse { agent } = &ws.state {
        if state.agents.get(agent).is_none_or(|a| a.state.is_dead()) {
            d.effect(inspect(ws));
        }
    }
}

fn creating<'a>(state: &'a State, id: &WorkspaceId) -> Option<&'a Workspace> {
    state.workspaces.get(id).filter(|ws| ws.state == WorkspaceState::Creating)
}
