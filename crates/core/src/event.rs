//! `Event`: the durable facts bosun records. Each is appended to the log before anyone hears
//! of it, and folded into `State` by `apply` exactly once.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{
    Action, Agent, AgentId, BranchKept, DeathReason, Escalation, EscalationId, Heartbeat, Message, MessageId, Outcome,
    Progress, SessionName, SessionState, Source, Timer, TimerId, Timestamp, Trigger, Workspace, WorkspaceId,
};
use crate::{
    Cause, Cron, Item, ItemId, Job, JobId, JobState, Observation, PermissionDecision, Plan, TurnClass, Verdict, Worker,
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The `events` recorded just before this one were request `id`'s.
    RequestDone {
        id: crate::RequestId,
        events: u32,
    },
    WorkspaceCreating {
        workspace: Workspace,
    },
    WorkspaceReady {
        id: WorkspaceId,
        at: Timestamp,
    },
    /// Creation failed; what part of it was made stays recorded, as Stale (a record with
    /// nothing behind it is removed at once, by the `WorkspaceRemoved` that follows).
    WorkspaceCreateFailed {
        id: WorkspaceId,
        error: String,
    },
    WorkspaceInUse {
        id: WorkspaceId,
        agent: AgentId,
    },
    WorkspaceReleased {
        id: WorkspaceId,
        dirty: bool,
    },
    /// What the host of an agent in a pod did with its work as the agent ended.
    WorkSaved {
        agent: AgentId,
        saved: crate::SavedWork,
    },
    WorkspaceStale {
        id: WorkspaceId,
        why: String,
    },
    WorkspaceRemoving {
        id: WorkspaceId,
        force: bool,
        keep_branch: Option<BranchKept>,
    },
    WorkspaceRemoved {
        id: WorkspaceId,
        branch_kept: Option<BranchKept>,
    },
    WorkspaceRemoveFailed {
        id: WorkspaceId,
        error: String,
        dirty: bool,
    },
    AgentCreated {
        agent: Box<Agent>,
    },
    /// A repository's pool, with no slot yet.
    PoolCreated {
        pool: Box<crate::Pool>,
    },
    PoolResized {
        project: String,
        size: u32,
    },
    /// A pool whose last slot went, removed as asked.
    PoolRemoved {
        project: String,
    },
    SlotCreating {
        project: String,
        slot: crate::Slot,
    },
    SlotCreated {
        project: String,
        n: u32,
        commit: String,
        at: Timestamp,
    },
    /// Its creation failed: the slot is forgotten (what git made of it is for `bosun doctor`).
    SlotCreateFailed {
        project: String,
        n: u32,
        error: String,
    },
    /// A task waits for a slot of the pool: its workspace joins the end of the line.
    TaskWaiting {
        project: String,
        workspace: WorkspaceId,
    },
    /// The slot is handed to the task's workspace (which leaves the line, if it was in it): the
    /// workspace is made there next, its branch at the slot's commit.
    SlotBound {
        project: String,
        n: u32,
        workspace: WorkspaceId,
        at: Timestamp,
    },
    SlotResetting {
        project: String,
        n: u32,
        pristine: bool,
        force: bool,
        delete_branch: Option<String>,
        at: Timestamp,
    },
    SlotReset {
        project: String,
        n: u32,
        commit: String,
        at: Timestamp,
    },
    /// It was found holding work, or its reset failed: never handed out until released by force.
    SlotDirty {
        project: String,
        n: u32,
        error: Option<String>,
        at: Timestamp,
    },
    SlotMissing {
        project: String,
        n: u32,
        at: Timestamp,
    },
    SlotRemoving {
        project: String,
        n: u32,
        at: Timestamp,
    },
    SlotRemoved {
        project: String,
        n: u32,
    },
    SlotRemoveFailed {
        project: String,
        n: u32,
        error: String,
        at: Timestamp,
    },
    AgentRunning {
        id: AgentId,
        pid: Option<u32>,
        at: Timestamp,
    },
    /// Found alive again after a daemon restart.
    AgentAdopted {
        id: AgentId,
        pid: Option<u32>,
        at: Timestamp,
    },
    /// A driver saw the agent change state: `observation`, read from `cause`, when known.
    AgentObserved {
        id: AgentId,
        state: SessionState,
        source: Source,
        at: Timestamp,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        observation: Option<Observation>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cause: Option<Cause>,
    },
    /// Its client said when the rate limit it hit resets: `until`, or, when the time it gave
    /// (`given`) was in the past or more than a day away, that time clamped.
    RateLimitReset {
        id: AgentId,
        until: Timestamp,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        given: Option<Timestamp>,
        at: Timestamp,
    },
    /// A sign of life (recorded at most every few seconds per kind).
    Heartbeat {
        id: AgentId,
        heartbeat: Heartbeat,
        at: Timestamp,
    },
    /// The agent's session log was found.
    AgentLogFound {
        id: AgentId,
        path: PathBuf,
    },
    /// The agent's client named the conversation it holds (opencode's session), which a resume
    /// continues.
    AgentConversationFound {
        id: AgentId,
        conversation: String,
    },
    AgentKillRequested {
        id: AgentId,
    },
    AgentKillFailed {
        id: AgentId,
        error: String,
    },
    AgentDied {
        id: AgentId,
        reason: DeathReason,
        at: Timestamp,
        error: Option<String>,
    },
    /// Restarted in its workspace with its conversation resumed, in a new session.
    AgentResuming {
        id: AgentId,
        at: Timestamp,
        session: SessionName,
        /// The message the restarted agent is given (on its command line, or typed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The `done` or `fail` action ended its work.
    AgentFinished {
        id: AgentId,
        outcome: Outcome,
        at: Timestamp,
    },
    /// A recovery chain moved on: `progress` is where it now stands. `class` names the idle
    /// class whose own chain it is.
    RecoveryStep {
        id: AgentId,
        trigger: Trigger,
        progress: Progress,
        action: Action,
        at: Timestamp,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<TurnClass>,
    },
    /// A person's answer to the dialog the agent waited at was picked: option `option`.
    DialogAnswered {
        id: AgentId,
        answer: crate::driver::dialog::DialogAnswer,
        /// The key typed, in logs written before answers were read by meaning.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<char>,
        #[serde(default)]
        option: String,
        at: Timestamp,
    },
    /// bosun pressed `keys` in the dialog the agent shows, towards the option `option` that
    /// gives `want`; `picked` when they pick it (Enter on it, or its number).
    /// bosun stopped answering the dialog the agent shows (`why`): it is left to a person.
    DialogLeft {
        id: AgentId,
        why: String,
        at: Timestamp,
    },
    DialogKeys {
        id: AgentId,
        want: crate::driver::dialog::Want,
        option: String,
        /// The dialog's options as they were read (`Menu::listed`).
        #[serde(default)]
        menu: String,
        keys: Vec<crate::TermKey>,
        picked: bool,
        at: Timestamp,
    },
    /// The agent's permission policy answered one of its permission requests.
    PermissionAnswered {
        id: AgentId,
        decision: PermissionDecision,
    },
    /// The agent's client refused one of its tool calls by itself (Claude Code's auto-mode
    /// classifier).
    CallBlocked {
        id: AgentId,
        call: crate::BlockedCall,
    },
    /// The agent's client reported running in a permission mode other than the one recorded.
    PermissionModeReported {
        id: AgentId,
        mode: crate::PermissionMode,
    },
    /// The agent's driver reported what it said last (the end of its last message).
    AgentSaid {
        id: AgentId,
        text: String,
    },
    /// The agent's client recorded what one of its model calls used (a larger count of a
    /// response replaces its smaller).
    UsageRecorded {
        id: AgentId,
        used: crate::usage::Used,
        at: Timestamp,
    },
    /// The agent's client said which model it asks (its usage records do not name it).
    UsageModel {
        id: AgentId,
        model: String,
    },
    /// The agent has spent most of its budget (`budget::NOTICE_PERCENT`): a person was told.
    BudgetNear {
        id: AgentId,
        budget: crate::budget::Budget,
        spent: u64,
        at: Timestamp,
    },
    /// The agent's budget is in dollars and some of its responses are of a model with no price,
    /// which that budget cannot count: a person was told, once.
    BudgetUnseen {
        id: AgentId,
        budget: crate::budget::Budget,
        models: Vec<String>,
        at: Timestamp,
    },
    /// The agent reached its budget: paused, nothing more is delivered to it.
    AgentPaused {
        id: AgentId,
        pause: crate::budget::Pause,
    },
    /// A person raised the agent's budget (or gave it this one): it is paused no more.
    AgentUnpaused {
        id: AgentId,
        budget: crate::budget::Budget,
        at: Timestamp,
    },
    /// The prices responses are costed at from now on (those recorded keep their cost).
    PricesSet {
        prices: crate::price::Prices,
    },
    /// A rate-limited agent is moved to account `account` (`switch`): `env`, its client's
    /// variables pointed at the account's config directory, go over its own.
    AgentSwitched {
        id: AgentId,
        account: String,
        env: std::collections::BTreeMap<String, String>,
        /// Its session log's copy there, which its client goes on writing: followed from its
        /// end, as the log it was (what it said is past).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<std::path::PathBuf>,
        at: Timestamp,
    },
    /// bosun's config file as the daemon read it, when it differs from the one recorded before.
    ConfigSet {
        config: crate::config::Config,
    },
    /// The classifier command of the agent's idle turn `turn` was started.
    TurnClassifying {
        id: AgentId,
        turn: u64,
    },
    /// An idle turn was classified. `said` is what was classified, `answer` what the classifier
    /// command gave (when it ran), `turn` the agent's `state_seq` when it went idle.
    TurnClassified {
        id: AgentId,
        turn: u64,
        verdict: Verdict,
        said: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<Result<String, String>>,
        at: Timestamp,
    },
    /// A person resolved the trigger's trouble: its chain starts again.
    RecoveryReset {
        id: AgentId,
        trigger: Trigger,
    },
    GateFinished {
        id: AgentId,
        run: String,
        passed: bool,
        code: Option<i32>,
    },
    /// A notice's delivery to the webhook of its agent or job: after how many tries, and the
    /// last error if none took. The URL is not repeated here: it may carry a token.
    WebhookSent {
        notice: crate::NoticeKind,
        attempts: u32,
        error: Option<String>,
    },
    EscalationRaised {
        escalation: Escalation,
    },
    EscalationResolved {
        id: EscalationId,
        at: Timestamp,
        message: Option<String>,
    },
    JobCreated {
        job: Box<Job>,
    },
    /// The job entered a step (its first try).
    StepEntered {
        job: JobId,
        step: String,
        at: Timestamp,
    },
    /// A failed step waits out its backoff.
    StepWaiting {
        job: JobId,
        at: Timestamp,
    },
    /// A failed step is tried again.
    StepRetried {
        job: JobId,
        attempt: u32,
        at: Timestamp,
    },
    /// A failed or cancelled job runs again; its steps' visits count from zero.
    JobResumed {
        job: JobId,
        at: Timestamp,
    },
    /// The resumed job goes on mid-step: the agent its step's try ran, which died without
    /// finishing its work, is taken up again and restarted with its conversation.
    StepResumed {
        job: JobId,
        step: String,
        attempt: u32,
        agent: AgentId,
        at: Timestamp,
    },
    JobCancelling {
        job: JobId,
    },
    JobFinished {
        job: JobId,
        state: JobState,
        at: Timestamp,
    },
    ItemPushed {
        item: Item,
    },
    /// A worker took the item; `job` works on it.
    ItemTaken {
        item: ItemId,
        job: JobId,
        worker: String,
    },
    /// Its job ended: done, or failed (then pending again, or dead once out of retries).
    ItemFinished {
        item: ItemId,
        ok: bool,
        error: Option<String>,
    },
    /// A dead item is pending again (`bosun queue retry`).
    ItemRequeued {
        item: ItemId,
    },
    ItemDropped {
        item: ItemId,
    },
    WorkerStarted {
        worker: Worker,
    },
    WorkerStopped {
        name: String,
        /// Why it stopped by itself (its budget spent); none when a person stopped it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A worker's external queue was listed: `error` says why it could not be.
    WorkerListed {
        name: String,
        error: Option<String>,
    },
    PlanStarted {
        plan: Plan,
    },
    /// The plan's job at `index` was asked for, as `job`, from `source` with `merged` merged in.
    PlanJobDispatched {
        plan: String,
        index: usize,
        job: JobId,
        source: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        merged: Vec<String>,
        /// Which of its variants this is (1 for `v1`), for a job that runs as variants.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variant: Option<u32>,
    },
    /// A pull request was opened for a workspace's branch (`bosun pr`).
    PullRequestOpened {
        workspace: WorkspaceId,
        pr: crate::PullRequest,
    },
    /// A workspace's branch was merged (`bosun merge`): the agents `ending` names are ended,
    /// then its workspace removed (a pool's released). None in a log of a version whose daemon
    /// did that itself.
    WorkMerged {
        workspace: WorkspaceId,
        merged: crate::Merged,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ending: Option<Vec<AgentId>>,
    },
    /// A merged workspace is kept, not removed, for the reason `why` says (it holds work not
    /// committed): its merge owes nothing more.
    MergedWorkKept {
        workspace: WorkspaceId,
        why: String,
    },
    /// Variant `variant` of the plan's job at `index` ended: done on `target`, or failed.
    PlanVariantEnded {
        plan: String,
        index: usize,
        variant: u32,
        target: Option<String>,
        failure: Option<String>,
    },
    /// The plan's job at `index` keeps variant `variant`, as `by` decided (its judge's words).
    PlanVariantChosen {
        plan: String,
        index: usize,
        variant: u32,
        by: String,
    },
    /// The plan's job at `index` ended: done on `target`, or failed (which stops what uses it).
    PlanJobEnded {
        plan: String,
        index: usize,
        target: Option<String>,
        failure: Option<String>,
    },
    PlanResumed {
        plan: String,
    },
    CronStarted {
        cron: Cron,
    },
    CronStopped {
        name: String,
    },
    /// A cron's turn came: `job` started, or none while its last job still runs.
    CronFired {
        name: String,
        job: Option<JobId>,
        next: Option<Timestamp>,
        #[serde(default)]
        at: Timestamp,
    },
    /// The job for a cron's turn could not be made.
    CronFailed {
        name: String,
        error: String,
    },
    TimerSet {
        timer: Timer,
    },
    TimerCleared {
        id: TimerId,
    },
    MessageQueued {
        message: Message,
    },
    MessageSending {
        id: MessageId,
    },
    MessageDelivered {
        id: MessageId,
    },
    MessageFailed {
        id: MessageId,
        error: String,
    },
    /// The message did not set the agent working: Enter was pressed once more.
    MessageResubmitted {
        id: MessageId,
    },
}
