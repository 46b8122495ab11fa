//! The Anthropic Messages API as Claude Code (and pi, through a provider of its `models.json`) uses
//! it: `POST /v1/messages` streamed (server-sent events `message_start`, `content_block_start` /
//! `content_block_delta` / `content_block_stop`, `message_delta`, `message_stop`, `ping`) or not,
//! `POST /v1/messages/count_tokens`, `GET /v1/models`, and errors in the API's JSON shape. A
//! request that asks for the server-side classification of its tool calls (Claude Code 2.1.3xx in
//! auto mode: `safeguards: [{type: "dangerous_tool_use", …}]`) gets the verdicts in its stream's
//! `message_delta` (`safeguard_results`).

use serde_json::{json, Value};

use crate::http::{Piece, Response};
use crate::pieces::{halves, id, pieces_of, tokens};
use crate::script::Reply;
use crate::usage::Usage;

/// The model named when a request names none.
const MODEL: &str = "claude-sonnet-4-5-20250929";

/// Whether this request is a model call (answered from the script).
pub(crate) fn is_model_call(method: &str, path: &str) -> bool {
    method == "POST" && path == "/v1/messages"
}

/// A main-loop request offers tools.
pub(crate) fn is_main_loop(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// The answer to a model call, and the usage it reports.
pub(crate) fn answer(reply: &Reply, request: &Value) -> (Response, Option<Usage>) {
    let model = request["model"].as_str().unwrap_or(MODEL).to_owned();
    let input_tokens = tokens(&request.to_string());
    let (blocks, stop_reason) = match reply {
        Reply::Status(status) => return (error(*status), None),
        Reply::Limited(limit) => {
            let Response::Json { status, mut headers, body } = error(429) else { unreachable!("an error is JSON") };
            headers.extend(limit.headers(std::time::SystemTime::now(), false));
            return (Response::Json { status, headers, body }, None);
        }
        Reply::Text(text) | Reply::Stall { text, .. } => (vec![Block::Text(text.clone())], "end_turn"),
        Reply::Shell(command) | Reply::ShellNeedingApproval(command) | Reply::ShellBlocked { command, .. } => {
            let input = json!({"command": command, "description": "Run the command the test asked for"});
            (vec![Block::Tool { id: id("toolu_"), name: shell_tool(request), input }], "tool_use")
        }
    };
    let verdicts = asks_classifier(request).then(|| safeguard_results(&blocks, reply));
    let message_id = id("msg_");
    if request["stream"].as_bool() != Some(true) {
        let content: Vec<Value> = blocks.iter().map(Block::whole).collect();
        let used = Usage::of(input_tokens, tokens(&Value::from(content.clone()).to_string()), true);
        let body = json!({
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop_reason, "stop_sequence": null, "usage": used.anthropic(),
        });
        return (Response::Json { status: 200, headers: headers(), body }, Some(used));
    }
    let mut pieces = vec![event(json!({
        "type": "message_start",
        "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": Usage::of(input_tokens, 1, true).anthropic(),
        },
    }))];
    let mut output_tokens = 0;
    for (index, block) in blocks.iter().enumerate() {
        pieces.push(event(json!({"type": "content_block_start", "index": index, "content_block": block.empty()})));
        if index == 0 {
            pieces.push(event(json!({"type": "ping"})));
        }
        match block {
            Block::Text(text) => {
                output_tokens += tokens(text);
                let delta = |part: &str| {
                    event(json!({"type": "content_block_delta", "index": index,
                                 "delta": {"type": "text_delta", "text": part}}))
                };
                match reply.pause() {
                    Some(pause) => {
                        let (first, second) = halves(text);
                        pieces.extend([delta(first), Piece::Pause(pause), delta(second)]);
                    }
                    None => pieces.extend(pieces_of(text, 3).into_iter().map(delta)),
                }
            }
            Block::Tool { input, .. } => {
                let json = input.to_string();
                output_tokens += tokens(&json);
                pieces.extend(pieces_of(&json, 2).into_iter().map(|part| {
                    event(json!({"type": "content_block_delta", "index": index,
                                 "delta": {"type": "input_json_delta", "partial_json": part}}))
                }));
            }
        }
        pieces.push(event(json!({"type": "content_block_stop", "index": index})));
    }
    let mut delta = json!({"stop_reason": stop_reason, "stop_sequence": null});
    if let Some(verdicts) = verdicts {
        delta["safeguard_results"] = verdicts;
    }
    let used = Usage::of(input_tokens, output_tokens, true);
    pieces.push(event(json!({"type": "message_delta", "delta": delta, "usage": used.anthropic()})));
    pieces.push(event(json!({"type": "message_stop"})));
    (Response::Events { headers: headers(), pieces }, Some(used))
}

/// The shell tool `request` offers: Claude Code's `Bash`, or pi's `bash` when it offers no `Bash`.
fn shell_tool(request: &Value) -> &'static str {
    let offers = |name: &str| request["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == name));
    if !offers("Bash") && offers("bash") {
        "bash"
    } else {
        "Bash"
    }
}

/// Whether `request` asks the server to classify its answer's tool calls.
fn asks_classifier(request: &Value) -> bool {
    request["safeguards"].as_array().is_some_and(|s| s.iter().any(|s| s["type"] == "dangerous_tool_use"))
}

/// The classifier's verdict on each tool call of `blocks`: flagged with its reason for a
/// `ShellBlocked` reply, else not flagged.
fn safeguard_results(blocks: &[Block], reply: &Reply) -> Value {
    let verdict = match reply {
        Reply::ShellBlocked { reason, .. } => json!({"type": "evaluated", "outcome": "flagged", "explanation": reason}),
        _ => json!({"type": "evaluated", "outcome": "not_flagged"}),
    };
    let tool_uses: serde_json::Map<String, Value> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Tool { id, .. } => Some((id.clone(), verdict.clone())),
            Block::Text(_) => None,
        })
        .collect();
    json!([{"type": "dangerous_tool_use", "status": {"type": "available", "tool_uses": tool_uses}}])
}

/// The answer to any other request.
pub(crate) fn other(method: &str, path: &str, request: &Value) -> Response {
    match (method, path) {
        ("POST", "/v1/messages/count_tokens") => Response::Json {
            status: 200,
            headers: headers(),
            body: json!({"input_tokens": tokens(&request.to_string())}),
        },
        ("GET", "/v1/models") => {
            let data = vec![model_info(MODEL)];
            let body = json!({"data": data, "has_more": false, "first_id": MODEL, "last_id": MODEL});
            Response::Json { status: 200, headers: headers(), body }
        }
        ("GET", path) if path.starts_with("/v1/models/") => {
            Response::Json { status: 200, headers: headers(), body: model_info(&path["/v1/models/".len()..]) }
        }
        ("HEAD" | "GET", "/") => Response::Json { status: 200, headers: headers(), body: json!({}) },
        _ => error(404),
    }
}

/// `status` with the API's error body.
pub(crate) fn error(status: u16) -> Response {
    let (kind, message) = match status {
        400 => ("invalid_request_error", "The fake model refuses this request."),
        401 => ("authentication_error", "invalid x-api-key"),
        403 => ("permission_error", "Your API key does not have permission to use the specified resource."),
        404 => ("not_found_error", "Not found."),
        413 => ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
        429 => ("rate_limit_error", "This request would exceed the rate limit for your organization."),
        529 => ("overloaded_error", "Overloaded"),
        _ => ("api_error", "Internal server error"),
    };
    let request_id = id("req_");
    let body = json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id});
    Response::Json { status, headers: vec![("request-id".to_owned(), request_id)], body }
}

fn headers() -> Vec<(String, String)> {
    vec![("request-id".to_owned(), id("req_"))]
}

fn model_info(model: &str) -> Value {
    json!({"type": "model", "id": model, "display_name": model, "created_at": "2025-09-29T00:00:00Z"})
}

fn event(data: Value) -> Piece {
    let name = data["type"].as_str().map(str::to_owned);
    Piece::Event { name, data }
}

/// One content block of an answer.
enum Block {
    Text(String),
    Tool { id: String, name: &'static str, input: Value },
}

impl Block {
    /// As it opens a stream (`content_block_start`).
    fn empty(&self) -> Value {
        match self {
            Self::Text(_) => json!({"type": "text", "text": ""}),
            Self::Tool { id, name, .. } => json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        }
    }

    /// As a whole (a non-streamed answer).
    fn whole(&self) -> Value {
        match self {
            Self::Text(text) => json!({"type": "text", "text": text}),
            Self::Tool { id, name, input } => json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        }
    }
}
