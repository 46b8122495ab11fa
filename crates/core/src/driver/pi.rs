//! pi (`@earendil-works/pi-coding-agent`): the extension bosun loads into it (`pi -e`), which
//! reports its lifecycle events, what those reports mean, and its command line (bosun picks the
//! session id: `--session-id` starts that session and, run again in the same folder, resumes it).
//!
//! Checked against the real pi 1.6.0 (crates/cli/tests/real_pi.rs, against the model server's
//! Anthropic API through a provider of pi's `models.json`; docs/clients/pi.md). What it relies on:
//!
//! - pi's extensions get its events in order: `session_start` (`reason: startup | resume | new |
//!   fork | reload`), `before_agent_start` (`prompt`) once a prompt is taken, `tool_call` before a
//!   tool runs (a handler's `{block, reason}` stops it, and the model hears the reason),
//!   `message_end` for each message, and `agent_settled` once pi will not go on by itself
//!   (after its own retries, compactions and queued messages; `agent_end` is not that).
//! - A failed turn ends in an assistant message with `stopReason: "error"` and pi's
//!   `errorMessage` (`429 {…rate_limit_error…}`, `401 {…authentication_error…}`,
//!   `Connection error.: connect ECONNREFUSED …`); it is the run's last message at
//!   `agent_settled`.
//! - pi asks nothing of its own before a tool runs. Its dialogs are its project-trust question
//!   (a `project_trust` event an extension may decide, fired whenever the folder has project
//!   resources, before pi looks at its saved decisions: only the screen says pi asks) and
//!   extensions' dialogs
//!   (`ui_prompt_start` / `ui_prompt_end`), drawn as a list whose cursor is `→`: one shown while
//!   a tool call waits to run (between `tool_execution_start` and `tool_execution_end`: an
//!   extension's `tool_call` handler asks about it) is a permission prompt, any other a question.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::argv::Grammar;
use super::claude_hook::{head, tail};
use super::{pi_config, AgentDriver, Driver, DriverKind, Reading, Report, Screen, StartUp};
use crate::{AgentError, Heartbeat, Observation, PromptKind, Source};

/// pi 1.6's command line: `pi [options] [--] [@files...] [messages...]` or `pi <command>`.
pub const GRAMMAR: Grammar = Grammar {
    value: &[
        "--provider",
        "--model",
        "--api-key",
        "--system-prompt",
        "--append-system-prompt",
        "--mode",
        "--session",
        "--session-id",
        "--fork",
        "--session-dir",
        "--name",
        "-n",
        "--models",
        "--tools",
        "-t",
        "--exclude-tools",
        "-xt",
        "--thinking",
        "--extension",
        "-e",
        "--skill",
        "--prompt-template",
        "--theme",
        "--use-theme",
        "--export",
        "--tui-mode",
    ],
    optional: &["--list-models"],
    variadic: &[],
    subcommands: &["install", "remove", "uninstall", "update", "list", "config", "auth", "mcp"],
};

/// The file name of bosun's extension, beside the agent's settings.
pub const EXTENSION: &str = "bosun-pi.js";

/// The extension's source, its hook command and trust left to fill in.
const EXTENSION_SOURCE: &str = include_str!("pi_extension.js");

/// The most kept of a payload's text fields.
const FIELD_MAX: usize = 4_000;
/// The most of what a dialog asks.
const ASKS_MAX: usize = 500;

/// The fields of a report of bosun's extension that bosun keeps, each bounded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiReport {
    pub event: String,
    /// `session_start`'s and `session_shutdown`'s reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The session file pi named at `session_start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// What a tool acts on: a command or a path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What a dialog asks, in a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<String>,
    /// `ui_prompt_start`: the dialog shows while a tool call waits to run (an extension's
    /// `tool_call` handler asks about it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool: bool,
    /// `ui_prompt_end`: whether pi waits for input once the dialog is gone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
    /// `agent_settled`: the run was aborted (Escape).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// `agent_settled`: the run's last message's stop reason (`stop`, `error`, `aborted`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// `agent_settled`: what it said last (its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl PiReport {
    /// Reads the payload bosun's extension sent for `event` (used when the payload names none);
    /// anything unreadable gives a report of the event's name alone.
    pub fn parse(raw: &str, event: &str) -> Self {
        let v: Value = serde_json::from_str(raw).unwrap_or_default();
        let text = |key: &str, max: usize| v[key].as_str().map(|s| head(s, max));
        let name = v["event"].as_str().filter(|n| !n.is_empty()).unwrap_or(event);
        let tool = text("tool_name", 200);
        let subject = text("subject", FIELD_MAX);
        let asks = (name == "ui_prompt_start").then(|| text("title", FIELD_MAX)).flatten();
        let one_line = |s: String| head(s.split_whitespace().collect::<Vec<_>>().join(" ").as_str(), ASKS_MAX);
        Self {
            event: head(name, super::EVENT_MAX),
            reason: text("reason", 100),
            session_file: text("session_file", FIELD_MAX),
            tool_name: tool,
            subject,
            asks: asks.map(one_line).filter(|a| !a.is_empty()),
            tool: v["tool"].as_bool() == Some(true),
            idle: v["idle"].as_bool() == Some(true),
            aborted: v["aborted"].as_bool() == Some(true),
            stop_reason: text("stop_reason", 100),
            error_message: text("error_message", FIELD_MAX),
            text: v["text"].as_str().map(|s| tail(s, FIELD_MAX)),
        }
    }

    /// What it said at the end of a run that did not fail.
    fn said(&self) -> Option<String> {
        let failed = self.stop_reason.as_deref() == Some("error");
        self.text.as_deref().map(str::trim).filter(|t| !t.is_empty() && !failed).map(str::to_owned)
    }
}

/// The report a report of pi's kept; none for another driver's.
fn kept(report: &Report) -> Option<PiReport> {
    if report.driver != DriverKind::Pi {
        return None;
    }
    let named = || PiReport { event: report.event.clone(), ..PiReport::default() };
    Some(serde_json::from_str(&report.payload).unwrap_or_else(|_| named()))
}

/// What a report means.
pub fn observation(p: &PiReport) -> Observation {
    let activity = Observation::Activity { heartbeat: Heartbeat::HookCall };
    match p.event.as_str() {
        "session_start" if matches!(p.reason.as_deref(), None | Some("startup" | "resume")) => Observation::Started,
        "before_agent_start" | "tool_call" => Observation::Working,
        "ui_prompt_start" if p.tool => Observation::Prompt { kind: PromptKind::Permission, asks: p.asks.clone() },
        "ui_prompt_start" => Observation::Prompt { kind: PromptKind::Question, asks: p.asks.clone() },
        "ui_prompt_end" if p.idle => Observation::Idle,
        "ui_prompt_end" => Observation::Working,
        "agent_settled" if p.stop_reason.as_deref() == Some("error") && !p.aborted => {
            Observation::Error { error: error_category(p.error_message.as_deref().unwrap_or_default()) }
        }
        "agent_settled" => Observation::Idle,
        _ => activity,
    }
}

/// The kind of an error pi's message names (the provider's status and body, or the
/// connection's failure).
pub fn error_category(text: &str) -> AgentError {
    let m = text.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    // A status is what the message starts with (`429 {…}`), not a number in its text.
    let status: String = m.trim_start().chars().take_while(char::is_ascii_digit).collect();
    let status = status.as_str();
    if any(&["insufficient_quota", "credit balance", "billing", "out of credits", "payment required"])
        || status == "402"
    {
        AgentError::OutOfCredits
    } else if status == "429" || any(&["rate_limit", "rate limit", "too many requests", "quota", "usage limit"]) {
        AgentError::RateLimited
    } else if matches!(status, "401" | "403")
        || any(&["authentication", "invalid x-api-key", "invalid api key", "unauthorized", "no api key"])
    {
        AgentError::Unauthorized
    } else if any(&[
        "connection error",
        "econnrefused",
        "enotfound",
        "econnreset",
        "etimedout",
        "eai_again",
        "fetch failed",
        "socket hang up",
        "network",
    ]) {
        AgentError::NoInternet
    } else {
        AgentError::Other
    }
}

/// The permission a `tool_call` asks the policy about: its tool and what it acts on.
fn permission(p: &PiReport) -> Option<(String, Option<String>)> {
    let tool = p.tool_name.clone().filter(|_| p.event == "tool_call")?;
    Some((tool, p.subject.clone()))
}

/// What the report call prints for a policy's answer to a `tool_call`: a denial blocks the call,
/// its reason told to the model; an allowance lets it run, as pi would.
pub fn permission_reply(answer: &crate::PermissionAnswer) -> String {
    match answer {
        crate::PermissionAnswer::Allow { .. } => serde_json::json!({ "block": false }).to_string(),
        crate::PermissionAnswer::Deny { rule } => serde_json::json!({
            "block": true,
            "reason": format!("bosun's permission policy denies this ({rule})"),
        })
        .to_string(),
    }
}

/// The session file a `session_start` names, when it is this agent's: an absolute plain path to
/// `<timestamp>_<session id>.jsonl` in a folder of the agent's pi sessions (`<config>/sessions/
/// --<cwd>--/`, or the `PI_CODING_AGENT_SESSION_DIR` its env names). The payload is untrusted: any
/// other path (a secret, a FIFO, another agent's session) is not read. None in a pod, whose
/// sessions are there.
pub fn session_file(a: &crate::Agent, p: &PiReport) -> Option<PathBuf> {
    use std::path::Component;
    let Driver::Pi { session_id } = &a.driver else { return None };
    if a.runtime.pod().is_some() {
        return None;
    }
    let path = Path::new(p.session_file.as_deref()?);
    let plain = path.is_absolute() && path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    let name = path.file_name()?.to_str()?;
    let named = name.ends_with(&format!("_{session_id}.jsonl"));
    let folder = path.parent()?;
    let cwd = folder.file_name()?.to_str()?;
    let per_cwd = cwd.len() > 4 && cwd.starts_with("--") && cwd.ends_with("--");
    let roots = [
        crate::OwnConfig::dir_of(a).map(|dir| dir.join("sessions")),
        crate::own_config::var(&a.env, pi_config::SESSION_DIR_VAR),
    ];
    let placed = roots.iter().flatten().any(|root| folder.parent() == Some(root.as_path()));
    (plain && named && per_cwd && placed).then(|| path.to_owned())
}

/// Whether `text` (a screen) shows pi's project-trust dialog.
pub fn is_trust_dialog(text: &str) -> bool {
    text.contains("Trust project folder?") && text.lines().any(|l| l.trim() == "Do not trust")
}

/// The extension bosun writes for an agent: its source with the command that reports for the
/// agent (`hook`) and whether it trusts project folders.
pub fn extension(hook: &str, trust: bool) -> String {
    let hook = serde_json::to_string(hook).unwrap_or_else(|_| "\"\"".into());
    EXTENSION_SOURCE.replacen("\"__BOSUN_HOOK__\"", &hook, 1).replacen("__BOSUN_TRUST__", &trust.to_string(), 1)
}

/// pi: bosun picks its session id; its extension reports its runs, its screen its dialogs.
pub struct Pi;

impl AgentDriver for Pi {
    /// Its `app.interrupt` key, Escape by default (pi 1.6.0: "Cancel or abort").
    fn interrupt_keys(&self) -> Option<&'static [crate::TermKey]> {
        Some(&super::ESC)
    }

    fn kind(&self) -> DriverKind {
        DriverKind::Pi
    }

    fn record(&self, (a, b): (u64, u64), _patterns: super::generic::Patterns) -> Driver {
        Driver::Pi { session_id: super::claude::session_uuid(a, b) }
    }

    fn log_usage(&self, line: &str) -> Option<crate::usage::Used> {
        super::session_usage::pi(line)
    }

    fn grammar(&self) -> Option<&'static Grammar> {
        Some(&GRAMMAR)
    }

    fn user_config(&self, env: &std::collections::BTreeMap<String, String>) -> Option<crate::own_config::UserConfig> {
        Some(pi_config::user_config(env))
    }

    fn config_seeds(&self, own: &crate::OwnConfig) -> Vec<crate::own_config::Seed> {
        pi_config::seeds(own)
    }

    fn point_config(&self, dir: &Path, env: &mut std::collections::BTreeMap<String, String>) {
        pi_config::point(dir, env);
    }

    fn config_env(&self) -> Option<&'static str> {
        Some(pi_config::DIR_VAR)
    }

    /// The project's `.pi/settings.json`, which a worktree lacks when it is not committed (read
    /// once the folder is trusted).
    fn repo_settings(&self) -> Option<super::RepoSettings> {
        Some(super::RepoSettings { file: ".pi/settings.json", copy_to: ".pi/settings.json", folder: None })
    }

    fn client(&self) -> Option<&'static crate::client_check::Client> {
        Some(&pi_config::CLIENT)
    }

    fn has_hooks(&self) -> bool {
        true
    }

    /// `pi … -e <bosun's extension> --session-id <id> [prompt]`; resumed, the same session id
    /// (pi opens the session of that id in its folder) and the message. A fork's first launch
    /// starts from a copy of the forked agent's session (`--fork <file>`).
    fn command_line(&self, a: &crate::Agent, settings: &Path, resume: Option<Option<&str>>) -> Vec<String> {
        let mut argv = a.command.clone();
        argv.extend(["-e".to_owned(), settings.with_file_name(EXTENSION).display().to_string()]);
        if let (None, Some(fork)) = (resume, a.fork.as_ref().filter(|_| a.restarts == 0)) {
            let from = fork.transcript.as_ref().map_or_else(|| fork.conversation.clone(), |t| t.display().to_string());
            argv.extend(["--fork".to_owned(), from]);
        }
        argv.extend(["--session-id".to_owned(), self.conversation(a).unwrap_or_default()]);
        let message = match resume {
            None => a.prompt.clone(),
            Some(message) => message.map(str::to_owned),
        };
        if let Some(message) = message {
            // A message that starts with a dash would be read as an option.
            if message.starts_with('-') {
                argv.push("--".to_owned());
            }
            argv.push(message);
        }
        argv
    }

    fn can_fork(&self) -> bool {
        true
    }

    /// Its extension, naming the agent and its generation, beside its settings.
    fn files(&self, a: &crate::Agent, settings: &Path) -> Vec<(PathBuf, String)> {
        let hook = format!("{} report pi {} --generation {}", a.hook_command, a.id, a.restarts);
        vec![(settings.with_file_name(EXTENSION), extension(&hook, a.policy.accept_trust))]
    }

    fn conversation(&self, a: &crate::Agent) -> Option<String> {
        match &a.driver {
            Driver::Pi { session_id } => Some(session_id.clone()),
            _ => None,
        }
    }

    /// Its project-trust dialog reaches only the screen (its extension event fires whether pi will
    /// ask or not): its screen is looked at.
    fn start_up(&self, _a: &crate::Agent) -> StartUp {
        StartUp { look_at_screen: true, ..StartUp::default() }
    }

    /// Its extension's payload read into what bosun keeps of one (`PiReport`), as JSON.
    fn take_report(&self, event: &str, payload: &str) -> Report {
        let kept = PiReport::parse(payload, event);
        let event = kept.event.clone();
        Report { driver: DriverKind::Pi, event, payload: serde_json::to_string(&kept).unwrap_or_default() }
    }

    fn read_report(&self, a: Option<&crate::Agent>, report: &Report) -> Option<Reading> {
        let p = kept(report)?;
        Some(Reading {
            observation: Some((Source::Hook, observation(&p))),
            said: if p.event == "agent_settled" { p.said() } else { None },
            permission: permission(&p),
            log: a.and_then(|a| session_file(a, &p)),
            ..Reading::default()
        })
    }

    fn screen(&self, text: &str) -> Option<Screen> {
        let trust = is_trust_dialog(text);
        let seen =
            trust.then(|| Observation::Prompt { kind: PromptKind::Setup, asks: Some("Trust project folder?".into()) });
        Some(Screen { trust, seen })
    }

    fn permission_reply(&self, report: &Report, answer: &crate::PermissionAnswer) -> Option<String> {
        kept(report).filter(|p| p.event == "tool_call").map(|_| permission_reply(answer))
    }
}

#[cfg(test)]
mod tests;
