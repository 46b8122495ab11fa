//! `Rejection`: why the core refused a request. Each message says what to do instead.

use crate::{AgentId, WorkspaceId};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("the pool of {project} has all {size} of its workspaces taken: wait for one (leave out --no-wait), or grow it with `bosun pool resize {project} N`")]
    PoolExhausted { project: String, size: u32 },
    #[error("no pool {0:?}: see `bosun pool ls`")]
    NoSuchPool(String),
    #[error("no pool workspace {0:?}: see `bosun pool ls`")]
    NoSuchSlot(String),
    #[error("pool workspace {slot} is {state}: {hint}")]
    SlotBusy { slot: crate::SlotId, state: &'static str, hint: &'static str },
    #[error("a pool keeps at least one workspace: to remove the pool, use `bosun pool rm {0}`")]
    PoolSizeZero(String),
    #[error("no agent matches {0:?}: see `bosun ls`")]
    NoSuchAgent(String),
    #[error("{query:?} matches several agents ({}): give more of the id", .matches.join(", "))]
    AmbiguousAgent { query: String, matches: Vec<String> },
    #[error("no workspace matches {0:?}: see `bosun workspace ls`")]
    NoSuchWorkspace(String),
    #[error("{query:?} matches several workspaces ({}): give more of the id", .matches.join(", "))]
    AmbiguousWorkspace { query: String, matches: Vec<String> },
    #[error("agent {id} is already {state}")]
    AgentDead { id: AgentId, state: String },
    #[error("{0} already exists: try again for a fresh id")]
    AlreadyExists(String),
    #[error("workspace {id} is in use by agent {agent}: stop it first with `bosun kill {agent}`")]
    WorkspaceInUse { id: WorkspaceId, agent: AgentId },
    #[error("workspace {0} has uncommitted changes: commit or copy them out, or pass --force to discard them")]
    WorkspaceDirty(WorkspaceId),
    #[error("branch {branch:?} belongs to workspace {workspace}: choose another --branch")]
    BranchTaken { branch: String, workspace: WorkspaceId },
    #[error("workspace {id} belongs to job {job}, which still runs: cancel it first (`bosun job cancel {job}`)")]
    WorkspaceOfJob { id: crate::WorkspaceId, job: crate::JobId },
    #[error("no job matches {0:?}: see `bosun job ls`")]
    NoSuchJob(String),
    #[error("job {id} is already {state}")]
    JobOver { id: crate::JobId, state: &'static str },
    #[error("no queue item {0}: see `bosun queue ls`")]
    NoSuchItem(crate::ItemId),
    #[error("item {item} is {state}, not dead: only a dead item is retried")]
    ItemNotDead { item: crate::ItemId, state: String },
    #[error("item {item} is being worked on by job {job}: cancel that first")]
    ItemTaken { item: crate::ItemId, job: String },
    #[error("no worker {0:?}: see `bosun worker ls`")]
    NoSuchWorker(String),
    #[error("worker {0:?} is already stopped")]
    WorkerStopped(String),
    #[error("job {id} is {state}: only a failed or cancelled job is resumed")]
    JobNotResumable { id: crate::JobId, state: &'static str },
    #[error("job {id}'s workspace {workspace} is {state}: a resumed job needs it as it was")]
    JobWorkspaceGone { id: crate::JobId, workspace: WorkspaceId, state: String },
    #[error("no plan {0}: see `bosun plan ls`")]
    NoSuchPlan(String),
    #[error("plan {0} has not failed: only a failed plan is resumed")]
    PlanNotFailed(String),
    #[error("{0}")]
    CannotFork(String),
    #[error("no agent or job {0}: see `bosun ls` and `bosun job ls`")]
    NoSuchWork(String),
    /// A pick that cannot be taken: no such job, variant, or nothing to pick yet.
    #[error("{0}")]
    CannotPick(String),
    #[error("no cron {0:?}: see `bosun cron ls`")]
    NoSuchCron(String),
    #[error("cron {0:?} is already stopped")]
    CronStopped(String),
    #[error("cron {0:?} has a schedule that names no time to come (such as 31 February)")]
    CronNeverFires(String),
    #[error("no escalation {0}: see `bosun escalations`")]
    NoSuchEscalation(crate::EscalationId),
    #[error("the name {name:?} is the id of agent {agent}: choose another --name")]
    NameIsAnId { name: String, agent: AgentId },
    #[error("agent {id} waits at no dialog (it is {state}): nothing to answer")]
    NoDialog { id: AgentId, state: String },
    #[error("cannot answer agent {id}'s dialog: {why}")]
    CannotAnswer { id: AgentId, why: String },
    #[error(transparent)]
    BadMessage(#[from] crate::message_text::MessageTextError),
    #[error("agent {id} is {state}, not waiting for input: without --now the message waits until it does{hint}")]
    NotWaitingForInput { id: AgentId, state: String, hint: &'static str },
    #[error(
        "agent {id} is paused: it reached its budget of {budget}; raise it with `bosun resume {id} --budget MORE`"
    )]
    Paused { id: AgentId, budget: String },
    #[error("agent {id} is not paused: give it a budget with `bosun resume {id} --budget AMOUNT`")]
    NotPaused { id: AgentId },
    #[error("agent {id} has spent {spent}, all of a budget of {budget}: give more")]
    BudgetSpent { id: AgentId, budget: String, spent: String },
    #[error("plan {plan} is not resumed: {why}; its budget is the runbook's as the plan started")]
    PlanBudgetSpent { plan: String, why: String },
    #[error("no agent starts now: {whose} of {budget} is spent for today (UTC)")]
    DailyBudgetSpent { whose: String, budget: String },
    #[error("escalation {0} is already resolved")]
    AlreadyResolved(crate::EscalationId),
    #[error("workspace {id} is {state}: wait for it to finish")]
    WorkspaceBusy { id: WorkspaceId, state: &'static str },
}
