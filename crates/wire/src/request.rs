//! What the CLI (and the hooks bosun installs) ask of the daemon.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bosun_core::driver::generic::Patterns;
use bosun_core::driver::DriverKind;
use bosun_core::Policy;
use serde::{Deserialize, Serialize};

/// Every request travels with the sender's version.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope {
    pub version: String,
    pub request: Request,
    /// Drawn by the CLI for a request that changes something, and kept when it is sent again
    /// after the daemon died: one already carried out is answered from what it recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<bosun_core::RequestId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    Status,
    Shutdown,
    StartAgent(Box<StartAgent>),
    /// A stream of recorded events: each as a `Response::Event` frame, from `from` (the first
    /// seq wanted; 0 for the next one recorded), of all or of one agent's or job's records; with
    /// `follow` it goes on as events are recorded, else it ends with `Response::Ok` at the last.
    Events(EventsQuery),
    PoolInit(Box<PoolAsk>),
    PoolList,
    PoolResize {
        project: String,
        size: u32,
    },
    PoolAcquire(Box<PoolAsk>),
    /// A slot (`<project>--<n>`) or the workspace bound to one.
    PoolRelease {
        workspace: String,
        force: bool,
        pristine: bool,
    },
    PoolRemove {
        project: String,
        slot: Option<String>,
        force: bool,
    },
    List,
    Show {
        agent: String,
    },
    Peek {
        agent: String,
        colors: bool,
        /// Lines of what scrolled off above the screen, besides.
        #[serde(default)]
        scrollback: u32,
    },
    Attach {
        agent: String,
    },
    /// Keys a person types into the agent's terminal (the dashboard's panel), at once.
    Press {
        agent: String,
        keys: Vec<bosun_core::TermKey>,
    },
    /// Sizes the agent's terminal; answered with its size before.
    Resize {
        agent: String,
        cols: u16,
        rows: u16,
    },
    Send {
        agent: String,
        text: String,
        /// Control characters are typed as they are (keys).
        #[serde(default)]
        raw: bool,
        /// Typed now or refused, never queued.
        #[serde(default)]
        now: bool,
    },
    Kill {
        agent: String,
    },
    /// Raise the agent's budget (or give it one); a paused agent goes on.
    Resume {
        agent: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<bosun_core::budget::Budget>,
    },
    WorkspaceList,
    WorkspaceRemove {
        workspace: String,
        force: bool,
    },
    WorkspacePrune {
        dry_run: bool,
    },
    /// What no record owns; with `fix`, removed where no one's work is in it. The repository
    /// `cwd` is in is looked at besides those bosun's records name.
    Doctor {
        fix: bool,
        cwd: Option<PathBuf>,
    },
    Escalations {
        all: bool,
    },
    /// `bosun run COMMAND ARGS…` with the runbook files as they are now.
    Run(Box<RunCommand>),
    JobList,
    JobShow {
        job: String,
    },
    JobCancel {
        job: String,
    },
    JobResume {
        job: String,
    },
    /// Writes the job's run memory into `dir` (absolute): `state.json` and `events.jsonl`.
    JobExport {
        job: String,
        dir: PathBuf,
        /// Overwrite an earlier export in `dir`.
        force: bool,
    },
    /// Detection and classification run again over the job's recorded events.
    Replay {
        job: String,
    },
    QueuePush {
        queue: String,
        data: BTreeMap<String, String>,
        retry: u32,
    },
    QueueList {
        queue: Option<String>,
    },
    QueueRetry {
        item: String,
    },
    QueueDrop {
        item: String,
    },
    /// Starts the runbook's worker `name` with the runbook text as it is now.
    WorkerStart {
        name: String,
        sources: Vec<(PathBuf, String)>,
        cwd: PathBuf,
    },
    WorkerStop {
        name: String,
    },
    WorkerList,
    /// Starts the runbook's cron `name` with the runbook text as it is now.
    CronStart {
        name: String,
        sources: Vec<(PathBuf, String)>,
        cwd: PathBuf,
    },
    CronStop {
        name: String,
    },
    /// Starts the cron's job now, once, whether the cron runs or not.
    CronOnce {
        name: String,
        sources: Vec<(PathBuf, String)>,
        cwd: PathBuf,
    },
    CronList,
    /// Starts the runbook's plan `name` with the runbook text as it is now.
    PlanRun {
        name: String,
        sources: Vec<(PathBuf, String)>,
        cwd: PathBuf,
        /// Remove the variants a judge did not keep (their workspaces and branches).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        drop_losers: bool,
    },
    PlanList,
    PlanResume {
        plan: String,
    },
    /// The commits each workspace's branch holds that its base does not: `Response::Ahead`.
    Ahead,
    /// What an agent's or a job's workspace changed against its base: `Response::Diff`.
    Diff {
        target: String,
        patch: bool,
        color: bool,
        /// What is here only: a volume's branch as last brought back, the volume not read.
        #[serde(default)]
        quick: bool,
    },
    /// Merges an agent's or job's branch (see `bosun merge`): `Response::Merged`.
    Merge(Box<MergeAsk>),
    /// A new agent that starts where `agent` is, its conversation forked: `Response::Started`.
    Fork {
        agent: String,
        name: Option<String>,
        prompt: Option<String>,
        /// The caller's environment, which the fork inherits (as `StartAgent::inherit`).
        #[serde(default)]
        inherit: BTreeMap<String, String>,
    },
    /// Pushes an agent's or job's branch and opens a pull request: `Response::PullRequest`.
    Pr(Box<PrAsk>),
    /// What a plan did: `Response::PlanSummary`.
    PlanShow {
        plan: String,
    },
    /// A person keeps variant `variant` of the plan job named `job`: `Response::Plans`.
    PlanPick {
        plan: String,
        job: String,
        variant: u32,
    },
    Resolve {
        escalation: String,
        message: Option<String>,
        /// Also answer the dialog its agent waits at.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<bosun_core::driver::dialog::DialogAnswer>,
    },
    /// Answer the dialog the agent waits at; `message` is typed once it waits for input.
    Answer {
        agent: String,
        answer: bosun_core::driver::dialog::DialogAnswer,
        message: Option<String>,
    },
    Hook(crate::HookEvent),
}

impl Request {
    /// Requests any version may send: enough to see and stop a daemon of another version.
    pub fn version_independent(&self) -> bool {
        matches!(self, Self::Status | Self::Shutdown)
    }

    /// Requests that only look, or that the daemon records nothing of (keys typed, a terminal
    /// sized): they carry no id.
    pub fn only_looks(&self) -> bool {
        matches!(
            self,
            Self::Status
                | Self::List
                | Self::Show { .. }
                | Self::Peek { .. }
                | Self::Attach { .. }
                | Self::Press { .. }
                | Self::Resize { .. }
                | Self::WorkspaceList
                | Self::Doctor { fix: false, .. }
                | Self::Escalations { .. }
                | Self::JobList
                | Self::JobShow { .. }
                | Self::JobExport { .. }
                | Self::Replay { .. }
                | Self::QueueList { .. }
                | Self::WorkerList
                | Self::CronList
                | Self::PlanList
                | Self::PlanShow { .. }
                | Self::Diff { .. }
                | Self::Ahead
                | Self::Events(_)
        )
    }
}

/// Which events a stream gives.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsQuery {
    /// The first seq wanted (1 for the whole log); 0 for the next one recorded.
    pub from: u64,
    pub follow: bool,
    /// Only the records of this agent (id, or a prefix of it, or its name)…
    pub agent: Option<String>,
    /// …or of this job (its steps' jobs, workspace and agents).
    pub job: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartAgent {
    /// `--repo`, made absolute by the CLI; else the CLI's working directory is used.
    pub repo: Option<PathBuf>,
    pub cwd: PathBuf,
    pub workspace: bosun_core::WorkspaceAsk,
    pub branch: Option<String>,
    pub base_ref: Option<String>,
    pub name: Option<String>,
    pub command: Vec<String>,
    /// The variables given with `--env`: recorded, and laid over `inherit`.
    pub env: BTreeMap<String, String>,
    /// The caller's environment, which the agent inherits: kept outside the event log, its
    /// names recorded, its values in a file of mode 0600 removed with the agent's workspace.
    #[serde(default)]
    pub inherit: BTreeMap<String, String>,
    /// The driver, when named; else chosen from the command's name.
    #[serde(default)]
    pub driver: Option<DriverKind>,
    /// The first prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub policy: Policy,
    /// Patterns for the generic driver.
    #[serde(default)]
    pub patterns: Patterns,
    /// For a pool's workspace: the task written to its `TASK.md` (`--task-file`; else the prompt).
    #[serde(default)]
    pub task: Option<String>,
    /// What its session runs in (`--session`).
    #[serde(default)]
    pub session: bosun_core::SessionBackend,
    /// Where it runs (`--runtime`, `--no-network`).
    #[serde(default)]
    pub runtime: bosun_core::Runtime,
    /// For a pool's workspace: fail at once rather than wait when every one is taken.
    #[serde(default)]
    pub no_wait: bool,
    /// The account, named in bosun's config, it signs in with (`--account`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// `bosun pool init` and `bosun pool acquire`: the repository (absolute) and what is asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolAsk {
    pub repo: PathBuf,
    /// Its size (init: default 2, or what the pool has).
    pub size: Option<u32>,
    /// Run once in each new workspace.
    pub setup: Option<String>,
    /// Acquire: the branch made in it (default `ws-<nonce>`), its task, and whether to wait.
    pub branch: Option<String>,
    pub task: Option<String>,
    pub no_wait: bool,
}

/// What `bosun pr` asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrAsk {
    pub target: String,
    pub into: Option<String>,
    pub title: Option<String>,
    pub draft: bool,
}

/// What `bosun merge` asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeAsk {
    /// The agent (id, prefix or name) or job whose branch is merged.
    pub target: String,
    /// The branch it goes into; the one its workspace started from when none.
    pub into: Option<String>,
    pub how: bosun_core::MergeHow,
    pub message: Option<String>,
    /// Commit what its workspace holds not committed first.
    pub commit: bool,
    /// Merge although its agent is working.
    pub force: bool,
    /// On a conflict, ask its agent to resolve it on its branch (`Response::MergeConflictSent`).
    #[serde(default)]
    pub resolve_with_agent: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCommand {
    /// The runbook files, path and text: the job is pinned to this text.
    pub sources: Vec<(PathBuf, String)>,
    pub command: String,
    pub args: Vec<String>,
    /// Where `bosun run` ran: the repository a worktree is made from.
    pub cwd: PathBuf,
}
