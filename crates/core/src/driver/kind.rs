//! Which driver runs an agent (`DriverKind`, as users name it) and its record (`Driver`, with
//! what it needs to know, the generic driver's `Patterns` among it): what the agent's record
//! holds, apart from what the drivers do (`AgentDriver`, in `mod.rs`), which reads the agent.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Which driver runs an agent, with what it needs to know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "driver", rename_all = "snake_case")]
pub enum Driver {
    /// Claude Code (or claudeless): bosun picks the session id and installs hooks.
    Claude { session_id: String },
    /// OpenAI's Codex CLI: its rollout log and its `notify` program.
    Codex,
    /// Google's Gemini CLI: bosun picks the session id and installs hooks (an extension).
    Gemini { session_id: String },
    /// pi: bosun picks the session id and loads its extension, which reports pi's events.
    Pi { session_id: String },
    /// opencode: bosun's plugin reports its sessions; `session` is the one it reported last
    /// (opencode's id, `ses_…`), which a resume continues wherever the agent runs.
    Opencode {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// Any terminal program: process liveness, output activity and the user's patterns.
    Generic { patterns: Patterns },
    /// The test driver (`echo`): its program reports through bosun's hook command.
    #[cfg(feature = "test-driver")]
    Echo,
}

/// The driver a user can name with `--driver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverKind {
    Claude,
    Codex,
    Gemini,
    Pi,
    Opencode,
    Generic,
    #[cfg(feature = "test-driver")]
    Echo,
}

/// A driver name no driver has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no driver is called {0:?} (there are {names})", names = DriverKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownDriver(pub String);

impl std::str::FromStr for DriverKind {
    type Err = UnknownDriver;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.iter().copied().find(|k| k.name() == s).ok_or_else(|| UnknownDriver(s.to_owned()))
    }
}

impl DriverKind {
    /// Every driver, as users name them.
    pub const ALL: &'static [DriverKind] = &[
        Self::Claude,
        Self::Codex,
        Self::Gemini,
        Self::Pi,
        Self::Opencode,
        Self::Generic,
        #[cfg(feature = "test-driver")]
        Self::Echo,
    ];

    /// Its name, as `--driver` and runbooks give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Pi => "pi",
            Self::Opencode => "opencode",
            Self::Generic => "generic",
            #[cfg(feature = "test-driver")]
            Self::Echo => "echo",
        }
    }

    /// The driver asked for, else the one [`detect`](Self::detect) finds for `command`.
    pub fn chosen(given: Option<Self>, command: &[String]) -> Self {
        given.unwrap_or_else(|| Self::detect(command))
    }

    /// The driver for a command, from its program's name: `claude` and `claudeless` are Claude,
    /// `codex` is Codex, `gemini` is Gemini CLI, `pi` is pi, `opencode` is opencode, anything else
    /// is generic.
    pub fn detect(command: &[String]) -> Self {
        let program = command.first().map(|p| Path::new(p).file_name().and_then(|f| f.to_str()).unwrap_or(p));
        match program {
            Some("claude" | "claudeless") => Self::Claude,
            Some("codex") => Self::Codex,
            Some("gemini") => Self::Gemini,
            Some("pi") => Self::Pi,
            Some("opencode") => Self::Opencode,
            _ => Self::Generic,
        }
    }
}

impl Driver {
    pub fn kind(&self) -> DriverKind {
        match self {
            Self::Claude { .. } => DriverKind::Claude,
            Self::Codex => DriverKind::Codex,
            Self::Gemini { .. } => DriverKind::Gemini,
            Self::Pi { .. } => DriverKind::Pi,
            Self::Opencode { .. } => DriverKind::Opencode,
            Self::Generic { .. } => DriverKind::Generic,
            #[cfg(feature = "test-driver")]
            Self::Echo => DriverKind::Echo,
        }
    }

    /// The conversation its client named (a report of its) is the one it holds now: kept by a
    /// driver whose client picks it (opencode's session), never by one bosun picks it for.
    pub fn found_conversation(&mut self, conversation: &str) {
        if let Self::Opencode { session } = self {
            *session = Some(conversation.to_owned());
        }
    }

    /// The conversation its client named, when it keeps one so.
    pub fn found(&self) -> Option<&str> {
        match self {
            Self::Opencode { session } => session.as_deref(),
            _ => None,
        }
    }
}

/// Regular expressions matched against the agent's terminal output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patterns {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
