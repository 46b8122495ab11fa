//! What bosun learns about an agent's activity, and from where: observations ranked by the
//! confidence of their source (hooks, then the session log, then the process, then the screen).

use serde::{Deserialize, Serialize};

/// Where an observation came from, least confident first: a lower source never overrides what a
/// higher one said, except that the session log alone reports API errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Screen,
    Process,
    Log,
    Hook,
}

/// What a state change was read from, kept with it so that detection can be replayed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Cause {
    /// A Claude hook call: what its driver keeps of its payload.
    Hook { payload: Box<serde_json::Value> },
    /// A line of the agent's session log: at most `LINE_MAX` bytes of it, `cut` when longer
    /// (a cut line cannot be read again, so replay passes it over).
    LogLine {
        line: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cut: bool,
    },
    /// Codex's `notify` call: its JSON argument.
    Notify { payload: String },
    /// Another driver's report: the event it names and what its driver keeps of its payload.
    Report { event: String, payload: String },
    /// A line of a generic agent's terminal output, read with its patterns (cut as a log line).
    Output {
        line: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cut: bool,
    },
}

/// The most of a log line kept as a cause.
pub const LINE_MAX: usize = 16_000;

/// Which dialog holds the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptKind {
    /// A tool needs permission.
    Permission,
    /// A plan waits for approval (ExitPlanMode).
    Plan,
    /// The agent asked the user a question (AskUserQuestion).
    Question,
    /// A start-up dialog: trust this folder, log in, onboarding.
    Setup,
}

/// Why the agent's last request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentError {
    Unauthorized,
    OutOfCredits,
    RateLimited,
    NoInternet,
    Other,
}

/// The kinds of sign of life bosun records the last time of (seed 002's heartbeat signals).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Heartbeat {
    TerminalOutput,
    LogWrite,
    FileWrite,
    HookCall,
}

/// One thing a driver saw.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "observation", rename_all = "snake_case")]
pub enum Observation {
    /// The agent's session started (Claude's SessionStart hook): it is up and waiting for its
    /// first prompt unless one arrives at once.
    Started,
    Working,
    /// Its turn ended; it waits for input.
    Idle,
    /// A dialog holds it; `asks` is what it asks, when the driver can tell.
    Prompt {
        kind: PromptKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        asks: Option<String>,
    },
    Error {
        error: AgentError,
    },
    /// Only a sign of life.
    Activity {
        heartbeat: Heartbeat,
    },
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            Self::Permission => "permission",
            Self::Plan => "plan",
            Self::Question => "question",
            Self::Setup => "setup",
        }
    }
}

impl AgentError {
    pub fn label(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::OutOfCredits => "out_of_credits",
            Self::RateLimited => "rate_limited",
            Self::NoInternet => "no_internet",
            Self::Other => "other",
        }
    }
}
