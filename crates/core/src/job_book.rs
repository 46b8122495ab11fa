//! A runbook's jobs as lowered (by `bosun_runbook::lower`): what the daemon needs to make a
//! `JobSpec`, with no runbook text left to parse. A cron, worker or plan keeps its `JobBook`,
//! pinned by hash to the text it was started with, so each dispatch makes the same job.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{AgentPlan, JobNotify, Next, StepSpec};

/// A job and every job its steps run, by name, and the hash of the runbook text they came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobBook {
    /// A digest of the runbook files (paths and text): a job made from here says which it runs.
    pub hash: String,
    pub jobs: BTreeMap<String, JobDef>,
}

/// One runbook job, lowered: its steps in core's terms; its vars, locals and workspace still to
/// be given values when a job is made of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobDef {
    /// The vars it needs.
    pub vars: Vec<String>,
    pub defaults: BTreeMap<String, String>,
    /// Templates, evaluated once when a job is made (they may use `$(…)`).
    pub locals: BTreeMap<String, String>,
    pub source: JobSource,
    /// In the order written; the first is where the job starts.
    pub steps: Vec<StepSpec>,
    pub on_done: Option<Next>,
    pub on_fail: Option<Next>,
    pub max_step_visits: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::budget::Budget>,
    pub notify: JobNotify,
    /// The agents its steps run, by name.
    pub agents: BTreeMap<String, StepAgent>,
}

impl JobBook {
    /// The same jobs with every agent run by `engine` (a plan job's `engine`): its program
    /// becomes `engine` and its driver the one `engine` is; it keeps its arguments only when
    /// that driver is the one it had (another agent's flags would mean nothing to it).
    pub fn with_engine(&self, engine: &str) -> Self {
        let mut book = self.clone();
        for def in book.jobs.values_mut() {
            for agent in def.agents.values_mut() {
                let plan = &mut agent.plan;
                let mut command = vec![engine.to_owned()];
                let driver = crate::driver::DriverKind::detect(&command);
                if driver == plan.driver {
                    command.extend(plan.command.iter().skip(1).cloned());
                }
                plan.command = command;
                plan.driver = driver;
            }
        }
        book
    }
}

/// Where a job's work happens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobSource {
    /// No workspace of its own: steps run in the repository.
    None,
    /// An empty directory.
    Folder,
    /// A worktree, on `branch` (a template; `ws-<nonce>` when none) from `base_ref` (a template
    /// that may use `$(…)`; `HEAD` when none).
    Worktree { branch: Option<String>, base_ref: Option<String> },
    /// A workspace of the repository's pool (seed 004), on `branch` (a template; `ws-<nonce>`
    /// when none), waiting in line when every one is taken.
    Pool { branch: Option<String> },
}

impl JobSource {
    /// The source a runbook's word (`bosun agent start --workspace`'s) asks for: not a volume,
    /// which only a container's agent has.
    pub fn asked(ask: crate::WorkspaceAsk) -> Option<Self> {
        match ask {
            crate::WorkspaceAsk::Folder => Some(Self::Folder),
            crate::WorkspaceAsk::Worktree => Some(Self::Worktree { branch: None, base_ref: None }),
            crate::WorkspaceAsk::Pool => Some(Self::Pool { branch: None }),
            crate::WorkspaceAsk::Volume => None,
        }
    }

    /// The templates of its branch and of the ref it starts from, where it names them.
    pub fn templates(&self) -> (Option<&str>, Option<&str>) {
        match self {
            Self::Worktree { branch, base_ref } => (branch.as_deref(), base_ref.as_deref()),
            Self::Pool { branch } => (branch.as_deref(), None),
            Self::None | Self::Folder => (None, None),
        }
    }
}

/// An agent a step runs: its plan, with a prompt file (relative to where the job is asked for)
/// read when the job is made, if the runbook names one rather than a prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepAgent {
    pub plan: AgentPlan,
    pub prompt_file: Option<String>,
}
