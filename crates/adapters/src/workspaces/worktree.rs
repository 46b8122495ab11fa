//! `WorktreeBackend`: a workspace that is a git worktree on its own branch, added and removed
//! with `git worktree` one at a time per repository.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::git::{branch_exists, command_error, git, output, run, stderr_text};
use super::{canonical, clear_owned, copy_settings, create_dir_all, exists, status_dirty, RepoLocks};
use crate::{AdapterError, WorkspaceBackend};
use bosun_core::WorkBranch;

/// What `git worktree remove` says when it refuses because of changes.
const REFUSED_DIRTY: &str = "contains modified or untracked files";

/// Workspaces of `WorkspaceKind::Worktree`.
#[derive(Debug)]
pub struct WorktreeBackend {
    /// Held around `git worktree add` and `remove`: see `RepoLocks`.
    repo_locks: Arc<RepoLocks>,
}

impl WorktreeBackend {
    pub(crate) fn new(repo_locks: Arc<RepoLocks>) -> Self {
        Self { repo_locks }
    }
}

impl WorkspaceBackend for WorktreeBackend {
    type Kind = WorkBranch;
    const LABEL: &'static str = "worktree";

    fn create(
        &self,
        path: &Path,
        kind: &WorkBranch,
        settings_from: Option<&Path>,
        resume: bool,
    ) -> Result<(), AdapterError> {
        let WorkBranch { repo, branch, base, .. } = kind;
        self.repo_locks.serialized(repo, || create_worktree(repo, path, branch, base, resume))?;
        copy_settings(path, settings_from)
    }

    fn is_dirty(&self, path: &Path, _kind: &WorkBranch, owned: &[PathBuf]) -> Result<bool, AdapterError> {
        status_dirty(path, owned)
    }

    fn snapshot(
        &self,
        path: &Path,
        _kind: &WorkBranch,
        owned: &[PathBuf],
        message: &str,
    ) -> Result<String, AdapterError> {
        super::diff::snapshot(path, owned, message)
    }

    fn remove(
        &self,
        path: &Path,
        kind: &WorkBranch,
        force: bool,
        delete_branch: bool,
        owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        let WorkBranch { repo, branch, .. } = kind;
        clear_owned(self, path, kind, force, owned)?;
        self.repo_locks.serialized(repo, || remove_worktree(repo, path, force))?;
        if delete_branch {
            super::git::delete_branch(repo, branch)?;
        }
        Ok(())
    }
}

/// `git worktree add`, tolerating a worktree already there and a branch left by a crash.
fn create_worktree(repo: &Path, path: &Path, branch: &str, base: &str, resume: bool) -> Result<(), AdapterError> {
    if !resume {
        if let Some(parent) = path.parent() {
            create_dir_all(parent)?;
        }
        return checkout(|| {
            let mut cmd = git(repo);
            cmd.args(["worktree", "add", "-b", branch]).arg(path).arg(base);
            run(&mut cmd).map(drop)
        });
    }
    if exists(path)? && worktree_on(repo, path)?.is_some_and(|b| b == format!("refs/heads/{branch}")) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        create_dir_all(parent)?;
    }
    let exists = branch_exists(repo, branch)?;
    checkout(|| {
        let mut cmd = git(repo);
        cmd.args(["worktree", "add"]);
        if exists {
            cmd.arg(path).arg(branch);
        } else {
            cmd.args(["-b", branch]).arg(path).arg(base);
        }
        run(&mut cmd).map(drop)
    })
}

/// Runs `add` (a `git worktree add` it makes) in a thread with the user's file mask: the files
/// it checks out are the user's work (see `private::with_user_mask`).
fn checkout(add: impl FnOnce() -> Result<(), AdapterError> + Send) -> Result<(), AdapterError> {
    crate::private::with_user_mask(add).map_err(|e| AdapterError::io("starting a thread for git worktree add", e))?
}

/// The ref checked out in `repo`'s worktree at `path` (empty when detached), or None when
/// `path` is not one of its worktrees.
pub(super) fn worktree_on(repo: &Path, path: &Path) -> Result<Option<String>, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["worktree", "list", "--porcelain", "-z"]);
    let out = run(&mut cmd)?;
    let want = canonical(path);
    let mut current: Option<String> = None;
    for field in out.split('\0') {
        if let Some(listed) = field.strip_prefix("worktree ") {
            current = (canonical(Path::new(listed)) == want).then(String::new);
        } else if let (Some(found), Some(head)) = (current.as_mut(), field.strip_prefix("branch ")) {
            *found = head.to_owned();
        } else if field.is_empty() && current.is_some() {
            return Ok(current);
        }
    }
    Ok(current)
}

fn remove_worktree(repo: &Path, path: &Path, force: bool) -> Result<(), AdapterError> {
    if exists(path)? {
        let mut cmd = git(repo);
        cmd.args(["worktree", "remove"]);
        if force {
            cmd.arg("--force");
        }
        cmd.arg(path);
        let out = output(&mut cmd)?;
        if !out.status.success() {
            let stderr = stderr_text(&out);
            if stderr.contains(REFUSED_DIRTY) {
                return Err(AdapterError::Dirty(path.to_path_buf()));
            }
            return Err(command_error(&cmd, stderr));
        }
    }
    let mut cmd = git(repo);
    cmd.args(["worktree", "prune"]);
    run(&mut cmd).map(drop)
}
