//! The workspaces family: workspaces made, inspected and removed, and pool slots made, reset
//! and removed.

use super::*;

impl Executor {
    /// Makes, inspects and removes workspaces.
    pub(super) fn workspaces(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::CreateWorkspace { id, path, kind, settings_from, settings_folder, resume } => {
                match self.workspaces.create(&path, &kind, settings_from.as_deref(), resume) {
                    Ok(()) => {
                        // A folder of settings goes where its files are: a folder's or a
                        // worktree's (a volume's and a pod's are not on this machine's disk).
                        let here =
                            matches!(kind, bosun_core::WorkspaceKind::Folder | bosun_core::WorkspaceKind::Worktree(_));
                        if let Some(folder) = settings_folder.filter(|_| here) {
                            if let Err(e) = bosun_adapters::settings_folder::copy(&path, &folder) {
                                tracing::warn!(%id, "{e}");
                            }
                        }
                        Input::WorkspaceCreated { id }
                    }
                    Err(e) => {
                        let nothing_left = !resume && nothing_left(&*self.git, &path, &kind);
                        Input::WorkspaceCreateFailed { id, error: e.to_string(), nothing_left }
                    }
                }
            }
            Effect::InspectWorkspace { id, path, kind, owned, into } => {
                let dirty = match self.workspaces.is_dirty(&path, &kind, &owned) {
                    Ok(dirty) => Some(dirty),
                    Err(e) => {
                        tracing::warn!(%id, "cannot inspect workspace: {e}");
                        None
                    }
                };
                // What the core needs to release it: its branch's own commits (0 for a folder);
                // a merged one's, those its target lacks.
                let ahead = match dirty {
                    Some(false) => match self.commits_to_keep(&kind, into.as_deref()) {
                        Ok(n) => n,
                        Err(e) => {
                            tracing::warn!(%id, "cannot count the branch's own commits: {e}");
                            return Some(Input::WorkspaceInspected { id, dirty: None, ahead: 0 });
                        }
                    },
                    _ => 0,
                };
                Input::WorkspaceInspected { id, dirty, ahead }
            }
            Effect::RemoveWorkspace { id, path, kind, force, delete_branch, owned, forget } => {
                match self.workspaces.remove(&path, &kind, force, delete_branch, &owned) {
                    Ok(()) => {
                        for file in &forget {
                            if let Err(e) = bosun_adapters::secret::forget(file) {
                                tracing::warn!(%id, "{e}");
                            }
                        }
                        Input::WorkspaceRemoved { id }
                    }
                    Err(e) => {
                        let dirty = matches!(e, AdapterError::Dirty(_));
                        Input::WorkspaceRemoveFailed { id, error: e.to_string(), dirty }
                    }
                }
            }
            // Another family's: `run` routes none here.
            _ => return None,
        })
    }

    /// How many commits of the workspace's branch would be lost with it: those its target lacks
    /// when it was merged into `into`, else its own.
    fn commits_to_keep(&self, kind: &bosun_core::WorkspaceKind, into: Option<&str>) -> Result<u32, AdapterError> {
        match (into, kind.local_branch()) {
            (Some(into), Ok((repo, branch, _))) => self.git.unmerged(repo, branch, into),
            _ => self.git.commits_ahead(kind),
        }
    }

    /// Makes, resets and removes pool slots.
    pub(super) fn slots(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::CreateSlot { project, n, repo, path, base_ref, setup } => {
                match self.pools.create_slot(&repo, &path, &base_ref, setup.as_deref()) {
                    Ok(commit) => Input::SlotCreated { project, n, commit },
                    Err(e) => Input::SlotCreateFailed { project, n, error: e.to_string() },
                }
            }
            Effect::ResetSlot { project, n, reset } => match self.pools.reset_slot(&reset) {
                Ok(commit) => Input::SlotReset { project, n, commit },
                Err(e) => {
                    let dirty = matches!(e, AdapterError::Dirty(_));
                    Input::SlotResetFailed { project, n, error: e.to_string(), dirty }
                }
            },
            Effect::RemoveSlot { project, n, repo, path } => match self.pools.remove_slot(&repo, &path) {
                Ok(()) => Input::SlotRemoved { project, n },
                Err(e) => Input::SlotRemoveFailed { project, n, error: e.to_string() },
            },
            // Another family's: `run` routes none here.
            _ => return None,
        })
    }
}

/// Whether a workspace whose making failed left nothing behind: no directory and, for a
/// worktree, no branch (it was asked to be new, so one there now is the attempt's). Other kinds
/// are kept recorded: what they may hold is not looked for here.
fn nothing_left(git: &dyn Git, path: &Path, kind: &bosun_core::WorkspaceKind) -> bool {
    let no_dir = std::fs::symlink_metadata(path).is_err();
    match kind {
        bosun_core::WorkspaceKind::Folder => no_dir,
        bosun_core::WorkspaceKind::Worktree(bosun_core::WorkBranch { repo, branch, .. }) => {
            no_dir && git.check_new_branch(repo, branch).is_ok()
        }
        _ => false,
    }
}
