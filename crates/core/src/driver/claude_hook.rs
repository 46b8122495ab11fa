//! Claude Code's hook payload: the fields of one bosun reads, each bounded, read from what
//! Claude passes a hook on stdin, and kept (as JSON) as what its reports carry.

use serde::{Deserialize, Serialize};

/// The fields of a hook payload bosun reads, each bounded: what a dialog asks is kept as a
/// short summary (`asks`), never the whole tool input.
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
    /// StopFailure's error category (`rate_limit`, `authentication_failed`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stop's (and StopFailure's) last assistant message: the turn's final text, which the
    /// transcript often does not hold yet when the hook fires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// A notification's (or error's) text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What a dialog asks, from the tool's input: `Bash: rm -rf build`, a question and its
    /// options, the start of a plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<String>,
    /// What a tool acts on, which permission rules match: a command, a path or a URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The permission mode the client runs in (`default`, `auto`, …), as it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// Why the client refused a call (`PermissionDenied`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a report of Claude's kept (`Claude::take_report`) holds; none for another driver's.
pub(super) fn kept(report: &super::Report) -> Option<HookPayload> {
    if report.driver != super::DriverKind::Claude {
        return None;
    }
    let named = || HookPayload { hook_event_name: report.event.clone(), ..HookPayload::default() };
    Some(serde_json::from_str(&report.payload).unwrap_or_else(|_| named()))
}

/// The most kept of a hook payload's text fields; a message keeps its end, where a turn says
/// how it ended.
pub(super) const FIELD_MAX: usize = 4_000;
/// The most of what a dialog asks.
const ASKS_MAX: usize = 500;

impl HookPayload {
    /// Reads the payload Claude passed on stdin to the hook for `event` (the event name it was
    /// installed for, used when the payload does not say). Anything unreadable gives a payload
    /// with the event's name only.
    pub fn parse(raw: &str, event: &str) -> Self {
        let v: serde_json::Value = serde_json::from_str(raw).unwrap_or_default();
        let text = |key: &str| v[key].as_str().map(str::to_owned);
        let short = |key: &str| text(key).map(|s| head(&s, FIELD_MAX));
        let name = text("hook_event_name").filter(|n| !n.is_empty()).unwrap_or_else(|| event.to_owned());
        let tool = text("tool_name");
        let asks = tool.as_deref().and_then(|t| asks(t, &v["tool_input"]));
        let input = |key: &str| v["tool_input"][key].as_str();
        let subject =
            input("command").or_else(|| input("file_path")).or_else(|| input("path")).or_else(|| input("url"));
        Self {
            hook_event_name: head(&name, 100),
            notification_type: short("notification_type"),
            tool_name: tool.map(|t| head(&t, 200)),
            session_id: short("session_id"),
            transcript_path: short("transcript_path"),
            source: short("source"),
            error: short("error").or_else(|| v["error"]["type"].as_str().map(|s| head(s, 200))),
            last_assistant_message: text("last_assistant_message").map(|s| tail(&s, FIELD_MAX)),
            message: short("message"),
            asks,
            subject: subject.map(|s| head(s, FIELD_MAX)),
            permission_mode: text("permission_mode").map(|m| head(&m, 100)),
            reason: short("reason"),
        }
    }

    /// The permission mode the payload says the client runs in, when it names one bosun can read.
    pub fn mode(&self) -> Option<crate::PermissionMode> {
        crate::PermissionMode::parse(self.permission_mode.as_deref()?)
    }

    /// What the agent said last, when the hook carries it.
    pub fn said(&self) -> Option<&str> {
        self.last_assistant_message.as_deref().filter(|s| !s.trim().is_empty())
    }
}

/// What a dialog for tool `tool` with input `input` asks, in one short line or a few.
fn asks(tool: &str, input: &serde_json::Value) -> Option<String> {
    let s = |key: &str| input[key].as_str();
    let text = match tool {
        "AskUserQuestion" => {
            let questions = input["questions"].as_array()?;
            let lines: Vec<String> = questions
                .iter()
                .map(|q| {
                    let options: Vec<&str> =
                        q["options"].as_array().into_iter().flatten().filter_map(|o| o["label"].as_str()).collect();
                    let question = q["question"].as_str().unwrap_or_default();
                    if options.is_empty() {
                        question.to_owned()
                    } else {
                        format!("{question} [{}]", options.join(" | "))
                    }
                })
                .collect();
            lines.join("\n")
        }
        "ExitPlanMode" => format!("approve the plan: {}", s("plan").unwrap_or_default()),
        _ => {
            let detail = s("command")
                .or_else(|| s("file_path"))
                .or_else(|| s("path"))
                .or_else(|| s("url"))
                .or_else(|| s("pattern"))
                .map(str::to_owned)
                .unwrap_or_else(|| if input.is_null() { String::new() } else { input.to_string() });
            if detail.is_empty() {
                tool.to_owned()
            } else {
                format!("{tool}: {detail}")
            }
        }
    };
    let text = text.trim();
    (!text.is_empty()).then(|| head(text, ASKS_MAX))
}

/// The first `max` bytes of `s`, cut at a character boundary.
pub(super) fn head(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// The last `max` bytes of `s`, cut at a character boundary.
pub(super) fn tail(s: &str, max: usize) -> String {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_owned()
}
