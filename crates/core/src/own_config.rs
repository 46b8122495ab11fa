//! The config directory bosun makes for an agent it confines (`--runtime sandbox`, `docker`):
//! its program (Claude Code, Codex) keeps its conversations, settings and state there
//! (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`), never in the user's own config, in which an agent that
//! could write it would plant hooks or MCP servers that run on this machine the next time the
//! user starts the program. It is `<agent dir>/config`: it outlives a restart (a resume finds
//! the conversation there), and stays with the agent's other files.
//!
//! It is made once, before the agent's first start, from as little of the user's config as lets
//! the program run as the user's does, and bosun never writes it again:
//! - Claude Code: its login (`.credentials.json`) as it is; the user's `settings.json` (model,
//!   environment, permissions, key helper) but for what runs the user's own programs at every
//!   event (`hooks`, `statusLine`) or turns bosun's hooks off (`disableAllHooks`); and a
//!   `.claude.json` of its own that holds only that onboarding is done, the API keys the user
//!   approved, and its workspace and the repository it comes from trusted (Claude Code 2.1.3xx
//!   decides a worktree's trust through its main repository).
//! - Codex: its login (`auth.json`) as it is; the user's `config.toml` (model, providers,
//!   sandbox and approval modes) but for the folders the user trusts (`projects`) and the user's
//!   programs (`notify`, `hooks`, `mcp_servers`), with its workspace and repository trusted.
//!
//! Nothing else of the user's: not their other conversations, history, memory (`CLAUDE.md`),
//! commands, agents, skills, plugins or MCP servers. bosun's own hooks are given on the command
//! line (`--settings`, `-c notify=…`), as everywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The name of an agent's own config directory in its directory.
pub const OWN_CONFIG: &str = "config";

/// The program an own config is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Client {
    Claude,
    Codex,
}

/// The config directory an agent's program is given of its own, and the user's it is made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnConfig {
    /// `<agent dir>/config`.
    pub dir: PathBuf,
    pub client: Client,
    /// The user's config directory: `CLAUDE_CONFIG_DIR` (else `~/.claude`), `CODEX_HOME` (else
    /// `~/.codex`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<PathBuf>,
    /// Claude Code's state file of the user's: `.claude.json` in their `CLAUDE_CONFIG_DIR`, or
    /// in their home when they keep their config in `~/.claude`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_state: Option<PathBuf>,
}

/// One file of an own config: its name there, the user's file it comes from, how it is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed {
    pub name: &'static str,
    pub from: Option<PathBuf>,
    pub how: Seeding,
}

/// How a file of an own config is made from the user's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seeding {
    /// Copied as it is, when the user has it (a login).
    Copy,
    /// Claude Code's `settings.json`: the user's, but for what runs their programs.
    ClaudeSettings,
    /// Claude Code's `.claude.json`: onboarding done, the user's approved keys, the trust.
    ClaudeState,
    /// Codex's `config.toml`: the user's, but for their programs and trusted folders, with the
    /// trust.
    CodexConfig,
}

impl OwnConfig {
    /// The own config, in the directory `agent_dir` of an agent, of its program `client`, made
    /// from the user's config its recorded `env` names. (Which agent has one: `OwnConfig::of`.)
    pub fn new(client: Client, agent_dir: &Path, env: &BTreeMap<String, String>) -> Self {
        let (user, user_state) = match client {
            Client::Claude => (user_claude(env), user_claude_state(env)),
            Client::Codex => (user_codex(env), None),
        };
        Self { dir: agent_dir.join(OWN_CONFIG), client, user, user_state }
    }

    /// The files it is made of.
    pub fn seeds(&self) -> Vec<Seed> {
        let user = |name: &str| self.user.as_ref().map(|u| u.join(name));
        match self.client {
            Client::Claude => vec![
                Seed { name: ".credentials.json", from: user(".credentials.json"), how: Seeding::Copy },
                Seed { name: "settings.json", from: user("settings.json"), how: Seeding::ClaudeSettings },
                Seed { name: ".claude.json", from: self.user_state.clone(), how: Seeding::ClaudeState },
            ],
            Client::Codex => vec![
                Seed { name: "auth.json", from: user("auth.json"), how: Seeding::Copy },
                Seed { name: "config.toml", from: user("config.toml"), how: Seeding::CodexConfig },
            ],
        }
    }

    /// Points the program's variables in `env` at it (claudeless reads its own variable first).
    pub fn point(&self, env: &mut BTreeMap<String, String>) {
        let dir = self.dir.display().to_string();
        match self.client {
            Client::Claude => {
                if env.contains_key("CLAUDELESS_CONFIG_DIR") {
                    env.insert("CLAUDELESS_CONFIG_DIR".into(), dir.clone());
                }
                env.insert("CLAUDE_CONFIG_DIR".into(), dir);
            }
            Client::Codex => {
                env.insert("CODEX_HOME".into(), dir);
            }
        }
    }
}

impl Seeding {
    /// The file made from the user's `user` (its text, when they have it) with `trusted` the
    /// folders its program is to trust; none when there is nothing to write. Not for `Copy`.
    /// The user's file that cannot be read as its format is an error that says so.
    pub fn make(self, user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, String> {
        match self {
            Self::Copy => Ok(None),
            Self::ClaudeSettings => claude_settings(user),
            Self::ClaudeState => claude_state(user, trusted).map(Some),
            Self::CodexConfig => codex_config(user, trusted).map(Some),
        }
    }
}

/// Where an agent's Claude Code keeps its config: its `own` when it has one, else the user's
/// its recorded `env` names (`CLAUDE_CONFIG_DIR`, `CLAUDELESS_CONFIG_DIR`, `~/.claude`).
pub fn claude_dir(own: Option<OwnConfig>, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    match own {
        Some(own) => Some(own.dir),
        None => user_claude(env),
    }
}

/// Where an agent's Codex keeps its config (`sessions/` among it): its `own` when it has one,
/// else the user's its recorded `env` names (`CODEX_HOME`, `~/.codex`).
pub fn codex_dir(own: Option<OwnConfig>, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    match own {
        Some(own) => Some(own.dir),
        None => user_codex(env),
    }
}

/// A path variable of `env`, when set to an absolute path.
fn var(env: &BTreeMap<String, String>, key: &str) -> Option<PathBuf> {
    env.get(key).map(PathBuf::from).filter(|p| p.is_absolute())
}

fn user_claude(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    var(env, "CLAUDE_CONFIG_DIR")
        .or_else(|| var(env, "CLAUDELESS_CONFIG_DIR"))
        .or_else(|| var(env, "HOME").map(|h| h.join(".claude")))
}

fn user_claude_state(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    match var(env, "CLAUDE_CONFIG_DIR").or_else(|| var(env, "CLAUDELESS_CONFIG_DIR")) {
        Some(dir) => Some(dir.join(".claude.json")),
        None => var(env, "HOME").map(|h| h.join(".claude.json")),
    }
}

fn user_codex(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    var(env, "CODEX_HOME").or_else(|| var(env, "HOME").map(|h| h.join(".codex")))
}

/// The user's `settings.json` without `hooks`, `statusLine` and `disableAllHooks`.
fn claude_settings(user: Option<&str>) -> Result<Option<String>, String> {
    let Some(text) = user else { return Ok(None) };
    let mut settings: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
    let Some(fields) = settings.as_object_mut() else { return Err("it is not a JSON object".into()) };
    for theirs in ["hooks", "statusLine", "disableAllHooks"] {
        fields.remove(theirs);
    }
    Ok(Some(format!("{settings:#}\n")))
}

/// A `.claude.json` that holds only that onboarding is done, the API keys the user approved
/// (in their `.claude.json`), and `trusted` trusted.
fn claude_state(user: Option<&str>, trusted: &[PathBuf]) -> Result<String, String> {
    let user: Value = match user {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?,
        None => Value::Null,
    };
    let approved: Vec<&str> = user
        .pointer("/customApiKeyResponses/approved")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let projects: serde_json::Map<String, Value> =
        trusted.iter().map(|dir| (dir.display().to_string(), json!({"hasTrustDialogAccepted": true}))).collect();
    let state = json!({
        "hasCompletedOnboarding": true,
        "customApiKeyResponses": {"approved": approved, "rejected": []},
        "projects": projects,
    });
    Ok(format!("{state:#}\n"))
}

/// The user's `config.toml` without `projects`, `notify`, `hooks` and `mcp_servers`, and
/// `trusted` trusted.
fn codex_config(user: Option<&str>, trusted: &[PathBuf]) -> Result<String, String> {
    let mut config: toml::Table = match user {
        Some(text) => text.parse().map_err(|e| format!("it is not TOML: {e}"))?,
        None => toml::Table::new(),
    };
    for theirs in ["projects", "notify", "hooks", "mcp_servers"] {
        config.remove(theirs);
    }
    let trust = |_: &PathBuf| {
        let mut entry = toml::Table::new();
        entry.insert("trust_level".into(), toml::Value::String("trusted".into()));
        toml::Value::Table(entry)
    };
    let projects: toml::Table = trusted.iter().map(|dir| (dir.display().to_string(), trust(dir))).collect();
    config.insert("projects".into(), toml::Value::Table(projects));
    toml::to_string(&config).map_err(|e| format!("cannot write it as TOML: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted() -> Vec<PathBuf> {
        vec![PathBuf::from("/s/workspaces/ws-a"), PathBuf::from("/home/u/repo")]
    }

    #[test]
    fn claudes_state_holds_onboarding_the_approved_keys_and_the_trust_and_nothing_else_of_the_users() {
        let user = r#"{"hasCompletedOnboarding": true, "oauthAccount": {"emailAddress": "u@x"},
            "customApiKeyResponses": {"approved": ["0123456789abcdefghij", 7], "rejected": ["zzzz"]},
            "mcpServers": {"evil": {"command": "touch /tmp/pwned"}},
            "projects": {"/home/u/secret-project": {"hasTrustDialogAccepted": true, "mcpServers": {}}},
            "bypassPermissionsModeAccepted": true}"#;
        let made = Seeding::ClaudeState.make(Some(user), &trusted()).unwrap().unwrap();
        let state: Value = serde_json::from_str(&made).unwrap();
        assert_eq!(
            state,
            json!({
                "hasCompletedOnboarding": true,
                "customApiKeyResponses": {"approved": ["0123456789abcdefghij"], "rejected": []},
                "projects": {
                    "/s/workspaces/ws-a": {"hasTrustDialogAccepted": true},
                    "/home/u/repo": {"hasTrustDialogAccepted": true},
                },
            })
        );
        let fresh: Value = serde_json::from_str(&Seeding::ClaudeState.make(None, &[]).unwrap().unwrap()).unwrap();
        assert_eq!(fresh["hasCompletedOnboarding"], json!(true), "without the user's file too");
        assert!(Seeding::ClaudeState.make(Some("{not json"), &[]).unwrap_err().contains("not JSON"));
    }

    #[test]
    fn claudes_settings_are_the_users_but_for_their_programs() {
        let user = r#"{"model": "opus", "env": {"A": "1"}, "permissions": {"allow": ["Bash(ls)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]},
            "statusLine": {"type": "command", "command": "x"}, "disableAllHooks": true,
            "skipDangerousModePermissionPrompt": true}"#;
        let made = Seeding::ClaudeSettings.make(Some(user), &trusted()).unwrap().unwrap();
        let settings: Value = serde_json::from_str(&made).unwrap();
        assert_eq!(
            settings,
            json!({"model": "opus", "env": {"A": "1"}, "permissions": {"allow": ["Bash(ls)"]},
                   "skipDangerousModePermissionPrompt": true})
        );
        assert_eq!(Seeding::ClaudeSettings.make(None, &[]), Ok(None), "none of the user's: none written");
        assert!(Seeding::ClaudeSettings.make(Some("[1]"), &[]).unwrap_err().contains("not a JSON object"));
    }

    #[test]
    fn codexs_config_is_the_users_but_for_their_programs_and_folders_with_the_trust() {
        let user = r#"model = "gpt-5.5"
model_provider = "fake"
notify = ["touch", "/tmp/pwned"]

[model_providers.fake]
base_url = "http://127.0.0.1:9/v1"

[mcp_servers.evil]
command = "touch"

[projects."/home/u/secret-project"]
trust_level = "trusted"
"#;
        let made = Seeding::CodexConfig.make(Some(user), &trusted()).unwrap().unwrap();
        let config: toml::Table = made.parse().unwrap();
        assert_eq!(config["model"].as_str(), Some("gpt-5.5"));
        assert_eq!(config["model_providers"]["fake"]["base_url"].as_str(), Some("http://127.0.0.1:9/v1"));
        for gone in ["notify", "mcp_servers"] {
            assert!(!config.contains_key(gone), "{gone}: {made}");
        }
        let projects = config["projects"].as_table().unwrap();
        assert_eq!(projects.keys().collect::<Vec<_>>(), ["/home/u/repo", "/s/workspaces/ws-a"], "{made}");
        assert!(projects.values().all(|p| p["trust_level"].as_str() == Some("trusted")));
        let fresh: toml::Table = Seeding::CodexConfig.make(None, &trusted()).unwrap().unwrap().parse().unwrap();
        assert_eq!(fresh.len(), 1, "only the trust");
        assert!(Seeding::CodexConfig.make(Some("model = "), &[]).unwrap_err().contains("not TOML"));
    }
}
