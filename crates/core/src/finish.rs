//! Finishing an agent's work. `WorkDiff`: what an agent's or job's workspace changed against the
//! commit it started at — committed, not committed and not yet tracked alike — as files with
//! their kind of change and line counts, and, when asked, the patch (`bosun diff`). `Merged`:
//! what `bosun merge` did. `PullRequest`: the one `bosun pr` opened for its branch.

use serde::{Deserialize, Serialize};

use crate::{Timestamp, WorkspaceId};

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
