//! Claude Code's config, as its driver knows it: where the user's is (`CLAUDE_CONFIG_DIR`, else
//! `~/.claude`, with its state in `.claude.json` beside or in the home directory), what an own
//! config is made of, and its login check.
//!
//! An own config holds its login (`.credentials.json`) as it is; the user's `settings.json`
//! (model, environment, permissions, key helper) but for what runs the user's own programs at
//! every event (`hooks`, `statusLine`) or turns bosun's hooks off (`disableAllHooks`); and a
//! `.claude.json` of its own that holds only that onboarding is done, the API keys the user
//! approved, and its workspace and the repository it comes from trusted (Claude Code 2.1.3xx
//! decides a worktree's trust through its main repository).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::client_check::Client;
use crate::own_config::{var, OwnConfig, Seed, SeedError, Seeding, UserConfig};

/// Claude Code, as bosun probes it.
pub static CLIENT: Client = Client {
    program: "claude",
    package: "@anthropic-ai/claude-code",
    login_check: ["auth", "status"],
    key_vars: &[
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
    ],
    log_in: "run `claude auth login`, or set ANTHROPIC_API_KEY",
    config: None,
    otherwise: crate::client_check::no_other_way,
    login_said: None,
    probe_env: &[],
};

/// `settings.json`: the user's, but for what runs their programs.
const SETTINGS: Seeding = Seeding::Made(settings);
/// `.claude.json`: onboarding done, the user's approved keys, the trust.
const STATE: Seeding = Seeding::Made(state);

/// The user's config (claudeless reads its own variable when Claude Code's is not set).
pub(super) fn user_config(env: &BTreeMap<String, String>) -> UserConfig {
    let set = var(env, "CLAUDE_CONFIG_DIR").or_else(|| var(env, "CLAUDELESS_CONFIG_DIR"));
    let home = var(env, "HOME");
    UserConfig {
        dir: set.clone().or_else(|| home.as_ref().map(|h| h.join(".claude"))),
        state: match set {
            Some(dir) => Some(dir.join(".claude.json")),
            None => home.map(|h| h.join(".claude.json")),
        },
    }
}

pub(super) fn seeds(own: &OwnConfig) -> Vec<Seed> {
    vec![
        Seed { name: ".credentials.json", from: own.user_file(".credentials.json"), how: Seeding::Copy },
        Seed { name: "settings.json", from: own.user_file("settings.json"), how: SETTINGS },
        Seed { name: ".claude.json", from: own.user_state.clone(), how: STATE },
    ]
}

/// Points Claude Code (and claudeless, which reads its own variable first) at `dir`.
pub(super) fn point(dir: &Path, env: &mut BTreeMap<String, String>) {
    let dir = dir.display().to_string();
    if env.contains_key("CLAUDELESS_CONFIG_DIR") {
        env.insert("CLAUDELESS_CONFIG_DIR".into(), dir.clone());
    }
    env.insert("CLAUDE_CONFIG_DIR".into(), dir);
}

/// The user's `settings.json` without `hooks`, `statusLine` and `disableAllHooks`.
fn settings(user: Option<&str>, _trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let Some(text) = user else { return Ok(None) };
    let mut settings: Value = serde_json::from_str(text).map_err(SeedError::NotJson)?;
    let Some(fields) = settings.as_object_mut() else { return Err(SeedError::NotObject) };
    for theirs in ["hooks", "statusLine", "disableAllHooks"] {
        fields.remove(theirs);
    }
    Ok(Some(format!("{settings:#}\n")))
}

/// A `.claude.json` that holds only that onboarding is done, the API keys the user approved
/// (in their `.claude.json`), and `trusted` trusted.
fn state(user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let user: Value = match user {
        Some(text) => serde_json::from_str(text).map_err(SeedError::NotJson)?,
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
    Ok(Some(format!("{state:#}\n")))
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
        let made = STATE.make(Some(user), &trusted()).unwrap().unwrap();
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
        let fresh: Value = serde_json::from_str(&STATE.make(None, &[]).unwrap().unwrap()).unwrap();
        assert_eq!(fresh["hasCompletedOnboarding"], json!(true), "without the user's file too");
        assert!(STATE.make(Some("{not json"), &[]).unwrap_err().to_string().contains("not JSON"));
    }

    #[test]
    fn claudes_settings_are_the_users_but_for_their_programs() {
        let user = r#"{"model": "opus", "env": {"A": "1"}, "permissions": {"allow": ["Bash(ls)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]},
            "statusLine": {"type": "command", "command": "x"}, "disableAllHooks": true,
            "skipDangerousModePermissionPrompt": true}"#;
        let made = SETTINGS.make(Some(user), &trusted()).unwrap().unwrap();
        let settings: Value = serde_json::from_str(&made).unwrap();
        assert_eq!(
            settings,
            json!({"model": "opus", "env": {"A": "1"}, "permissions": {"allow": ["Bash(ls)"]},
                   "skipDangerousModePermissionPrompt": true})
        );
        assert!(SETTINGS.make(None, &[]).unwrap().is_none(), "none of the user's: none written");
        assert!(SETTINGS.make(Some("[1]"), &[]).unwrap_err().to_string().contains("not a JSON object"));
    }
}
