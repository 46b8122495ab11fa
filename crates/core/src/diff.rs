//! `WorkDiff`: what an agent's or job's workspace changed against the commit it started at —
//! committed, not committed and not yet tracked alike — as files with their kind of change and
//! line counts, and, when asked, the patch. `bosun diff` prints it; the dashboard's workspace
//! view lists the same files.

use serde::{Deserialize, Serialize};

use crate::WorkspaceId;

/// The most of a patch carried; the rest is cut, and `truncated` says so.
pub const PATCH_MOST: usize = 8 * 1024 * 1024;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkDiff {
    pub workspace: WorkspaceId,
    /// The commit it is compared with.
    pub base: String,
    pub branch: Option<String>,
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
