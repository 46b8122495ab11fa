//! What a merge owes once its branch is merged, and what became of it: `bosun merge` records
//! the merge (`WorkMerged`) with the agents it ends; the core ends them and, once none of them
//! lives, removes the workspace (a pool's is released), its branch deleted only when the target
//! holds all of it. The record says what is still owed, so a daemon killed between those steps
//! takes them up again, and what came of it, so the command is answered from it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{AgentId, BranchKept, Event, Merged, Workspace, WorkspaceId};

/// A merge, and what followed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Merge {
    pub merged: Merged,
    /// The agents of its workspace that lived when it was merged: ended by it.
    pub ended: Vec<AgentId>,
    /// Its workspace's directory (a pool's slot is kept, reset, for the next task).
    pub path: PathBuf,
    /// What became of its workspace; none while its agents end and it is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<MergeOutcome>,
}

/// What became of a merged workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MergeOutcome {
    /// Removed (a pool's released), its branch kept when the target lacks some of it.
    Removed { branch_kept: Option<BranchKept> },
    /// Kept, and why: it holds work not committed, or its removal failed.
    Kept { why: String },
}

impl Merge {
    /// Whether its workspace is still to be removed.
    pub fn pending(&self) -> bool {
        self.outcome.is_none()
    }
}

/// The merges by workspace (`State::merges`).
pub type Merges = BTreeMap<WorkspaceId, Merge>;

/// Folds what an event says of a merge into `merges`: a merge recorded, its workspace removed
/// or kept. (A merge recorded by a version whose daemon ended its agents itself owes nothing.)
pub(crate) fn follow(merges: &mut Merges, workspaces: &BTreeMap<WorkspaceId, Workspace>, event: &Event) {
    let (id, outcome) = match event {
        Event::WorkMerged { workspace, merged, ending: Some(ended) } => {
            let path = workspaces.get(workspace).map(|w| w.path.clone()).unwrap_or_default();
            let merge = Merge { merged: merged.clone(), ended: ended.clone(), path, outcome: None };
            merges.insert(workspace.clone(), merge);
            return;
        }
        Event::MergedWorkKept { workspace, why } => (workspace, MergeOutcome::Kept { why: why.clone() }),
        Event::WorkspaceRemoved { id, branch_kept } => (id, MergeOutcome::Removed { branch_kept: branch_kept.clone() }),
        Event::WorkspaceRemoveFailed { id, error, .. } => (id, MergeOutcome::Kept { why: error.clone() }),
        _ => return,
    };
    if let Some(m) = merges.get_mut(id).filter(|m| m.pending()) {
        m.outcome = Some(outcome);
    }
}
