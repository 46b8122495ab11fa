//! What the daemon answers.

use std::path::PathBuf;

use bosun_core::{
    Agent, AgentId, BranchKept, Escalation, EscalationId, Message, MessageId, Name, SessionName, SessionState,
    Timestamp, Workspace, WorkspaceId,
};
use bosun_core::{Cron, Item, Job, JobId, Orphan, Plan, Worker};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    Ok,
    /// What a hook prints on stdout for its agent (a permission request's answer).
    HookReply {
        stdout: String,
    },
    Status(DaemonStatus),
    Started(Started),
    /// One event of a stream (`Request::Events`), with its place in the log and its time.
    Event(Box<bosun_core::replay::Recorded>),
    Pools(Pools),
    /// `bosun pool release`: the slot, and what became of its task's workspace and branch (none
    /// when it had no task). The slot is reset in the background.
    Released {
        slot: bosun_core::SlotId,
        removed: Option<Removed>,
    },
    /// `bosun pool acquire`: the workspace, ready, where and on what branch.
    Acquired {
        workspace: WorkspaceId,
        path: PathBuf,
        branch: Option<String>,
    },
    List(Listing),
    Agent(Box<AgentDetail>),
    Screen {
        text: String,
    },
    Attach {
        argv: Vec<String>,
    },
    /// A terminal's size (columns, rows) before it was resized.
    Resized {
        before: (u16, u16),
    },
    /// The last frame of an event stream whose daemon was stopped on purpose (`daemon stop`):
    /// not a crash, so no new daemon is to be asked to go on.
    Stopped,
    Sent {
        message: MessageId,
    },
    /// Queued, not typed yet: the agent shows a dialog (`why` says which), and the message is
    /// typed once it waits for input again.
    SentLater {
        message: MessageId,
        why: String,
    },
    Killed {
        agent: AgentId,
        state: SessionState,
    },
    /// Its budget now, and whether it was paused and goes on.
    Resumed {
        agent: AgentId,
        budget: bosun_core::budget::Budget,
        resumed: bool,
    },
    Workspaces {
        workspaces: Vec<Workspace>,
    },
    Removed(Removed),
    Pruned(Pruned),
    Doctor {
        findings: Vec<Finding>,
    },
    Escalations {
        now: u64,
        escalations: Vec<Escalation>,
        /// What plans wait for a person to do (a variant to keep, a failed job to fix).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        plans: Vec<bosun_core::PlanAsk>,
    },
    Resolved {
        escalation: EscalationId,
        message: Option<MessageId>,
    },
    Answered {
        agent: AgentId,
        answer: bosun_core::driver::dialog::DialogAnswer,
        /// The option that gives the answer, as the dialog words it.
        option: String,
        /// Picked now; else the cursor is being moved to it, and it is picked once a look at
        /// the screen shows the cursor there.
        picked: bool,
        message: Option<MessageId>,
    },
    JobStarted {
        job: JobId,
        workspace: Option<PathBuf>,
        branch: Option<String>,
        /// What the person should know: agent programs that are not logged in.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
    },
    Jobs {
        now: u64,
        jobs: Vec<Job>,
    },
    Items {
        now: u64,
        items: Vec<Item>,
    },
    Workers {
        workers: Vec<Worker>,
    },
    Crons {
        now: u64,
        crons: Vec<Cron>,
    },
    Plans {
        plans: Vec<Plan>,
        /// What the person should know when a plan starts: agent programs that are not logged in.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
    },
    PlanSummary {
        summary: Box<bosun_core::PlanSummary>,
    },
    Diff {
        diff: Box<bosun_core::WorkDiff>,
    },
    /// Commits ahead of its base, by workspace (those git could count).
    Ahead {
        ahead: std::collections::BTreeMap<bosun_core::WorkspaceId, u32>,
    },
    PullRequest {
        pr: bosun_core::PullRequest,
        /// What the person should know: work not committed, which the pull request leaves out.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        warnings: Vec<String>,
    },
    /// A merge conflicted, and its agent was asked (message `message`) to resolve the conflicts
    /// on its branch; nothing was merged.
    MergeConflictSent {
        agent: bosun_core::AgentId,
        message: bosun_core::MessageId,
        files: Vec<String>,
    },
    /// What `bosun merge` did: the merge, the agents it ended, and its workspace's removal (none
    /// when it was kept, as `kept` says).
    Merged {
        merged: bosun_core::Merged,
        ended: Vec<bosun_core::AgentId>,
        removed: Option<Removed>,
        kept: Option<String>,
    },
    Job {
        now: u64,
        job: Box<Job>,
        over: bool,
    },
    /// A job's run memory was written into `dir`: `events` events, up to event `seq`.
    Exported {
        dir: PathBuf,
        events: u64,
        seq: u64,
    },
    Replayed {
        job: JobId,
        replayed: bosun_core::replay::Replayed,
    },
    Error(WireError),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DaemonStatus {
    pub version: String,
    pub pid: u32,
    pub state_dir: PathBuf,
    pub started_at: u64,
    pub agents: usize,
    pub live_agents: usize,
    pub workspaces: usize,
    pub events: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Started {
    pub agent: AgentId,
    pub workspace: WorkspaceId,
    pub path: PathBuf,
    pub branch: Option<String>,
    /// It waits for a pool's workspace (its path is known once one is free).
    #[serde(default)]
    pub waiting: bool,
    /// What the person should know: a client newer than the newest version bosun was tested with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The pools, and who holds each bound slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pools {
    pub now: u64,
    pub pools: Vec<bosun_core::Pool>,
    /// Per workspace bound to a slot or waiting: its agent or job (`agent a1b2 (name)`), or
    /// `acquired` for a script's.
    pub holders: std::collections::BTreeMap<WorkspaceId, String>,
    /// Per workspace bound to a slot: its state, as `bosun ls` gives it (a slot bound to a
    /// workspace holding work not committed is `dirty` there).
    #[serde(default)]
    pub workspaces: std::collections::BTreeMap<WorkspaceId, bosun_core::WorkspaceState>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Listing {
    pub now: u64,
    pub agents: Vec<AgentSummary>,
    pub workspaces: Vec<Workspace>,
}

impl Listing {
    /// Marks the agents in line for a pool's workspace (`waiting`), by the workspaces listed.
    pub fn marked(mut self) -> Self {
        for a in &mut self.agents {
            let ws = self.workspaces.iter().find(|w| w.id == a.workspace);
            a.waiting = ws.is_some_and(|w| w.state == bosun_core::WorkspaceState::Waiting) && !a.state.is_dead();
        }
        self
    }
}

/// An agent as `bosun ls` lists it: everything but its environment (`bosun show` has that).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentSummary {
    pub id: AgentId,
    pub name: Name,
    pub workspace: WorkspaceId,
    pub session: SessionName,
    pub command: Vec<String>,
    pub state: SessionState,
    pub created_at: Timestamp,
    pub state_since: Timestamp,
    pub pid: Option<u32>,
    pub error: Option<String>,
    /// Starting, in line for a pool's workspace: `bosun ls` shows it as `waiting` (see
    /// `Listing::marked`).
    #[serde(default)]
    pub waiting: bool,
    /// The job whose step it runs, if it runs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobId>,
    /// The tokens its model calls used, by model (`""` when its client does not name it).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tokens: std::collections::BTreeMap<String, bosun_core::usage::Tokens>,
    /// What they cost, by model, in nano-dollars: none for a model whose cost is unknown (no
    /// price).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub cost: std::collections::BTreeMap<String, Option<u64>>,
    /// Paused at its budget (and alive): `bosun ls` shows it `paused(budget)`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// When the rate limit it failed on resets, when its client said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_until: Option<Timestamp>,
    /// The plan (its id) its job runs in (set by `AgentSummary::in_state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// What it spent in each hour (UTC, `millis / usage::HOUR_MS`), by model.
    #[serde(default, skip_serializing_if = "bosun_core::usage::Hours::is_empty")]
    pub hours: bosun_core::usage::Hours,
}

impl AgentSummary {
    /// The agent as listed, with what the state knows around it: its job's plan.
    pub fn in_state(a: &Agent, state: &bosun_core::State) -> Self {
        let mut summary = Self::from(a);
        let job = bosun_core::ledger::job_of(a);
        summary.plan = job.and_then(|j| bosun_core::ledger::plan_of(state, j)).map(str::to_owned);
        summary
    }
}

impl AgentSummary {
    /// Its state as `bosun ls` says it: `waiting` in line for a pool's workspace, `paused(budget)`,
    /// or its session's with when a rate limit resets (as `Agent::state_label`).
    pub fn state_label(&self) -> String {
        match (self.waiting, self.paused) {
            (true, _) => "waiting".into(),
            (_, true) => "paused(budget)".into(),
            _ => self.state.label_until(self.limited_until),
        }
    }
}

impl From<&Agent> for AgentSummary {
    fn from(a: &Agent) -> Self {
        Self {
            id: a.id.clone(),
            name: a.name.clone(),
            workspace: a.workspace.clone(),
            session: a.session.clone(),
            command: a.command.clone(),
            state: a.state.clone(),
            created_at: a.created_at,
            state_since: a.state_since,
            pid: a.pid,
            error: a.error.clone(),
            waiting: false,
            job: a.step.as_ref().map(|(job, _, _)| job.clone()),
            tokens: a.usage.by_model.clone(),
            cost: a.usage.by_model.keys().map(|m| (m.clone(), a.usage.cost_of(m))).collect(),
            paused: a.paused.is_some() && !a.state.is_dead(),
            limited_until: a.limited_until,
            plan: None,
            hours: a.usage.by_hour.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentDetail {
    pub now: u64,
    pub agent: Agent,
    pub workspace: Option<Workspace>,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub escalations: Vec<Escalation>,
    /// The pull request opened for its workspace's branch, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<bosun_core::PullRequest>,
    /// The permission mode it runs in, for a client that has them (Claude Code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<bosun_core::RunsIn>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Removed {
    pub workspace: WorkspaceId,
    pub path: PathBuf,
    pub branch_deleted: Option<String>,
    pub branch_kept: Option<BranchKept>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Pruned {
    pub dry_run: bool,
    pub removed: Vec<Removed>,
    /// Workspaces left in place, with the reason.
    pub skipped: Vec<(WorkspaceId, String)>,
}

#[derive(Clone, Debug, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct WireError {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request is wrong: fix the arguments.
    BadRequest,
    NotFound,
    /// The request conflicts with the current state (in use, dirty, already dead).
    Conflict,
    VersionMismatch,
    /// Something outside failed (git, tmux, the disk).
    Failed,
    /// Refused because it would lose work (uncommitted changes, unpushed commits): `--force`.
    WouldLoseWork,
}

impl WireError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}

impl From<bosun_core::Rejection> for WireError {
    fn from(r: bosun_core::Rejection) -> Self {
        use bosun_core::Rejection as R;
        let kind = match r {
            R::NoSuchAgent(_)
            | R::NoSuchWorkspace(_)
            | R::NoSuchJob(_)
            | R::NoSuchItem(_)
            | R::NoSuchWorker(_)
            | R::NoSuchPlan(_)
            | R::NoSuchWork(_)
            | R::NoSuchCron(_)
            | R::NoSuchEscalation(_)
            | R::NoSuchPool(_)
            | R::NoSuchSlot(_) => ErrorKind::NotFound,
            R::AmbiguousAgent { .. }
            | R::AmbiguousWorkspace { .. }
            | R::NameIsAnId { .. }
            | R::BranchTaken { .. }
            | R::CronNeverFires(_)
            | R::CannotPick(_)
            | R::CannotFork(_)
            | R::PoolSizeZero(_)
            | R::BadMessage(_) => ErrorKind::BadRequest,
            R::WorkspaceDirty(_) => ErrorKind::WouldLoseWork,
            _ => ErrorKind::Conflict,
        };
        Self::new(kind, r.to_string())
    }
}

/// A leftover `bosun doctor` found, and what `--fix` did with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    #[serde(flatten)]
    pub orphan: Orphan,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<Fixed>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Fixed {
    Removed,
    Failed { error: String },
}
