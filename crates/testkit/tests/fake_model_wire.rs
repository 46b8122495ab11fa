//! The fake model servers on the wire: plain HTTP/1.1 from a socket, as the real clients speak
//! it (their own tests are in `fake_model.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use bosun_testkit::fake_model::{FakeModel, Reply, DEFAULT_TEXT, SIDE_TEXT};
use serde_json::{json, Value};

/// Sends one request on `stream` and reads the response: status, headers, body (chunks joined).
fn exchange(stream: &mut BufReader<TcpStream>, method: &str, path: &str, body: &Value) -> (u16, String, String) {
    let body = body.to_string();
    let head = format!("{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n", body.len());
    stream.get_mut().write_all(format!("{head}{body}").as_bytes()).expect("send");
    let mut status = String::new();
    stream.read_line(&mut status).expect("status line");
    let code = status.split(' ').nth(1).and_then(|c| c.parse().ok()).expect("status code");
    let mut headers = String::new();
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).expect("header");
        if line == "\r\n" {
            break;
        }
        headers.push_str(&line.to_ascii_lowercase());
    }
    let mut text = Vec::new();
    if headers.contains("transfer-encoding: chunked") {
        loop {
            let mut size = String::new();
            stream.read_line(&mut size).expect("chunk size");
            let size = usize::from_str_radix(size.trim(), 16).expect("hex chunk size");
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk).expect("chunk");
            if size == 0 {
                break;
            }
            text.extend_from_slice(&chunk[..size]);
        }
    } else {
        let len = headers
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|l| l.trim().parse().ok())
            .expect("content-length");
        text = vec![0; len];
        stream.read_exact(&mut text).expect("body");
    }
    (code, headers, String::from_utf8(text).expect("utf-8 body"))
}

fn connect(model: &FakeModel) -> BufReader<TcpStream> {
    BufReader::new(TcpStream::connect(model.addr()).expect("connect"))
}

/// The `data:` JSON of every event of a stream.
fn events(stream: &str) -> Vec<Value> {
    stream.lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).expect("json")).collect()
}

#[test]
fn anthropic_streams_text_and_tool_calls_and_side_requests_leave_the_queue_alone() {
    let model = FakeModel::anthropic();
    model.push(Reply::shell("touch x"));
    let mut conn = connect(&model);
    let tools = json!([{"name": "Bash", "input_schema": {}}]);

    let (code, _, body) = exchange(&mut conn, "POST", "/v1/messages", &json!({"stream": true, "messages": []}));
    assert_eq!(code, 200);
    let side = events(&body);
    assert_eq!(side[2]["type"], "ping");
    assert_eq!(side.iter().filter_map(|e| e["delta"]["text"].as_str()).collect::<String>(), SIDE_TEXT);

    // Same connection: kept alive.
    let request = json!({"stream": true, "tools": tools, "messages": [{"role": "user", "content": "go"}]});
    let (_, headers, body) = exchange(&mut conn, "POST", "/v1/messages?beta=true", &request);
    assert!(headers.contains("content-type: text/event-stream"), "{headers}");
    let call = events(&body);
    let kinds: Vec<&str> = call.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    assert_eq!(call[1]["content_block"]["name"], "Bash");
    let input: String = call.iter().filter_map(|e| e["delta"]["partial_json"].as_str()).collect();
    assert_eq!(serde_json::from_str::<Value>(&input).expect("input json")["command"], "touch x");
    assert!(call.iter().any(|e| e["delta"]["stop_reason"] == "tool_use"));

    // The queue is empty: the default text, here not streamed.
    let request = json!({"tools": tools, "messages": [{"role": "user", "content": "again"}]});
    let (_, _, body) = exchange(&mut conn, "POST", "/v1/messages", &request);
    let message: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        (message["content"][0]["text"].as_str(), message["stop_reason"].as_str()),
        (Some(DEFAULT_TEXT), Some("end_turn"))
    );

    let (code, _, body) = exchange(&mut conn, "POST", "/v1/messages/count_tokens", &json!({"messages": []}));
    assert!(code == 200 && body.contains("input_tokens"), "{code} {body}");
    let (code, _, body) = exchange(&mut conn, "GET", "/v1/models", &json!(null));
    assert!(code == 200 && body.contains("\"data\""), "{code} {body}");

    let log = model.requests();
    let main: Vec<bool> = log.iter().map(|r| r.main_loop).collect();
    assert_eq!(main, [false, true, true, false, false]);
    assert_eq!(log[1].query, "beta=true");
    assert_eq!(log[2].messages(), [("user".to_owned(), "again".to_owned())]);
}

#[test]
fn a_request_asking_for_classification_gets_a_verdict_for_each_tool_call() {
    let model = FakeModel::anthropic();
    model.push(Reply::shell("ls"));
    model.push(Reply::shell_blocked("curl x | sh", "Runs code from the network."));
    model.push(Reply::text("Done."));
    model.push(Reply::shell("ls"));
    let mut conn = connect(&model);
    let tools = json!([{"name": "Bash", "input_schema": {}}]);
    // As Claude Code 2.1.332 asks in auto mode.
    let auto = json!({"stream": true, "tools": tools, "messages": [], "safeguards": [
        {"type": "dangerous_tool_use", "classifier_context": {"permission_mode": "auto"}}]});
    let verdicts = |body: &str| {
        let stream = events(body);
        let id = stream.iter().find_map(|e| e["content_block"]["id"].as_str().map(str::to_owned));
        let delta = stream.iter().find(|e| e["type"] == "message_delta").cloned().expect("message_delta");
        (id, delta["delta"]["safeguard_results"].clone())
    };
    let (id, results) = verdicts(&exchange(&mut conn, "POST", "/v1/messages", &auto).2);
    let id = id.expect("a tool call");
    assert_eq!(results[0]["type"], "dangerous_tool_use");
    assert_eq!(results[0]["status"]["type"], "available");
    assert_eq!(results[0]["status"]["tool_uses"][&id]["outcome"], "not_flagged", "{results}");
    let (id, results) = verdicts(&exchange(&mut conn, "POST", "/v1/messages", &auto).2);
    let verdict = &results[0]["status"]["tool_uses"][id.expect("a tool call")];
    assert_eq!(
        (verdict["type"].as_str(), verdict["outcome"].as_str(), verdict["explanation"].as_str()),
        (Some("evaluated"), Some("flagged"), Some("Runs code from the network."))
    );
    let (_, results) = verdicts(&exchange(&mut conn, "POST", "/v1/messages", &auto).2);
    assert_eq!(results[0]["status"]["tool_uses"], json!({}), "a text answer has no call to judge");
    // A request that does not ask (any other mode) gets no verdict.
    let plain = json!({"stream": true, "tools": tools, "messages": []});
    let (_, results) = verdicts(&exchange(&mut conn, "POST", "/v1/messages", &plain).2);
    assert_eq!(results, Value::Null);
}

#[test]
fn errors_have_each_apis_json_body() {
    let anthropic = FakeModel::anthropic();
    anthropic.push(Reply::Status(529));
    let tools = json!([{"name": "Bash"}]);
    let (code, _, body) =
        exchange(&mut connect(&anthropic), "POST", "/v1/messages", &json!({"stream": true, "tools": tools}));
    let body: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        (code, body["type"].as_str(), body["error"]["type"].as_str()),
        (529, Some("error"), Some("overloaded_error"))
    );

    let openai = FakeModel::openai();
    openai.push(Reply::Status(429));
    let tools = json!([{"type": "function", "name": "exec_command"}]);
    let (code, _, body) =
        exchange(&mut connect(&openai), "POST", "/v1/responses", &json!({"stream": true, "tools": tools}));
    let body: Value = serde_json::from_str(&body).expect("json");
    assert_eq!((code, body["error"]["code"].as_str()), (429, Some("rate_limit_exceeded")));
}

#[test]
fn openai_streams_a_response_and_title_requests_are_side_requests() {
    let model = FakeModel::openai();
    assert!(model.base_url().ends_with("/v1"));
    model.push(Reply::text("Hello there"));
    let mut conn = connect(&model);
    // Codex's title requests offer apply_patch alone.
    let title = json!({"stream": true, "tools": [{"name": "apply_patch"}], "input": []});
    let (_, _, body) = exchange(&mut conn, "POST", "/v1/responses", &title);
    assert!(body.contains(SIDE_TEXT), "{body}");

    let request = json!({
        "stream": true,
        "tools": [{"type": "function", "name": "exec_command"}],
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
    });
    let (_, _, body) = exchange(&mut conn, "POST", "/v1/responses", &request);
    let stream = events(&body);
    let kinds: Vec<&str> = stream.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds[..3], ["response.created", "response.in_progress", "response.output_item.added"]);
    assert_eq!(kinds.last(), Some(&"response.completed"));
    let text: String = stream
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(text, "Hello there");
    let completed = stream.last().expect("events");
    assert!(completed["response"]["usage"]["total_tokens"].as_u64().is_some(), "{completed}");
    assert_eq!(model.main_requests()[0].last_user_text().as_deref(), Some("hi"));
}

#[test]
fn a_dropped_server_stops_listening() {
    let model = FakeModel::anthropic();
    let addr = model.addr();
    let _idle = connect(&model);
    drop(model);
    assert!(TcpStream::connect(addr).is_err(), "still listening on {addr}");
}

/// Each answer reports its usage as its API does (the four counts all different), and the log
/// keeps what it reported: what a ledger read from a client's session must add up to.
#[test]
fn every_answer_reports_its_usage_in_its_apis_words_and_the_log_keeps_it() {
    let anthropic = FakeModel::anthropic();
    anthropic.push(Reply::text("A fairly long answer, so that it has some tokens."));
    let tools = json!([{"name": "Bash"}]);
    let request = json!({"stream": true, "tools": tools, "messages": [{"role": "user", "content": "go on then"}]});
    let stream = events(&exchange(&mut connect(&anthropic), "POST", "/v1/messages", &request).2);
    let sent = &stream.iter().rfind(|e| e["type"] == "message_delta").expect("a message_delta")["usage"];
    let logged = anthropic.main_requests()[0].usage.expect("its usage is logged");
    let counts = [logged.input, logged.output, logged.cache_write, logged.cache_read];
    assert!(counts.iter().all(|n| *n > 0), "{logged:?}");
    assert_eq!(
        [
            &sent["input_tokens"],
            &sent["output_tokens"],
            &sent["cache_creation_input_tokens"],
            &sent["cache_read_input_tokens"]
        ],
        counts.map(Value::from).each_ref(),
    );

    let openai = FakeModel::openai();
    let tools = json!([{"type": "function", "name": "exec_command"}]);
    let request =
        json!({"stream": true, "tools": tools, "input": [{"type": "message", "role": "user", "content": "hi"}]});
    let stream = events(&exchange(&mut connect(&openai), "POST", "/v1/responses", &request).2);
    let sent = &stream.last().expect("events")["response"]["usage"];
    let logged = openai.main_requests()[0].usage.expect("its usage is logged");
    assert_eq!(sent["input_tokens"], logged.input + logged.cache_read, "its input counts the cached tokens");
    assert_eq!(sent["input_tokens_details"]["cached_tokens"], logged.cache_read);
    assert_eq!((sent["output_tokens"].as_u64(), logged.cache_write), (Some(logged.output), 0));

    anthropic.push(Reply::Status(500));
    exchange(&mut connect(&anthropic), "POST", "/v1/messages", &json!({"stream": true, "tools": [{"name": "Bash"}]}));
    assert_eq!(anthropic.main_requests()[1].usage, None, "an error used nothing");
}

/// A server limited until T answers every model call with a 429 saying when the limit resets
/// (`retry-after`, and each API's reset header), and answers again once T has passed.
#[test]
fn a_server_limited_until_a_time_says_when_and_answers_again_after_it() {
    for model in [FakeModel::anthropic(), FakeModel::openai()] {
        let (path, reset) = match model.api() {
            bosun_testkit::fake_model::Api::OpenAi => ("/v1/responses", "x-ratelimit-reset-requests: 0m2s"),
            _ => ("/v1/messages", "anthropic-ratelimit-requests-reset: 20"),
        };
        let until = std::time::SystemTime::now() + std::time::Duration::from_millis(1_500);
        model.limit_until(until);
        model.push(Reply::text("After the reset."));
        let request =
            json!({"stream": true, "tools": [{"name": "Bash", "type": "function"}], "messages": [], "input": []});
        let (code, headers, _) = exchange(&mut connect(&model), "POST", path, &request);
        assert_eq!(code, 429);
        assert!(headers.contains("retry-after: 2\r\n"), "{headers}");
        assert!(headers.contains(reset), "{headers}");
        assert_eq!(model.queued(), 1, "the queue waits for the reset");
        let answered = bosun_testkit::poll::wait_for(std::time::Duration::from_secs(10), || {
            let (code, _, _) = exchange(&mut connect(&model), "POST", path, &request);
            (code == 200).then(std::time::SystemTime::now)
        });
        assert!(answered.expect("it answers again") >= until, "not before the reset");
        let last = model.main_requests().pop().expect("requests");
        assert_eq!(last.reply, Some(Reply::text("After the reset.")), "then the queue goes on");
    }
}

/// A plan's usage limit, as the ChatGPT backend tells Codex of it: `usage_limit_reached` with
/// its reset as a Unix time, and the window in `x-codex-primary-*` headers.
#[test]
fn a_plans_usage_limit_says_its_reset_as_codex_reads_it() {
    let model = FakeModel::openai();
    let until = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
    let unix = until.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    model.usage_limit_until(until);
    let request = json!({"stream": true, "tools": [{"name": "Bash", "type": "function"}], "input": []});
    let (code, headers, body) = exchange(&mut connect(&model), "POST", "/v1/responses", &request);
    assert_eq!(code, 429);
    let body: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(body["error"]["type"], "usage_limit_reached");
    assert_eq!(body["error"]["resets_at"], unix);
    assert!(headers.contains(&format!("x-codex-primary-reset-at: {unix}\r\n")), "{headers}");
    assert!(headers.contains("x-codex-primary-used-percent: 100.0\r\n"), "{headers}");
}
