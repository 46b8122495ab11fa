//! The workspace record and its states (seed 002): where an agent's work happens.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{AgentId, Name, Nonce, Timestamp, WorkspaceId};

/// The file a bound workspace holds its task in, excluded from git.
pub const TASK_FILE: &str = "TASK.md";

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
    /// Where its agent's repository settings are copied from (into `driver::settings_copy_to`).
    pub settings_from: Option<PathBuf>,
    /// A folder of its agent's repository settings copied in too (opencode's `.opencode/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_folder: Option<SettingsFolder>,
    /// Why the last creation or removal failed, if it did.
    pub error: Option<String>,
}

/// A folder of a client's project settings (opencode's `.opencode/`) copied into a workspace:
/// the `files` listed (relative to both), from the repository's folder `from` into the
/// workspace's `to` (relative to it), each only where the workspace has none. Listed when the
/// agent starts: regular files git does not track (a worktree has those), none through a link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsFolder {
    pub from: PathBuf,
    pub to: PathBuf,
    pub files: Vec<PathBuf>,
}

/// The kind of a workspace, and what each kind keeps; the git-based ones share their branch's
/// record (`WorkBranch`). Recorded in events as one flat object tagged `kind`, as it always was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkspaceKind {
    /// An empty directory.
    Folder,
    /// `git worktree add -b <branch> <path> <base>` in `repo`.
    Worktree(WorkBranch),
    Pool(PoolTask),
    Volume(VolumeClone),
    Pod(PodClone),
}

/// A slot of `repo`'s pool (seed 004), bound to this task by creating its branch at the commit
/// its detached HEAD is at (`base`, empty until then; no `base_ref`) and writing its `task` to
/// `TASK.md`. The slot and its path are known once it is bound; until then the task waits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolTask {
    #[serde(flatten)]
    pub git: WorkBranch,
    pub slot: Option<crate::SlotId>,
    pub task: Option<String>,
}

/// A clone of `repo` on its branch (made in `repo` at `base`), kept in the container engine's
/// named `volume` rather than on this machine's disk, and mounted at the workspace's path in
/// the agent's container. Its branch's commits are fetched back into `repo` whenever it is
/// looked at after its agent ended, and before it is removed. `image` is the agent's image, in
/// whose stopped containers the volume is filled and read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeClone {
    #[serde(flatten)]
    pub git: WorkBranch,
    pub volume: String,
    pub image: String,
}

/// A clone of `repo` in the agent's pod, on its branch (new at `base`): nothing of it but the
/// branch is on this machine. With a `remote`, the pod clones from it and its host pushes the
/// branch back there when the agent ends; without one, the branch is made here at `base`, goes
/// to the pod as a git bundle, and comes back as one, fetched fast-forward only. That save says
/// whether the work is safe (`Event::WorkSaved`). With `claim`, the clone (and the agent's
/// config) is on that claim of the pod's namespace, which outlives its pods and goes only when
/// the workspace is removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodClone {
    #[serde(flatten)]
    pub git: WorkBranch,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<PodClaim>,
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
    /// The record of its branch, if it is git-based.
    pub fn git(&self) -> Option<&WorkBranch> {
        match self {
            Self::Folder => None,
            Self::Worktree(git) => Some(git),
            Self::Pool(PoolTask { git, .. })
            | Self::Volume(VolumeClone { git, .. })
            | Self::Pod(PodClone { git, .. }) => Some(git),
        }
    }

    pub fn branch(&self) -> Option<&str> {
        self.git().map(|g| g.branch.as_str())
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Folder => "folder",
            Self::Worktree(_) => "worktree",
            Self::Pool(_) => "pool",
            Self::Volume(_) => "volume",
            Self::Pod(_) => "pod",
        }
    }

    /// Whether its work is away while its agent runs and comes back only once it ended (a pod's
    /// clone): merged before, less would be taken.
    pub fn away_while_running(&self) -> bool {
        matches!(self, Self::Pod(_))
    }

    /// Whether its work, uncommitted too, can be read back here though it is elsewhere (a
    /// volume's clone, in the engine): what it holds is then compared as a snapshot.
    pub fn read_back(&self) -> bool {
        matches!(self, Self::Volume(_))
    }

    /// Whether a look from here sees what it holds now (a volume's clone is read back); a pod's
    /// clone is known only by what its pod saved, recorded when its agent ended.
    pub fn seen_from_here(&self) -> bool {
        !matches!(self, Self::Pod(_))
    }

    /// Whether it is a directory on this machine's disk: a volume's or a pod's clone is not (its
    /// path here is only its name), so its path missing here says nothing.
    pub fn on_this_disk(&self) -> bool {
        !matches!(self, Self::Volume(_) | Self::Pod(_))
    }

    /// The commit its branch started at, if it is git-based.
    pub fn base(&self) -> Option<&str> {
        self.git().map(|g| g.base.as_str())
    }

    /// Where its branch is on this machine, for work that leaves it (a merge, a pull request):
    /// the repository, the branch, and the ref it started from when that was named. An error
    /// saying why for a folder, or a pod whose branch is on its remote.
    pub fn local_branch(&self) -> Result<(&std::path::Path, &str, Option<&str>), String> {
        match self {
            Self::Pod(PodClone { remote: Some(remote), .. }) => {
                Err(format!("its branch is on {remote}, not here: work with it there"))
            }
            Self::Folder => Err("a folder workspace has no branch".into()),
            kind => {
                let git = kind.git().ok_or("it has no branch")?;
                Ok((&git.repo, &git.branch, Some(git.base_ref.as_str()).filter(|r| !r.is_empty())))
            }
        }
    }

    /// The repository it is a worktree of, if it is one.
    pub fn repo(&self) -> Option<&std::path::Path> {
        self.git().map(|g| g.repo.as_path())
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
        if let Some(from) = &self.settings_from {
            owned.push(crate::driver::settings_copy_to(from));
        }
        if let Some(folder) = &self.settings_folder {
            owned.extend(folder.files.iter().map(|f| folder.to.join(f)));
        }
        if matches!(self.kind, WorkspaceKind::Pool(_)) {
            owned.push(PathBuf::from(TASK_FILE));
        }
        owned
    }

    pub fn branch(&self) -> Option<&str> {
        self.kind.branch()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Event;

    /// Events as bosun recorded them before the git-based kinds shared `WorkBranch`: each still
    /// decodes to what it said, and is written again as it was.
    #[test]
    fn workspace_kinds_recorded_before_still_decode_and_encode_as_they_were() {
        let kinds = [
            (r#"{"kind":"folder"}"#, WorkspaceKind::Folder),
            (
                r#"{"kind":"worktree","repo":"/r","branch":"b","base_ref":"main","base":"c0ffee"}"#,
                WorkspaceKind::Worktree(git("main", "c0ffee")),
            ),
            (
                r#"{"kind":"pool","repo":"/r","slot":"r--1","branch":"b","base":"c0ffee","task":"do it"}"#,
                WorkspaceKind::Pool(PoolTask {
                    git: git("", "c0ffee"),
                    slot: Some(crate::SlotId::new("r", 1)),
                    task: Some("do it".into()),
                }),
            ),
            (
                r#"{"kind":"pool","repo":"/r","slot":null,"branch":"b","base":"","task":null}"#,
                WorkspaceKind::Pool(PoolTask { git: git("", ""), slot: None, task: None }),
            ),
            (
                r#"{"kind":"volume","repo":"/r","branch":"b","base_ref":"HEAD","base":"c0ffee","volume":"bosun-ws-a","image":"agent:1"}"#,
                WorkspaceKind::Volume(VolumeClone {
                    git: git("HEAD", "c0ffee"),
                    volume: "bosun-ws-a".into(),
                    image: "agent:1".into(),
                }),
            ),
            (
                r#"{"kind":"pod","repo":"/r","remote":"https://git.example/r","branch":"b","base_ref":"HEAD","base":"c0ffee","claim":{"namespace":"x","name":"bosun-7-work"}}"#,
                WorkspaceKind::Pod(PodClone {
                    git: git("HEAD", "c0ffee"),
                    remote: Some("https://git.example/r".into()),
                    claim: Some(PodClaim { namespace: "x".into(), name: "bosun-7-work".into() }),
                }),
            ),
            (
                r#"{"kind":"pod","repo":"/r","branch":"b","base_ref":"HEAD","base":"c0ffee"}"#,
                WorkspaceKind::Pod(PodClone { git: git("HEAD", "c0ffee"), remote: None, claim: None }),
            ),
        ];
        for (recorded, kind) in kinds {
            let decoded: WorkspaceKind = serde_json::from_str(recorded).unwrap_or_else(|e| panic!("{recorded}: {e}"));
            assert_eq!(decoded, kind, "{recorded}");
            let again: serde_json::Value = serde_json::to_value(&decoded).unwrap();
            assert_eq!(again, serde_json::from_str::<serde_json::Value>(recorded).unwrap(), "{recorded}");
        }
        // A whole event of the log, as an older bosun wrote it.
        let line = r#"{"type":"workspace_creating","workspace":{"id":"ws-a-7","name":"a","nonce":"7","path":"/s/ws-a-7","kind":{"kind":"worktree","repo":"/r","branch":"b","base_ref":"main","base":"c0ffee"},"state":{"state":"creating"},"created_at":5,"settings_from":null,"error":null}}"#;
        let event: Event = serde_json::from_str(line).unwrap();
        let Event::WorkspaceCreating { workspace } = event else { panic!("{event:?}") };
        assert_eq!(workspace.kind.local_branch(), Ok((std::path::Path::new("/r"), "b", Some("main"))));
    }

    fn git(base_ref: &str, base: &str) -> WorkBranch {
        WorkBranch { repo: "/r".into(), branch: "b".into(), base_ref: base_ref.into(), base: base.into() }
    }
}
