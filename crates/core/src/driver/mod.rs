//! Agent drivers: how each kind of agent is launched, resumed and read. The pure half lives
//! here — command lines, the Claude settings file with bosun's hooks, and the classification of
//! hook payloads and log lines into `Observation`s; the adapters do the reading and writing.

pub mod argv;
pub mod claude;
pub mod codex;
pub mod dialog;
pub mod generic;

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
    /// Any terminal program: process liveness, output activity and the user's patterns.
    Generic { patterns: generic::Patterns },
}

/// The driver a user can name with `--driver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverKind {
    Claude,
    Codex,
    Generic,
}

impl DriverKind {
    /// The driver for a command, from its program's name: `claude` and `claudeless` are Claude,
    /// `codex` is Codex, anything else is generic.
    pub fn detect(command: &[String]) -> Self {
        let program = command.first().map(|p| Path::new(p).file_name().and_then(|f| f.to_str()).unwrap_or(p));
        match program {
            Some("claude" | "claudeless") => Self::Claude,
            Some("codex") => Self::Codex,
            _ => Self::Generic,
        }
    }
}

impl Driver {
    pub fn kind(&self) -> DriverKind {
        match self {
            Self::Claude { .. } => DriverKind::Claude,
            Self::Codex => DriverKind::Codex,
            Self::Generic { .. } => DriverKind::Generic,
        }
    }

    /// The user's command and first prompt as bosun keeps them: a prompt given on the command
    /// line (`claude "fix it"`) is taken out of it, so that it is given at start only and a
    /// resume sends its own message instead. An explicit `prompt` leaves the command as it is.
    pub fn split_prompt(&self, command: Vec<String>, prompt: Option<String>) -> (Vec<String>, Option<String>) {
        let grammar = match self {
            Self::Claude { .. } => &claude::GRAMMAR,
            Self::Codex => &codex::GRAMMAR,
            Self::Generic { .. } => return (command, prompt),
        };
        match prompt {
            Some(p) => (command, Some(p)),
            None => grammar.split_prompt(&command),
        }
    }

    /// Whether the agent reports through hooks, so that idle is certain when reported.
    pub fn has_hooks(&self) -> bool {
        matches!(self, Self::Claude { .. })
    }

    /// The command line that starts the agent: the user's `command` plus what the driver adds.
    /// `resume` restarts it with its conversation resumed and, when given, a first message.
    pub fn launch(&self, command: &[String], settings: &Path, resume: Option<Option<&str>>) -> Vec<String> {
        let mut argv = command.to_vec();
        match self {
            Self::Claude { session_id } => {
                match resume {
                    None => argv.extend(["--session-id".to_owned(), session_id.clone()]),
                    Some(_) => argv.extend(["--resume".to_owned(), session_id.clone()]),
                }
                argv.extend(["--settings".to_owned(), settings.display().to_string()]);
                if let Some(Some(message)) = resume {
                    argv.push(message.to_owned());
                }
            }
            Self::Codex | Self::Generic { .. } => {}
        }
        argv
    }
}
