//! The workspace record and its states (seed 002): where an agent's work happens.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{AgentId, Name, Nonce, Timestamp, WorkspaceId};

/// An isolated directory for one piece of work.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workspace {
    pub id: WorkspaceId,
    pub name: Name,
    pub nonce: Nonce,
    pub path: PathBuf,
    pub kind: WorkspaceKind,
    pub state: WorkspaceState,
    pub created_at: Timestamp,
    /// Where a Claude agent's repository settings are copied from into
    /// `<ws>/.claude/settings.local.json` (`driver::claude::SETTINGS_LOCAL`).
    pub settings_from: Option<PathBuf>,
    /// Why the last creation or removal failed, if it did.
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkspaceKind {
    /// An empty directory.
    Folder,
    /// `git worktree add -b <branch> <path> <base>` in `repo`.
    Worktree {
        repo: PathBuf,
        branch: String,
        /// The ref the user asked for, as typed.
        base_ref: String,
        /// The commit `base_ref` resolved to: the branch's starting point.
        base: String,
    },
}

impl WorkspaceKind {
    pub fn branch(&self) -> Option<&str> {
        match self {
            Self::Folder => None,
            Self::Worktree { branch, .. } => Some(branch),
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Folder => "folder",
            Self::Worktree { .. } => "worktree",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum WorkspaceState {
    Creating,
    Ready,
    InUse {
        agent: AgentId,
    },
    /// Holds changes that removing it would lose.
    Dirty,
    /// Its directory or branch is gone.
    Stale,
    /// Being removed; `keep_branch` is set when its branch holds commits and must stay.
    Removing {
        force: bool,
        keep_branch: Option<BranchKept>,
    },
}

impl WorkspaceState {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Creating => "creating",
            Self::Ready => "ready",
            Self::InUse { .. } => "in-use",
            Self::Dirty => "dirty",
            Self::Stale => "stale",
            Self::Removing { .. } => "removing",
        }
    }
}

/// A branch left in place when its worktree was removed, because it holds commits that are not
/// reachable from where it started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchKept {
    pub branch: String,
    pub commits: u32,
}

impl Workspace {
    /// Files bosun put in the workspace itself, which do not count as the agent's work.
    pub fn owned_files(&self) -> Vec<PathBuf> {
        match self.settings_from {
            Some(_) => vec![PathBuf::from(crate::driver::claude::SETTINGS_LOCAL)],
            None => Vec::new(),
        }
    }

    pub fn branch(&self) -> Option<&str> {
        self.kind.branch()
    }
}
