//! `State`: everything bosun knows, as folded from the event log, and `apply`, the fold.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{
    Agent, AgentId, Event, Message, MessageId, MessageState, Rejection, SessionName, SessionState, Workspace,
    WorkspaceId, WorkspaceState,
};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// How many events have been applied.
    #[serde(default)]
    pub seq: u64,
    pub workspaces: BTreeMap<WorkspaceId, Workspace>,
    pub agents: BTreeMap<AgentId, Agent>,
    pub messages: BTreeMap<MessageId, Message>,
}

/// Folds one event into the state. Never fails: an event about a record that is gone changes
/// nothing.
pub fn apply(state: &mut State, event: &Event) {
    state.seq += 1;
    let seq = state.seq;
    match event {
        Event::WorkspaceCreating { workspace } => {
            state.workspaces.insert(workspace.id.clone(), workspace.clone());
        }
        Event::WorkspaceReady { id, .. } => set_ws(state, id, WorkspaceState::Ready),
        Event::WorkspaceRemoved { id, .. } => {
            state.workspaces.remove(id);
        }
        Event::WorkspaceCreateFailed { id, error } => {
            if let Some(ws) = state.workspaces.get_mut(id) {
                ws.state = WorkspaceState::Stale;
                ws.error = Some(error.clone());
            }
        }
        Event::WorkspaceInUse { id, agent } => set_ws(state, id, WorkspaceState::InUse { agent: agent.clone() }),
        Event::WorkspaceReleased { id, dirty } => set_ws(state, id, released(*dirty)),
        Event::WorkspaceStale { id, why } => {
            if let Some(ws) = state.workspaces.get_mut(id) {
                ws.state = WorkspaceState::Stale;
                ws.error = Some(why.clone());
            }
        }
        Event::WorkspaceRemoving { id, force, keep_branch } => {
            set_ws(state, id, WorkspaceState::Removing { force: *force, keep_branch: keep_branch.clone() })
        }
        Event::WorkspaceRemoveFailed { id, error, dirty } => {
            if let Some(ws) = state.workspaces.get_mut(id) {
                ws.state = released(*dirty);
                ws.error = Some(error.clone());
            }
        }
        Event::AgentCreated { agent } => {
            state.agents.insert(agent.id.clone(), agent.clone());
        }
        Event::AgentRunning { id, pid, at } | Event::AgentAdopted { id, pid, at } => {
            if let Some(agent) = state.agents.get_mut(id) {
                if agent.state != SessionState::Running {
                    agent.state = SessionState::Running;
                    agent.state_since = *at;
                    agent.state_seq = seq;
                }
                agent.pid = *pid;
            }
        }
        Event::AgentKillFailed { id, error } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.error = Some(format!("kill failed: {error}"));
            }
        }
        Event::AgentKillRequested { id } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.kill_requested = true;
            }
        }
        Event::AgentDied { id, reason, at, error } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.state = SessionState::Dead { reason: reason.clone() };
                agent.state_since = *at;
                agent.state_seq = seq;
                if error.is_some() {
                    agent.error = error.clone();
                }
            }
        }
        Event::MessageQueued { message } => {
            state.messages.insert(message.id, message.clone());
        }
        Event::MessageDelivered { id } => set_msg(state, *id, MessageState::Delivered),
        Event::MessageFailed { id, error } => set_msg(state, *id, MessageState::Failed { error: error.clone() }),
    }
}

fn released(dirty: bool) -> WorkspaceState {
    if dirty {
        WorkspaceState::Dirty
    } else {
        WorkspaceState::Ready
    }
}

fn set_ws(state: &mut State, id: &WorkspaceId, new: WorkspaceState) {
    if let Some(ws) = state.workspaces.get_mut(id) {
        ws.state = new;
    }
}

fn set_msg(state: &mut State, id: MessageId, new: MessageState) {
    if let Some(m) = state.messages.get_mut(&id) {
        m.state = new;
    }
}

impl State {
    /// The agent whose id is `query` or starts with it, or whose name is exactly `query`.
    pub fn find_agent(&self, query: &str) -> Result<&Agent, Rejection> {
        if let Some(a) = self.agents.values().find(|a| a.id.as_str() == query) {
            return Ok(a);
        }
        let matches: Vec<&Agent> =
            self.agents.values().filter(|a| a.id.as_str().starts_with(query) || a.name.as_str() == query).collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(Rejection::NoSuchAgent(query.to_owned())),
            many => Err(Rejection::AmbiguousAgent {
                query: query.to_owned(),
                matches: many.iter().map(|a| a.id.to_string()).collect(),
            }),
        }
    }

    /// The workspace whose id (`ws-<name>-<nonce>`) or nonce starts with `query`.
    pub fn find_workspace(&self, query: &str) -> Result<&Workspace, Rejection> {
        if let Some(w) = self.workspaces.values().find(|w| w.id.as_str() == query) {
            return Ok(w);
        }
        let matches: Vec<&Workspace> = self
            .workspaces
            .values()
            .filter(|w| w.id.as_str().starts_with(query) || w.nonce.as_str().starts_with(query))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(Rejection::NoSuchWorkspace(query.to_owned())),
            many => Err(Rejection::AmbiguousWorkspace {
                query: query.to_owned(),
                matches: many.iter().map(|w| w.id.to_string()).collect(),
            }),
        }
    }

    pub fn agent_by_session(&self, session: &SessionName) -> Option<&Agent> {
        self.agents.values().find(|a| &a.session == session)
    }

    /// Workspaces `bosun workspace prune` may remove: nothing runs in them and they hold no
    /// changes (or their directory is already gone).
    pub fn prunable(&self) -> Vec<WorkspaceId> {
        self.workspaces
            .values()
            .filter(|w| matches!(w.state, WorkspaceState::Ready | WorkspaceState::Stale))
            .map(|w| w.id.clone())
            .collect()
    }

    pub fn next_message_id(&self) -> MessageId {
        MessageId(self.messages.keys().next_back().map_or(1, |m| m.0 + 1))
    }
}
