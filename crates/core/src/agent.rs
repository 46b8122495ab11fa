//! The agent record, its session states (seed 002) and the messages sent to it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::driver::kind::Driver;
use crate::{
    AgentError, AgentId, Heartbeat, MessageId, Name, Policy, PromptKind, SessionName, Source, Timestamp, Trigger,
    WorkspaceId,
};
use crate::{JobId, SessionBackend, TurnClass, Verdict};

/// One agent process running in a session inside a workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    pub id: AgentId,
    pub name: Name,
    pub workspace: WorkspaceId,
    pub session: SessionName,
    pub cwd: PathBuf,
    pub command: Vec<String>,
    /// The variables it was given (`--env`, a runbook's `env`) and those bosun reads itself
    /// (see [`RECORDED_ENV`]): never the rest of the caller's environment.
    pub env: BTreeMap<String, String>,
    /// The names of the variables it inherited from its caller, whose values are kept outside
    /// the log in [`Agent::inherited_env`] (mode 0600).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherits: Vec<String>,
    pub state: SessionState,
    pub created_at: Timestamp,
    /// When the state last changed.
    pub state_since: Timestamp,
    /// How many events had been applied when the state last changed: an order that does not
    /// depend on the clock.
    #[serde(default)]
    pub state_seq: u64,
    pub pid: Option<u32>,
    /// `bosun kill` was asked for; whatever ends the session now ends it as Killed.
    pub kill_requested: bool,
    pub error: Option<String>,
    pub driver: Driver,
    pub policy: Policy,
    /// The first prompt, given to the agent at start (not again on resume).
    pub prompt: Option<String>,
    /// Where the agent's own files live (`<state>/agents/<id>`): its settings, its output.
    pub dir: PathBuf,
    /// The shell command prefix its hooks call back into bosun with.
    pub hook_command: String,
    /// The source that reported the agent's current state.
    pub source: Option<Source>,
    /// The session log being read, once known.
    pub log: Option<PathBuf>,
    /// The last time of each sign of life (recorded at most every few seconds).
    pub heartbeats: BTreeMap<Heartbeat, Timestamp>,
    /// How far each trigger's recovery chain has got.
    pub recovery: BTreeMap<Trigger, Progress>,
    /// How far each idle class's own chain has got.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub class_recovery: BTreeMap<TurnClass, Progress>,
    /// What the agent last said (the end of its last message), when its driver reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
    /// The tokens its model calls used, as its client recorded them in its session.
    #[serde(default, skip_serializing_if = "crate::usage::Usage::is_empty")]
    pub usage: crate::usage::Usage,
    /// What its pod's host did with its work as it ended (an agent in a pod).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<SavedWork>,
    /// The classification of its last idle turn, and that turn (its idle state's `state_seq`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_turn: Option<u64>,
    /// The idle turn whose classifier command runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classifying: Option<u64>,
    /// The message its last restart gave it (a crash that cut the restart short gives it again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_message: Option<String>,
    /// What the dialog that holds it asks, when its driver could tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<String>,
    /// The newest permission requests its policy answered, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permissions: Vec<crate::PermissionDecision>,
    /// The newest call its client refused by itself (Claude Code's auto-mode classifier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<crate::BlockedCall>,
    /// The permission mode its client last reported running in (Claude's hooks say it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<crate::PermissionMode>,
    /// How many times it was restarted with its conversation resumed.
    pub restarts: u32,
    /// Set by the `done` and `fail` actions: its work is over.
    pub outcome: Option<Outcome>,
    /// The job step (and try) this agent runs, if it runs one.
    #[serde(default)]
    pub step: Option<(JobId, String, u32)>,
    /// What its session runs in.
    #[serde(default, skip_serializing_if = "SessionBackend::is_tmux")]
    pub backend: SessionBackend,
    /// Where it runs.
    #[serde(default, skip_serializing_if = "crate::Runtime::is_local")]
    pub runtime: crate::Runtime,
    /// The agent it was forked from, whose conversation its first launch starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<Fork>,
    /// Where its work stands in a plan (its job, branches and dependencies), which every message
    /// bosun sends it carries: its prompt, nudges and resumes (seed 003 §6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The dialog bosun is answering on its screen, key by key, until the answer is picked (and,
    /// for the trust dialog, seen to be taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answering: Option<Answering>,
    /// A person was told it has spent most of its budget (of the budget it has now).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub budget_told: bool,
    /// A person was told its dollar budget cannot count some of its responses (their model has
    /// no price).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub budget_unseen_told: bool,
    /// It reached its budget: bosun stopped its turn and delivers nothing more to it (no nudge,
    /// resume or message) until a person raises the budget (`bosun resume --budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<crate::budget::Pause>,
    /// When the rate limit it failed on resets, as its client said it (clamped to a day at
    /// most), while it waits on it; none when its client gave no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_until: Option<Timestamp>,
}

/// A dialog being answered: what for, how many times keys were pressed, when last, and when
/// the answer was picked (Enter, or its number).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answering {
    pub want: crate::driver::dialog::Want,
    pub presses: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressed_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub picked_at: Option<Timestamp>,
    /// The options of the dialog, as read when keys were last pressed in it.
    #[serde(default)]
    pub menu: String,
    /// The option bosun goes for.
    #[serde(default)]
    pub option: String,
}

/// Where a fork (`bosun fork`) starts its conversation: the agent forked, its conversation (a
/// session id), its transcript, if one was found, and its last words then (which its transcript
/// must hold before it is copied).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fork {
    pub agent: AgentId,
    pub conversation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
}

/// Inherited variables whose values are recorded all the same: paths bosun itself reads to find
/// an agent's session logs. Everything else inherited is recorded by name only.
pub const RECORDED_ENV: &[&str] = &[
    "HOME",
    "CLAUDE_CONFIG_DIR",
    "CLAUDELESS_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
];

/// The file, in an agent's own directory, that holds the values of what it inherited.
pub const INHERITED_ENV_FILE: &str = "inherited-env.json";

/// What a new agent is made of: the rest of an `Agent` is the bookkeeping of a fresh start.
pub struct NewAgent {
    pub id: AgentId,
    pub name: Name,
    pub workspace: WorkspaceId,
    pub cwd: PathBuf,
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub inherits: Vec<String>,
    pub driver: Driver,
    pub policy: Policy,
    pub prompt: Option<String>,
    pub dir: PathBuf,
    pub hook_command: String,
    pub step: Option<(JobId, String, u32)>,
    pub backend: SessionBackend,
    pub runtime: crate::Runtime,
}

impl Agent {
    /// Where the agent's terminal output is written (rotated to `output.log.1` at a size).
    pub fn output_log(&self) -> std::path::PathBuf {
        self.dir.join("output.log")
    }

    /// Where the values of the variables it inherited are kept, when it inherited any.
    pub fn inherited_env(&self) -> Option<PathBuf> {
        (!self.inherits.is_empty()).then(|| self.dir.join(INHERITED_ENV_FILE))
    }

    /// A new agent, starting at `now`.
    pub fn starting(new: NewAgent, now: Timestamp) -> Self {
        let NewAgent {
            id,
            name,
            workspace,
            cwd,
            command,
            env,
            inherits,
            driver,
            policy,
            prompt,
            dir,
            hook_command,
            step,
            backend,
            runtime,
        } = new;
        let (command, prompt) = driver.split_prompt(command, prompt);
        Self {
            session: id.session(),
            id,
            name,
            workspace,
            cwd,
            command,
            env,
            inherits,
            state: SessionState::Starting,
            created_at: now,
            state_since: now,
            state_seq: 0,
            pid: None,
            kill_requested: false,
            error: None,
            driver,
            policy,
            prompt,
            dir,
            hook_command,
            source: None,
            log: None,
            heartbeats: BTreeMap::new(),
            recovery: BTreeMap::new(),
            class_recovery: BTreeMap::new(),
            said: None,
            usage: crate::usage::Usage::default(),
            saved: None,
            verdict: None,
            verdict_turn: None,
            classifying: None,
            resume_message: None,
            asks: None,
            permissions: Vec::new(),
            blocked: None,
            permission_mode: None,
            restarts: 0,
            outcome: None,
            step,
            backend,
            runtime,
            context: None,
            answering: None,
            limited_until: None,
            fork: None,
            budget_told: false,
            budget_unseen_told: false,
            paused: None,
        }
    }

    /// Its state as people read it: `paused(budget)` while paused and alive, else its session's
    /// with when a rate limit resets. `AgentSummary::state_label` is the same for a summary.
    pub fn state_label(&self) -> String {
        match &self.paused {
            Some(_) if !self.state.is_dead() => "paused(budget)".into(),
            _ => self.state.label_until(self.limited_until),
        }
    }

    /// `text` as bosun sends it: with its plan context after it, when it has one.
    pub fn with_context(&self, text: &str) -> String {
        match &self.context {
            Some(context) => format!("{text}\n\n{context}"),
            None => text.to_owned(),
        }
    }
}

/// A trigger's place in its chain: the step, and how many tries of it were used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub step: usize,
    pub used: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Done,
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SessionState {
    Starting,
    /// Up and working.
    Running,
    /// Its turn ended; it waits for input.
    Idle,
    /// A dialog holds it.
    Prompt {
        kind: PromptKind,
    },
    /// Its last request failed; it waits for input.
    Error {
        error: AgentError,
    },
    Dead {
        reason: DeathReason,
    },
}

impl SessionState {
    pub fn is_dead(&self) -> bool {
        matches!(self, Self::Dead { .. })
    }

    /// Its session is up: started and not dead.
    pub fn is_up(&self) -> bool {
        !matches!(self, Self::Starting | Self::Dead { .. })
    }

    pub fn label(&self) -> String {
        match self {
            Self::Starting => "starting".into(),
            Self::Running => "running".into(),
            Self::Idle => "idle".into(),
            Self::Prompt { kind } => format!("prompt({})", kind.label()),
            Self::Error { error } => format!("error({})", error.label()),
            Self::Dead { reason } => format!("dead({})", reason.label()),
        }
    }

    /// As `label`, with a rate limit's reset when known (`error(rate_limited until 12:04:31)`).
    pub fn label_until(&self, until: Option<Timestamp>) -> String {
        match (self, until) {
            (Self::Error { error }, Some(t)) => format!("error({} until {})", error.label(), t.clock()),
            _ => self.label(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum DeathReason {
    /// Exited with status 0.
    Completed,
    /// Ended by `bosun kill`.
    Killed,
    /// Exited non-zero; a death by signal N is reported as 128 + N, as shells do.
    Crashed { code: i32 },
    /// Its session vanished without bosun seeing how.
    Lost,
    /// Never started: its workspace or session could not be created (see the agent's error).
    FailedToStart,
}

impl DeathReason {
    pub fn label(&self) -> String {
        match self {
            Self::Completed => "completed".into(),
            Self::Killed => "killed".into(),
            Self::Crashed { code } => format!("crashed:{code}"),
            Self::Lost => "lost".into(),
            Self::FailedToStart => "failed-to-start".into(),
        }
    }
}

/// What the host of an agent in a pod did with its work: whether the branch was pushed, whether
/// work was left uncommitted (no push carries it), and what git said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedWork {
    pub pushed: bool,
    pub dirty: bool,
    pub said: String,
}

impl SavedWork {
    /// Whether nothing of the work is only in the pod.
    pub fn is_safe(&self) -> bool {
        self.pushed && !self.dirty
    }
}

/// How a session's process ended, as tmux reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl ExitStatus {
    /// The process is gone and nothing says how it ended.
    pub const UNKNOWN: Self = Self { code: None, signal: None };

    pub fn code(code: i32) -> Self {
        Self { code: Some(code), signal: None }
    }

    /// What this exit means for an agent bosun did not kill.
    pub fn reason(self) -> DeathReason {
        match (self.code, self.signal) {
            (_, Some(sig)) => DeathReason::Crashed { code: 128 + sig },
            (Some(0), None) => DeathReason::Completed,
            (Some(code), None) => DeathReason::Crashed { code },
            (None, None) => DeathReason::Lost,
        }
    }
}

/// Text typed into an agent's session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub id: MessageId,
    pub agent: AgentId,
    pub text: String,
    pub state: MessageState,
    pub at: Timestamp,
    #[serde(default)]
    pub kind: MessageKind,
    /// How many events had been applied when it began to be typed.
    #[serde(default)]
    pub sent_seq: u64,
    /// Typed with its control characters (`bosun send --raw`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raw: bool,
}

/// Who sent a message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// `bosun send`.
    #[default]
    User,
    /// A policy's nudge.
    Nudge,
    /// `bosun resolve --message`.
    Resolve,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum MessageState {
    /// Waiting for the agent to wait for input.
    Queued,
    /// Being typed.
    Sending,
    Delivered,
    Failed {
        error: String,
    },
}
/// Which agent has a config of its own (`OwnConfig`): a confined one (a sandbox, a container)
/// whose driver's program keeps one, or one here whose driver's program always needs one.
/// (A pod's config is its claim's: see `POD_CONFIG`.)
impl crate::OwnConfig {
    pub fn of(agent: &Agent) -> Option<Self> {
        let always = agent.driver.behaviour().own_config_always() && agent.runtime.pod().is_none();
        if !agent.runtime.confines() && !always {
            return None;
        }
        Self::new(agent.driver.kind(), &agent.dir, &agent.env)
    }

    /// Where agent `a`'s program keeps its config: its own when it has one, else the user's its
    /// recorded `env` names.
    pub fn dir_of(a: &Agent) -> Option<std::path::PathBuf> {
        match Self::of(a) {
            Some(own) => Some(own.dir),
            None => a.driver.behaviour().user_config(&a.env)?.dir,
        }
    }
}
