//! The config directory bosun makes for an agent it confines (`--runtime sandbox`, `docker`):
//! its program (Claude Code, Codex) keeps its conversations, settings and state there
//! (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`), never in the user's own config, in which an agent that
//! could write it would plant hooks or MCP servers that run on this machine the next time the
//! user starts the program. It is `<agent dir>/config`: it outlives a restart (a resume finds
//! the conversation there), and stays with the agent's other files.
//!
//! It is made once, before the agent's first start, from as little of the user's config as lets
//! the program run as the user's does, and bosun never writes it again. Which files, and how
//! each is made of the user's, is each driver's to say (`AgentDriver::config_seeds`: Claude
//! Code's in `driver/claude_config.rs`, Codex's in `driver/codex_config.rs`); so are where the
//! user's config is (`user_config`) and the variables that point its program at one
//! (`point_config`). Nothing else of the user's: not their other conversations, history,
//! memory, commands, agents, skills, plugins or MCP servers. bosun's own hooks are given on the
//! command line (`--settings`, `-c notify=…`), as everywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::driver::DriverKind;

/// The name of an agent's own config directory in its directory.
pub const OWN_CONFIG: &str = "config";

/// The config directory an agent's program is given of its own, and the user's it is made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnConfig {
    /// `<agent dir>/config`.
    pub dir: PathBuf,
    /// The driver whose program it is for (recorded as `client`: `claude`, `codex`).
    #[serde(rename = "client")]
    pub driver: DriverKind,
    /// The user's config directory: `CLAUDE_CONFIG_DIR` (else `~/.claude`), `CODEX_HOME` (else
    /// `~/.codex`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<PathBuf>,
    /// The state file of the user's its program keeps apart from its config directory (Claude
    /// Code's `.claude.json`), when it keeps one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<PathBuf>,
}

/// Where the user's config of a driver's program is, as an agent's recorded environment names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserConfig {
    /// Its directory, when known.
    pub dir: Option<PathBuf>,
    /// The state file it keeps apart from the directory, when it keeps one.
    pub state: Option<PathBuf>,
}

/// One file of an own config: its name there, the user's file it comes from, how it is made.
#[derive(Clone, Debug)]
pub struct Seed {
    pub name: &'static str,
    pub from: Option<PathBuf>,
    pub how: Seeding,
}

/// How a file of an own config is made from the user's.
#[derive(Clone, Copy, Debug)]
pub enum Seeding {
    /// Copied as it is, when the user has it (a login).
    Copy,
    /// Made by the driver from the user's text (when they have the file) and the folders its
    /// program is to trust; none when there is nothing to write.
    Made(MakeSeed),
}

/// How a driver makes a file of an own config: from the user's text (when they have the file)
/// and the folders its program is to trust, the file's text, or none to write.
pub type MakeSeed = fn(user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, SeedError>;

/// A file of the user's that an own config's file cannot be made of.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("it is not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("it is not a JSON object")]
    NotObject,
    #[error("it is not TOML: {0}")]
    NotToml(toml::de::Error),
    #[error("cannot write it as TOML: {0}")]
    Toml(toml::ser::Error),
}

impl OwnConfig {
    /// The own config, in the directory `agent_dir` of an agent, of its driver's program, made
    /// from the user's config its recorded `env` names; none when its program keeps no config.
    /// (Which agent has one: `OwnConfig::of`.)
    pub fn new(driver: DriverKind, agent_dir: &Path, env: &BTreeMap<String, String>) -> Option<Self> {
        let user = driver.behaviour().user_config(env)?;
        Some(Self { dir: agent_dir.join(OWN_CONFIG), driver, user: user.dir, user_state: user.state })
    }

    /// The files it is made of.
    pub fn seeds(&self) -> Vec<Seed> {
        self.driver.behaviour().config_seeds(self)
    }

    /// Points its program's variables in `env` at it.
    pub fn point(&self, env: &mut BTreeMap<String, String>) {
        self.driver.behaviour().point_config(&self.dir, env);
    }

    /// The user's file `name` in their config directory, when it is known.
    pub fn user_file(&self, name: &str) -> Option<PathBuf> {
        self.user.as_ref().map(|u| u.join(name))
    }
}

impl Seeding {
    /// The file made from the user's `user` (its text, when they have it) with `trusted` the
    /// folders its program is to trust; none when there is nothing to write, or for `Copy`.
    /// The user's file that cannot be read as its format is an error that says so.
    pub fn make(self, user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
        match self {
            Self::Copy => Ok(None),
            Self::Made(make) => make(user, trusted),
        }
    }
}

/// A path variable of `env`, when set to an absolute path.
pub fn var(env: &BTreeMap<String, String>, key: &str) -> Option<PathBuf> {
    env.get(key).map(PathBuf::from).filter(|p| p.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the own config of an agent in a log written before the drivers said it (then
    /// `own_config::Client`) reads as now.
    #[test]
    fn an_own_config_recorded_by_the_previous_version_still_reads() {
        let old = r#"{"dir":"/s/agents/a/config","client":"claude","user":"/home/u/.claude","user_state":"/home/u/.claude.json"}"#;
        let own: OwnConfig = serde_json::from_str(old).unwrap();
        assert_eq!(own.driver, DriverKind::Claude);
        assert_eq!(serde_json::to_string(&own).unwrap(), old, "and is written as it was");
        let codex: OwnConfig = serde_json::from_str(r#"{"dir":"/c","client":"codex"}"#).unwrap();
        assert_eq!((codex.driver, codex.user), (DriverKind::Codex, None));
    }
}
