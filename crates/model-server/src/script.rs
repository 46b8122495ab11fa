//! What the model server says and what it heard: the queue of `Reply`s its user scripts, and the
//! `Logged` record of every request.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::usage::{Limit, Usage};

/// The text a main-loop request gets when the queue is empty.
pub const DEFAULT_TEXT: &str = "Done.";
/// The text every side request (one offering no tools: a title, a summary) gets.
pub const SIDE_TEXT: &str = "Fake title";

/// One answer to a main-loop request (one offering tools).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Streamed text ending the turn (`end_turn` / a completed response).
    Text(String),
    /// A shell tool call running this command: Claude's `Bash {command}`, Codex's
    /// `exec_command {cmd}`. The client's next request carries the result and gets the next reply.
    Shell(String),
    /// Starts streaming `text`, falls silent halfway for `secs` seconds, then finishes it.
    Stall { secs: u64, text: String },
    /// This HTTP status with the API's JSON error body (429 rate limit, 401 authentication, 529
    /// overloaded, …).
    Status(u16),
    /// A shell tool call the client must ask the user about before running it. Claude asks
    /// about any Bash call that writes, unless it skips permissions (so this is `Shell` for
    /// it); Codex is asked to run it outside its sandbox (`sandbox_permissions:
    /// "require_escalated"` with a `justification`), which it asks about under
    /// `approval_policy = "on-request"` with `sandbox_mode = "workspace-write"` (see
    /// `CodexConfig::asking_approval`); with `danger-full-access` it runs it without asking.
    ShellNeedingApproval(String),
    /// A shell tool call that the client's own safety classifier blocks, with this reason.
    /// Claude Code 2.1.3xx in auto mode asks the API to classify each tool call of a response
    /// (the request's `safeguards: [{type: "dangerous_tool_use", …}]`); the verdict comes back
    /// in the stream's `message_delta` as `safeguard_results`, per `tool_use` id. Every other
    /// tool call of such a request is `not_flagged`; this one is `flagged` with `reason` as its
    /// explanation. Codex has no such classifier: for it this is `Shell`.
    ShellBlocked { command: String, reason: String },
    /// A 429 saying the rate limit resets at this time (`retry-after` and the API's reset
    /// headers). `ModelServer::limit_until` answers every model call so until then.
    Limited(Limit),
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    pub fn shell(command: impl Into<String>) -> Self {
        Self::Shell(command.into())
    }

    pub fn shell_blocked(command: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::ShellBlocked { command: command.into(), reason: reason.into() }
    }

    /// A 429 saying the limit resets at `until`.
    pub fn limited(until: SystemTime) -> Self {
        Self::Limited(Limit { until, plan: false })
    }

    pub fn stall(secs: u64, text: impl Into<String>) -> Self {
        Self::Stall { secs, text: text.into() }
    }

    /// The pause of a stall.
    pub(crate) fn pause(&self) -> Option<Duration> {
        match self {
            Self::Stall { secs, .. } => Some(Duration::from_secs(*secs)),
            _ => None,
        }
    }
}

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Logged {
    pub method: String,
    /// The path, without the query string.
    pub path: String,
    /// The query string, without the `?` (empty when there is none).
    pub query: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body as text (lossy UTF-8).
    pub raw: String,
    /// The body as JSON; `Null` when it is empty or not JSON.
    pub body: Value,
    /// When it arrived (fully read).
    pub at: Instant,
    pub time: SystemTime,
    /// Whether it was a main-loop request: a model request offering tools.
    pub main_loop: bool,
    /// What it was answered, for a model request (side requests get `Text(SIDE_TEXT)`).
    pub reply: Option<Reply>,
    /// When the last byte of the answer was written.
    pub answered: Option<SystemTime>,
    /// The usage its answer reported (none for an error).
    pub usage: Option<Usage>,
}

impl Logged {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Whether the raw body contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.raw.contains(needle)
    }

    /// The conversation the model was sent, in order, as (role, text) pairs, for either API:
    /// text blocks as they are; a tool call as `tool NAME ARGUMENTS`; a tool result as
    /// `result TEXT`. System prompts and instructions are left out.
    pub fn messages(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        // Anthropic Messages: `messages: [{role, content: string | [block]}]`.
        for message in self.body["messages"].as_array().into_iter().flatten() {
            let role = message["role"].as_str().unwrap_or_default().to_owned();
            match &message["content"] {
                Value::String(text) => out.push((role, text.clone())),
                Value::Array(blocks) => {
                    for block in blocks {
                        if let Some(text) = anthropic_block(block) {
                            out.push((role.clone(), text));
                        }
                    }
                }
                _ => {}
            }
        }
        // OpenAI Responses: `input: [{type: message, role, content: [parts]} | {type:
        // function_call, …} | {type: function_call_output, …}]`.
        for item in self.body["input"].as_array().into_iter().flatten() {
            let role = item["role"].as_str().unwrap_or("assistant").to_owned();
            match item["type"].as_str().unwrap_or("message") {
                "message" => {
                    let text = match &item["content"] {
                        Value::String(text) => text.clone(),
                        parts => parts.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect(),
                    };
                    out.push((role, text));
                }
                "function_call" | "custom_tool_call" | "local_shell_call" => {
                    let name = item["name"].as_str().unwrap_or("shell");
                    let args = item["arguments"].as_str().or(item["input"].as_str()).unwrap_or_default();
                    out.push((role, format!("tool {name} {args}")));
                }
                "function_call_output" | "custom_tool_call_output" => {
                    let output = match &item["output"] {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    out.push(("tool".to_owned(), format!("result {output}")));
                }
                _ => {}
            }
        }
        // Gemini: `contents: [{role: user | model, parts: [{text} | {functionCall} |
        // {functionResponse}]}]`.
        for content in self.body["contents"].as_array().into_iter().flatten() {
            let role = match content["role"].as_str() {
                Some("model") => "assistant",
                _ => "user",
            };
            for part in content["parts"].as_array().into_iter().flatten() {
                if let Some(text) = part["text"].as_str() {
                    out.push((role.to_owned(), text.to_owned()));
                } else if part["functionCall"].is_object() {
                    let call = &part["functionCall"];
                    out.push((
                        role.to_owned(),
                        format!("tool {} {}", call["name"].as_str().unwrap_or_default(), call["args"]),
                    ));
                } else if part["functionResponse"].is_object() {
                    out.push(("tool".to_owned(), format!("result {}", part["functionResponse"]["response"])));
                }
            }
        }
        out
    }

    /// The text of the newest user message (the prompt of this turn, or a tool result).
    pub fn last_user_text(&self) -> Option<String> {
        self.messages().into_iter().rev().find(|(role, _)| role == "user").map(|(_, text)| text)
    }
}

fn anthropic_block(block: &Value) -> Option<String> {
    match block["type"].as_str()? {
        "text" => block["text"].as_str().map(str::to_owned),
        "tool_use" => Some(format!("tool {} {}", block["name"].as_str().unwrap_or_default(), block["input"])),
        "tool_result" => {
            let text = match &block["content"] {
                Value::String(text) => text.clone(),
                parts => parts.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect(),
            };
            Some(format!("result {text}"))
        }
        _ => None,
    }
}

/// The replies still to give and the requests seen.
#[derive(Debug, Default)]
pub(crate) struct Script {
    pub queue: VecDeque<Reply>,
    pub log: Vec<Logged>,
    /// Every model call is limited until then.
    pub limit: Option<Limit>,
}

impl Script {
    /// The reply to a model request: a 429 while the server is limited, else the next queued
    /// one for a main-loop request, else the side text.
    pub fn next(&mut self, main_loop: bool) -> Reply {
        if let Some(limit) = self.limit.filter(|l| l.until > SystemTime::now()) {
            return Reply::Limited(limit);
        }
        if !main_loop {
            return Reply::Text(SIDE_TEXT.to_owned());
        }
        self.queue.pop_front().unwrap_or_else(|| Reply::Text(DEFAULT_TEXT.to_owned()))
    }
}
