//! `PodBackend`: a workspace that is a clone in its agent's pod. Nothing of it is on this
//! machine but, for a repository with no remote, its branch: it is made by the pod's init
//! container (or from a bundle of that branch), its work goes back to the remote (or that
//! branch) when its agent ends, and it goes with its pod, or, on a claim, with its claim,
//! deleted when the workspace is removed. Whether it holds work that never came back is what
//! the pod's save said, which the core keeps: here it is clean.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{AdapterError, WorkspaceBackend};
use bosun_core::{PodClone, WorkBranch};

#[derive(Default)]
pub struct PodBackend {
    cluster: Option<Arc<dyn bosun_k8s::Cluster>>,
}

impl std::fmt::Debug for PodBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PodBackend").field("cluster", &self.cluster.is_some()).finish()
    }
}

impl PodBackend {
    pub fn new(cluster: Arc<dyn bosun_k8s::Cluster>) -> Self {
        Self { cluster: Some(cluster) }
    }
}

impl WorkspaceBackend for PodBackend {
    type Kind = PodClone;
    const LABEL: &'static str = "pod";

    fn create(
        &self,
        _path: &Path,
        kind: &PodClone,
        _settings_from: Option<&Path>,
        _resume: bool,
    ) -> Result<(), AdapterError> {
        match kind {
            // Its branch is here, where its pod's bundle comes from and goes back to.
            PodClone { git: WorkBranch { repo, branch, base, .. }, remote: None, .. } => {
                super::bundle::make_branch(repo, branch, base)
            }
            _ => Ok(()),
        }
    }

    fn is_dirty(&self, _path: &Path, _kind: &PodClone, _owned: &[PathBuf]) -> Result<bool, AdapterError> {
        Ok(false)
    }

    fn remove(
        &self,
        _path: &Path,
        kind: &PodClone,
        _force: bool,
        delete_branch: bool,
        _owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        if let PodClone { git: WorkBranch { repo, branch, .. }, remote: None, .. } = kind {
            if delete_branch {
                super::git::delete_branch(repo, branch)?;
            }
        }
        let PodClone { claim: Some(claim), .. } = kind else { return Ok(()) };
        let cluster = self.cluster.as_ref().ok_or_else(|| AdapterError::Command {
            command: format!("deleting claim {}/{}", claim.namespace, claim.name),
            stderr: "this daemon has no Kubernetes cluster".into(),
        })?;
        cluster.delete(bosun_k8s::Object::Claim, &claim.namespace, &claim.name).map_err(|e| AdapterError::Command {
            command: format!("deleting claim {}/{}", claim.namespace, claim.name),
            stderr: e.to_string(),
        })
    }
}
