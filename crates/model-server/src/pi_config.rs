//! pi's private configuration (`PiConfig`), pointed at a `ModelServer` speaking the Anthropic
//! Messages API: a config directory of its own (`PI_CODING_AGENT_DIR`) whose `models.json` names
//! a provider for the server, holding the fake key, and whose `settings.json` makes it the
//! default; a home of its own; pi kept offline (no version check, no download of `fd` and
//! `ripgrep`, no telemetry). pi retries a failed request (429, 5xx) by itself three times,
//! 2 s, 4 s and 8 s apart, unless told not to: the config turns that off (`retry.enabled`), as
//! `CLAUDE_CODE_MAX_RETRIES=0` does for Claude Code, unless asked to keep it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::clients::{create_dirs, write_file, ClientEnv, ConfigError, FAKE_ANTHROPIC_KEY};
use crate::ModelServer;

/// The provider pi is given for the server, and its model.
pub const PI_PROVIDER: &str = "bosun-fake";
pub const PI_MODEL: &str = "claude-sonnet-4-5";

/// A pi configuration to write.
#[derive(Clone, Debug)]
pub struct PiConfig {
    base_url: String,
    dir: PathBuf,
    settings: Value,
}

impl PiConfig {
    /// pi talking to `model` (an Anthropic API server), its config in `dir/pi` and its home in
    /// `dir/home`.
    pub fn new(model: &ModelServer, dir: &Path) -> Self {
        let settings = json!({
            "defaultProvider": PI_PROVIDER,
            "defaultModel": PI_MODEL,
            "defaultThinkingLevel": "off",
            "retry": {"enabled": false},
            "enableInstallTelemetry": false,
        });
        Self { base_url: model.base_url(), dir: dir.to_owned(), settings }
    }

    /// Sets these top-level settings too (`defaultProjectTrust`, say).
    pub fn settings(mut self, settings: Value) -> Self {
        if let (Some(merged), Value::Object(new)) = (self.settings.as_object_mut(), settings) {
            merged.extend(new);
        }
        self
    }

    /// Keeps pi's own retries of failed requests.
    pub fn retrying(self) -> Self {
        self.settings(json!({"retry": {"enabled": true}}))
    }

    /// Writes `models.json` and `settings.json` and returns the environment to run pi with.
    pub fn try_write(self) -> Result<ClientEnv, ConfigError> {
        let config_dir = self.dir.join("pi");
        let home = self.dir.join("home");
        create_dirs(&[&config_dir, &home])?;
        let models = json!({"providers": {PI_PROVIDER: {
            "baseUrl": self.base_url,
            "api": "anthropic-messages",
            "apiKey": FAKE_ANTHROPIC_KEY,
            "models": [{"id": PI_MODEL, "name": "bosun's fake model"}],
        }}});
        write_file(&config_dir.join("models.json"), &format!("{models:#}\n"))?;
        write_file(&config_dir.join("settings.json"), &format!("{:#}\n", self.settings))?;
        let mut vars = BTreeMap::new();
        vars.insert("PI_CODING_AGENT_DIR".to_owned(), config_dir.display().to_string());
        vars.insert("HOME".to_owned(), home.display().to_string());
        for offline in ["PI_OFFLINE", "PI_SKIP_VERSION_CHECK"] {
            vars.insert(offline.to_owned(), "1".to_owned());
        }
        vars.insert("PI_TELEMETRY".to_owned(), "0".to_owned());
        Ok(ClientEnv { config_dir, home, vars })
    }
}
