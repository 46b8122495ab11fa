//! Codex's config, as its driver knows it: where the user's is (`CODEX_HOME`, else `~/.codex`),
//! what an own config is made of, and its login check. An own config holds its login
//! (`auth.json`) as it is, and the user's `config.toml` (model, providers, sandbox and approval
//! modes) but for the folders the user trusts (`projects`) and the user's programs (`notify`,
//! `hooks`, `mcp_servers`), with its workspace and repository trusted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::client_check::Client;
use crate::own_config::{var, OwnConfig, Seed, SeedError, Seeding, UserConfig};

/// Codex, as bosun probes it.
pub static CLIENT: Client = Client {
    program: "codex",
    package: "@openai/codex",
    login_check: ["login", "status"],
    key_vars: &["OPENAI_API_KEY", "CODEX_API_KEY"],
    log_in: "run `codex login`, or set OPENAI_API_KEY, or name a model_provider in its config.toml",
    config: Some(("CODEX_HOME", ".codex", "config.toml")),
    otherwise: provider_of_its_own,
    login_said: None,
    probe_env: &[],
};

/// `config.toml`: the user's, but for their programs and trusted folders, with the trust.
const CONFIG: Seeding = Seeding::Made(config);

pub(super) fn user_config(env: &BTreeMap<String, String>) -> UserConfig {
    UserConfig { dir: var(env, "CODEX_HOME").or_else(|| var(env, "HOME").map(|h| h.join(".codex"))), state: None }
}

pub(super) fn seeds(own: &OwnConfig) -> Vec<Seed> {
    vec![
        Seed { name: "auth.json", from: own.user_file("auth.json"), how: Seeding::Copy },
        Seed { name: "config.toml", from: own.user_file("config.toml"), how: CONFIG },
    ]
}

pub(super) fn point(dir: &Path, env: &mut BTreeMap<String, String>) {
    env.insert("CODEX_HOME".into(), dir.display().to_string());
}

/// A provider of its own (a local model, a proxy), named on its command line (`--oss`,
/// `-c model_provider=…`, a `--profile` that may name one) or in its config.
fn provider_of_its_own(args: &[String], config: Option<&str>) -> bool {
    let options = ["--oss", "-c", "--config", "-p", "--profile"];
    let by_args =
        args.iter().any(|a| options.contains(&a.as_str()) || a.starts_with("--config=") || a.starts_with("--profile="));
    by_args || config.is_some_and(names_a_provider)
}

/// Whether a Codex `config.toml` names a model provider other than OpenAI's (at its top or in a
/// profile).
fn names_a_provider(config: &str) -> bool {
    config.lines().map(str::trim).any(|l| {
        let Some(rest) = l.strip_prefix("model_provider") else { return false };
        let Some(value) = rest.trim_start().strip_prefix('=') else { return false };
        let value = value.split('#').next().unwrap_or_default().trim().trim_matches(|c| c == '"' || c == '\'');
        !value.is_empty() && value != "openai"
    })
}

/// The user's `config.toml` without `projects`, `notify`, `hooks` and `mcp_servers`, and
/// `trusted` trusted.
fn config(user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let mut config: toml::Table = match user {
        Some(text) => text.parse().map_err(SeedError::NotToml)?,
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
    toml::to_string(&config).map(Some).map_err(SeedError::Toml)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted() -> Vec<PathBuf> {
        vec![PathBuf::from("/s/workspaces/ws-a"), PathBuf::from("/home/u/repo")]
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
        let made = CONFIG.make(Some(user), &trusted()).unwrap().unwrap();
        let config: toml::Table = made.parse().unwrap();
        assert_eq!(config["model"].as_str(), Some("gpt-5.5"));
        assert_eq!(config["model_providers"]["fake"]["base_url"].as_str(), Some("http://127.0.0.1:9/v1"));
        for gone in ["notify", "mcp_servers"] {
            assert!(!config.contains_key(gone), "{gone}: {made}");
        }
        let projects = config["projects"].as_table().unwrap();
        assert_eq!(projects.keys().collect::<Vec<_>>(), ["/home/u/repo", "/s/workspaces/ws-a"], "{made}");
        assert!(projects.values().all(|p| p["trust_level"].as_str() == Some("trusted")));
        let fresh: toml::Table = CONFIG.make(None, &trusted()).unwrap().unwrap().parse().unwrap();
        assert_eq!(fresh.len(), 1, "only the trust");
        assert!(CONFIG.make(Some("model = "), &[]).unwrap_err().to_string().contains("not TOML"));
    }
}
