//! Starting an agent: its record, and its workspace made, or placed in its pool's line; a fork
//! starts from the conversation of the agent it forks.

use super::ground::{create, Decision};
use super::pool;
use crate::{Agent, AgentId, AgentSpec, Event, Rejection, State, Timestamp, Workspace, WorkspaceId, WorkspaceState};

/// `bosun fork`: a new agent that starts from the conversation of agent `from`.
pub(super) fn fork(
    state: &State,
    spec: &AgentSpec,
    from: &AgentId,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let o = state.agents.get(from).ok_or_else(|| Rejection::NoSuchAgent(from.to_string()))?;
    let conversation = o.driver.behaviour().conversation(o).filter(|_| o.driver.behaviour().can_fork());
    let Some(conversation) = conversation else {
        return Err(Rejection::CannotFork(format!("agent {from}'s conversation cannot be forked")));
    };
    let fork = crate::Fork { agent: o.id.clone(), conversation, transcript: o.log.clone(), said: o.said.clone() };
    start_agent(state, spec, Some(fork), now, d)
}

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
    for daily in crate::daily::over(state, spec.kind.repo()) {
        if crate::daily::left(state, &daily, now).is_none() {
            return Err(Rejection::DailyBudgetSpent { whose: daily.whose, budget: daily.budget.to_string() });
        }
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
        settings_folder: spec.settings_folder.clone(),
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
        Some(ask) => pool::place(state, workspace, ask, now, d)?,
        None => {
            d.effect(create(&workspace, false));
            d.event(Event::WorkspaceCreating { workspace });
        }
    }
    Ok(())
}
