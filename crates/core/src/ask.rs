//! What is asked for where an agent's work happens and where it runs, in one vocabulary: the
//! command line's words (clap's, with feature `clap`), a runbook's and the wire's. The one rule
//! that turns an ask into a workspace and a runtime is `siting`; what it refuses, and why, is a
//! `PlaceRefusal`.

use serde::{Deserialize, Serialize};

/// The workspace an agent asks for (`--workspace`; a runbook job's `source` asks for one of the
/// first three).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceAsk {
    /// A git worktree on a new branch
    Worktree,
    /// An empty directory
    Folder,
    /// A warm worktree of the repository's pool, handed out at once and reset after use
    /// (see `bosun pool`)
    Pool,
    /// A clone on a new branch in a volume of the container engine, not on this disk
    /// (--runtime docker only); its commits come back to the branch here when the agent ends
    Volume,
}

impl WorkspaceAsk {
    /// Its word (`worktree`, `folder`, `pool`, `volume`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Worktree => "worktree",
            Self::Folder => "folder",
            Self::Pool => "pool",
            Self::Volume => "volume",
        }
    }

    /// The ask a word names.
    pub fn named(word: &str) -> Option<Self> {
        [Self::Worktree, Self::Folder, Self::Pool, Self::Volume].into_iter().find(|a| a.name() == word)
    }
}

/// Where an agent asks to run (`--runtime`; a runbook agent's `runtime`), before its options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum RuntimeAsk {
    // On this machine as it is.
    #[default]
    Local,
    // Under bubblewrap.
    Sandbox,
    // In a Docker container.
    Docker,
    // In a Kubernetes pod.
    K8s,
}

impl RuntimeAsk {
    pub const ALL: [Self; 4] = [Self::Local, Self::Sandbox, Self::Docker, Self::K8s];

    /// Its word (`local`, `sandbox`, `docker`, `k8s`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Sandbox => "sandbox",
            Self::Docker => "docker",
            Self::K8s => "k8s",
        }
    }

    /// The ask a word names.
    pub fn named(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == word)
    }
}

impl crate::Runtime {
    /// What was asked for, its options aside.
    pub fn ask(&self) -> RuntimeAsk {
        match self {
            Self::Local => RuntimeAsk::Local,
            Self::Sandbox { .. } => RuntimeAsk::Sandbox,
            Self::Docker(_) => RuntimeAsk::Docker,
            Self::K8s(_) => RuntimeAsk::K8s,
        }
    }
}

/// Why an ask is refused: each says what to do instead, as the user sees it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlaceRefusal {
    #[error("--ref does not apply to --workspace pool: its workspaces start from the pool's base")]
    RefInPool,
    #[error("--branch and --ref only apply to --workspace worktree")]
    BranchInFolder,
    #[error("--task-file and --no-wait only apply to --workspace pool")]
    PoolOptions,
    #[error("--workspace volume needs --runtime docker: only a container can mount a volume")]
    VolumeOutsideContainer,
    #[error("its workspace is a clone in its pod: --workspace does not apply to --runtime k8s")]
    PodWorkspace,
    #[error("{0:?} is not a namespace's name (lowercase letters, digits, '-')")]
    Namespace(String),
    #[error(
        "it runs in a pod, whose work and conversation are in the cluster: fork it once it ended (its branch \
         comes back), with `bosun agent start --ref BRANCH`"
    )]
    ForkInPod,
    #[error("it works in a {0} workspace: only a worktree's, a pool's or a volume's is forked")]
    ForkOf(&'static str),
    #[error("job {job:?} runs in a plan, so it needs `source = \"worktree\"`")]
    PlanSource { job: String },
    #[error(
        "job {job:?} runs agent {pod:?} in a pod and agent {here:?} here: its workspace cannot be in both places; \
         give every agent of the job `runtime = {{ k8s = … }}`, or none"
    )]
    PodAndHere { job: String, pod: String, here: String },
    #[error("job {job:?} runs its agents' pods in namespaces {one:?} and {other:?}: their workspace must be in one")]
    PodNamespaces { job: String, one: String, other: String },
    #[error(
        "job {job:?} runs its agents in pods, where its workspace is, so step {step:?} has no workspace here to \
         run {what} in: run it as an agent's step, or run the job's agents here"
    )]
    StepHere { job: String, step: String, what: &'static str },
    #[error("job {job:?} runs agent {agent:?} in a pod, which clones its workspace: it needs `source = \"worktree\"`")]
    PodSource { job: String, agent: String },
    #[error(
        "job {job:?} runs agent {agent:?} in a pod, which clones its workspace: it needs `source = \"worktree\"` \
         (and is not run as another job's step)"
    )]
    PodInStep { job: String, agent: String },
}
