//! `SlotBackend`: the workspace of a task bound to a pool's slot. Binding makes the task's
//! branch in the slot (`pool::bind`); the slot is never removed with its task, only reset
//! (`Pools::reset_slot`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{copy_settings, pool, status_dirty, RepoLocks};
use crate::{AdapterError, WorkspaceBackend};
use bosun_core::{PoolTask, WorkBranch};

/// Workspaces of `WorkspaceKind::Pool`.
#[derive(Debug)]
pub struct SlotBackend {
    /// Held around a bind: see `RepoLocks`.
    repo_locks: Arc<RepoLocks>,
}

impl SlotBackend {
    pub(crate) fn new(repo_locks: Arc<RepoLocks>) -> Self {
        Self { repo_locks }
    }
}

impl WorkspaceBackend for SlotBackend {
    type Kind = PoolTask;
    const LABEL: &'static str = "pool";

    fn create(
        &self,
        path: &Path,
        kind: &PoolTask,
        settings_from: Option<&Path>,
        resume: bool,
    ) -> Result<(), AdapterError> {
        let PoolTask { git: WorkBranch { repo, branch, base, .. }, task, .. } = kind;
        // Under the lock: two binds must not both add the task file's exclude line.
        self.repo_locks.serialized(repo, || pool::bind(repo, path, branch, base, task.as_deref(), resume))?;
        copy_settings(path, settings_from)
    }

    fn is_dirty(&self, path: &Path, _kind: &PoolTask, owned: &[PathBuf]) -> Result<bool, AdapterError> {
        status_dirty(path, owned)
    }

    fn snapshot(
        &self,
        path: &Path,
        _kind: &PoolTask,
        owned: &[PathBuf],
        message: &str,
    ) -> Result<String, AdapterError> {
        super::diff::snapshot(path, owned, message)
    }

    fn remove(
        &self,
        path: &Path,
        _kind: &PoolTask,
        _force: bool,
        _delete_branch: bool,
        _owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        // The core releases a pool's workspace with `Pools::reset_slot`: its slot stays.
        Err(AdapterError::PoolSlot(path.to_path_buf()))
    }
}
