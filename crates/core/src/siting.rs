//! The one rule for where work happens and where it runs. From an ask — an agent's start
//! (`StartAsk`), a job's (`JobAsk`), a fork's agent (`fork_into`) — and what the daemon found in
//! the repository (`RepoFacts`, of what `Gather` asked it to find), it decides the
//! `WorkspaceKind` and the `Runtime` the work gets, or refuses with a `PlaceRefusal`. The daemon only
//! finds the facts and applies the decision.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::ask::{PlaceRefusal, RuntimeAsk, WorkspaceAsk};
use crate::{JobSource, Nonce, Pod, PodClaim, PodClone, PodSource, PoolTask, Runtime, StepRun, VolumeClone};
use crate::{WorkBranch, WorkspaceId, WorkspaceKind};

/// What the daemon is to find out in the repository before the rule decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gather {
    /// Nothing: a folder, made empty.
    Nothing,
    /// A new `branch` at `base_ref` in the repository the work is asked from: its root, the
    /// commit `base_ref` resolves to, `branch` checked to be free; with `remote`, where the
    /// repository's `origin` is.
    NewBranch { branch: String, base_ref: String, remote: bool },
    /// The repository of the pool, and `branch` checked to be free in it.
    PoolBranch { branch: String },
}

/// What the daemon found, as `Gather` asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RepoFacts {
    /// The directory the work is asked from.
    Nothing {
        source: PathBuf,
    },
    NewBranch {
        branch: WorkBranch,
        remote: Option<String>,
    },
    PoolBranch {
        repo: PathBuf,
        branch: String,
    },
}

/// An agent's start, as asked.
#[derive(Clone, Copy, Debug)]
pub struct StartAsk<'a> {
    pub workspace: WorkspaceAsk,
    pub branch: Option<&'a str>,
    pub base_ref: Option<&'a str>,
    /// A pool's own options (its task file, not waiting) were given.
    pub pool_options: bool,
    pub runtime: RuntimeAsk,
}

/// What the rule decided for a start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sited {
    pub kind: WorkspaceKind,
    pub runtime: Runtime,
    /// Where the repository's own settings for the agent are read from: its repository, or
    /// where a folder was asked from.
    pub settings_root: PathBuf,
}

impl StartAsk<'_> {
    /// Refused when what is asked does not go together (the command line checks this before it
    /// sends the ask).
    pub fn check(&self) -> Result<(), PlaceRefusal> {
        use WorkspaceAsk::{Folder, Pool, Volume, Worktree};
        if self.pool_options && self.workspace != Pool {
            return Err(PlaceRefusal::PoolOptions);
        }
        match self.workspace {
            Pool if self.base_ref.is_some() => Err(PlaceRefusal::RefInPool),
            Volume if self.runtime != RuntimeAsk::Docker => Err(PlaceRefusal::VolumeOutsideContainer),
            Folder if self.branch.is_some() || self.base_ref.is_some() => Err(PlaceRefusal::BranchInFolder),
            ask if self.runtime == RuntimeAsk::K8s && ask != Worktree => Err(PlaceRefusal::PodWorkspace),
            _ => Ok(()),
        }
    }

    /// What to find out for a start of `nonce` on `runtime` (of the kind asked), or why not.
    pub fn gather(&self, runtime: &Runtime, nonce: &Nonce) -> Result<Gather, PlaceRefusal> {
        self.check()?;
        if let Runtime::K8s(pod) = runtime {
            if !Pod::is_dns_label(&pod.namespace) {
                return Err(PlaceRefusal::Namespace(pod.namespace.clone()));
            }
        }
        let branch = self.branch.map_or_else(|| nonce.default_branch(), str::to_owned);
        Ok(match self.workspace {
            WorkspaceAsk::Folder => Gather::Nothing,
            WorkspaceAsk::Pool => Gather::PoolBranch { branch },
            WorkspaceAsk::Worktree | WorkspaceAsk::Volume => Gather::NewBranch {
                branch,
                base_ref: self.base_ref.unwrap_or("HEAD").to_owned(),
                remote: self.runtime == RuntimeAsk::K8s,
            },
        })
    }

    /// The workspace and runtime of the start of workspace `id` (nonce `nonce`) on `runtime`,
    /// from `facts`. A pod clones the branch (from the remote, if there is one), on a claim of
    /// its own when it asks for storage; a container's volume is named after the workspace.
    pub fn site(
        &self,
        runtime: Runtime,
        facts: RepoFacts,
        id: &WorkspaceId,
        nonce: &Nonce,
        task: Option<String>,
    ) -> Result<Sited, PlaceRefusal> {
        self.gather(&runtime, nonce)?;
        let (kind, runtime) = match (facts, runtime) {
            (RepoFacts::Nothing { source }, runtime) => {
                return Ok(Sited { kind: WorkspaceKind::Folder, runtime, settings_root: source })
            }
            (RepoFacts::PoolBranch { repo, branch }, runtime) => (pool_task(repo, branch, task), runtime),
            (RepoFacts::NewBranch { branch, remote }, Runtime::K8s(mut pod)) => {
                let claim = pod.storage_bytes.map(|_| Pod::claim_name(nonce));
                let kind = into_pod(&mut pod, branch, remote, claim);
                (kind, Runtime::K8s(pod))
            }
            (RepoFacts::NewBranch { branch, .. }, Runtime::Docker(mut container))
                if self.workspace == WorkspaceAsk::Volume =>
            {
                let volume = id.volume();
                container.volume = Some(volume.clone());
                let clone = VolumeClone { git: branch, volume, image: container.image.clone() };
                (WorkspaceKind::Volume(clone), Runtime::Docker(container))
            }
            (RepoFacts::NewBranch { branch, .. }, runtime) => (WorkspaceKind::Worktree(branch), runtime),
        };
        let settings_root = kind.repo().map(PathBuf::from).unwrap_or_default();
        Ok(Sited { kind, runtime, settings_root })
    }
}

/// `pod` set to clone `branch` (from `remote`, if any) on `claim`, if any; the workspace that is.
fn into_pod(pod: &mut Pod, git: WorkBranch, remote: Option<String>, claim: Option<String>) -> WorkspaceKind {
    let source = PodSource {
        remote: remote.clone(),
        repo: git.repo.clone(),
        base: git.base.clone(),
        branch: git.branch.clone(),
    };
    pod.source = Some(Box::new(source));
    pod.claim = claim.clone();
    let claim = claim.map(|name| PodClaim { namespace: pod.namespace.clone(), name });
    WorkspaceKind::Pod(PodClone { git, remote, claim })
}

/// A task of `repo`'s pool on `branch`, waiting for its slot (its base is the slot's).
fn pool_task(repo: PathBuf, branch: String, task: Option<String>) -> WorkspaceKind {
    let git = WorkBranch { repo, branch, base_ref: String::new(), base: String::new() };
    WorkspaceKind::Pool(PoolTask { git, slot: None, task })
}

/// A job of a runbook, as asked.
#[derive(Clone, Debug)]
pub struct JobAsk<'a> {
    pub job: &'a str,
    pub source: &'a JobSource,
    /// Run as another job's step: it works in that job's workspace, none of its own.
    pub as_step: bool,
    /// A plan's job: its worktree is on the plan's branch.
    pub in_plan: bool,
    /// Its steps, by name.
    pub steps: Vec<(&'a str, &'a StepRun)>,
    /// The runtimes of the agents its steps run, by name.
    pub agents: Vec<(&'a str, &'a Runtime)>,
}

/// What the rule decided for a job: its workspace, if it has one of its own, and the runtimes
/// of its agents (by name) that differ from those asked (its agents in pods clone it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobSited {
    pub kind: Option<WorkspaceKind>,
    pub runtimes: BTreeMap<String, Runtime>,
}

impl JobAsk<'_> {
    /// Refused when what is asked does not go together. Agents in pods take the job's workspace
    /// there (a clone of its worktree's branch in each), so: its source is a worktree, every
    /// agent it runs is in a pod, all in one namespace, no step runs a command (which would
    /// have no workspace here to run in), and it is not another job's step.
    pub fn check(&self) -> Result<(), PlaceRefusal> {
        let job = self.job.to_owned();
        let worktree = matches!(self.source, JobSource::Worktree { .. });
        if self.in_plan && !self.as_step && !worktree {
            return Err(PlaceRefusal::PlanSource { job });
        }
        let Some((first, pod)) = self.agents.iter().find_map(|(n, r)| r.pod().map(|p| (*n, p))) else {
            return Ok(());
        };
        if let Some((here, _)) = self.agents.iter().find(|(_, r)| r.pod().is_none()) {
            return Err(PlaceRefusal::PodAndHere { job, pod: first.into(), here: (*here).into() });
        }
        if let Some(other) = self.agents.iter().filter_map(|(_, r)| r.pod()).find(|p| p.namespace != pod.namespace) {
            let (one, other) = (pod.namespace.clone(), other.namespace.clone());
            return Err(PlaceRefusal::PodNamespaces { job, one, other });
        }
        if let Some((step, run)) = self.steps.iter().find(|(_, run)| !matches!(run, StepRun::Agent(_))) {
            let what = if matches!(run, StepRun::Job(_)) { "another job" } else { "its command" };
            return Err(PlaceRefusal::StepHere { job, step: (*step).into(), what });
        }
        match () {
            _ if !worktree => Err(PlaceRefusal::PodSource { job, agent: first.into() }),
            _ if self.as_step => Err(PlaceRefusal::PodInStep { job, agent: first.into() }),
            _ => Ok(()),
        }
    }

    /// What to find out for it (none for a job with no workspace of its own); `branch` and
    /// `base_ref` are its source's, rendered (else `nonce`'s default and `HEAD`).
    pub fn gather(&self, branch: Option<String>, base_ref: Option<String>, nonce: &Nonce) -> Option<Gather> {
        let branch = branch.unwrap_or_else(|| nonce.default_branch());
        match self.source {
            _ if self.as_step => None,
            JobSource::None => None,
            JobSource::Folder => Some(Gather::Nothing),
            JobSource::Pool { .. } => Some(Gather::PoolBranch { branch }),
            JobSource::Worktree { .. } => {
                let remote = self.agents.iter().any(|(_, r)| r.pod().is_some());
                Some(Gather::NewBranch { branch, base_ref: base_ref.unwrap_or_else(|| "HEAD".into()), remote })
            }
        }
    }

    /// Its workspace and its agents' runtimes, from `facts` (as `gather` asked). Its agents in
    /// pods share one claim of the largest size any of them asks, when one asks for storage.
    pub fn site(&self, facts: Option<RepoFacts>, nonce: &Nonce) -> Result<JobSited, PlaceRefusal> {
        self.check()?;
        let kind = match facts {
            None => return Ok(JobSited::default()),
            Some(RepoFacts::Nothing { .. }) => WorkspaceKind::Folder,
            Some(RepoFacts::PoolBranch { repo, branch }) => pool_task(repo, branch, None),
            Some(RepoFacts::NewBranch { branch, remote }) => {
                let pods: Vec<(&str, &Pod)> = self.agents.iter().filter_map(|(n, r)| Some((*n, r.pod()?))).collect();
                if pods.is_empty() {
                    WorkspaceKind::Worktree(branch)
                } else {
                    return Ok(self.in_pods(&pods, branch, remote, nonce));
                }
            }
        };
        Ok(JobSited { kind: Some(kind), runtimes: BTreeMap::new() })
    }

    fn in_pods(&self, pods: &[(&str, &Pod)], branch: WorkBranch, remote: Option<String>, nonce: &Nonce) -> JobSited {
        let size = pods.iter().filter_map(|(_, p)| p.storage_bytes).max();
        let claim = size.map(|_| Pod::claim_name(nonce));
        let mut runtimes = BTreeMap::new();
        let mut kind = None;
        for (name, pod) in pods {
            let mut pod = (*pod).clone();
            pod.storage_bytes = size;
            kind = Some(into_pod(&mut pod, branch.clone(), remote.clone(), claim.clone()));
            runtimes.insert((*name).to_owned(), Runtime::K8s(pod));
        }
        JobSited { kind, runtimes }
    }
}

/// Where a fork of an agent that works in `kind` under `runtime` goes: the workspace it asks
/// for, and the runtime it runs on (its agent's: the same image, limits and network, but a
/// volume of its own made anew). Refused where its work is not here to start from (a pod's, a
/// folder's).
pub fn fork_into(kind: &WorkspaceKind, runtime: &Runtime) -> Result<(WorkspaceAsk, Runtime), PlaceRefusal> {
    let into = match (kind, runtime) {
        (WorkspaceKind::Pod(_), _) | (_, Runtime::K8s(_)) => return Err(PlaceRefusal::ForkInPod),
        (WorkspaceKind::Worktree(_) | WorkspaceKind::Pool(_), _) => WorkspaceAsk::Worktree,
        (WorkspaceKind::Volume(_), Runtime::Docker(_)) => WorkspaceAsk::Volume,
        (kind, _) => return Err(PlaceRefusal::ForkOf(kind.label())),
    };
    let mut runtime = runtime.clone();
    if let Runtime::Docker(container) = &mut runtime {
        container.volume = None;
    }
    Ok((into, runtime))
}

#[cfg(test)]
mod tests;
