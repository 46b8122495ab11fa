//! Private configurations for the real agent clients, pointed at a `ModelServer`: a config
//! directory and a home of their own in a directory the caller owns, set up so the client starts
//! without any first-run screen except the ones asked for, and the environment to run the client
//! with (`ClientEnv`). They hold a fake key only: never a user's config, sessions, credentials or
//! API keys.
//!
//! Claude Code: `CLAUDE_CONFIG_DIR` with a `.claude.json` marking onboarding done and the fake
//! API key approved; folders are NOT trusted unless asked (`ClaudeConfig::trust`), since bosun
//! itself must answer the trust dialog. Codex: `CODEX_HOME` with a `config.toml` naming a
//! provider for the fake server, approval policy `never` unless asked, no background daemon,
//! no model-change announcement.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::ModelServer;

/// A config that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the client's config at {path}: {source}")]
pub struct ConfigError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// The Anthropic API key Claude Code is given; its last 20 characters are pre-approved.
pub const FAKE_ANTHROPIC_KEY: &str = "sk-ant-api03-bosun-fake-key-0123456789abcdefghij";
/// The variable Codex reads its fake provider's key from, and the key.
pub const CODEX_KEY_VAR: &str = "BOSUN_FAKE_OPENAI_KEY";
pub const FAKE_OPENAI_KEY: &str = "sk-bosun-fake-openai-key";
/// The model Codex is set to: one that takes its tools in `tools` (the default model of 0.169,
/// `gpt-6.1-sol`, gets them as JavaScript "code mode" tools instead).
pub const CODEX_MODEL: &str = "gpt-5.5";

/// Variables a client must not inherit from its caller's environment: they would point it at a
/// real account, or make it think it runs inside another agent or tmux session.
pub const SCRUBBED: &[&str] = &[
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_CONTENT",
    "OPENCODE_CONFIG_DIR",
    "TMUX",
    "TMUX_PANE",
];

/// How to run a client: its variables, and the dirs they name.
#[derive(Clone, Debug)]
pub struct ClientEnv {
    /// `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, or Gemini CLI's `$GEMINI_CLI_HOME/.gemini`.
    pub config_dir: PathBuf,
    /// The private `HOME`.
    pub home: PathBuf,
    /// Every variable to set (for tmux: `SpawnSpec::env`, or `new-session -e K=V`).
    pub vars: BTreeMap<String, String>,
}

impl ClientEnv {
    /// `program` with these variables set, the interfering ones removed, and stdin empty.
    pub fn command(&self, program: impl AsRef<Path>) -> Command {
        let mut cmd = Command::new(program.as_ref());
        self.apply(&mut cmd);
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Sets these variables on `cmd` and removes the interfering ones.
    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        for var in SCRUBBED {
            cmd.env_remove(var);
        }
        cmd.envs(&self.vars)
    }

    /// `-e K=V` pairs for `tmux new-session` (a pane gets the environment the tmux server started
    /// with, plus these).
    pub fn tmux_args(&self) -> Vec<String> {
        self.vars.iter().flat_map(|(k, v)| ["-e".to_owned(), format!("{k}={v}")]).collect()
    }
}

/// A Claude Code configuration to write.
#[derive(Clone, Debug)]
pub struct ClaudeConfig {
    base_url: String,
    dir: PathBuf,
    trusted: Vec<PathBuf>,
    approve_key: bool,
    settings: Option<Value>,
}

impl ClaudeConfig {
    /// Claude Code talking to `model`, its config in `dir/claude` and its home in `dir/home`.
    pub fn new(model: &ModelServer, dir: &Path) -> Self {
        Self { base_url: model.base_url(), dir: dir.to_owned(), trusted: Vec::new(), approve_key: true, settings: None }
    }

    /// Marks `folder` (and so its subfolders) trusted, so no trust dialog shows there.
    pub fn trust(mut self, folder: impl Into<PathBuf>) -> Self {
        self.trusted.push(folder.into());
        self
    }

    /// Leaves the fake API key unapproved, so the TUI asks "Do you want to use this API key?".
    pub fn unapproved_key(mut self) -> Self {
        self.approve_key = false;
        self
    }

    /// Writes these user settings to `<config>/settings.json` (hooks, say).
    pub fn settings(mut self, settings: Value) -> Self {
        let mut merged = self.settings.take().unwrap_or_else(|| json!({}));
        if let (Some(merged), Value::Object(new)) = (merged.as_object_mut(), settings) {
            merged.extend(new);
        }
        self.settings = Some(merged);
        self
    }

    /// Skips the "WARNING: Claude Code running in Bypass Permissions mode" dialog that
    /// `--dangerously-skip-permissions` opens the TUI on (default answer: "No, exit"), as
    /// answering "Yes, I accept" once does (`skipDangerousModePermissionPrompt` in the settings).
    pub fn accept_bypass_permissions(self) -> Self {
        self.settings(json!({"skipDangerousModePermissionPrompt": true}))
    }

    /// Writes the config dir and returns the environment to run Claude Code with.
    pub fn try_write(self) -> Result<ClientEnv, ConfigError> {
        let config_dir = self.dir.join("claude");
        let home = self.dir.join("home");
        create_dirs(&[&config_dir, &home])?;
        let key_tail: String = FAKE_ANTHROPIC_KEY.chars().skip(FAKE_ANTHROPIC_KEY.chars().count() - 20).collect();
        let approved: Vec<String> = if self.approve_key { vec![key_tail] } else { Vec::new() };
        let projects: serde_json::Map<String, Value> = self
            .trusted
            .iter()
            .map(|dir| {
                let entry = json!({"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true});
                (dir.display().to_string(), entry)
            })
            .collect();
        let state = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": approved, "rejected": []},
            "projects": projects,
        });
        write_file(&config_dir.join(".claude.json"), &format!("{state:#}\n"))?;
        if let Some(settings) = &self.settings {
            write_file(&config_dir.join("settings.json"), &format!("{settings:#}\n"))?;
        }
        let mut vars = BTreeMap::new();
        for (key, value) in [
            ("ANTHROPIC_BASE_URL", self.base_url.as_str()),
            ("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            // As root, --dangerously-skip-permissions is refused without it.
            ("IS_SANDBOX", "1"),
        ] {
            vars.insert(key.to_owned(), value.to_owned());
        }
        vars.insert("CLAUDE_CONFIG_DIR".to_owned(), config_dir.display().to_string());
        vars.insert("HOME".to_owned(), home.display().to_string());
        Ok(ClientEnv { config_dir, home, vars })
    }
}

/// A Codex configuration to write.
#[derive(Clone, Debug)]
pub struct CodexConfig {
    base_url: String,
    dir: PathBuf,
    approval_policy: String,
    sandbox_mode: String,
    trusted: Vec<PathBuf>,
    notify: Option<Vec<String>>,
    lines: Vec<String>,
    tables: Vec<String>,
}

impl CodexConfig {
    /// Codex talking to `model`, its `CODEX_HOME` in `dir/codex` and its home in `dir/home`.
    pub fn new(model: &ModelServer, dir: &Path) -> Self {
        Self {
            base_url: model.base_url(),
            dir: dir.to_owned(),
            approval_policy: "never".to_owned(),
            sandbox_mode: "danger-full-access".to_owned(),
            trusted: Vec::new(),
            notify: None,
            lines: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// `approval_policy`: `never` (the default here) or `on-request` (0.169 rejects
    /// `untrusted`).
    pub fn approval_policy(mut self, policy: &str) -> Self {
        self.approval_policy = policy.to_owned();
        self
    }

    /// `sandbox_mode`: `danger-full-access` (the default here), `workspace-write` or
    /// `read-only`. With full access Codex never asks to escalate, so no approval dialog shows.
    pub fn sandbox_mode(mut self, mode: &str) -> Self {
        self.sandbox_mode = mode.to_owned();
        self
    }

    /// What makes Codex 0.169 show its approval dialog for `Reply::ShellNeedingApproval`:
    /// `approval_policy = "on-request"` with `sandbox_mode = "workspace-write"`.
    pub fn asking_approval(self) -> Self {
        self.approval_policy("on-request").sandbox_mode("workspace-write")
    }

    /// Marks `repo` trusted, so the TUI does not open on "Trust this folder?". Give the main
    /// repository: a worktree resolves to it.
    pub fn trust(mut self, repo: impl Into<PathBuf>) -> Self {
        self.trusted.push(repo.into());
        self
    }

    /// `notify = [argv…]`: run at each `agent-turn-complete` with the JSON payload appended.
    pub fn notify(mut self, argv: &[&str]) -> Self {
        self.notify = Some(argv.iter().map(|a| (*a).to_owned()).collect());
        self
    }

    /// One more top-level line of TOML (`key = value`), written before the tables.
    pub fn line(mut self, toml: &str) -> Self {
        self.lines.push(toml.to_owned());
        self
    }

    /// More TOML tables, written at the end (`[[hooks.Stop]]` …; hooks run only with
    /// `--dangerously-bypass-hook-trust` or once trusted in `/hooks`).
    pub fn tables(mut self, toml: &str) -> Self {
        self.tables.push(toml.to_owned());
        self
    }

    /// Writes `config.toml` and returns the environment to run Codex with.
    pub fn try_write(self) -> Result<ClientEnv, ConfigError> {
        let config_dir = self.dir.join("codex");
        let home = self.dir.join("home");
        create_dirs(&[&config_dir, &home])?;
        let mut toml = vec![
            format!("model = {}", quote(CODEX_MODEL)),
            "model_provider = \"fake\"".to_owned(),
            format!("sandbox_mode = {}", quote(&self.sandbox_mode)),
            format!("approval_policy = {}", quote(&self.approval_policy)),
            "check_for_update_on_startup = false".to_owned(),
        ];
        if let Some(argv) = &self.notify {
            let argv: Vec<String> = argv.iter().map(|a| quote(a)).collect();
            toml.push(format!("notify = [{}]", argv.join(", ")));
        }
        toml.extend(self.lines.iter().cloned());
        toml.extend([
            String::new(),
            "[model_providers.fake]".to_owned(),
            "name = \"fake\"".to_owned(),
            format!("base_url = {}", quote(&self.base_url)),
            format!("env_key = {}", quote(CODEX_KEY_VAR)),
            "wire_api = \"responses\"".to_owned(),
            "request_max_retries = 0".to_owned(),
            "stream_max_retries = 0".to_owned(),
            String::new(),
            "[features]".to_owned(),
            // The TUI would otherwise start a background app-server that outlives it (and the
            // test), keeps the environment of the first TUI, and serves every later TUI.
            "daemon_auto_start = false".to_owned(),
            "suppress_model_change_announcements = true".to_owned(),
            String::new(),
            "[tui]".to_owned(),
            "screen_reader_detection_done = true".to_owned(),
            String::new(),
            // The "Meet GPT-6 Sol / Try new model" screen, answered once already.
            "[notice.model_migrations]".to_owned(),
            format!("{} = \"gpt-6-sol\"", quote(CODEX_MODEL)),
        ]);
        for repo in &self.trusted {
            toml.extend([
                String::new(),
                format!("[projects.{}]", quote(&repo.display().to_string())),
                "trust_level = \"trusted\"".to_owned(),
            ]);
        }
        for table in &self.tables {
            toml.extend([String::new(), table.trim_end().to_owned()]);
        }
        write_file(&config_dir.join("config.toml"), &(toml.join("\n") + "\n"))?;
        let mut vars = BTreeMap::new();
        vars.insert("CODEX_HOME".to_owned(), config_dir.display().to_string());
        vars.insert(CODEX_KEY_VAR.to_owned(), FAKE_OPENAI_KEY.to_owned());
        vars.insert("HOME".to_owned(), home.display().to_string());
        Ok(ClientEnv { config_dir, home, vars })
    }
}

/// The Gemini API key Gemini CLI is given.
pub const FAKE_GEMINI_KEY: &str = "AIza-bosun-fake-gemini-key";
/// The model Gemini CLI is set to: a named one, so that its model router (a side request per
/// prompt) stays out of the way.
pub const GEMINI_MODEL: &str = "gemini-2.5-pro";

/// A Gemini CLI configuration to write: `GEMINI_CLI_HOME` in `dir/gemini` (its config in
/// `.gemini/` there), the API key way of signing in, the model named, no telemetry or update
/// check; folders are not trusted unless asked (`trust`).
#[derive(Clone, Debug)]
pub struct GeminiConfig {
    base_url: String,
    dir: PathBuf,
    trusted: Vec<PathBuf>,
    settings: Value,
}

impl GeminiConfig {
    /// Gemini CLI talking to `model`, its home in `dir/gemini` and the user's home in `dir/home`.
    pub fn new(model: &ModelServer, dir: &Path) -> Self {
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "model": {"name": GEMINI_MODEL},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
        });
        Self { base_url: model.base_url(), dir: dir.to_owned(), trusted: Vec::new(), settings }
    }

    /// Marks `folder` trusted (`trustedFolders.json`), so no trust dialog shows there.
    pub fn trust(mut self, folder: impl Into<PathBuf>) -> Self {
        self.trusted.push(folder.into());
        self
    }

    /// Sets these top-level user settings too (hooks, say).
    pub fn settings(mut self, settings: Value) -> Self {
        if let (Some(merged), Value::Object(new)) = (self.settings.as_object_mut(), settings) {
            merged.extend(new);
        }
        self
    }

    /// Writes `.gemini/settings.json` (and `trustedFolders.json`) and returns the environment
    /// to run Gemini CLI with.
    pub fn try_write(self) -> Result<ClientEnv, ConfigError> {
        let gemini_home = self.dir.join("gemini");
        let config_dir = gemini_home.join(".gemini");
        let home = self.dir.join("home");
        create_dirs(&[&config_dir, &home])?;
        write_file(&config_dir.join("settings.json"), &format!("{:#}\n", self.settings))?;
        if !self.trusted.is_empty() {
            let trusted: serde_json::Map<String, Value> =
                self.trusted.iter().map(|f| (f.display().to_string(), json!("TRUST_FOLDER"))).collect();
            write_file(&config_dir.join("trustedFolders.json"), &format!("{:#}\n", Value::Object(trusted)))?;
        }
        let mut vars = BTreeMap::new();
        vars.insert("GEMINI_CLI_HOME".to_owned(), gemini_home.display().to_string());
        vars.insert("GEMINI_API_KEY".to_owned(), FAKE_GEMINI_KEY.to_owned());
        vars.insert("GOOGLE_GEMINI_BASE_URL".to_owned(), self.base_url);
        vars.insert("HOME".to_owned(), home.display().to_string());
        Ok(ClientEnv { config_dir, home, vars })
    }
}

/// A TOML basic string: JSON's escapes are all valid TOML escapes.
fn quote(text: &str) -> String {
    Value::from(text).to_string()
}

pub(crate) fn create_dirs(dirs: &[&Path]) -> Result<(), ConfigError> {
    for dir in dirs {
        fs::create_dir_all(dir).map_err(|source| ConfigError { path: dir.to_path_buf(), source })?;
    }
    Ok(())
}

pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), ConfigError> {
    fs::write(path, text).map_err(|source| ConfigError { path: path.to_owned(), source })
}
