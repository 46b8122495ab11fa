//! Jobs and their steps (seed 001): a job walks its steps, each step's outcome choosing the
//! next; a step entered too often fails the job, so a broken loop cannot spin forever; a failed
//! step is tried again, after its backoff, up to its attempts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use std::path::PathBuf;

use crate::driver::DriverKind;
use crate::{AgentId, ItemId, JobId, Name, Nonce, Policy, Timestamp, WorkspaceId, WorkspaceKind};

/// A job as it was asked for: its steps as the runbook said when it started (the job is pinned
/// to that text by `runbook_hash`: editing the runbook later changes nothing here).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    pub id: JobId,
    /// The job's name in the runbook.
    pub name: String,
    pub vars: BTreeMap<String, String>,
    /// In order; the first is where the job starts.
    pub steps: Vec<StepSpec>,
    pub on_done: Option<Next>,
    pub on_fail: Option<Next>,
    pub max_step_visits: u32,
    /// What all its agents together may spend: each is started with what is left of it, and a
    /// step is not entered once it is spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::budget::Budget>,
    pub runbook_hash: String,
    /// Evaluated when the job was asked for.
    #[serde(default)]
    pub locals: BTreeMap<String, String>,
    /// Where steps run when the job has no workspace of its own.
    pub cwd: PathBuf,
    /// The workspace the job makes and owns, if it has one.
    pub workspace: Option<JobWorkspace>,
    /// Where each step's output goes (`<dir>/<step>-<attempt>.log`).
    pub logs: PathBuf,
    /// The agents its steps run, as the runbook defines them.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentPlan>,
    /// Where its agents' own files go (`<state>/agents`).
    #[serde(default)]
    pub agents_root: PathBuf,
    /// The shell command prefix its agents' hooks call back into bosun with.
    #[serde(default)]
    pub hook_command: String,
    /// The queue item it works on (`${item.*}`), when a worker started it.
    #[serde(default)]
    pub item: Option<(ItemId, BTreeMap<String, String>)>,
    /// The jobs its `{ job = … }` steps run, by name, made with its vars when it was made; each
    /// runs in this job's workspace.
    #[serde(default)]
    pub children: BTreeMap<String, JobSpec>,
    /// The job, step and try this job runs as a step of.
    #[serde(default)]
    pub parent: Option<(JobId, String, u32)>,
    /// What to tell a person when it starts, ends done or fails (templates).
    #[serde(default)]
    pub notify: JobNotify,
    /// The plan (its id) and the place in it this job runs.
    #[serde(default)]
    pub plan: Option<(String, usize)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobNotify {
    pub on_start: Option<String>,
    pub on_done: Option<String>,
    pub on_fail: Option<String>,
    /// Where the job's notices (and its agents' escalations) are POSTed, besides the desktop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<crate::WebhookUrl>,
}

/// An agent a step runs: its command, driver, first prompt (a template), environment, policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPlan {
    pub command: Vec<String>,
    pub driver: DriverKind,
    pub prompt: Option<String>,
    /// Sent first, ahead of the prompt (a template).
    #[serde(default)]
    pub context: Option<String>,
    /// Where in the workspace it runs, relative to its root (a template).
    #[serde(default)]
    pub cwd: Option<String>,
    pub env: BTreeMap<String, String>,
    pub policy: Policy,
    /// What its session runs in.
    #[serde(default, skip_serializing_if = "crate::SessionBackend::is_tmux")]
    pub backend: crate::SessionBackend,
    /// Where it runs.
    #[serde(default, skip_serializing_if = "crate::Runtime::is_local")]
    pub runtime: crate::Runtime,
    /// The account, named in bosun's config, it signs in with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// The workspace a job makes: a directory or a worktree, as for an agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobWorkspace {
    pub name: Name,
    pub nonce: Nonce,
    pub workspaces_root: PathBuf,
    pub kind: WorkspaceKind,
    pub settings_from: Option<PathBuf>,
    /// For a pool's workspace: its pool and whether to wait for a slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<crate::PoolAsk>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSpec {
    pub name: String,
    pub run: StepRun,
    pub on_done: Option<Next>,
    pub on_fail: Option<Next>,
    pub on_cancel: Option<Next>,
    pub attempts: u32,
    pub backoff_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "target", rename_all = "snake_case")]
pub enum StepRun {
    Shell(String),
    Agent(String),
    Job(String),
    /// Push the job's branch and open a pull request for it (`run = { pr = { draft = … } }`).
    Pr {
        draft: bool,
    },
}

/// Where a job goes after a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "next", content = "step", rename_all = "snake_case")]
pub enum Next {
    Step(String),
    Done,
    Fail,
}

/// A job and where it stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub spec: JobSpec,
    pub state: JobState,
    /// The step it is in (or last was in).
    pub step: Option<String>,
    /// The try of the current step, from 1.
    pub attempt: u32,
    /// How often each step was entered.
    pub visits: BTreeMap<String, u32>,
    /// A cancel was asked for: once its `on_cancel` step (if any) ends, the job is Cancelled.
    pub cancelled: bool,
    pub created_at: Timestamp,
    pub state_since: Timestamp,
    /// The workspace it made, once asked for.
    pub workspace: Option<WorkspaceId>,
    /// Times it was resumed: part of the ids its agents and child jobs get, so a resumed step's
    /// never match the first run's.
    #[serde(default)]
    pub resumes: u32,
    /// The agent its last resume restarted with its conversation, when it resumed mid-step
    /// (none when the step started again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_with: Option<AgentId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobState {
    Running,
    /// A failed step waits out its backoff before its next try.
    Waiting,
    Done,
    Failed {
        reason: String,
    },
    Cancelled,
}

impl JobState {
    pub fn is_over(&self) -> bool {
        matches!(self, Self::Done | Self::Failed { .. } | Self::Cancelled)
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Waiting => "waiting",
            Self::Done => "done",
            Self::Failed { .. } => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

impl Job {
    /// A job as it starts: running, in no step yet, in `workspace`.
    pub fn new(spec: JobSpec, workspace: Option<WorkspaceId>, now: Timestamp) -> Self {
        Self {
            spec,
            state: JobState::Running,
            step: None,
            attempt: 0,
            visits: BTreeMap::new(),
            cancelled: false,
            created_at: now,
            state_since: now,
            workspace,
            resumes: 0,
            resumed_with: None,
        }
    }
}

impl JobSpec {
    pub fn step(&self, name: &str) -> Option<&StepSpec> {
        self.steps.iter().find(|s| s.name == name)
    }
}
