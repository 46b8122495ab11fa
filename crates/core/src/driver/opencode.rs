//! opencode (npm `opencode-ai`): the plugin bosun gives it (`opencode_plugin.js`, named in
//! `OPENCODE_CONFIG_CONTENT`: `opencode_config`), what the plugin's reports and opencode's screen
//! mean, and its command line (`--prompt`; resumed, `--session <id>`).
//!
//! Checked against the real opencode 1.18.33 (crates/cli/tests/real_opencode.rs, against the model
//! server's Anthropic API; docs/clients/opencode.md). What it relies on:
//!
//! - A plugin gets every event of opencode's bus in process. The plugin reports, in order:
//!   `started` (opencode's TUI takes input: its first catalogue or plugin event, unless its
//!   session reported first), `session.status` (`busy`; `retry` with the
//!   error's message while opencode waits to try a failed request again), `session.error`
//!   (`{name, message, statusCode}`), `session.idle` (the turn ended; with what the agent said
//!   last in it), `permission.asked` (`{id, permission, patterns}`), `permission.replied`,
//!   `question.asked`, `question.replied`, `question.rejected`; nothing of a sub-agent's session.
//! - A failed turn is `session.error` then `session.idle`; a 429 or a 5xx is retried without end
//!   (`session.status` `retry`, 2 s, 4 s, 8 s … apart), a 401 is not.
//! - opencode's session ids are its own (`ses_…`): the plugin keeps what it reported of a session
//!   in `<own config>/sessions/<id>.jsonl`, which bosun takes as its session log, with each
//!   model call's tokens (an assistant message's, from `message.updated`) for the usage ledger;
//!   a resume continues that session (`--session <id>`). opencode takes no prompt with
//!   `--session` (the TUI shows the session and waits): the resume's message is typed.
//! - A permission request is answered through opencode's API by the plugin (`POST
//!   /permission/{id}/reply`): bosun's policy allows once, or rejects with a message the model
//!   is told (a rejection without one ends the turn).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claude_hook::{head, tail};
use super::{opencode_config, AgentDriver, Driver, DriverKind, Reading, Report, Screen, StartUp};
use crate::{AgentError, Heartbeat, Observation, PromptKind, Source};

/// The plugin's code, below the two constants bosun writes above it.
const PLUGIN_CODE: &str = include_str!("opencode_plugin.js");

/// The most kept of a report's text fields.
const FIELD_MAX: usize = 4_000;
/// The most of what a dialog asks.
const ASKS_MAX: usize = 500;

/// Its interrupt key pressed twice (`interrupt_keys`).
static TWICE_ESC: [crate::TermKey; 2] = [crate::TermKey::Esc, crate::TermKey::Esc];

/// What bosun keeps of a report of its plugin, each field bounded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpencodeReport {
    pub event: String,
    /// opencode's session (`ses_…`), only when it is one's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// `session.status`'s status: `busy` or `retry`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// An error's name (`APIError`, `ProviderAuthError`, `MessageAbortedError`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// An error's or a retry's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A permission request's permission (`bash`, `edit`, …) and what it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What a dialog asks, in a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<String>,
    /// What the agent said last in the turn that ended (its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
}

impl OpencodeReport {
    /// Reads the payload the plugin sent for `event` (untrusted: any size, any bytes); anything
    /// unreadable gives a report of the event's name alone.
    pub fn parse(raw: &str, event: &str) -> Self {
        let v: Value = serde_json::from_str(raw).unwrap_or_default();
        let text = |v: &Value| v.as_str().map(|s| head(s, FIELD_MAX));
        let session = v["sessionID"].as_str().filter(|s| is_session_id(s)).map(str::to_owned);
        let permission = text(&v["request"]["permission"]).map(|p| head(&p, 100));
        let subject = text(&v["request"]["patterns"][0]);
        let asks = match (&permission, &subject, text(&v["question"])) {
            (Some(p), Some(s), _) => Some(format!("{p}: {s}")),
            (Some(p), None, _) => Some(p.clone()),
            (None, _, Some(q)) => Some(q),
            _ => None,
        };
        let error = &v["error"];
        Self {
            event: head(event, super::EVENT_MAX),
            session,
            status: text(&v["status"]["type"]).map(|s| head(&s, 20)),
            error: text(&error["name"]).map(|s| head(&s, 100)),
            code: error["statusCode"].as_u64().and_then(|c| u16::try_from(c).ok()),
            message: text(&error["message"]).or_else(|| text(&v["status"]["message"])),
            permission,
            subject,
            asks: asks.map(|a| head(a.trim(), ASKS_MAX)),
            said: v["said"].as_str().map(|s| tail(s, FIELD_MAX)).filter(|s| !s.trim().is_empty()),
        }
    }

    /// The kind of the error it reports.
    fn error_kind(&self) -> AgentError {
        match (self.code, self.error.as_deref()) {
            (Some(401 | 403), _) | (_, Some("ProviderAuthError")) => AgentError::Unauthorized,
            (Some(402), _) => AgentError::OutOfCredits,
            (Some(429), _) => AgentError::RateLimited,
            _ => error_category(self.message.as_deref().unwrap_or_default()),
        }
    }
}

/// Whether `s` can be the name of an opencode session (and of its file): `ses_` and letters,
/// digits or `_`.
pub fn is_session_id(s: &str) -> bool {
    s.len() <= 100 && s.starts_with("ses_") && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The kind of an error from its message, as the providers word them.
pub fn error_category(message: &str) -> AgentError {
    let m = message.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if any(&["rate limit", "rate_limit", "too many requests", "overloaded", "quota", "429"]) {
        AgentError::RateLimited
    } else if any(&["credit", "billing", "insufficient_quota", "payment"]) {
        AgentError::OutOfCredits
    } else if any(&["x-api-key", "api key", "unauthorized", "authentication", "401"]) {
        AgentError::Unauthorized
    } else if any(&["unable to connect", "econnrefused", "enotfound", "fetch failed", "network", "timed out"]) {
        AgentError::NoInternet
    } else {
        AgentError::Other
    }
}

/// The report a report of opencode's kept; none for another driver's.
fn kept(report: &Report) -> Option<OpencodeReport> {
    if report.driver != DriverKind::Opencode {
        return None;
    }
    let named = || OpencodeReport { event: report.event.clone(), ..OpencodeReport::default() };
    Some(serde_json::from_str(&report.payload).unwrap_or_else(|_| named()))
}

/// What a report means. `failed`: the agent's turn is known to have failed (an error was
/// reported), so that the end of a turn that said nothing says nothing more.
pub fn observation(r: &OpencodeReport, failed: bool) -> Option<Observation> {
    Some(match (r.event.as_str(), r.status.as_deref()) {
        ("started", _) => Observation::Started,
        ("session.status", Some("retry")) => Observation::Error { error: r.error_kind() },
        ("session.status", Some("busy")) | ("permission.replied" | "question.replied" | "question.rejected", _) => {
            Observation::Working
        }
        // Interrupted (Esc): the turn ends, and its end says so.
        ("session.error", _) if r.error.as_deref() == Some("MessageAbortedError") => return None,
        ("session.error", _) => Observation::Error { error: r.error_kind() },
        ("permission.asked", _) => Observation::Prompt { kind: PromptKind::Permission, asks: r.asks.clone() },
        ("question.asked", _) => Observation::Prompt { kind: PromptKind::Question, asks: r.asks.clone() },
        ("session.idle", _) if failed && r.said.is_none() => return None,
        ("session.idle", _) => Observation::Idle,
        _ => Observation::Activity { heartbeat: Heartbeat::HookCall },
    })
}

/// What its report prints for a policy's answer to a permission request: opencode's reply,
/// which the plugin gives through opencode's API. A rejection's message is told to the model,
/// which goes on.
pub fn permission_reply(answer: &crate::PermissionAnswer) -> String {
    match answer {
        crate::PermissionAnswer::Allow { .. } => serde_json::json!({ "reply": "once" }).to_string(),
        crate::PermissionAnswer::Deny { rule } => serde_json::json!({
            "reply": "reject",
            "message": format!("bosun's permission policy denies this ({rule})"),
        })
        .to_string(),
    }
}

/// What its screen shows: its permission dialog ("△ Permission required" above "Allow once
/// Allow always Reject"), whose request the plugin also reports; answered by `bosun answer`
/// from its colours (`opencode_dialog`).
pub fn screen_observation(screen: &str) -> Option<Observation> {
    let lines: Vec<&str> = screen.lines().map(|l| l.trim().trim_start_matches('┃').trim()).collect();
    let at = lines.iter().rposition(|l| l.ends_with("Permission required"))?;
    let options = lines[at..].iter().any(|l| l.contains("Allow once") && l.contains("Reject"));
    let asked = |mark: &str| lines[at + 1..].iter().find(|l| l.starts_with(mark)).map(|l| head(l, ASKS_MAX));
    let asks = asked("$ ").or_else(|| asked("# "));
    options.then_some(Observation::Prompt { kind: PromptKind::Permission, asks })
}

/// The plugin for agent `a`: bosun's report command for it and where it keeps its sessions'
/// files, above its code.
pub fn plugin(hook: &str, sessions: &Path) -> String {
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    format!(
        "const HOOK = {};\nconst SESSIONS = {};\n{PLUGIN_CODE}",
        quoted(hook),
        quoted(&sessions.display().to_string())
    )
}

/// The session log of `session` of agent `a`, where its plugin keeps it; none in a pod.
fn session_log(a: &crate::Agent, session: &str) -> Option<PathBuf> {
    let own = crate::OwnConfig::of(a)?;
    is_session_id(session).then(|| own.dir.join(opencode_config::SESSIONS).join(format!("{session}.jsonl")))
}

/// Where agent `a`'s opencode finds bosun's plugin and keeps its files: its own config here, its
/// claim's (`POD_CONFIG`) in a pod.
fn opencode_home(a: &crate::Agent) -> Option<PathBuf> {
    match a.runtime.pod() {
        Some(_) => Some(PathBuf::from(crate::POD_CONFIG)),
        None => crate::OwnConfig::of(a).map(|own| own.dir),
    }
}

/// The session agent `a` had: the one its plugin reported last (recorded in its driver), else
/// (an agent recorded before bosun kept it there) its session log's name.
fn session_of(a: &crate::Agent) -> Option<String> {
    if let Some(session) = a.driver.found() {
        return Some(session.to_owned());
    }
    let name = a.log.as_deref()?.file_name()?.to_str()?;
    name.strip_suffix(".jsonl").filter(|s| is_session_id(s)).map(str::to_owned)
}

/// `command` without the `--prompt` it was given (a resume sends its own message).
fn without_prompt(command: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = command.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--prompt" => {
                args.next();
            }
            a if a.starts_with("--prompt=") => {}
            _ => out.push(arg.clone()),
        }
    }
    out
}

/// opencode: its plugin reports its sessions; its screen shows its permission dialog too.
pub struct Opencode;

impl AgentDriver for Opencode {
    /// Its `session_interrupt` key (escape), pressed twice: the first press only arms it ("esc
    /// again to interrupt", for 5 s); the second aborts the session's turn.
    fn interrupt_keys(&self) -> Option<&'static [crate::TermKey]> {
        Some(&TWICE_ESC)
    }

    fn kind(&self) -> DriverKind {
        DriverKind::Opencode
    }

    fn record(&self, _ids: (u64, u64), _patterns: super::generic::Patterns) -> Driver {
        Driver::Opencode { session: None }
    }

    fn user_config(&self, env: &std::collections::BTreeMap<String, String>) -> Option<crate::own_config::UserConfig> {
        Some(opencode_config::user_config(env))
    }

    fn config_seeds(&self, own: &crate::OwnConfig) -> Vec<crate::own_config::Seed> {
        opencode_config::seeds(own)
    }

    fn point_config(&self, dir: &Path, env: &mut std::collections::BTreeMap<String, String>) {
        opencode_config::point(dir, env);
    }

    fn check_env(&self, env: &std::collections::BTreeMap<String, String>) -> Result<(), String> {
        opencode_config::check(env)
    }

    /// The caller's `OPENCODE_CONFIG_CONTENT` keeps what it says, bosun's plugin added.
    fn merge_inherited(&self, key: &str, theirs: &str, ours: &str) -> Option<String> {
        (key == opencode_config::CONTENT_VAR).then(|| opencode_config::merge(theirs, ours)).flatten()
    }

    /// Confined, its home read-only, it writes its database, logs and snapshots, its state and
    /// its cache in its own config directory.
    fn confined_env(&self, dir: &Path, env: &mut std::collections::BTreeMap<String, String>) {
        opencode_config::confine(dir, env);
    }

    /// The project's `opencode.json` at the repository's root and its `.opencode/` folder
    /// (agents, commands, plugins, `opencode.jsonc` …), which a worktree lacks where they are
    /// not committed.
    fn repo_settings(&self) -> Option<super::RepoSettings> {
        Some(super::RepoSettings { file: "opencode.json", copy_to: "opencode.json", folder: Some(".opencode") })
    }

    fn client(&self) -> Option<&'static crate::client_check::Client> {
        Some(&opencode_config::CLIENT)
    }

    /// Its plugin is a file in its own config directory, named in its environment.
    fn own_config_always(&self) -> bool {
        true
    }

    fn has_hooks(&self) -> bool {
        true
    }

    /// `opencode … --prompt <prompt>`; resumed, `--session <its session>` (its message typed).
    fn command_line(&self, a: &crate::Agent, _settings: &Path, resume: Option<Option<&str>>) -> Vec<String> {
        match resume {
            None => {
                let mut argv = a.command.clone();
                if let Some(prompt) = &a.prompt {
                    argv.extend(["--prompt".to_owned(), prompt.clone()]);
                }
                argv
            }
            Some(_) => {
                let mut argv = without_prompt(&a.command);
                if let Some(session) = session_of(a) {
                    argv.extend(["--session".to_owned(), session]);
                }
                argv
            }
        }
    }

    /// Its plugin, naming the agent and its generation, in its own config directory (in a pod,
    /// its claim's config); confined or in a pod, its plugin package's place in its config
    /// directory there filled (`opencode_config::package_marks`).
    fn files(&self, a: &crate::Agent, _settings: &Path) -> Vec<(PathBuf, String)> {
        let Some(home) = opencode_home(a) else { return Vec::new() };
        let hook = format!("{} report opencode {} --generation {}", a.hook_command, a.id, a.restarts);
        let code = plugin(&hook, &home.join(opencode_config::SESSIONS));
        let mut files = vec![(home.join(opencode_config::PLUGIN), code)];
        // Confined or in a pod, its config directory is in its own config: its plugin package's
        // place there is filled, so that it starts offline.
        if a.runtime.confines() || a.runtime.pod().is_some() {
            files.extend(opencode_config::package_marks(&home.join("config").join("opencode")));
        }
        files
    }

    /// In a pod: its plugin named as here, and its config, data, state and cache in the
    /// claim's config (its home there is the image's, which may not be written).
    fn pod_env(&self, dir: &Path, env: &mut std::collections::BTreeMap<String, String>) {
        opencode_config::point(dir, env);
        opencode_config::confine(dir, env);
    }

    /// Its plugin reports once it is loaded; its permission dialog is on its screen too.
    fn start_up(&self, _a: &crate::Agent) -> StartUp {
        StartUp::default()
    }

    fn take_report(&self, event: &str, payload: &str) -> Report {
        let kept = OpencodeReport::parse(payload, event);
        let event = kept.event.clone();
        Report { driver: DriverKind::Opencode, event, payload: serde_json::to_string(&kept).unwrap_or_default() }
    }

    fn read_report(&self, a: Option<&crate::Agent>, report: &Report) -> Option<Reading> {
        let r = kept(report)?;
        let failed = a.is_some_and(|a| matches!(a.state, crate::SessionState::Error { .. }));
        // Up with a prompt its own command gave (`-- opencode --prompt …`): its turn runs.
        let prompted = a.is_some_and(|a| a.restarts == 0 && without_prompt(&a.command).len() < a.command.len());
        let observation = match observation(&r, failed) {
            Some(Observation::Started) if prompted => Some(Observation::Working),
            seen => seen,
        };
        let permission = r.permission.clone().filter(|_| r.event == "permission.asked");
        let said = r.said.clone().filter(|_| r.event == "session.idle");
        Some(Reading {
            observation: observation.map(|o| (Source::Hook, o)),
            said,
            permission: permission.map(|p| (p, r.subject.clone())),
            log: a.zip(r.session.as_deref()).and_then(|(a, s)| session_log(a, s)),
            ..Reading::default()
        })
    }

    /// The tokens of a model call, which its plugin keeps in the session's file.
    fn log_usage(&self, line: &str) -> Option<crate::usage::Used> {
        super::session_usage::opencode(line)
    }

    /// The session a report names: the one a resume continues.
    fn named_conversation(&self, report: &Report) -> Option<String> {
        kept(report)?.session.filter(|s| is_session_id(s))
    }

    fn screen(&self, text: &str) -> Option<Screen> {
        Some(Screen { trust: false, seen: screen_observation(&super::generic::strip_ansi(text)) })
    }

    /// Its permission dialog shows the selected option by its background alone.
    fn screen_colors(&self) -> bool {
        true
    }

    fn menu(&self, screen: &str) -> Option<super::dialog::Menu> {
        super::opencode_dialog::menu(screen)
    }

    fn permission_reply(&self, report: &Report, answer: &crate::PermissionAnswer) -> Option<String> {
        kept(report).filter(|r| r.event == "permission.asked").map(|_| permission_reply(answer))
    }
}

#[cfg(test)]
#[path = "opencode_tests.rs"]
mod tests;
