//! `Event`: the durable facts bosun records. Each is appended to the log before anyone hears
//! of it, and folded into `State` by `apply` exactly once.

use serde::{Deserialize, Serialize};

use crate::{Agent, AgentId, BranchKept, DeathReason, Message, MessageId, Timestamp, Workspace, WorkspaceId};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    WorkspaceCreating {
        workspace: Workspace,
    },
    WorkspaceReady {
        id: WorkspaceId,
        at: Timestamp,
    },
    /// Creation failed; what part of it was made stays recorded, as Stale.
    WorkspaceCreateFailed {
        id: WorkspaceId,
        error: String,
    },
    WorkspaceInUse {
        id: WorkspaceId,
        agent: AgentId,
    },
    WorkspaceReleased {
        id: WorkspaceId,
        dirty: bool,
    },
    WorkspaceStale {
        id: WorkspaceId,
        why: String,
    },
    WorkspaceRemoving {
        id: WorkspaceId,
        force: bool,
        keep_branch: Option<BranchKept>,
    },
    WorkspaceRemoved {
        id: WorkspaceId,
        branch_kept: Option<BranchKept>,
    },
    WorkspaceRemoveFailed {
        id: WorkspaceId,
        error: String,
        dirty: bool,
    },
    AgentCreated {
        agent: Agent,
    },
    AgentRunning {
        id: AgentId,
        pid: Option<u32>,
        at: Timestamp,
    },
    /// Found alive again after a daemon restart.
    AgentAdopted {
        id: AgentId,
        pid: Option<u32>,
        at: Timestamp,
    },
    AgentKillRequested {
        id: AgentId,
    },
    AgentKillFailed {
        id: AgentId,
        error: String,
    },
    AgentDied {
        id: AgentId,
        reason: DeathReason,
        at: Timestamp,
        error: Option<String>,
    },
    MessageQueued {
        message: Message,
    },
    MessageDelivered {
        id: MessageId,
    },
    MessageFailed {
        id: MessageId,
        error: String,
    },
}
