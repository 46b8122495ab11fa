//! Finishing an agent's work. `WorkDiff`: what an agent's or job's workspace changed against the
//! commit it started at — committed, not committed and not yet tracked alike — as files with
//! their kind of change and line counts, and, when asked, the patch (`bosun diff`). `Merged`:
//! what `bosun merge` did. `PullRequest`: the one `bosun pr` opened for its branch. `Fork`:
//! where `bosun fork` puts a fork of an agent.

use serde::{Deserialize, Serialize};

use crate::{Runtime, Timestamp, WorkspaceId, WorkspaceKind};

/// The workspace a fork of an agent gets: a worktree of its own, or a volume of its own when its
/// agent's clone is in one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkInto {
    Worktree,
    Volume,
}

/// Where a fork of an agent that works in `kind` under `runtime` goes: its workspace, and the
/// runtime it runs on (its agent's: the same image, limits and network, but a volume of its own
/// made anew). Refused, saying why, where its work is not here to start from (a pod's, a
/// folder's).
pub fn fork_into(kind: &WorkspaceKind, runtime: &Runtime) -> Result<(ForkInto, Runtime), String> {
    let into = match (kind, runtime) {
        (WorkspaceKind::Pod { .. }, _) | (_, Runtime::K8s(_)) => {
            return Err("it runs in a pod, whose work and conversation are in the cluster: fork it once it ended \
                        (its branch comes back), with `bosun agent start --ref BRANCH`"
                .into())
        }
        (WorkspaceKind::Worktree { .. } | WorkspaceKind::Pool { .. }, _) => ForkInto::Worktree,
        (WorkspaceKind::Volume { .. }, Runtime::Docker(_)) => ForkInto::Volume,
        (kind, _) => {
            return Err(format!(
                "it works in a {} workspace: only a worktree's, a pool's or a volume's is forked",
                kind.label()
            ))
        }
    };
    let mut runtime = runtime.clone();
    if let Runtime::Docker(container) = &mut runtime {
        container.volume = None;
    }
    Ok((into, runtime))
}

/// The most of a patch carried; the rest is cut, and `truncated` says so.
pub const PATCH_MOST: usize = 8 * 1024 * 1024;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkDiff {
    pub workspace: WorkspaceId,
    /// The commit it is compared with.
    pub base: String,
    pub branch: Option<String>,
    /// Commits on its branch since the base.
    #[serde(default)]
    pub commits: u32,
    pub files: Vec<FileChange>,
    /// The patch, when asked for (coloured when asked so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// The patch was cut at `PATCH_MOST`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub change: Change,
    /// Lines added and removed; none for a binary file.
    pub added: Option<u32>,
    pub removed: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    Added,
    Modified,
    Deleted,
    Renamed {
        from: String,
    },
    /// Its type changed (a file became a link, say).
    TypeChanged,
}

impl Change {
    /// One letter, as `git status --short` says it.
    pub fn letter(&self) -> char {
        match self {
            Self::Added => 'A',
            Self::Modified => 'M',
            Self::Deleted => 'D',
            Self::Renamed { .. } => 'R',
            Self::TypeChanged => 'T',
        }
    }
}

impl WorkDiff {
    /// Lines added and removed in all.
    pub fn totals(&self) -> (u32, u32) {
        self.files.iter().fold((0, 0), |(a, r), f| (a + f.added.unwrap_or(0), r + f.removed.unwrap_or(0)))
    }
}

/// How an agent's branch goes into another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeHow {
    /// A fast-forward when it can be, else a merge commit.
    #[default]
    Merge,
    /// One new commit with all its changes; the branch itself is not merged.
    Squash,
    /// Its commits replayed on the target, which then moves to them.
    Rebase,
}

impl MergeHow {
    pub fn label(self) -> &'static str {
        match self {
            Self::Merge => "merge",
            Self::Squash => "squash",
            Self::Rebase => "rebase",
        }
    }
}

/// What a merge did: the target's new commit, and whether the branch is now all in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Merged {
    pub into: String,
    pub branch: String,
    pub how: MergeHow,
    pub commit: String,
    /// The target held it all already: nothing moved.
    pub already: bool,
    /// A fast-forward: no new commit.
    pub fast_forward: bool,
    /// Every commit of the branch is in the target now (not after a squash).
    pub branch_merged: bool,
}

/// A pull request opened for a workspace's branch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub url: String,
    pub branch: String,
    pub into: String,
    pub draft: bool,
    pub at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Container, Pod};

    #[test]
    fn a_fork_goes_where_its_agent_works_in_a_volume_of_its_own_and_never_from_a_pod_or_a_folder() {
        let worktree = WorkspaceKind::Worktree {
            repo: "/r".into(),
            branch: "b".into(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
        };
        let sandbox = Runtime::Sandbox { network: false };
        assert_eq!(fork_into(&worktree, &sandbox), Ok((ForkInto::Worktree, sandbox.clone())));
        let container = Container {
            image: "agent:1".into(),
            cpus_milli: Some(1500),
            memory_bytes: None,
            network: true,
            volume: Some("bosun-ws-a".into()),
        };
        let volume = WorkspaceKind::Volume {
            repo: "/r".into(),
            branch: "b".into(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
            volume: "bosun-ws-a".into(),
            image: "agent:1".into(),
        };
        let (into, runtime) = fork_into(&volume, &Runtime::Docker(container.clone())).unwrap();
        assert_eq!(into, ForkInto::Volume);
        assert_eq!(runtime, Runtime::Docker(Container { volume: None, ..container }), "a volume of its own, made anew");
        let pod = fork_into(&worktree, &Runtime::K8s(Pod::new("default", "agent:1")));
        assert!(pod.is_err_and(|why| why.contains("pod") && why.contains("--ref")));
        let folder = fork_into(&WorkspaceKind::Folder, &Runtime::Local);
        assert!(folder.is_err_and(|why| why.contains("folder")));
    }
}
