//! Where an agent runs: on this machine as it is (`local`), or in a sandbox (`sandbox`:
//! bubblewrap, the root read-only) where it may write only its workspace, its repository's git
//! directory, its own files and its program's config, with a private `/tmp`, no home directory
//! but its own and, when asked, no network. What a sandbox lets through is decided here; the
//! adapter only spells it as bubblewrap's arguments (and lets the agent's hooks reach the
//! daemon's socket).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::Agent;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "runtime", rename_all = "snake_case")]
pub enum Runtime {
    #[default]
    Local,
    Sandbox {
        /// Whether it reaches the network (false: a network namespace of its own, loopback only).
        network: bool,
    },
}

impl Runtime {
    pub fn is_local(&self) -> bool {
        *self == Self::Local
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Sandbox { network: true } => "sandbox",
            Self::Sandbox { network: false } => "sandbox (no network)",
        }
    }
}

/// What a sandboxed agent's program is let at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sandbox {
    /// Directories and files it may write (each bound at its own path; one that does not exist
    /// is left out).
    pub writable: Vec<PathBuf>,
    /// The git directory of the repository its working directory belongs to is writable too
    /// (a worktree commits there); where it is, is for the adapter to find out.
    pub repository: bool,
    /// Its own home directory, which it still sees (read-only but for its config): every other
    /// home directory is hidden, and `/tmp` is a fresh one of its own.
    pub home: Option<PathBuf>,
    pub network: bool,
}

impl Sandbox {
    /// The sandbox of `agent`.
    pub fn of(agent: &Agent, network: bool) -> Self {
        let mut writable = vec![agent.cwd.clone(), agent.dir.clone()];
        let env = |k: &str| agent.env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = env("HOME");
        // The agent's own configuration: its program keeps its sessions and settings there.
        match agent.driver.kind().name() {
            "claude" => match env("CLAUDE_CONFIG_DIR") {
                Some(dir) => writable.push(dir),
                None => writable.extend(home.iter().flat_map(|h| [h.join(".claude"), h.join(".claude.json")])),
            },
            "codex" => writable.extend(env("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex")))),
            _ => {}
        }
        writable.extend(env("CLAUDELESS_CONFIG_DIR"));
        Self { writable, repository: true, home, network }
    }
}
