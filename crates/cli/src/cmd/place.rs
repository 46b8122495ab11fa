//! The workspace, session and runtime an agent asks for on the command line (`agent start
//! --workspace`, `--session`, `--runtime` and the flags that go with each). The words of the
//! workspace and the runtime are core's (`WorkspaceAsk`, `RuntimeAsk`), and so is the rule of
//! which go together (`StartAsk::check`); here are the flags, and the runtime's options read
//! from them.

use std::path::PathBuf;

use anyhow::Result;
use bosun_core::{RuntimeAsk, WorkspaceAsk};
use clap::{Args, ValueEnum};

use crate::error::usage;

/// `--session`: what holds the agent's terminal.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SessionArg {
    Tmux,
    Host,
}

impl From<SessionArg> for bosun_core::SessionBackend {
    fn from(s: SessionArg) -> Self {
        match s {
            SessionArg::Tmux => Self::Tmux,
            SessionArg::Host => Self::Host,
        }
    }
}

/// The workspace an agent asks for: its kind, its repository, and the branch made in it.
#[derive(Debug, Args)]
pub struct WorkspaceArgs {
    /// Repository to make the worktree from [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Kind of workspace
    // Its field is `kind`; its word stays `--workspace <WORKSPACE>`.
    #[arg(id = "workspace", long = "workspace", value_name = "WORKSPACE")]
    #[arg(value_enum, default_value_t = WorkspaceAsk::Worktree)]
    pub kind: WorkspaceAsk,
    /// Branch to create for the worktree [default: ws-<nonce>]
    #[arg(long)]
    pub branch: Option<String>,
    /// Where the branch starts [default: HEAD]
    #[arg(long = "ref", value_name = "REF")]
    pub base_ref: Option<String>,
}

impl WorkspaceArgs {
    /// `--repo` as its real path, when given.
    pub fn repo(&self) -> Result<Option<PathBuf>> {
        Ok(match &self.repo {
            Some(r) => Some(
                std::fs::canonicalize(r).map_err(|_| usage(format!("--repo {}: no such directory", r.display())))?,
            ),
            None => None,
        })
    }
}

/// Where an agent asks to run: `--runtime` and the options that go with it.
#[derive(Debug, Args)]
pub struct RuntimeArgs {
    /// Where the agent runs: on this machine as it is; in a bubblewrap sandbox where it may
    /// write only its workspace, its repository's git directory and its own config, with a
    /// private /tmp and no home directory but its own; in a Docker container (--image); or in
    /// a Kubernetes pod (--image, --namespace) whose init container clones the repository's
    /// `origin` and whose host pushes the agent's branch back there when it ends
    #[arg(long, value_enum, default_value_t = RuntimeAsk::Local)]
    pub runtime: RuntimeAsk,
    /// --runtime k8s: the namespace of the agent's pod
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub namespace: String,
    /// --runtime k8s: a secret whose keys become the agent's environment (its credentials);
    /// repeat for more
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
    /// --runtime k8s: bosun's program in the image
    #[arg(long, value_name = "PATH", default_value = "bosun")]
    pub bosun_in_image: String,
    /// --runtime sandbox or docker: cut the agent off the network (loopback only)
    #[arg(long)]
    pub no_network: bool,
    /// --runtime docker or k8s: the image whose container runs the agent (in docker, bosun's
    /// own binary is bound into it and serves its session; its workspace and config are bound at
    /// their own paths; in a pod, it must hold bosun, git and the agent)
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// --runtime docker or k8s: CPU limit (say 2 or 1.5)
    #[arg(long, value_name = "N")]
    pub cpus: Option<String>,
    /// --runtime docker or k8s: memory limit (say 512m or 2g)
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// --runtime k8s: a claim of SIZE (say 10g) for the agent's workspace and config, so that
    /// its uncommitted work and conversation outlive its pod (an `on_dead` resume goes on
    /// there); it is deleted when the workspace is removed
    #[arg(long, value_name = "SIZE")]
    pub storage: Option<String>,
}

impl RuntimeArgs {
    /// Where the agent runs, from `--runtime` and the options that go with it.
    pub fn runtime(&self) -> Result<bosun_core::Runtime> {
        use bosun_core::{Container, Runtime};
        let docker_only = self.image.is_some() || self.cpus.is_some() || self.memory.is_some();
        let k8s_only = !self.secrets.is_empty()
            || self.namespace != "default"
            || self.bosun_in_image != "bosun"
            || self.storage.is_some();
        if k8s_only && !matches!(self.runtime, RuntimeAsk::K8s) {
            return Err(usage("--namespace, --secret, --storage and --bosun-in-image apply to --runtime k8s"));
        }
        match self.runtime {
            RuntimeAsk::Local if self.no_network => Err(usage("--no-network applies to --runtime sandbox or docker")),
            RuntimeAsk::Local | RuntimeAsk::Sandbox if docker_only => {
                Err(usage("--image, --cpus and --memory apply to --runtime docker or k8s"))
            }
            RuntimeAsk::Local => Ok(Runtime::Local),
            RuntimeAsk::Sandbox => Ok(Runtime::Sandbox { network: !self.no_network }),
            RuntimeAsk::Docker => {
                let image = self.image.clone().ok_or_else(|| usage("--runtime docker needs --image IMAGE"))?;
                let cpus_milli = self.cpus.as_deref().map(Container::cpus).transpose().map_err(usage)?;
                let memory_bytes = self.memory.as_deref().map(Container::memory).transpose().map_err(usage)?;
                Ok(Runtime::Docker(Container {
                    image,
                    cpus_milli,
                    memory_bytes,
                    network: !self.no_network,
                    volume: None,
                }))
            }
            RuntimeAsk::K8s => {
                if self.no_network {
                    return Err(usage(
                        "--no-network does not apply to --runtime k8s: a pod's network is its cluster's",
                    ));
                }
                let image = self.image.clone().ok_or_else(|| usage("--runtime k8s needs --image IMAGE"))?;
                let cpus_milli = self.cpus.as_deref().map(Container::cpus).transpose().map_err(usage)?;
                let memory_bytes = self.memory.as_deref().map(Container::memory).transpose().map_err(usage)?;
                let storage = self.storage.as_deref().map(Container::memory).transpose();
                let storage_bytes = storage.map_err(|e| usage(format!("--storage: {e}")))?;
                for name in std::iter::once(&self.namespace).chain(&self.secrets) {
                    if !bosun_core::Pod::is_dns_label(name) {
                        return Err(usage(format!(
                            "{name:?} is not a Kubernetes name (lowercase letters, digits and '-', at most 63)"
                        )));
                    }
                }
                Ok(Runtime::K8s(bosun_core::Pod {
                    cpus_milli,
                    memory_bytes,
                    storage_bytes,
                    secrets: self.secrets.clone(),
                    bosun: self.bosun_in_image.clone(),
                    ..bosun_core::Pod::new(self.namespace.clone(), image)
                }))
            }
        }
    }
}
