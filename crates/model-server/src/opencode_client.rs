//! opencode's private configuration (`OpencodeConfig`): its config, data, state and cache
//! directories of its own (the XDG ones, where a user's are in a private home), a provider of the
//! Anthropic API pointed at the model server, and the environment to run it with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::clients::{create_dirs, write_file, ClientEnv, ConfigError, FAKE_ANTHROPIC_KEY};
use crate::ModelServer;

/// The provider and model opencode is given: `bosun-fake/claude-sonnet-4-5`.
pub const OPENCODE_MODEL: &str = "bosun-fake/claude-sonnet-4-5";

/// An opencode configuration to write.
#[derive(Clone, Debug)]
pub struct OpencodeConfig {
    base_url: String,
    dir: PathBuf,
    asking: bool,
}

impl OpencodeConfig {
    /// opencode talking to `model` (an Anthropic API server) through a provider of its config,
    /// its XDG directories and its home under `dir`.
    pub fn new(model: &ModelServer, dir: &Path) -> Self {
        Self { base_url: model.base_url(), dir: dir.to_owned(), asking: false }
    }

    /// Has it ask before every shell command (`"permission": {"bash": "ask"}`); by default it runs
    /// them, as opencode does unless told otherwise.
    pub fn asking(mut self) -> Self {
        self.asking = true;
        self
    }

    /// Writes `opencode/opencode.json` in its config home and returns the environment to run
    /// opencode with.
    pub fn try_write(self) -> Result<ClientEnv, ConfigError> {
        let home = self.dir.join("home");
        // Where a user's are, in the home (a sandbox shows the agent its home, and not `dir`).
        let xdg = |name: &str| match name {
            "config" => home.join(".config"),
            "cache" => home.join(".cache"),
            _ => home.join(".local").join(if name == "data" { "share" } else { name }),
        };
        let config_dir = xdg("config").join("opencode");
        create_dirs(&[&config_dir, &home])?;
        let (provider, model) = OPENCODE_MODEL.split_once('/').unwrap_or_default();
        let config = json!({
            "$schema": "https://opencode.ai/config.json",
            "provider": {provider: {
                "npm": "@ai-sdk/anthropic",
                "name": "bosun's model server",
                "options": {"baseURL": format!("{}/v1", self.base_url), "apiKey": FAKE_ANTHROPIC_KEY},
                "models": {model: {"name": "bosun's fake model"}},
            }},
            "model": OPENCODE_MODEL,
            "small_model": OPENCODE_MODEL,
            "autoupdate": false,
            "share": "disabled",
            "permission": {"bash": if self.asking { "ask" } else { "allow" }},
        });
        write_file(&config_dir.join("opencode.json"), &format!("{config:#}\n"))?;
        let mut vars = BTreeMap::new();
        vars.insert("HOME".to_owned(), home.display().to_string());
        for name in ["config", "data", "state", "cache"] {
            vars.insert(format!("XDG_{}_HOME", name.to_uppercase()), xdg(name).display().to_string());
        }
        // Its catalogue of models and its language servers come from the internet otherwise.
        for flag in ["OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_LSP_DOWNLOAD", "OPENCODE_DISABLE_AUTOUPDATE"] {
            vars.insert(flag.to_owned(), "true".to_owned());
        }
        Ok(ClientEnv { config_dir, home, vars })
    }
}
