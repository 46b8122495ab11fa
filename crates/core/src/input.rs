//! `Input`: everything that reaches the core — requests from the CLI, outcomes of effects,
//! observations of the world — already resolved to exact ids by the daemon.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::driver::Driver;
use crate::{
    AgentId, EscalationId, ExitStatus, MessageId, Name, Nonce, Observation, Policy, SessionName, Source, TimerId,
    WorkspaceId, WorkspaceKind,
};
use crate::{Cron, ItemId, JobId, JobSpec, Origin, Plan, Worker};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Input {
    /// `input`, asked for by request `id`: its events are recorded as that request's.
    Requested {
        id: crate::RequestId,
        input: Box<Input>,
    },
    StartAgent(Box<AgentSpec>),
    /// Starts an agent as `StartAgent` does, its conversation forked from agent `from`'s.
    ForkAgent {
        spec: Box<AgentSpec>,
        from: AgentId,
    },
    StartJob(Box<JobSpec>),
    /// A step's run ended: `ok` when it succeeded; `detail` says why not.
    StepFinished {
        job: JobId,
        step: String,
        attempt: u32,
        ok: bool,
        detail: Option<String>,
    },
    /// Runs a failed or cancelled job again from the step where it stopped.
    ResumeJob {
        job: JobId,
    },
    CancelJob {
        job: JobId,
    },
    QueuePush {
        queue: String,
        data: BTreeMap<String, String>,
        retry: u32,
    },
    QueueRetry {
        item: ItemId,
    },
    QueueDrop {
        item: ItemId,
    },
    StartWorker(Box<Worker>),
    StopWorker {
        name: String,
    },
    /// What an external queue's `list` printed (or why it failed), for the worker that asked.
    Listed {
        worker: String,
        output: Result<String, String>,
    },
    StartPlan(Box<Plan>),
    /// A job's `pr` step ended: its pull request, or why there is none.
    PrStepDone {
        job: JobId,
        step: String,
        attempt: u32,
        workspace: WorkspaceId,
        result: Result<crate::PullRequest, String>,
    },
    /// A pull request was opened for workspace `workspace`'s branch.
    PullRequestOpened {
        workspace: WorkspaceId,
        pr: crate::PullRequest,
    },
    /// The branch of workspace `workspace` was merged as `merged` says.
    WorkMerged {
        workspace: WorkspaceId,
        merged: crate::Merged,
    },
    /// The judge of a plan job's variants ran: it picked `winner` (1 for `v1`), or none, as
    /// `detail` says.
    VariantsJudged {
        plan: String,
        index: usize,
        winner: Option<u32>,
        detail: String,
    },
    /// A person picked variant `variant` of the plan job named `job`.
    PickVariant {
        plan: String,
        job: String,
        variant: u32,
    },
    /// Runs a failed plan again from the job that failed.
    ResumePlan {
        plan: String,
    },
    StartCron(Box<Cron>),
    StopCron {
        name: String,
    },
    /// The daemon could not make the job for an item a worker took, or for a cron's turn.
    DispatchFailed {
        origin: Origin,
        error: String,
    },
    KillAgent {
        agent: AgentId,
    },
    SendText {
        agent: AgentId,
        text: String,
        /// Control characters are typed as they are (keys), not refused.
        #[serde(default)]
        raw: bool,
        /// Typed now or refused: never queued behind a dialog or a turn.
        #[serde(default)]
        now: bool,
    },
    Resolve {
        escalation: EscalationId,
        message: Option<String>,
    },
    /// A person answers the dialog the agent waits at; `screen` is what its screen showed just
    /// before (the options are read from it). `message` is typed once it waits for input.
    Answer {
        agent: AgentId,
        answer: crate::driver::dialog::DialogAnswer,
        message: Option<String>,
        screen: String,
    },
    RemoveWorkspace {
        id: WorkspaceId,
        force: bool,
        probe: WorkspaceProbe,
    },
    /// `bosun pool init`: the repository's pool, made when it has none, grown to `spec.size`.
    PoolInit(Box<crate::PoolSpec>),
    /// `bosun pool resize`: kept to `size` (available slots beyond it are removed now, bound
    /// ones when released).
    PoolResize {
        project: String,
        size: u32,
    },
    /// `bosun pool acquire`: a workspace of the pool for a script, bound like an agent's.
    PoolAcquire {
        workspace: Box<crate::PoolWorkspace>,
    },
    /// `bosun pool release SLOT`: the slot's task (if any) is over and the slot is reset; the
    /// probe is of the task's workspace.
    PoolRelease {
        slot: crate::SlotId,
        force: bool,
        pristine: bool,
        probe: WorkspaceProbe,
    },
    /// `bosun pool rm`: the slot, or every slot of the project and then the pool.
    PoolRemove {
        project: String,
        slot: Option<crate::SlotId>,
        force: bool,
    },
    SlotCreated {
        project: String,
        n: u32,
        commit: String,
    },
    SlotCreateFailed {
        project: String,
        n: u32,
        error: String,
    },
    SlotReset {
        project: String,
        n: u32,
        commit: String,
    },
    SlotResetFailed {
        project: String,
        n: u32,
        error: String,
        dirty: bool,
    },
    SlotRemoved {
        project: String,
        n: u32,
    },
    SlotRemoveFailed {
        project: String,
        n: u32,
        error: String,
    },
    WorkspaceCreated {
        id: WorkspaceId,
    },
    WorkspaceCreateFailed {
        id: WorkspaceId,
        error: String,
        /// The attempt left nothing (no directory, no branch): the record goes too.
        #[serde(default)]
        nothing_left: bool,
    },
    SessionSpawned {
        agent: AgentId,
        pid: Option<u32>,
    },
    SessionSpawnFailed {
        agent: AgentId,
        error: String,
    },
    /// The session's process ended (tmux's pane-died hook, or found dead at reconcile).
    SessionExited {
        session: SessionName,
        status: ExitStatus,
    },
    /// An agent's pod ended (its cluster's watch said so): how its agent ended, and what its
    /// host's save did (none: it could not say).
    PodEnded {
        session: SessionName,
        status: ExitStatus,
        saved: Option<crate::SavedWork>,
    },
    /// The session itself is gone (tmux's session-closed hook).
    SessionClosed {
        session: SessionName,
    },
    SessionKilled {
        agent: AgentId,
    },
    SessionKillFailed {
        agent: AgentId,
        error: String,
    },
    TextDelivered {
        message: MessageId,
    },
    TextFailed {
        message: MessageId,
        error: String,
    },
    /// A driver saw something. `log` is the agent's session log, when the report names it;
    /// `generation` the agent's restart count the reporting process was started with, when the
    /// report carries it (a late report from a replaced process is ignored).
    Observed {
        agent: AgentId,
        source: Source,
        observation: Observation,
        log: Option<PathBuf>,
        generation: Option<u32>,
    },
    /// The agent's own program reported (a Claude hook, Codex's notify), with its raw payload.
    /// `generation`: the restart count the reporting process was started with, when the report
    /// carries it. `spooled_at`: when it was kept because no daemon answered; replayed, a report
    /// older than the agent's last change of state is stale and passed over.
    Report {
        agent: AgentId,
        generation: Option<u32>,
        spooled_at: Option<crate::Timestamp>,
        report: crate::driver::Report,
    },
    /// What the agent said last (the end of its last message), as its driver reports it.
    Said {
        agent: AgentId,
        text: String,
    },
    /// The classifier command of the agent's idle turn `turn` answered (or failed).
    Classified {
        agent: AgentId,
        turn: u64,
        said: String,
        answer: Result<String, String>,
    },
    /// A file changed in the agent's workspace.
    FileWritten {
        agent: AgentId,
    },
    /// New complete lines of one of the agent's logs.
    LogLines {
        agent: AgentId,
        session_log: bool,
        lines: Vec<String>,
    },
    /// Lines of the agent's session log, read from its start for their usage only
    /// (`ReadUsage`).
    UsageLines {
        agent: AgentId,
        lines: Vec<String>,
    },
    /// The agent's screen, as asked for by `CaptureScreen` or `LookAtScreen`.
    Screen {
        agent: AgentId,
        text: String,
        /// When it was read: looks run side by side, and one read before the agent's state last
        /// changed says nothing about it now.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<crate::Timestamp>,
        /// Read until two captures agreed (the program had drawn it): only such a screen leads
        /// to keys. One capture may show a frame half drawn.
        #[serde(default)]
        settled: bool,
    },
    GateFinished {
        agent: AgentId,
        run: String,
        code: Option<i32>,
    },
    TimerFired {
        id: TimerId,
    },
    /// A notice was POSTed to a webhook (`error` when every try failed).
    WebhookSent {
        notice: crate::NoticeKind,
        attempts: u32,
        error: Option<String>,
    },
    /// Whether the workspace of an agent that ended holds changes; `None` when it could not be
    /// checked.
    WorkspaceInspected {
        id: WorkspaceId,
        dirty: Option<bool>,
        /// For a pool's workspace: the commits its branch holds that no other branch, tag or
        /// remote does (the branch is kept when there are any).
        #[serde(default)]
        ahead: u32,
    },
    WorkspaceRemoved {
        id: WorkspaceId,
    },
    WorkspaceRemoveFailed {
        id: WorkspaceId,
        error: String,
        dirty: bool,
    },
    /// The sessions on bosun's tmux server, listed after `as_of` events had been applied: the
    /// fallback that catches a death no hook reported. Agents that started running later are
    /// not judged by it.
    SessionsObserved {
        sessions: Vec<SessionSeen>,
        as_of: u64,
    },
    /// What the daemon found when it started: compared with the records, it adopts, buries
    /// and resumes.
    Reconcile(Reality),
    /// The daemon has started: reconciled, and the reports kept while it was down told. Each
    /// live agent and running job that nothing will move on (`State::stuck`) is put to a person.
    CheckLiveness,
    /// A person raised the agent's budget, or gave it one (`bosun resume --budget`): a paused
    /// agent goes on.
    RaiseBudget {
        agent: AgentId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<crate::budget::Budget>,
    },
    /// The prices the daemon read as it started (bosun's own with the user's file over them).
    PricesRead(crate::price::Prices),
    /// bosun's config file as the daemon read it as it started (none there: the default).
    ConfigRead(crate::config::Config),
}

/// A request to start an agent in a new workspace. The daemon has checked the repository, the
/// ref and the branch, and drawn the nonce.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSpec {
    pub name: Name,
    pub nonce: Nonce,
    /// The directory that holds every workspace (`<state>/workspaces`).
    pub workspaces_root: PathBuf,
    /// The directory that holds every agent's own files (`<state>/agents`).
    pub agents_root: PathBuf,
    pub kind: WorkspaceKind,
    pub settings_from: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_folder: Option<crate::SettingsFolder>,
    pub command: Vec<String>,
    /// What is recorded of its environment: see `Agent::env`.
    pub env: BTreeMap<String, String>,
    /// The names of the variables it inherits, whose values the daemon keeps outside the log.
    pub inherits: Vec<String>,
    pub driver: Driver,
    pub policy: Policy,
    pub prompt: Option<String>,
    /// The shell command prefix hooks call back into bosun with; the agent id and the event
    /// are appended.
    pub hook_command: String,
    /// For a pool's workspace (`kind` is `Pool`): its pool and whether to wait for a slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<crate::PoolAsk>,
    /// What its session runs in.
    #[serde(default, skip_serializing_if = "crate::SessionBackend::is_tmux")]
    pub backend: crate::SessionBackend,
    /// Where it runs.
    #[serde(default, skip_serializing_if = "crate::Runtime::is_local")]
    pub runtime: crate::Runtime,
}

/// What the daemon found out about a workspace before asking to remove it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceProbe {
    /// It holds uncommitted or untracked changes (besides bosun's own files).
    pub dirty: bool,
    /// Commits on its branch not reachable from the commit it started at.
    pub commits_ahead: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reality {
    /// Every session on bosun's tmux server.
    pub sessions: Vec<SessionSeen>,
    /// Workspaces whose directory does not exist.
    pub missing_dirs: Vec<WorkspaceId>,
    /// The pools' available slots, as found.
    #[serde(default)]
    pub slots: Vec<(crate::SlotId, crate::SlotProbe)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSeen {
    pub session: SessionName,
    pub pid: Option<u32>,
    /// Set when the pane's process has exited (the pane is kept by `remain-on-exit`).
    pub exit: Option<ExitStatus>,
}
