//! The workspace record and its states (seed 002): where an agent's work happens.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{AgentId, Name, Nonce, Timestamp, WorkspaceId};

/// The file a bound workspace holds its task in, excluded from git.
pub const TASK_FILE: &str = "TASK.md";

/// Where `REPO_SETTINGS` is copied to in the workspace: Claude reads it as the project's local
/// settings, and git ignores it, so the copy is not the agent's work.
pub const SETTINGS_LOCAL: &str = ".claude/settings.local.json";

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
    /// `<ws>/.claude/settings.local.json` (`SETTINGS_LOCAL`).
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
    /// A slot of `repo`'s pool (seed 004), bound to this task by creating `branch` at the commit
    /// its detached HEAD is at (`base`) and writing its `task` to `TASK.md`. The slot and its
    /// path are known once it is bound; until then the task waits.
    Pool { repo: PathBuf, slot: Option<crate::SlotId>, branch: String, base: String, task: Option<String> },
    /// A clone of `repo` on `branch` (made in `repo` at `base`), kept in the container engine's
    /// named `volume` rather than on this machine's disk, and mounted at the workspace's path in
    /// the agent's container. Its branch's commits are fetched back into `repo` whenever it is
    /// looked at after its agent ended, and before it is removed. `image` is the agent's image,
    /// in whose stopped containers the volume is filled and read.
    Volume { repo: PathBuf, branch: String, base_ref: String, base: String, volume: String, image: String },
    /// A clone of `repo` in the agent's pod, on `branch` (new at `base`): nothing of it but the
    /// branch is on this machine. With a `remote`, the pod clones from it and its host pushes the
    /// branch back there when the agent ends; without one, `branch` is made here at `base`, goes
    /// to the pod as a git bundle, and comes back as one, fetched fast-forward only. That save
    /// says whether the work is safe (`Event::WorkSaved`). With `claim`, the clone (and the
    /// agent's config) is on that claim of the pod's namespace, which outlives its pods and goes
    /// only when the workspace is removed.
    Pod {
        repo: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        remote: Option<String>,
        branch: String,
        base_ref: String,
        base: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        claim: Option<PodClaim>,
    },
}

/// The branch a git-based workspace works on: made new in `repo` at `base`, the commit
/// `base_ref` (the ref asked for, as typed; none for a pool's) resolved to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkBranch {
    pub repo: PathBuf,
    pub branch: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub base_ref: String,
    pub base: String,
}

/// A `PersistentVolumeClaim` that holds a pod workspace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PodClaim {
    pub namespace: String,
    pub name: String,
}

impl WorkspaceKind {
    pub fn branch(&self) -> Option<&str> {
        match self {
            Self::Folder => None,
            Self::Worktree { branch, .. }
            | Self::Pool { branch, .. }
            | Self::Volume { branch, .. }
            | Self::Pod { branch, .. } => Some(branch),
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Folder => "folder",
            Self::Worktree { .. } => "worktree",
            Self::Pool { .. } => "pool",
            Self::Volume { .. } => "volume",
            Self::Pod { .. } => "pod",
        }
    }

    /// Whether its work is away while its agent runs and comes back only once it ended (a pod's
    /// clone): merged before, less would be taken.
    pub fn away_while_running(&self) -> bool {
        matches!(self, Self::Pod { .. })
    }

    /// Whether its work, uncommitted too, can be read back here though it is elsewhere (a
    /// volume's clone, in the engine): what it holds is then compared as a snapshot.
    pub fn read_back(&self) -> bool {
        matches!(self, Self::Volume { .. })
    }

    /// Whether a look from here sees what it holds now (a volume's clone is read back); a pod's
    /// clone is known only by what its pod saved, recorded when its agent ended.
    pub fn seen_from_here(&self) -> bool {
        !matches!(self, Self::Pod { .. })
    }

    /// Whether it is a directory on this machine's disk: a volume's or a pod's clone is not (its
    /// path here is only its name), so its path missing here says nothing.
    pub fn on_this_disk(&self) -> bool {
        !matches!(self, Self::Volume { .. } | Self::Pod { .. })
    }

    /// The commit its branch started at, if it is a worktree.
    pub fn base(&self) -> Option<&str> {
        match self {
            Self::Folder => None,
            Self::Worktree { base, .. }
            | Self::Pool { base, .. }
            | Self::Volume { base, .. }
            | Self::Pod { base, .. } => Some(base),
        }
    }

    /// Where its branch is on this machine, for work that leaves it (a merge, a pull request):
    /// the repository, the branch, and the ref it started from when that was named. An error
    /// saying why for a folder, or a pod whose branch is on its remote.
    pub fn local_branch(&self) -> Result<(&std::path::Path, &str, Option<&str>), String> {
        match self {
            Self::Worktree { repo, branch, base_ref, .. }
            | Self::Volume { repo, branch, base_ref, .. }
            | Self::Pod { repo, branch, base_ref, remote: None, .. } => Ok((repo, branch, Some(base_ref))),
            Self::Pool { repo, branch, .. } => Ok((repo, branch, None)),
            Self::Pod { remote: Some(remote), .. } => {
                Err(format!("its branch is on {remote}, not here: work with it there"))
            }
            Self::Folder => Err("a folder workspace has no branch".into()),
        }
    }

    /// The repository it is a worktree of, if it is one.
    pub fn repo(&self) -> Option<&std::path::Path> {
        match self {
            Self::Folder => None,
            Self::Worktree { repo, .. }
            | Self::Pool { repo, .. }
            | Self::Volume { repo, .. }
            | Self::Pod { repo, .. } => Some(repo),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum WorkspaceState {
    /// A pool's task waiting for one of its slots.
    Waiting,
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
    /// Whether its directory has been made and is there to work in.
    pub fn is_made(&self) -> bool {
        matches!(self, Self::Ready | Self::InUse { .. } | Self::Dirty)
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
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
        let mut owned = Vec::new();
        if self.settings_from.is_some() {
            owned.push(PathBuf::from(SETTINGS_LOCAL));
        }
        if matches!(self.kind, WorkspaceKind::Pool { .. }) {
            owned.push(PathBuf::from(TASK_FILE));
        }
        owned
    }

    pub fn branch(&self) -> Option<&str> {
        self.kind.branch()
    }
}
