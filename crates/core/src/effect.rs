//! `Effect`: what the core asks of the outside world. The daemon carries each out off the
//! engine loop and feeds its outcome back as an `Input`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{AgentId, MessageId, SessionName, TimerId, Timestamp, WorkspaceId, WorkspaceKind};
use crate::{JobId, Notice, Origin, PlanBranch, StepRun, WebhookUrl};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Effect {
    /// Make the directory (or worktree) and copy the repo's Claude settings into it. `resume`
    /// when a crash may have left part of it made: a branch already there is then taken over.
    CreateWorkspace {
        id: WorkspaceId,
        path: PathBuf,
        kind: WorkspaceKind,
        settings_from: Option<PathBuf>,
        /// A folder of settings copied in too (a folder or a worktree).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settings_folder: Option<crate::SettingsFolder>,
        resume: bool,
    },
    /// Write `files` where the session runs (in a pod, its session host writes them), then
    /// start the agent's command in a new session whose output is copied to `output`. Reports `SessionSpawned` or `SessionSpawnFailed`; a session of that name that
    /// already runs counts as spawned. `replace` names a session to end first.
    SpawnSession {
        agent: AgentId,
        session: SessionName,
        /// Files copied first, each `(from, to)` unless `to` is there (a fork's conversation,
        /// where its program looks for it).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        copies: Vec<(PathBuf, PathBuf)>,
        cwd: PathBuf,
        env: BTreeMap<String, String>,
        /// The config bosun makes for its program before anything else, unless it is there
        /// already (a sandbox's or a container's agent: see `OwnConfig`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config: Option<Box<crate::OwnConfig>>,
        command: Vec<String>,
        files: Vec<(PathBuf, String)>,
        output: PathBuf,
        replace: Option<SessionName>,
        /// Before ending `replace` and making `copies`: wait, a few seconds at most, until this
        /// file holds this text (a transcript, its agent's last words), so the resume or the
        /// fork finds the whole turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold: Option<(PathBuf, String)>,
        /// The file (mode 0600, outside the log) that holds the values of the variables it
        /// inherited: read and put under `env`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inherit: Option<PathBuf>,
        /// What the session runs in.
        #[serde(default, skip_serializing_if = "crate::SessionBackend::is_tmux")]
        backend: crate::SessionBackend,
        /// Where it starts: its runtime's place for it.
        #[serde(default, skip_serializing_if = "crate::Place::is_here")]
        place: crate::Place,
    },
    /// End the session; a session that is already gone counts as killed.
    KillSession { agent: AgentId, session: SessionName },
    /// Type the text literally, wait a moment, press Enter.
    SendText { message: MessageId, session: SessionName, text: String },
    /// Press Enter (to submit a message that was typed).
    PressEnter { session: SessionName },
    /// Press these keys (to move through a dialog's options and pick one, read from its screen).
    PressKeys { session: SessionName, keys: Vec<crate::TermKey> },
    /// Read the agent's screen once its program has drawn it (settled, as a `LookAtScreen`
    /// that is) and report it; with its colour escapes when `colors` (its driver's
    /// `screen_colors`).
    CaptureScreen {
        agent: AgentId,
        session: SessionName,
        #[serde(default)]
        colors: bool,
    },
    /// Its output changed: read its screen a moment later and report it. Requests made while
    /// one of the same kind is pending are one look. `settled`: read until two captures a
    /// moment apart agree, for a look that keys may follow (a dialog bosun answers: a half-drawn
    /// menu could pick a wrong option); else one capture, for a look that only tells the state.
    /// With its colour escapes when `colors`, as `CaptureScreen`.
    LookAtScreen {
        agent: AgentId,
        session: SessionName,
        #[serde(default)]
        settled: bool,
        #[serde(default)]
        colors: bool,
    },
    /// Make slot `n` of `project`'s pool (a detached worktree of `repo` at `base_ref`, with the
    /// repository's `.worktreeinclude` files and `setup` run once); report `SlotCreated`.
    CreateSlot { project: String, n: u32, repo: PathBuf, path: PathBuf, base_ref: String, setup: Option<String> },
    /// Return slot `n` to its base; report `SlotReset` or `SlotResetFailed`.
    ResetSlot { project: String, n: u32, reset: crate::SlotReset },
    /// Remove slot `n`'s worktree; report `SlotRemoved` or `SlotRemoveFailed`.
    RemoveSlot { project: String, n: u32, repo: PathBuf, path: PathBuf },
    /// Find out whether the workspace holds changes (files other than `owned`), and how many
    /// commits of its branch are its own (for a merged one's, `into`, its target, lacks);
    /// report `WorkspaceInspected`.
    InspectWorkspace {
        id: WorkspaceId,
        path: PathBuf,
        kind: WorkspaceKind,
        owned: Vec<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        into: Option<String>,
    },
    /// Remove the directory or worktree (forcibly only when `force`), delete the files bosun put
    /// there first, and delete the branch only when `delete_branch`.
    RemoveWorkspace {
        id: WorkspaceId,
        path: PathBuf,
        kind: WorkspaceKind,
        force: bool,
        delete_branch: bool,
        owned: Vec<PathBuf>,
        /// Files outside the workspace that go with it: the inherited environments of the
        /// agents that ran there, which cannot start again once it is gone.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        forget: Vec<PathBuf>,
    },
    /// Follow a log — the agent's session log (`session_log`) or its terminal output — from its
    /// start (a file new with this session) or from its end.
    WatchLog { agent: AgentId, path: PathBuf, session_log: bool, from_start: bool },
    /// Read the agent's session log from its start for the usage it records and an error it
    /// ends on (`UsageLines`): what its client wrote while bosun was down, which following it
    /// from its end misses.
    ReadUsage { agent: AgentId, path: PathBuf },
    /// Report file changes under the agent's workspace (outside `.git`) as signs of life.
    WatchWorkspace { agent: AgentId, path: PathBuf },
    /// Stop following the agent's logs and workspace.
    UnwatchLogs { agent: AgentId },
    /// Find the Codex rollout log of the session started in `cwd` since `since` under
    /// `sessions` (`$CODEX_HOME/sessions`), and report it.
    FindCodexLog { agent: AgentId, sessions: PathBuf, cwd: PathBuf, since: Timestamp },
    /// Run `run` with `sh -c` in `cwd`, as long as it takes; report how it exited.
    RunGate { agent: AgentId, run: String, cwd: PathBuf },
    /// Run the classifier `command` in `cwd` with `said` on stdin (and in
    /// `$BOSUN_LAST_MESSAGE`); report `Classified` with its output, or why it failed.
    Classify { agent: AgentId, turn: u64, command: Vec<String>, cwd: PathBuf, said: String },
    /// Tell a person: a desktop notification where there is a desktop, else the log; and POST
    /// the notice as JSON to `webhook`, retried with backoff, reporting `WebhookSent`.
    Notify { notice: Notice, desktop: bool, webhook: Option<WebhookUrl> },
    /// Run a job's step: a shell command, an agent, or a job; report `StepFinished`.
    /// Templates are rendered: a shell step's text is the command to run with `sh -c` in `cwd`,
    /// its output going to `log`.
    /// `run_dir` is this run's own (its step, visit, try and the job's resumes): a shell step that
    /// outlives a crash of bosun is found there, running or finished, and not run twice.
    /// Run a step's try; a shell step's values are in `env` (its text names them).
    RunStep {
        job: JobId,
        step: String,
        attempt: u32,
        run: StepRun,
        env: BTreeMap<String, String>,
        cwd: PathBuf,
        log: PathBuf,
        run_dir: PathBuf,
    },
    /// Stop whatever the job's current step runs.
    CancelStep { job: JobId, step: String },
    /// Make the job for a queue item a worker takes (its runbook text, its item data), or for a
    /// cron's turn, and start it; or report `DispatchFailed`.
    Dispatch {
        origin: Origin,
        job: JobId,
        data: BTreeMap<String, String>,
        /// For an external queue's item: the command that claims it (rendered), run first.
        take: Option<crate::template::ShellCommand>,
        /// For a plan's job: the branch its worktree is made on, and from where.
        branch: Option<PlanBranch>,
        /// The worker's (cron's, plan's) job, as lowered, and its repository.
        job_name: String,
        book: crate::JobBook,
        cwd: PathBuf,
    },
    /// A job's `pr` step: push `branch` of `repo` and open a pull request for it into the
    /// branch `base_ref` names (else the repository's current branch); report `PrStepDone`.
    OpenPr {
        job: JobId,
        step: String,
        attempt: u32,
        workspace: crate::WorkspaceId,
        repo: PathBuf,
        branch: String,
        base_ref: Option<String>,
        draft: bool,
        title: String,
        body: String,
    },
    /// The plan ended (done, or stopped): its summary goes at the end of its log.
    SummarizePlan { plan: String },
    /// Run the judge of a plan job's variants over `candidates` (those done), in `repo`, each
    /// compared with `source`; report `VariantsJudged`.
    JudgeVariants {
        plan: String,
        index: usize,
        judge: crate::Judge,
        repo: PathBuf,
        source: String,
        candidates: Vec<crate::VariantCandidate>,
    },
    /// Run an external queue's `list` command with `sh -c` in `cwd`; report `Listed`.
    ListQueue { worker: String, list: String, cwd: PathBuf },
    /// Report `TimerFired` at `at`.
    SetTimer { id: TimerId, at: Timestamp },
}
