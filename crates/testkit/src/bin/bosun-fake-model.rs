//! `bosun-fake-model --api anthropic|openai [--log FILE] [--reply JSON]...`: a fake model server
//! for manual runs and benchmarks. Prints its base URL on the first line of stdout and serves
//! until killed. With `--log FILE` it appends every request to FILE as one JSON line (method,
//! path, main_loop, reply, body). Each `--reply` queues one reply, as JSON:
//! `{"text": "…"}`, `{"shell": "…"}`, `{"approval": "…"}`, `{"shell": "…", "blocked": "reason"}`,
//! `{"stall": 30, "text": "…"}`, `{"status": 429}`.

use std::io::Write;
use std::time::Duration;

use bosun_testkit::fake_model::{FakeModel, Reply};
use serde_json::Value;

fn main() {
    let mut api = None;
    let mut log = None;
    let mut replies = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--api" => api = args.next(),
            "--log" => log = args.next(),
            "--reply" => replies.push(args.next().map(|r| parse_reply(&r)).unwrap_or_else(|| usage())),
            _ => usage(),
        }
    }
    let model = match api.as_deref() {
        Some("anthropic") => FakeModel::anthropic(),
        Some("openai") => FakeModel::openai(),
        _ => usage(),
    };
    for reply in replies {
        model.push(reply);
    }
    println!("{}", model.base_url());
    let _ = std::io::stdout().flush();
    let mut written = 0;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let Some(path) = &log else { continue };
        let requests = model.requests();
        if requests.len() == written {
            continue;
        }
        let mut file = match std::fs::OpenOptions::new().create(true).append(true).open(path) {
            Ok(file) => file,
            Err(e) => {
                eprintln!("bosun-fake-model: cannot open {path}: {e}");
                std::process::exit(1);
            }
        };
        for request in &requests[written..] {
            let line = serde_json::json!({
                "method": request.method, "path": request.path, "query": request.query,
                "main_loop": request.main_loop, "reply": request.reply.as_ref().map(|r| format!("{r:?}")),
                "headers": request.headers, "body": request.body,
            });
            let _ = writeln!(file, "{line}");
        }
        written = requests.len();
    }
}

fn parse_reply(text: &str) -> Reply {
    let value: Value = serde_json::from_str(text).unwrap_or_else(|_| usage());
    let string = |key: &str| value[key].as_str().map(str::to_owned);
    if let Some(status) = value["status"].as_u64() {
        Reply::Status(u16::try_from(status).unwrap_or_else(|_| usage()))
    } else if let Some(secs) = value["stall"].as_u64() {
        Reply::Stall { secs, text: string("text").unwrap_or_default() }
    } else if let (Some(command), Some(reason)) = (string("shell"), string("blocked")) {
        Reply::ShellBlocked { command, reason }
    } else if let Some(command) = string("shell") {
        Reply::Shell(command)
    } else if let Some(command) = string("approval") {
        Reply::ShellNeedingApproval(command)
    } else if let Some(text) = string("text") {
        Reply::Text(text)
    } else {
        usage()
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: bosun-fake-model --api anthropic|openai [--log FILE] [--reply JSON]...\n\
         replies: {{\"text\":\"…\"}} {{\"shell\":\"…\"}} {{\"approval\":\"…\"}} {{\"shell\":\"…\",\"blocked\":\"…\"}} {{\"stall\":SECS,\"text\":\"…\"}} {{\"status\":429}}"
    );
    std::process::exit(2);
}
