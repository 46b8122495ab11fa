//! The Gemini API as Gemini CLI uses it (through `GOOGLE_GEMINI_BASE_URL`):
//! `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, one server-sent `data:` event per
//! chunk (`candidates[0].content.parts`, the last with `finishReason` and `usageMetadata`), and
//! `:generateContent` whole; `:countTokens`, `GET /v1beta/models`, and errors in the API's JSON
//! shape (`{"error": {"code", "message", "status"}}`). Gemini CLI 0.61's side requests (its model
//! router's complexity score, titles, summaries) offer no tools and ask for JSON
//! (`generationConfig.responseMimeType: "application/json"` with a `responseJsonSchema`): they get
//! an object of that schema, each string `SIDE_TEXT`, each number 1.

use serde_json::{json, Map, Value};

use crate::http::{Piece, Response};
use crate::pieces::{halves, id, pieces_of, tokens};
use crate::script::{Reply, SIDE_TEXT};
use crate::usage::Usage;

/// The model named when a request's path names none.
const MODEL: &str = "gemini-2.5-pro";

/// The shell tool Gemini CLI offers the model.
pub(crate) const SHELL_TOOL: &str = "run_shell_command";

/// Whether this request is a model call (answered from the script).
pub(crate) fn is_model_call(method: &str, path: &str) -> bool {
    method == "POST"
        && path.contains("/models/")
        && (path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent"))
}

/// A main-loop request offers tools (`tools: [{functionDeclarations: […]}]`).
pub(crate) fn is_main_loop(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["functionDeclarations"].as_array().is_some_and(|d| !d.is_empty())))
}

/// The answer to a model call to `path`.
pub(crate) fn answer(reply: &Reply, request: &Value, path: &str) -> (Response, Option<Usage>) {
    let model = path.rsplit('/').next().and_then(|m| m.split(':').next()).unwrap_or(MODEL).to_owned();
    let input_tokens = tokens(&request.to_string());
    let call = |command: &str| {
        json!({"functionCall": {"name": SHELL_TOOL, "args": {
        "command": command, "description": "Run the command the test asked for"}}})
    };
    let (parts, texts): (Vec<Value>, Vec<&str>) = match reply {
        Reply::Status(status) => return (error(*status), None),
        Reply::Limited(limit) => {
            let Response::Json { status, mut headers, body } = error(429) else { unreachable!("an error is JSON") };
            headers.extend(limit.headers(std::time::SystemTime::now(), false));
            return (Response::Json { status, headers, body }, None);
        }
        Reply::Text(text) if text == SIDE_TEXT && wants_json(request) => {
            let object = schema_object(schema(request)).to_string();
            return whole_or_streamed(path, &model, vec![json!({"text": object})], input_tokens);
        }
        Reply::Text(text) | Reply::Stall { text, .. } => (Vec::new(), pieces_of(text, 3)),
        Reply::Shell(command) | Reply::ShellNeedingApproval(command) | Reply::ShellBlocked { command, .. } => {
            (vec![call(command)], Vec::new())
        }
    };
    if !path.ends_with(":streamGenerateContent") {
        let mut all: Vec<Value> = texts.iter().map(|t| json!({"text": t})).collect();
        if !texts.is_empty() {
            all = vec![json!({"text": texts.concat()})];
        }
        all.extend(parts);
        return whole_or_streamed(path, &model, all, input_tokens);
    }
    let output = match texts.as_slice() {
        [] => tokens(&Value::from(parts.clone()).to_string()),
        texts => tokens(&texts.concat()),
    };
    let used = Usage::of(input_tokens, output, false);
    let mut pieces = Vec::new();
    let chunk = |parts: Vec<Value>, last: bool| {
        let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        let mut data = json!({"candidates": [], "modelVersion": model, "responseId": id("resp_")});
        if last {
            candidate["finishReason"] = "STOP".into();
            data["usageMetadata"] = used.gemini();
        }
        data["candidates"] = json!([candidate]);
        Piece::Event { name: None, data }
    };
    match (reply.pause(), texts.as_slice()) {
        (Some(pause), _) => {
            let text = texts.concat();
            let (first, second) = halves(&text);
            pieces.push(chunk(vec![json!({"text": first})], false));
            pieces.push(Piece::Pause(pause));
            pieces.push(chunk(vec![json!({"text": second})], true));
        }
        (None, []) => pieces.push(chunk(parts.clone(), true)),
        (None, texts) => {
            let last = texts.len() - 1;
            for (i, piece) in texts.iter().enumerate() {
                pieces.push(chunk(vec![json!({"text": piece})], i == last));
            }
        }
    }
    (Response::Events { headers: headers(), pieces }, Some(used))
}

/// `parts` as one whole answer, or as a stream of one chunk when the path streams.
fn whole_or_streamed(path: &str, model: &str, parts: Vec<Value>, input_tokens: u64) -> (Response, Option<Usage>) {
    let used = Usage::of(input_tokens, tokens(&Value::from(parts.clone()).to_string()), false);
    let body = json!({
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": used.gemini(), "modelVersion": model, "responseId": id("resp_"),
    });
    if path.ends_with(":streamGenerateContent") {
        let pieces = vec![Piece::Event { name: None, data: body }];
        return (Response::Events { headers: headers(), pieces }, Some(used));
    }
    (Response::Json { status: 200, headers: headers(), body }, Some(used))
}

/// Whether a request asks for a JSON answer.
fn wants_json(request: &Value) -> bool {
    request["generationConfig"]["responseMimeType"] == "application/json"
}

fn schema(request: &Value) -> &Value {
    let config = &request["generationConfig"];
    if config["responseJsonSchema"].is_object() {
        &config["responseJsonSchema"]
    } else {
        &config["responseSchema"]
    }
}

/// A value of JSON schema `schema`: an object of its properties, strings `SIDE_TEXT`, numbers 1.
fn schema_object(schema: &Value) -> Value {
    let kind = schema["type"].as_str().unwrap_or("OBJECT").to_ascii_uppercase();
    match kind.as_str() {
        "STRING" => match schema["enum"].as_array().and_then(|e| e.first()) {
            Some(first) => first.clone(),
            None => SIDE_TEXT.into(),
        },
        "INTEGER" | "NUMBER" => 1.into(),
        "BOOLEAN" => false.into(),
        "ARRAY" => json!([]),
        _ => {
            let props = schema["properties"].as_object();
            let fields: Map<String, Value> =
                props.into_iter().flatten().map(|(k, v)| (k.clone(), schema_object(v))).collect();
            Value::Object(fields)
        }
    }
}

/// The answer to any other request.
pub(crate) fn other(method: &str, path: &str, request: &Value) -> Response {
    match method {
        "POST" if path.ends_with(":countTokens") => Response::Json {
            status: 200,
            headers: headers(),
            body: json!({"totalTokens": tokens(&request.to_string())}),
        },
        "GET" if path.ends_with("/models") => {
            let body = json!({"models": [{"name": format!("models/{MODEL}"), "displayName": MODEL}]});
            Response::Json { status: 200, headers: headers(), body }
        }
        _ => error(404),
    }
}

/// `status` with the API's error body.
pub(crate) fn error(status: u16) -> Response {
    let (name, message) = match status {
        400 => ("INVALID_ARGUMENT", "The fake model refuses this request."),
        401 => ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
        403 => ("PERMISSION_DENIED", "Permission denied."),
        404 => ("NOT_FOUND", "Not found."),
        // A quota's, as the API words it: its retry delay, longer than Gemini CLI waits for
        // (300 s), makes the client stop at once (its "Usage limit reached" dialog) rather than
        // retry 10 times over minutes.
        429 => (
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details. Please retry in 600s.",
        ),
        503 => ("UNAVAILABLE", "The model is overloaded. Please try again later."),
        _ => ("INTERNAL", "Internal error encountered."),
    };
    let body = json!({"error": {"code": status, "message": message, "status": name}});
    Response::Json { status, headers: headers(), body }
}

fn headers() -> Vec<(String, String)> {
    vec![("x-request-id".to_owned(), id("req_"))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_requests_get_an_object_of_their_schema() {
        let request = json!({"generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "OBJECT", "properties": {"complexity_reasoning": {"type": "STRING"},
            "complexity_score": {"type": "INTEGER"}, "pick": {"type": "STRING", "enum": ["flash", "pro"]}}}}});
        let object = schema_object(schema(&request));
        assert_eq!(object, json!({"complexity_reasoning": SIDE_TEXT, "complexity_score": 1, "pick": "flash"}));
        assert!(is_model_call("POST", "/v1beta/models/gemini-2.5-pro:streamGenerateContent"));
        assert!(!is_model_call("POST", "/v1beta/models/gemini-2.5-pro:countTokens"));
        assert!(is_main_loop(&json!({"tools": [{"functionDeclarations": [{"name": "x"}]}]})));
        assert!(!is_main_loop(&json!({"tools": []})));
    }
}
