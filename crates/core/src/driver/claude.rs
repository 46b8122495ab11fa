//! Claude Code (and claudeless): the settings file that installs bosun's hooks, and what hook
//! payloads and session-log lines mean.
//!
//! Facts this relies on (../shared/AGENT-FACTS.md): `Stop` is the authoritative end of a turn;
//! `PreToolUse` of `AskUserQuestion` / `ExitPlanMode` means a question / plan dialog;
//! `Notification` with `permission_prompt` means a permission dialog; API errors appear only in
//! the session log, as assistant lines with `isApiErrorMessage: true` and an `error` field; an
//! assistant text line is written *before* the tool_use line of the same turn, so a text line
//! never means the turn ended.

use serde::{Deserialize, Serialize};

use crate::{AgentError, Heartbeat, Observation, PromptKind};

/// The hooks bosun installs, each calling `<hook_command> <event>` with the payload on stdin.
pub const HOOK_EVENTS: [&str; 6] =
    ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "Notification"];

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

/// The fields of a hook payload bosun reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookPayload {
    pub hook_event_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// SessionStart's reason: `startup`, `resume`, `compact` or `clear`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Whether the hook call reports the end of a turn (`Stop`): the moment what the agent said
/// last is read, once per turn (the idle notification after it says nothing new).
pub fn ends_turn(p: &HookPayload) -> bool {
    p.hook_event_name == "Stop"
}

/// What a hook call means.
pub fn hook_observation(p: &HookPayload) -> Observation {
    match p.hook_event_name.as_str() {
        // A new or resumed session waits for its first prompt; `compact` and `clear` happen
        // inside a session, mid-work or not.
        "SessionStart" if matches!(p.source.as_deref(), None | Some("startup" | "resume")) => Observation::Started,
        "SessionStart" => Observation::Activity { heartbeat: Heartbeat::HookCall },
        "UserPromptSubmit" | "PostToolUse" => Observation::Working,
        "PreToolUse" => match p.tool_name.as_deref() {
            Some("AskUserQuestion") => Observation::Prompt { kind: PromptKind::Question },
            Some("ExitPlanMode") => Observation::Prompt { kind: PromptKind::Plan },
            _ => Observation::Working,
        },
        "Stop" => Observation::Idle,
        "Notification" => match p.notification_type.as_deref() {
            Some("permission_prompt") => Observation::Prompt { kind: PromptKind::Permission },
            Some("elicitation_dialog") => Observation::Prompt { kind: PromptKind::Question },
            Some("idle_prompt") => Observation::Idle,
            _ => Observation::Activity { heartbeat: Heartbeat::HookCall },
        },
        _ => Observation::Activity { heartbeat: Heartbeat::HookCall },
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
        "assistant" if l.api_error => Observation::Error { error: api_error(l.error.as_deref()) },
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

/// What the screen shows at start-up, when hooks are silent: the trust dialog (before it is
/// answered no hook fires), or a login or onboarding screen.
pub fn screen_observation(screen: &str) -> Option<Observation> {
    if is_trust_dialog(screen) {
        return Some(Observation::Prompt { kind: PromptKind::Setup });
    }
    const SETUP: [&str; 4] = [
        "Do you trust the files in this folder?",
        "Select login method",
        "Choose the text style",
        "Press Enter to continue",
    ];
    SETUP.iter().any(|s| screen.contains(s)).then_some(Observation::Prompt { kind: PromptKind::Setup })
}

/// The "Do you trust the files in this folder?" dialog.
pub fn is_trust_dialog(screen: &str) -> bool {
    screen.contains("Do you trust the files in this folder?")
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

    #[test]
    fn hooks_mean_what_claude_says() {
        assert_eq!(hook("Stop", None, None), Observation::Idle);
        assert_eq!(hook("UserPromptSubmit", None, None), Observation::Working);
        assert_eq!(hook("PreToolUse", None, Some("Bash")), Observation::Working);
        assert_eq!(
            hook("PreToolUse", None, Some("AskUserQuestion")),
            Observation::Prompt { kind: PromptKind::Question }
        );
        assert_eq!(hook("PreToolUse", None, Some("ExitPlanMode")), Observation::Prompt { kind: PromptKind::Plan });
        assert_eq!(
            hook("Notification", Some("permission_prompt"), None),
            Observation::Prompt { kind: PromptKind::Permission }
        );
        assert_eq!(hook("SessionStart", None, None), Observation::Started);
        assert_eq!(
            hook("Notification", Some("auth_success"), None),
            Observation::Activity { heartbeat: Heartbeat::HookCall }
        );
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
