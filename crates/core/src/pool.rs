//! Workspace pools (seed 004): per repository, worktrees `<project>--<n>` kept at a detached
//! base and handed to one task at a time — bound by creating the task's branch in one, reset
//! (fetch, reset to the base, clean) when released, never deleted between tasks. Tasks that
//! find none available wait, first come first served.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{SlotId, Timestamp, WorkspaceId};

/// How many workspaces a pool keeps when nobody said.
pub const DEFAULT_POOL_SIZE: u32 = 2;

/// Where a pool's workspaces start from, as found when it was made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolBase {
    /// What they are reset to: the remote's default branch (`origin/main`) when there is a
    /// remote, else the repository's default branch.
    pub base_ref: String,
    /// The remote fetched before each reset, when there is one.
    pub remote: Option<String>,
}

/// What a pool is asked for with: by `bosun pool init`, or by the first task that needs one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolSpec {
    /// The repository's top directory.
    pub repo: PathBuf,
    /// The project's name, from the repository's directory (made unique among pools by the core).
    pub project: String,
    pub size: u32,
    pub base: PoolBase,
    /// Where its workspaces live (`<state>/workspaces`).
    pub root: PathBuf,
    /// Run once in each workspace when it is made (`npm ci`), not per task.
    pub setup: Option<String>,
}

/// A task's ask for a pool's workspace: the pool (made when the repository has none yet) and
/// whether the task waits for a slot when all are taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolAsk {
    pub spec: PoolSpec,
    pub wait: bool,
}

/// A pool's workspace asked for by a script (`bosun pool acquire`), owned by no agent or job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolWorkspace {
    pub name: crate::Name,
    pub nonce: crate::Nonce,
    /// `WorkspaceKind::Pool`.
    pub kind: crate::WorkspaceKind,
    pub ask: PoolAsk,
}

/// A repository's pool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pool {
    pub project: String,
    pub repo: PathBuf,
    /// How many workspaces it keeps.
    pub size: u32,
    pub base: PoolBase,
    pub root: PathBuf,
    pub setup: Option<String>,
    /// By number (a list in JSON, each slot's number in its id).
    #[serde(with = "by_number")]
    pub slots: BTreeMap<u32, Slot>,
    /// Workspaces of tasks waiting for one of its slots, first come first.
    pub waiting: VecDeque<WorkspaceId>,
    pub created_at: Timestamp,
}

/// One of a pool's worktrees.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub id: SlotId,
    pub path: PathBuf,
    pub state: SlotState,
    /// The commit its detached HEAD is at, once made or reset.
    pub commit: Option<String>,
    pub created_at: Timestamp,
    pub state_since: Timestamp,
    /// Why its last creation, reset or removal failed.
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SlotState {
    Creating,
    Available,
    /// Handed to a task: the workspace record of that task.
    Bound {
        workspace: WorkspaceId,
    },
    /// Being fetched, reset and cleaned after its task; `pristine` cleans ignored files too.
    Resetting {
        pristine: bool,
        force: bool,
        delete_branch: Option<String>,
    },
    /// Holds work no task owns (found so at a restart, or a reset refused): never handed out.
    Dirty,
    /// Its directory is gone.
    Missing,
    Removing {
        force: bool,
    },
}

impl SlotState {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Creating => "creating",
            Self::Available => "available",
            Self::Bound { .. } => "bound",
            Self::Resetting { .. } => "resetting",
            Self::Dirty => "dirty",
            Self::Missing => "missing",
            Self::Removing { .. } => "removing",
        }
    }
}

impl Pool {
    /// The slot `id` names, if it is this pool's.
    pub fn slot(&self, id: &SlotId) -> Option<&Slot> {
        self.slots.values().find(|s| &s.id == id)
    }

    /// Its first available slot.
    pub fn available(&self) -> Option<&Slot> {
        self.slots.values().find(|s| s.state == SlotState::Available)
    }

    /// The slots that count towards its size (all but those being removed).
    pub fn kept(&self) -> usize {
        self.slots.values().filter(|s| !matches!(s.state, SlotState::Removing { .. })).count()
    }

    /// The lowest number no slot has.
    pub fn free_number(&self) -> u32 {
        (1..).find(|n| !self.slots.contains_key(n)).unwrap_or(u32::MAX)
    }
}

/// What returning a slot to its base asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotReset {
    pub repo: PathBuf,
    pub path: PathBuf,
    pub base: PoolBase,
    /// Clean ignored files too (build output), not only untracked ones.
    pub pristine: bool,
    /// Reset even when it holds uncommitted or untracked work.
    pub force: bool,
    /// The task's branch, deleted once the slot has left it (it holds no commit of its own).
    pub delete_branch: Option<String>,
    /// The pool's setup, run again after a pristine clean (which also removed what it made and
    /// the files `.worktreeinclude` copied, copied again too).
    #[serde(default)]
    pub setup: Option<String>,
}

/// A slot as found at a restart.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotProbe {
    pub exists: bool,
    /// It holds uncommitted or untracked files besides the task file.
    pub dirty: bool,
    /// The commit its HEAD is at.
    pub head: Option<String>,
}

/// The task's workspace as bound to `slot`: made at the slot's path, its branch starting at the
/// commit the slot is at.
pub fn bind(ws: &mut crate::Workspace, slot: &Slot) {
    ws.path = slot.path.clone();
    ws.state = crate::WorkspaceState::Creating;
    if let crate::WorkspaceKind::Pool(crate::PoolTask { git: crate::WorkBranch { base, .. }, slot: bound, .. }) =
        &mut ws.kind
    {
        *bound = Some(slot.id.clone());
        *base = slot.commit.clone().unwrap_or_default();
    }
}

/// A pool's slots as a JSON list, read back by the number in each one's id (JSON object keys
/// are text, which not every reader takes as a number).
mod by_number {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Slot;

    pub fn serialize<S: Serializer>(slots: &BTreeMap<u32, Slot>, s: S) -> Result<S::Ok, S::Error> {
        let list: Vec<&Slot> = slots.values().collect();
        list.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<u32, Slot>, D::Error> {
        let list = Vec::<Slot>::deserialize(d)?;
        let numbered = list.into_iter().map(|slot| {
            let n = slot.id.parts().map(|(_, n)| n);
            n.map(|n| (n, slot)).ok_or_else(|| serde::de::Error::custom("a pool slot's id has no number"))
        });
        numbered.collect()
    }
}
