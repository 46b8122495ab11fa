//! Claude Code (and claudeless): the settings file that installs bosun's hooks, and what hook
//! payloads and session-log lines mean.
//!
//! Facts this relies on (../shared/AGENT-FACTS.md): `Stop` is the authoritative end of a turn;
//! `PreToolUse` of `AskUserQuestion` / `ExitPlanMode` means a question / plan dialog;
//! `Notification` with `permission_prompt` means a permission dialog; API errors appear only in
//! the session log, as assistant lines with `isApiErrorMessage: true` and an `error` field; an
//! assistant text line is written *before* the tool_use line of the same turn, so a text line
//! never means the turn ended. Claude Code 2.1.3xx (auto mode by default): every payload after
//! `SessionStart` names its `permission_mode`; `PreToolUse` fires before auto mode's classifier
//! and its `permissionDecision` (allow, deny) stands in every mode; a call the classifier blocks
//! raises `PermissionDenied` (`tool_name`, `tool_input`, `reason`) and nothing else.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::argv::Grammar;
use super::claude_hook::kept;
pub use super::claude_hook::HookPayload;
use crate::{AgentError, Heartbeat, Observation, PromptKind};

/// Claude Code 2.1's command line: `claude [options] [command] [prompt]`.
pub const GRAMMAR: Grammar = Grammar {
    value: &[
        "--agent",
        "--agents",
        "--append-system-prompt",
        "--append-system-prompt-file",
        "--debug-file",
        "--effort",
        "--fallback-model",
        "--input-format",
        "--json-schema",
        "--max-budget-usd",
        "--max-turns",
        "--model",
        "-n",
        "--name",
        "--output-format",
        "--permission-mode",
        "--plugin-dir",
        "--plugin-url",
        "--remote-control-session-name-prefix",
        "--session-id",
        "--setting-sources",
        "--settings",
        "--system-prompt",
        "--system-prompt-file",
        // claudeless's own.
        "--scenario",
        "--cwd",
        "--failure",
        "--claude-version",
    ],
    optional: &[
        "-d",
        "--debug",
        "--from-pr",
        "--prompt-suggestions",
        "--remote-control",
        "-r",
        "--resume",
        "-w",
        "--worktree",
    ],
    variadic: &[
        "--add-dir",
        "--allowedTools",
        "--allowed-tools",
        "--betas",
        "--disallowedTools",
        "--disallowed-tools",
        "--file",
        "--mcp-config",
        "--tools",
    ],
    subcommands: &[
        "agents",
        "auth",
        "auto-mode",
        "doctor",
        "gateway",
        "install",
        "mcp",
        "plugin",
        "plugins",
        "project",
        "setup-token",
        "ultrareview",
        "update",
        "upgrade",
    ],
};

/// The hooks bosun installs, each calling `<hook_command> <event>` with the payload on stdin.
/// `PermissionRequest` fires about 110 ms after `PreToolUse` when a permission dialog will show
/// (the `Notification` that also says so comes about 6 s later); `StopFailure` ends a turn that
/// an API error cut short, in place of `Stop`; `PermissionDenied` follows a call auto mode's
/// classifier blocked (about 60 ms after its `PreToolUse`; clients that know no such hook pass it
/// over).
pub const HOOK_EVENTS: [&str; 9] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "Stop",
    "StopFailure",
    "Notification",
];

/// The settings file passed with `--settings`: one command hook per event in `HOOK_EVENTS`.
/// `hook_command` is a shell command prefix (already quoted for `sh`).
pub fn settings(hook_command: &str) -> String {
    let mut hooks = serde_json::Map::new();
    for event in HOOK_EVENTS {
        let command = format!("{hook_command} {event}");
        hooks.insert(
            event.to_owned(),
            serde_json::json!([{ "matcher": "", "hooks": [{ "type": "command", "command": command }] }]),
        );
    }
    serde_json::json!({ "hooks": hooks }).to_string()
}

/// The tool a `PermissionRequest` asks to use, when it is a permission a policy may answer (a
/// question or a plan is for a person).
pub fn permission_request(p: &HookPayload) -> Option<&str> {
    let tool = p.tool_name.as_deref()?;
    (p.hook_event_name == "PermissionRequest" && !matches!(tool, "AskUserQuestion" | "ExitPlanMode")).then_some(tool)
}

/// The tool a `PreToolUse` is about to run, when the permission mode it names is one in which
/// Claude decides calls without asking a person (auto, acceptEdits, dontAsk, bypassPermissions):
/// a policy answers there, before the client's own classifier; Claude follows a `PreToolUse`
/// allow or deny in every mode. In `default` and `plan` the policy answers Claude's own question,
/// its `PermissionRequest` (as claudeless, which heeds no `PreToolUse` decision, asks it too).
pub fn unasked_call(p: &HookPayload) -> Option<&str> {
    let tool = p.tool_name.as_deref()?;
    let unasked = p.mode().is_some_and(|m| !m.asks_about_calls());
    (p.hook_event_name == "PreToolUse" && unasked && !matches!(tool, "AskUserQuestion" | "ExitPlanMode"))
        .then_some(tool)
}

/// The call a `PermissionDenied` says the client refused by itself, and why.
pub fn refusal(p: &HookPayload) -> Option<crate::Refusal> {
    (p.hook_event_name == "PermissionDenied").then(|| crate::Refusal {
        tool: p.tool_name.clone().unwrap_or_else(|| "a tool".to_owned()),
        subject: p.subject.clone(),
        reason: p.reason.clone().filter(|r| !r.trim().is_empty()).unwrap_or_else(|| "no reason given".to_owned()),
    })
}

/// What a hook prints on stdout to answer the permission its payload `p` asks: a
/// `PermissionRequest`'s decision, or a `PreToolUse`'s.
pub fn permission_reply(p: &HookPayload, answer: &crate::PermissionAnswer) -> String {
    if p.hook_event_name == "PreToolUse" {
        let (decision, verb) = if answer.allows() { ("allow", "allows") } else { ("deny", "denies") };
        let reason = format!("bosun's permission policy {verb} this ({})", answer.rule());
        return serde_json::json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason,
        }})
        .to_string();
    }
    let decision = match answer {
        crate::PermissionAnswer::Allow { .. } => serde_json::json!({ "behavior": "allow" }),
        crate::PermissionAnswer::Deny { rule } => serde_json::json!({
            "behavior": "deny",
            "message": format!("bosun's permission policy denies this ({rule})"),
        }),
    };
    serde_json::json!({ "hookSpecificOutput": { "hookEventName": "PermissionRequest", "decision": decision } })
        .to_string()
}

/// Whether the hook call reports the end of a turn (`Stop`, or `StopFailure` after an API
/// error): the moment what the agent said last is read, once per turn.
pub fn ends_turn(p: &HookPayload) -> bool {
    matches!(p.hook_event_name.as_str(), "Stop" | "StopFailure")
}

/// What a hook call means.
///
/// `Notification`s are only signs of life, except the idle one: the permission notification
/// comes about 6 s after its dialog (PermissionRequest said so at once, and by then the dialog
/// may be answered), and the elicitation notification follows the PreToolUse of a question or
/// a plan, which says more.
pub fn hook_observation(p: &HookPayload) -> Observation {
    let prompt = |kind| Observation::Prompt { kind, asks: p.asks.clone() };
    match p.hook_event_name.as_str() {
        // A new or resumed session waits for its first prompt; `compact` and `clear` happen
        // inside a session, mid-work or not.
        "SessionStart" if matches!(p.source.as_deref(), None | Some("startup" | "resume")) => Observation::Started,
        "SessionStart" => Observation::Activity { heartbeat: Heartbeat::HookCall },
        "UserPromptSubmit" | "PostToolUse" => Observation::Working,
        "PreToolUse" => match p.tool_name.as_deref() {
            Some("AskUserQuestion") => prompt(PromptKind::Question),
            Some("ExitPlanMode") => prompt(PromptKind::Plan),
            _ => Observation::Working,
        },
        // The refused call's turn goes on: the model is told, and answers.
        "PermissionDenied" => Observation::Working,
        "PermissionRequest" => match p.tool_name.as_deref() {
            // These dialogs were reported at their PreToolUse already, as what they are.
            Some("AskUserQuestion") => prompt(PromptKind::Question),
            Some("ExitPlanMode") => prompt(PromptKind::Plan),
            _ => prompt(PromptKind::Permission),
        },
        "Stop" => Observation::Idle,
        "StopFailure" => Observation::Error { error: failure(p) },
        "Notification" => match p.notification_type.as_deref() {
            Some("idle_prompt") => Observation::Idle,
            _ => Observation::Activity { heartbeat: Heartbeat::HookCall },
        },
        _ => Observation::Activity { heartbeat: Heartbeat::HookCall },
    }
}

/// The category of the API error a `StopFailure` reports: its `error` field, else its text.
fn failure(p: &HookPayload) -> AgentError {
    match api_error(p.error.as_deref()) {
        AgentError::Other => {
            let text = [p.message.as_deref(), p.last_assistant_message.as_deref()];
            text.into_iter()
                .flatten()
                .map(error_from_text)
                .find(|e| *e != AgentError::Other)
                .unwrap_or(AgentError::Other)
        }
        known => known,
    }
}

#[derive(Deserialize)]
struct LogLine {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, rename = "isApiErrorMessage")]
    api_error: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    message: Option<LogMessage>,
}

#[derive(Deserialize)]
struct LogMessage {
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    content: Option<serde_json::Value>,
}

/// What one line of the session log means. Every line is a log-write heartbeat; a user line
/// (a prompt or a tool result) and a tool call mean the agent is working; an API error line
/// means an error. An assistant text line alone says nothing about the turn's end.
pub fn log_observation(line: &str) -> Observation {
    let activity = Observation::Activity { heartbeat: Heartbeat::LogWrite };
    let Ok(l) = serde_json::from_str::<LogLine>(line) else { return activity };
    match l.kind.as_str() {
        "assistant" if l.api_error => {
            let error = match api_error(l.error.as_deref()) {
                AgentError::Other => l.message.as_ref().map_or(AgentError::Other, message_error),
                known => known,
            };
            Observation::Error { error }
        }
        "assistant" if l.message.as_ref().is_some_and(|m| m.stop_reason.as_deref() == Some("tool_use")) => {
            Observation::Working
        }
        // No Stop hook follows an interrupted turn: the log alone says it ended.
        "user" if l.message.as_ref().is_some_and(interrupted) => Observation::Idle,
        "user" if l.message.is_some() => Observation::Working,
        _ => activity,
    }
}

/// The text of the last assistant message in the end of a session log (`tail` may begin
/// mid-line: a line that does not parse is passed over). A message's text blocks each have a
/// line of their own; those of the last message are joined.
pub fn last_said(tail: &str) -> Option<String> {
    let mut texts: Vec<String> = Vec::new();
    let mut message_id: Option<String> = None;
    for line in tail.lines().rev() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let kind = v["type"].as_str().unwrap_or_default();
        if kind == "user" && !texts.is_empty() {
            break;
        }
        if kind != "assistant" || v["isApiErrorMessage"].as_bool() == Some(true) {
            continue;
        }
        let id = v["message"]["id"].as_str().map(str::to_owned);
        if !texts.is_empty() && id != message_id {
            break;
        }
        message_id = id;
        let content = &v["message"]["content"];
        let blocks = content.as_array().map(|a| a.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>());
        let text = blocks.map(|b| b.join("\n")).or_else(|| content.as_str().map(str::to_owned)).unwrap_or_default();
        if !text.trim().is_empty() {
            texts.push(text);
        }
    }
    texts.reverse();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The error category of an API error line's `error` field.
pub fn api_error(error: Option<&str>) -> AgentError {
    match error.unwrap_or_default() {
        "rate_limit" | "rate_limit_error" | "overloaded_error" => AgentError::RateLimited,
        "authentication_failed" | "authentication_error" | "permission_error" | "invalid_api_key" => {
            AgentError::Unauthorized
        }
        "billing_error" | "out_of_credits" | "credit_balance_too_low" => AgentError::OutOfCredits,
        "network_error" | "network_unreachable" | "connection_error" | "connection_timeout" | "timeout" => {
            AgentError::NoInternet
        }
        _ => AgentError::Other,
    }
}

/// The category of an error from its text, when no field says better: network failures
/// ("Network error: Connection refused", "fetch failed", timeouts) are `no_internet`.
pub fn error_from_text(text: &str) -> AgentError {
    let t = text.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if any(&["rate limit", "rate_limit", "too many requests", "overloaded"]) {
        AgentError::RateLimited
    } else if any(&["credit balance", "billing", "out of credits"]) {
        AgentError::OutOfCredits
    } else if any(&["invalid api key", "authentication", "unauthorized", "please run /login", "oauth token"]) {
        AgentError::Unauthorized
    } else if any(&[
        "network error",
        "network is unreachable",
        "connection error",
        "connection refused",
        "connection reset",
        "fetch failed",
        "timed out",
        "timeout",
        "econnrefused",
        "enotfound",
        "getaddrinfo",
        "unable to connect",
    ]) {
        AgentError::NoInternet
    } else {
        AgentError::Other
    }
}

/// The error category of an error line's text.
fn message_error(m: &LogMessage) -> AgentError {
    m.content.as_ref().map_or(AgentError::Other, |c| {
        let text = match c {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        error_from_text(&text)
    })
}

/// What the screen shows at start-up, when hooks are silent: the folder-trust dialog (before it
/// is answered no hook fires), the custom-API-key dialog, the warning
/// `--dangerously-skip-permissions` (or `--permission-mode bypassPermissions`) opens on until it
/// is accepted once (its default: "No, exit"), or a login or onboarding screen. Each is a setup
/// prompt; `asks` is the dialog's question.
pub fn screen_observation(screen: &str) -> Option<Observation> {
    const SETUP: [&str; 8] = [
        "Claude Code running in Bypass Permissions mode",
        "Detected a custom API key",
        "Do you want to use this API key?",
        "Select login method",
        "Choose the text style",
        "Security notes:",
        "Press Enter to continue",
        "Browser didn't open?",
    ];
    let asks = if is_trust_dialog(screen) {
        Some("trust this folder?".to_owned())
    } else {
        SETUP.iter().find(|s| screen.contains(*s)).map(|s| (*s).to_owned())
    }?;
    Some(Observation::Prompt { kind: PromptKind::Setup, asks: Some(asks) })
}

/// The permission mode bosun starts Claude in, when it must choose one: an agent with a
/// permission policy (`--allow`, `--deny`) runs in `default`, where each tool call Claude would
/// ask about raises its `PermissionRequest` hook, which the policy answers. Claude Code 2.1.3xx
/// otherwise starts in auto mode, whose classifier runs or blocks calls without asking anyone,
/// so the policy would never be asked. A mode the command names itself stands; without a
/// policy, Claude's own default stands.
pub fn permission_mode(a: &crate::Agent) -> Option<&'static str> {
    let policy = !a.policy.allow.is_empty() || !a.policy.deny.is_empty();
    (policy && crate::PermissionMode::named(&a.command).is_none()).then_some("default")
}

/// The permission mode the agent runs in: the one bosun chose or its command named, as its
/// hooks report it since (a person may change it in the client).
pub fn runs_in(a: &crate::Agent) -> crate::RunsIn {
    use crate::{ModeFrom, PermissionMode};
    let set = match PermissionMode::named(&a.command) {
        Some(named) => named.map(|m| (m, ModeFrom::Command)),
        None => permission_mode(a).and_then(PermissionMode::parse).map(|m| (m, ModeFrom::Bosun)),
    };
    crate::RunsIn::of(set, a.permission_mode.as_ref())
}

/// The folder-trust dialog: "Do you trust the files in this folder?" (Claude Code 1.x,
/// claudeless) or "Quick safety check: Is this a project you created or one you trust?" with
/// "Yes, I trust this folder" as its default (2.1).
pub fn is_trust_dialog(screen: &str) -> bool {
    screen.contains("Do you trust the files in this folder?")
        || screen.contains("Is this a project you created or one you trust?")
        || screen.contains("Yes, I trust this folder")
}

/// The session log a hook report names (`transcript_path`), accepted only where Claude keeps
/// this agent's: `<config>/projects/<dir>/<session id>.jsonl`, `<config>` being the agent's own
/// config (in a sandbox or a container), else its `CLAUDE_CONFIG_DIR` (or
/// `CLAUDELESS_CONFIG_DIR`), else `$HOME/.claude`, an absolute path with no `..` in it. A report is untrusted: any other path (`/etc/shadow`, a FIFO somewhere, the
/// log of another agent) is not read.
pub fn session_log(a: &crate::Agent, p: &HookPayload) -> Option<PathBuf> {
    use std::path::{Component, Path};
    let super::Driver::Claude { session_id } = &a.driver else { return None };
    // An agent in a pod keeps its transcript there: no path on this machine is its.
    if a.runtime.pod().is_some() {
        return None;
    }
    let path = Path::new(p.transcript_path.as_deref()?);
    let plain = path.is_absolute() && path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    let named = path.file_name().and_then(|f| f.to_str()) == Some(&format!("{session_id}.jsonl"));
    let projects = path.parent()?.parent()?;
    let config = crate::OwnConfig::dir_of(a);
    let placed = projects.file_name().is_some_and(|n| n == "projects")
        && config.is_none_or(|c| projects.parent() == Some(c.as_path()));
    (plain && named && placed).then(|| path.to_owned())
}

/// A piece of `said` as it stands, byte for byte, in a JSON transcript: its first run of plain
/// characters (those JSON writes as they are), at most 40; None when under 8.
pub fn transcript_piece(said: &str) -> Option<String> {
    let plain = |c: &char| c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | ',' | '-' | '_' | ':' | '!' | '?');
    let piece: String = said.trim_start().chars().take_while(plain).take(40).collect();
    (piece.trim().len() >= 8).then_some(piece)
}

/// `[Request interrupted by user]`: the turn was cut short, not a new one.
fn interrupted(m: &LogMessage) -> bool {
    m.content.as_ref().is_some_and(|c| c.to_string().contains("[Request interrupted by user"))
}

/// A session id for Claude Code: a UUID in the version 4 layout, from 128 bits the caller draws.
pub fn session_uuid(a: u64, b: u64) -> String {
    let hi = (a & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    let lo = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    )
}

/// Claude's own state (`.claude.json`) as bosun writes it where the config directory is bosun's,
/// never a user's: onboarding done (its theme picker and its check of the real API are for a
/// person at a terminal), and, when `trusted` names it, that folder trusted, so no trust dialog
/// shows there or below (Claude 2.1.3xx decides trust for a git worktree through its main
/// repository: give that).
pub fn own_state(trusted: Option<&str>) -> String {
    let projects: serde_json::Map<String, serde_json::Value> = trusted
        .map(|dir| (dir.to_owned(), serde_json::json!({ "hasTrustDialogAccepted": true })))
        .into_iter()
        .collect();
    serde_json::json!({ "hasCompletedOnboarding": true, "projects": projects }).to_string()
}

/// Where Claude's own state is, in a pod: its config directory (`CLAUDE_CONFIG_DIR`) is bosun's.
pub fn pod_state_file() -> PathBuf {
    Path::new(crate::POD_CONFIG).join(".claude.json")
}

/// The files agent `a` needs in its pod beyond its settings: Claude's own state, in a config
/// directory that is new (every pod's without a claim; one on a claim at its first launch only,
/// after which the claim keeps it, with what Claude and a person added), its workspace trusted
/// unless the policy leaves the trust dialog to a person. The workspace is a clone, its own main
/// repository.
fn pod_files(a: &crate::Agent) -> Option<(PathBuf, String)> {
    let pod = a.runtime.pod()?;
    let fresh = pod.claim.is_none() || a.restarts == 0;
    let trusted = a.policy.accept_trust.then_some(crate::POD_WORKSPACE);
    fresh.then(|| (pod_state_file(), own_state(trusted)))
}

/// The repository's own Claude settings, copied into a workspace made for a Claude agent.
pub const REPO_SETTINGS: &str = ".claude/settings.json";

/// Where `REPO_SETTINGS` is copied to in the workspace: Claude reads it as the project's local
/// settings, and git ignores it, so the copy is not the agent's work.
pub const SETTINGS_LOCAL: &str = ".claude/settings.local.json";

/// Claude Code's driver: bosun picks its session id, and its hooks (in the `--settings` file
/// bosun writes) report its every step.
pub struct Claude;

impl super::AgentDriver for Claude {
    /// Its spinner says "esc to interrupt" (Claude Code 2.1.332): the turn ends, the conversation kept.
    fn interrupt_keys(&self) -> Option<&'static [crate::TermKey]> {
        Some(&super::ESC)
    }

    fn kind(&self) -> super::DriverKind {
        super::DriverKind::Claude
    }

    fn user_config(&self, env: &std::collections::BTreeMap<String, String>) -> Option<crate::own_config::UserConfig> {
        Some(super::claude_config::user_config(env))
    }

    fn config_seeds(&self, own: &crate::OwnConfig) -> Vec<crate::own_config::Seed> {
        super::claude_config::seeds(own)
    }

    fn point_config(&self, dir: &Path, env: &mut std::collections::BTreeMap<String, String>) {
        super::claude_config::point(dir, env);
    }

    fn client(&self) -> Option<&'static crate::client_check::Client> {
        Some(&super::claude_config::CLIENT)
    }

    fn config_env(&self) -> Option<&'static str> {
        Some("CLAUDE_CONFIG_DIR")
    }

    fn record(&self, (a, b): (u64, u64), _patterns: super::generic::Patterns) -> super::Driver {
        super::Driver::Claude { session_id: session_uuid(a, b) }
    }

    fn grammar(&self) -> Option<&'static Grammar> {
        Some(&GRAMMAR)
    }

    fn has_hooks(&self) -> bool {
        true
    }

    fn repo_settings(&self) -> Option<super::RepoSettings> {
        Some(super::RepoSettings { file: REPO_SETTINGS, copy_to: SETTINGS_LOCAL, folder: None })
    }

    /// `claude … --session-id <id> --settings <file> [prompt]`; resumed, `--resume <id>` and
    /// the message instead of the prompt.
    fn command_line(&self, a: &crate::Agent, settings: &Path, resume: Option<Option<&str>>) -> Vec<String> {
        let mut argv = a.command.clone();
        let session_id = self.conversation(a).unwrap_or_default();
        // A fork's first launch starts from the conversation it was forked from, as its own.
        if let (None, Some(fork)) = (resume, a.fork.as_ref().filter(|_| a.restarts == 0)) {
            argv.extend(["--resume".to_owned(), fork.conversation.clone(), "--fork-session".to_owned()]);
        }
        match resume {
            None => argv.extend(["--session-id".to_owned(), session_id]),
            Some(_) => argv.extend(["--resume".to_owned(), session_id]),
        }
        argv.extend(["--settings".to_owned(), settings.display().to_string()]);
        if let Some(mode) = permission_mode(a) {
            argv.extend(["--permission-mode".to_owned(), mode.to_owned()]);
        }
        match resume {
            Some(message) => argv.extend(message.map(str::to_owned)),
            None => argv.extend(a.prompt.clone()),
        }
        argv
    }

    fn can_fork(&self) -> bool {
        true
    }

    /// Claude finds a conversation to resume only under the project directory of where it runs
    /// (`<config>/projects/<cwd with / and . as ->`): the fork's gets a copy of the transcript,
    /// in its own config when it has one, else beside the transcript.
    fn fork_copies(&self, a: &crate::Agent) -> Vec<(PathBuf, PathBuf)> {
        let Some(from) = a.fork.as_ref().and_then(|f| f.transcript.clone()) else { return Vec::new() };
        let beside = from.parent().and_then(Path::parent).map(Path::to_owned);
        let own = crate::OwnConfig::of(a).map(|own| own.dir.join("projects"));
        let (Some(projects), Some(name)) = (own.or(beside), from.file_name()) else {
            return Vec::new();
        };
        let project = a.cwd.display().to_string().replace(['/', '.'], "-");
        vec![(from.clone(), projects.join(project).join(name))]
    }

    /// Its transcript, into the project directory of where it runs under `config`, where
    /// `--resume` looks for it.
    fn switch_copies(&self, a: &crate::Agent, config: &Path) -> Vec<(PathBuf, PathBuf)> {
        let (Some(from), Some(name)) = (a.log.clone(), a.log.as_ref().and_then(|l| l.file_name())) else {
            return Vec::new();
        };
        let project = a.cwd.display().to_string().replace(['/', '.'], "-");
        vec![(from.clone(), config.join("projects").join(project).join(name))]
    }

    /// The `--settings` file with bosun's hooks, which name the agent and its generation; in a
    /// pod, Claude's own state with its workspace trusted too (`pod_files`).
    fn files(&self, a: &crate::Agent, path: &Path) -> Vec<(PathBuf, String)> {
        let hook = format!("{} claude {} {}", a.hook_command, a.id, a.restarts);
        let mut files = vec![(path.to_owned(), settings(&hook))];
        files.extend(pod_files(a));
        files
    }

    fn conversation(&self, a: &crate::Agent) -> Option<String> {
        match &a.driver {
            super::Driver::Claude { session_id } => Some(session_id.clone()),
            _ => None,
        }
    }

    fn fork_waits_for(&self, a: &crate::Agent) -> Option<(std::path::PathBuf, String)> {
        let fork = a.fork.as_ref()?;
        Some((fork.transcript.clone()?, transcript_piece(fork.said.as_deref()?)?))
    }

    /// Claude Code writes its transcript a little after Stop (47 ms after it one held 188
    /// bytes, and `--resume` found no conversation): a resume waits for the last message.
    fn resume_waits_for(&self, a: &crate::Agent) -> Option<(std::path::PathBuf, String)> {
        Some((a.log.clone()?, transcript_piece(a.said.as_deref()?)?))
    }

    /// Its start-up dialogs (trust, API key) reach no hook: its screen is looked at.
    fn start_up(&self, _a: &crate::Agent) -> super::StartUp {
        super::StartUp { look_at_screen: true, ..super::StartUp::default() }
    }

    /// Its hook's payload read into what bosun keeps of one (`HookPayload`), as JSON.
    fn take_report(&self, event: &str, payload: &str) -> super::Report {
        let kept = serde_json::to_value(HookPayload::parse(payload, event)).unwrap_or_default();
        let event = kept["hook_event_name"].as_str().unwrap_or_default().to_owned();
        super::Report { driver: super::DriverKind::Claude, event, payload: kept.to_string() }
    }

    fn read_report(&self, a: Option<&crate::Agent>, report: &super::Report) -> Option<super::Reading> {
        let p = &kept(report)?;
        Some(super::Reading {
            observation: Some((crate::Source::Hook, hook_observation(p))),
            said: ends_turn(p).then(|| p.said()).flatten().map(str::to_owned),
            permission: permission_request(p)
                .or_else(|| unasked_call(p))
                .map(|tool| (tool.to_owned(), p.subject.clone())),
            log: a.and_then(|a| session_log(a, p)),
            mode: p.mode(),
            blocked: refusal(p),
        })
    }

    fn log_observation(&self, line: &str) -> Observation {
        log_observation(line)
    }

    fn log_usage(&self, line: &str) -> Option<crate::usage::Used> {
        super::session_usage::claude(line)
    }

    fn screen(&self, text: &str) -> Option<super::Screen> {
        Some(super::Screen { trust: is_trust_dialog(text), seen: screen_observation(text) })
    }

    /// A turn's end whose hook does not say what it said (claudeless, older Claude Code): its
    /// transcript's end does.
    fn said_in_log(&self, a: &crate::Agent, report: &super::Report) -> Option<PathBuf> {
        let p = &kept(report)?;
        (ends_turn(p) && p.said().is_none()).then(|| session_log(a, p)).flatten()
    }

    fn said_in_tail(&self, tail: &str) -> Option<String> {
        last_said(tail)
    }

    fn permission_reply(&self, report: &super::Report, answer: &crate::PermissionAnswer) -> Option<String> {
        Some(permission_reply(&kept(report)?, answer))
    }

    fn runs_in(&self, a: &crate::Agent) -> Option<crate::RunsIn> {
        Some(runs_in(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(event: &str, notification: Option<&str>, tool: Option<&str>) -> Observation {
        hook_observation(&HookPayload {
            hook_event_name: event.into(),
            notification_type: notification.map(Into::into),
            tool_name: tool.map(Into::into),
            ..HookPayload::default()
        })
    }

    fn prompt(kind: PromptKind) -> Observation {
        Observation::Prompt { kind, asks: None }
    }

    #[test]
    fn the_transcript_piece_is_text_json_writes_as_it_is() {
        assert_eq!(transcript_piece("  Done. All tests pass").as_deref(), Some("Done. All tests pass"));
        assert_eq!(
            transcript_piece("Fixed the \"login\" bug").as_deref(),
            Some("Fixed the "),
            "a quote is escaped in JSON"
        );
        assert_eq!(transcript_piece("Fixed it\nnow"), Some("Fixed it".into()));
        assert_eq!(transcript_piece("Ok\n"), None, "too short to tell");
        assert_eq!(transcript_piece(&"a".repeat(100)).map(|p| p.len()), Some(40));
    }

    #[test]
    fn hooks_mean_what_claude_says() {
        assert_eq!(hook("Stop", None, None), Observation::Idle);
        assert_eq!(hook("UserPromptSubmit", None, None), Observation::Working);
        assert_eq!(hook("PreToolUse", None, Some("Bash")), Observation::Working);
        assert_eq!(hook("PreToolUse", None, Some("AskUserQuestion")), prompt(PromptKind::Question));
        assert_eq!(hook("PreToolUse", None, Some("ExitPlanMode")), prompt(PromptKind::Plan));
        assert_eq!(hook("PermissionRequest", None, Some("Bash")), prompt(PromptKind::Permission));
        assert_eq!(hook("PermissionRequest", None, Some("ExitPlanMode")), prompt(PromptKind::Plan));
        assert_eq!(hook("SessionStart", None, None), Observation::Started);
        assert_eq!(hook("Notification", Some("idle_prompt"), None), Observation::Idle);
        assert_eq!(hook("StopFailure", None, None), Observation::Error { error: AgentError::Other });
    }

    #[test]
    fn a_notification_never_says_more_than_the_hook_before_it() {
        // The permission notification comes ~6 s after PermissionRequest, maybe after the
        // dialog was answered; the elicitation one follows a plan's or question's PreToolUse.
        let beat = Observation::Activity { heartbeat: Heartbeat::HookCall };
        for kind in ["permission_prompt", "elicitation_dialog", "auth_success"] {
            assert_eq!(hook("Notification", Some(kind), None), beat, "{kind}");
        }
    }

    #[test]
    fn payloads_are_read_bounded_and_say_what_a_dialog_asks() {
        let p = HookPayload::parse(
            r#"{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf build"}}"#,
            "PermissionRequest",
        );
        assert_eq!(
            hook_observation(&p),
            Observation::Prompt { kind: PromptKind::Permission, asks: Some("Bash: rm -rf build".into()) }
        );
        let q = HookPayload::parse(
            r#"{"tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which DB?","options":[{"label":"pg"},{"label":"sqlite"}]}]}}"#,
            "PreToolUse",
        );
        assert_eq!(q.hook_event_name, "PreToolUse", "the installed event names a payload that does not");
        assert_eq!(q.asks.as_deref(), Some("Which DB? [pg | sqlite]"));
        let huge = format!(r#"{{"hook_event_name":"Stop","last_assistant_message":"{}end"}}"#, "x".repeat(100_000));
        let stop = HookPayload::parse(&huge, "Stop");
        assert!(
            stop.said().is_some_and(|s| s.len() <= super::super::claude_hook::FIELD_MAX && s.ends_with("end")),
            "the end of a message is kept"
        );
        let write = HookPayload::parse(
            &format!(
                r#"{{"tool_name":"Write","tool_input":{{"file_path":"/w/a","content":"{}"}}}}"#,
                "y".repeat(50_000)
            ),
            "PermissionRequest",
        );
        assert_eq!(write.asks.as_deref(), Some("Write: /w/a"), "a tool's whole input is never kept");
        let junk = HookPayload::parse("not json \u{0}", "Stop");
        assert_eq!((junk.hook_event_name.as_str(), junk.said()), ("Stop", None));
    }

    #[test]
    fn a_policy_answers_each_hook_in_the_shape_claude_reads_from_it() {
        let payload = |event: &str| HookPayload { hook_event_name: event.into(), ..HookPayload::default() };
        let allow = crate::PermissionAnswer::Allow { rule: "Bash(git *)".into() };
        let deny = crate::PermissionAnswer::Deny { rule: "Bash(curl *)".into() };
        let v = |s: String| serde_json::from_str::<serde_json::Value>(&s).unwrap_or_default();
        let pre = v(permission_reply(&payload("PreToolUse"), &deny))["hookSpecificOutput"].clone();
        assert_eq!(
            (pre["hookEventName"].as_str(), pre["permissionDecision"].as_str()),
            (Some("PreToolUse"), Some("deny"))
        );
        assert!(pre["permissionDecisionReason"].as_str().is_some_and(|r| r.contains("Bash(curl *)")), "{pre}");
        let pre = v(permission_reply(&payload("PreToolUse"), &allow))["hookSpecificOutput"].clone();
        assert_eq!(pre["permissionDecision"], "allow");
        let request = v(permission_reply(&payload("PermissionRequest"), &allow))["hookSpecificOutput"].clone();
        assert_eq!(
            (request["hookEventName"].as_str(), request["decision"]["behavior"].as_str()),
            (Some("PermissionRequest"), Some("allow"))
        );
    }

    #[test]
    fn a_refused_call_says_its_tool_and_reason_and_nothing_else_is_one() {
        let denied = HookPayload::parse(
            r#"{"hook_event_name":"PermissionDenied","permission_mode":"auto","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"reason":"Deletes everything."}"#,
            "PermissionDenied",
        );
        let r = refusal(&denied).expect("a refusal");
        assert_eq!(
            (r.tool.as_str(), r.subject.as_deref(), r.reason.as_str()),
            ("Bash", Some("rm -rf /"), "Deletes everything.")
        );
        assert_eq!(denied.mode(), Some(crate::PermissionMode::Auto));
        assert_eq!(hook_observation(&denied), Observation::Working, "the turn goes on");
        let bare = refusal(&HookPayload::parse("{}", "PermissionDenied")).expect("the hook alone says it");
        assert_eq!((bare.tool.as_str(), bare.reason.as_str()), ("a tool", "no reason given"));
        assert_eq!(refusal(&HookPayload::parse(r#"{"reason":"x"}"#, "PostToolUse")), None);
    }

    #[test]
    fn a_stop_failure_is_an_error_of_its_kind() {
        let failure = |raw: &str| hook_observation(&HookPayload::parse(raw, "StopFailure"));
        let error = |error| Observation::Error { error };
        assert_eq!(failure(r#"{"error":"rate_limit"}"#), error(AgentError::RateLimited));
        assert_eq!(failure(r#"{"error":"authentication_failed"}"#), error(AgentError::Unauthorized));
        assert_eq!(failure(r#"{"error":"billing_error"}"#), error(AgentError::OutOfCredits));
        assert_eq!(
            failure(r#"{"error":"unknown","last_assistant_message":"API Error: Connection error."}"#),
            error(AgentError::NoInternet)
        );
        assert_eq!(failure(r#"{"error":"server_error"}"#), error(AgentError::Other));
    }

    #[test]
    fn network_failures_read_as_no_internet_from_their_text() {
        for text in [
            "Network error: Connection refused",
            "Error: Network is unreachable",
            "API Error: Connection error.",
            "TypeError: fetch failed",
            "Request timed out.",
        ] {
            assert_eq!(error_from_text(text), AgentError::NoInternet, "{text}");
            let line = format!(
                r#"{{"type":"assistant","error":"unknown","isApiErrorMessage":true,"message":{{"content":[{{"type":"text","text":{}}}]}}}}"#,
                serde_json::json!(text)
            );
            assert_eq!(log_observation(&line), Observation::Error { error: AgentError::NoInternet }, "{text}");
        }
        assert_eq!(error_from_text("something odd"), AgentError::Other);
    }

    #[test]
    fn start_up_dialogs_are_setup_prompts() {
        let trust = "Accessing workspace:\n /tmp/w\n Quick safety check: Is this a project you created or one you trust?\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n Enter to confirm · Esc to cancel";
        assert!(is_trust_dialog(trust));
        assert!(is_trust_dialog("Do you trust the files in this folder?"));
        let key = "Detected a custom API key in your environment\n Do you want to use this API key?\n   1. Yes\n ❯ 2. No (recommended)";
        assert!(!is_trust_dialog(key));
        // Claude Code 2.1.332, started with --dangerously-skip-permissions before it was accepted.
        let bypass = "  WARNING: Claude Code running in Bypass Permissions mode\n\n  By proceeding, you accept all responsibility for actions taken while running in Bypass Permissions mode.\n\n  ❯ No, exit\n    Yes, I accept\n\n  Enter to confirm · Esc to cancel";
        for screen in [trust, key, bypass] {
            assert!(matches!(
                screen_observation(screen),
                Some(Observation::Prompt { kind: PromptKind::Setup, asks: Some(_) })
            ));
        }
        assert_eq!(screen_observation("❯ Try \"fix lint errors\""), None);
    }

    #[test]
    fn a_prompt_on_the_command_line_is_held_apart() {
        let words = |w: &[&str]| w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(GRAMMAR.split_prompt(&words(&["claude", "fix it"])), (words(&["claude"]), Some("fix it".into())));
        let cmd = words(&["claude", "--model", "opus", "--permission-mode", "plan", "-r", "fix it"]);
        assert_eq!(GRAMMAR.split_prompt(&cmd).1.as_deref(), None, "--resume takes the next word as its id");
        let cmd = words(&["claude", "--dangerously-skip-permissions", "--scenario", "s.toml", "fix it"]);
        assert_eq!(GRAMMAR.split_prompt(&cmd).1.as_deref(), Some("fix it"));
        assert_eq!(GRAMMAR.split_prompt(&words(&["claude", "mcp", "list"])).1, None);
        assert_eq!(GRAMMAR.split_prompt(&words(&["claude", "--allowedTools", "Bash", "Edit"])).1, None);
    }

    #[test]
    fn the_settings_install_every_hook_with_its_event_name() {
        let v: serde_json::Value = serde_json::from_str(&settings("'/bin/bosun' hook claude abc")).unwrap();
        for event in HOOK_EVENTS {
            assert_eq!(v["hooks"][event][0]["hooks"][0]["command"], format!("'/bin/bosun' hook claude abc {event}"));
        }
    }

    #[test]
    fn log_lines_seen_from_claudeless() {
        // Lines as claudeless 0.4.0 writes them (trimmed to the fields that matter).
        let error = r#"{"type":"assistant","error":"rate_limit","isApiErrorMessage":true,"message":{"content":[{"type":"text","text":"Rate limited."}]}}"#;
        assert_eq!(log_observation(error), Observation::Error { error: AgentError::RateLimited });
        let tool = r#"{"type":"assistant","message":{"stop_reason":"tool_use","content":[{"type":"tool_use"}]}}"#;
        assert_eq!(log_observation(tool), Observation::Working);
        let text = r#"{"type":"assistant","message":{"stop_reason":null,"content":[{"type":"text","text":"Done"}]}}"#;
        assert_eq!(log_observation(text), Observation::Activity { heartbeat: Heartbeat::LogWrite });
        let prompt = r#"{"type":"user","message":{"role":"user","content":"do it"}}"#;
        assert_eq!(log_observation(prompt), Observation::Working);
        let cut = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#;
        assert_eq!(log_observation(cut), Observation::Idle);
        assert_eq!(log_observation("not json"), Observation::Activity { heartbeat: Heartbeat::LogWrite });
    }

    #[test]
    fn what_was_said_last_is_the_last_assistant_messages_text() {
        let log = [
            r#"{"type":"user","message":{"role":"user","content":"do it"}}"#,
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Looking."}]}}"#,
            r#"{"type":"assistant","message":{"id":"m1","stop_reason":"tool_use","content":[{"type":"tool_use"}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result"}]}}"#,
            r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"All done."}]}}"#,
            r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Shall I push?"}]}}"#,
        ]
        .join("\n");
        assert_eq!(last_said(&log).as_deref(), Some("All done.\nShall I push?"));
        assert_eq!(last_said(&log[40..]).as_deref(), Some("All done.\nShall I push?"), "a cut first line is skipped");
        assert_eq!(last_said(r#"{"type":"user","message":{"content":"hi"}}"#), None);
    }
}
