//! The OpenAI Responses API as Codex uses it: `POST /v1/responses` streamed as server-sent events
//! (`response.created`, `response.in_progress`, `response.output_item.added` / `.done`,
//! `response.content_part.added` / `.done`, `response.output_text.delta` / `.done`,
//! `response.function_call_arguments.delta` / `.done`, `response.completed` with usage),
//! `GET /v1/models`, and errors in the API's JSON shape.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::http::{Piece, Response};
use crate::pieces::{halves, id, pieces_of, tokens};
use crate::script::Reply;
use crate::usage::Usage;

/// The model named when a request names none.
const MODEL: &str = "gpt-5-codex";

/// Whether this request is a model call (answered from the script).
pub(crate) fn is_model_call(method: &str, path: &str) -> bool {
    method == "POST" && path == "/v1/responses"
}

/// A main-loop request offers tools beyond `apply_patch` (which Codex's title requests offer),
/// in `tools` or, for models that take them so, in an `additional_tools` input item; and it is
/// not marked as a title request (`thread_source: "thread_title"` in the turn metadata).
pub(crate) fn is_main_loop(turn_metadata: Option<&str>, body: &Value) -> bool {
    let source = turn_metadata.and_then(|m| serde_json::from_str::<Value>(m).ok());
    if source.is_some_and(|m| m["thread_source"] == "thread_title") {
        return false;
    }
    let real_tool = |tool: &Value| tool["name"].as_str() != Some("apply_patch");
    let in_tools = body["tools"].as_array().is_some_and(|tools| tools.iter().any(real_tool));
    let in_input = body["input"].as_array().is_some_and(|items| items.iter().any(|i| i["type"] == "additional_tools"));
    in_tools || in_input
}

/// The answer to a model call, and the usage it reports.
pub(crate) fn answer(reply: &Reply, request: &Value) -> (Response, Option<Usage>) {
    let model = request["model"].as_str().unwrap_or(MODEL).to_owned();
    let input_tokens = tokens(&request.to_string());
    let item = match reply {
        Reply::Status(status) => return (error(*status), None),
        Reply::Limited(limit) => {
            let Response::Json { status, mut headers, body } = error(429) else { unreachable!("an error is JSON") };
            headers.extend(limit.headers(SystemTime::now(), true));
            let body = limit.plan_body(SystemTime::now()).unwrap_or(body);
            return (Response::Json { status, headers, body }, None);
        }
        Reply::Text(text) | Reply::Stall { text, .. } => Item::Message { id: id("msg_"), text: text.clone() },
        Reply::Shell(command) | Reply::ShellBlocked { command, .. } => {
            Item::Call { id: id("fc_"), call_id: id("call_"), arguments: json!({"cmd": command}) }
        }
        Reply::ShellNeedingApproval(command) => Item::Call {
            id: id("fc_"),
            call_id: id("call_"),
            arguments: json!({
                "cmd": command,
                "sandbox_permissions": "require_escalated",
                "justification": "The test asks to run this outside the sandbox.",
            }),
        },
    };
    let mut stream = Stream { pieces: Vec::new(), sequence: 0 };
    let response_id = id("resp_");
    let created_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let response = |status: &str, output: Value, usage: Value| {
        json!({
            "id": response_id, "object": "response", "created_at": created_at, "status": status,
            "model": model, "output": output, "usage": usage, "error": null, "incomplete_details": null,
            "parallel_tool_calls": false, "tool_choice": "auto", "tools": [],
        })
    };
    stream.push(json!({"type": "response.created", "response": response("in_progress", json!([]), Value::Null)}));
    stream.push(json!({"type": "response.in_progress", "response": response("in_progress", json!([]), Value::Null)}));
    stream.push(json!({"type": "response.output_item.added", "output_index": 0, "item": item.empty()}));
    let output_tokens;
    match &item {
        Item::Message { id, text } => {
            output_tokens = tokens(text);
            let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
            stream.push(json!({"type": "response.content_part.added", "item_id": id, "output_index": 0,
                               "content_index": 0, "part": part("")}));
            let delta = |stream: &mut Stream, piece: &str| {
                stream.push(json!({"type": "response.output_text.delta", "item_id": id, "output_index": 0,
                                   "content_index": 0, "delta": piece, "logprobs": []}));
            };
            match reply.pause() {
                Some(pause) => {
                    let (first, second) = halves(text);
                    delta(&mut stream, first);
                    stream.pieces.push(Piece::Pause(pause));
                    delta(&mut stream, second);
                }
                None => pieces_of(text, 3).into_iter().for_each(|piece| delta(&mut stream, piece)),
            }
            stream.push(json!({"type": "response.output_text.done", "item_id": id, "output_index": 0,
                               "content_index": 0, "text": text, "logprobs": []}));
            stream.push(json!({"type": "response.content_part.done", "item_id": id, "output_index": 0,
                               "content_index": 0, "part": part(text)}));
        }
        Item::Call { id, arguments, .. } => {
            let arguments = arguments.to_string();
            output_tokens = tokens(&arguments);
            for piece in pieces_of(&arguments, 2) {
                stream.push(json!({"type": "response.function_call_arguments.delta", "item_id": id,
                                   "output_index": 0, "delta": piece}));
            }
            stream.push(json!({"type": "response.function_call_arguments.done", "item_id": id,
                               "output_index": 0, "arguments": arguments}));
        }
    }
    stream.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item.whole()}));
    let used = Usage::of(input_tokens, output_tokens, false);
    let whole = response("completed", json!([item.whole()]), used.openai());
    stream.push(json!({"type": "response.completed", "response": whole}));
    (Response::Events { headers: vec![("x-request-id".to_owned(), id("req_"))], pieces: stream.pieces }, Some(used))
}

/// The answer to any other request.
pub(crate) fn other(method: &str, path: &str) -> Response {
    match (method, path) {
        ("GET", "/v1/models") => {
            let body =
                json!({"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]});
            Response::Json { status: 200, headers: vec![], body }
        }
        _ => error(404),
    }
}

/// `status` with the API's error body.
pub(crate) fn error(status: u16) -> Response {
    let (kind, code, message) = match status {
        400 => ("invalid_request_error", "invalid_request", "The fake model refuses this request."),
        401 => ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
        403 => ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
        404 => ("invalid_request_error", "not_found", "Not found."),
        429 => ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
        503 | 529 => ("server_error", "server_is_overloaded", "The server is overloaded."),
        _ => ("server_error", "server_error", "The server had an error while processing your request."),
    };
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    Response::Json { status, headers: vec![("x-request-id".to_owned(), id("req_"))], body }
}

/// Events with their sequence numbers.
struct Stream {
    pieces: Vec<Piece>,
    sequence: u64,
}

impl Stream {
    fn push(&mut self, mut data: Value) {
        data["sequence_number"] = self.sequence.into();
        self.sequence += 1;
        let name = data["type"].as_str().map(str::to_owned);
        self.pieces.push(Piece::Event { name, data });
    }
}

/// The one output item of an answer.
enum Item {
    Message { id: String, text: String },
    Call { id: String, call_id: String, arguments: Value },
}

impl Item {
    /// As `response.output_item.added` announces it.
    fn empty(&self) -> Value {
        match self {
            Self::Message { id, .. } => {
                json!({"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []})
            }
            Self::Call { id, call_id, .. } => json!({"type": "function_call", "id": id, "call_id": call_id,
                                                     "name": "exec_command", "arguments": "", "status": "in_progress"}),
        }
    }

    /// As it is once done.
    fn whole(&self) -> Value {
        match self {
            Self::Message { id, text } => json!({
                "type": "message", "id": id, "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }),
            Self::Call { id, call_id, arguments } => json!({
                "type": "function_call", "id": id, "call_id": call_id, "name": "exec_command",
                "arguments": arguments.to_string(), "status": "completed",
            }),
        }
    }
}
