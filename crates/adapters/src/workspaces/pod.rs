//! `PodBackend`: a workspace that is a clone in its agent's pod. Nothing of it is on this
//! machine: it is made by the pod's init container, its work goes back to the remote when its
//! agent ends (the pod's host pushes it), and it goes with its pod. Whether it holds work that
//! never came back is what the pod's save said, which the core keeps: here it is clean.

use std::path::{Path, PathBuf};

use bosun_core::WorkspaceKind;

use crate::{AdapterError, WorkspaceBackend};

#[derive(Debug)]
pub struct PodBackend;

impl WorkspaceBackend for PodBackend {
    fn create(
        &self,
        _path: &Path,
        _kind: &WorkspaceKind,
        _settings_from: Option<&Path>,
        _resume: bool,
    ) -> Result<(), AdapterError> {
        Ok(())
    }

    fn is_dirty(&self, _path: &Path, _kind: &WorkspaceKind, _owned: &[PathBuf]) -> Result<bool, AdapterError> {
        Ok(false)
    }

    fn remove(
        &self,
        _path: &Path,
        _kind: &WorkspaceKind,
        _force: bool,
        _delete_branch: bool,
        _owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        Ok(())
    }
}
