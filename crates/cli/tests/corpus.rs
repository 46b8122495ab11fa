//! Recorded claudeless sessions: each replays alike through `bosun replay`, and with
//! `BOSUN_RECORD_CORPUS=1` their exported events become the corpus the core replays in every run
//! (`crates/core/tests/corpus/`): a deliberate update, after a change to detection or
//! classification that the corpus test reported.

mod support;

use support::*;

/// (command, scenario, the agent's definition after its `run`).
const SESSIONS: [(&str, &str, &str); 3] = [
    (
        "chat",
        "chat",
        r#"prompt = "ping"
  classify = { rules = [{ name = "pong", pattern = "\\bpong\\b", class = "working" }] }
  on_idle  = { working = { action = "nudge", message = "status please" }, other = "done" }"#,
    ),
    (
        "writer",
        "writer",
        r#"prompt = "write the plan"
  on_idle = { done = "done", other = "done" }"#,
    ),
    (
        "flaky",
        "flaky",
        r#"prompt   = "rate me"
  on_error = { action = "nudge", message = "ping", cooldown = "1s" }
  on_idle  = { done = "done", other = "done" }"#,
    ),
];

#[test]
fn recorded_claudeless_sessions_replay_alike() {
    let bosun = bosun();
    let mut runbook = String::new();
    for (name, sc, def) in SESSIONS {
        runbook.push_str(&format!(
            "command \"{name}\" {{\n  run = {{ agent = \"{name}\" }}\n}}\n\nagent \"{name}\" {{\n  run = [\"{}\", \"--scenario\", \"{}\"]\n  {def}\n}}\n\n",
            claudeless(),
            scenario(sc)
        ));
    }
    let repo = repo_with_runbook("corpus.hcl", &runbook);
    let record = std::env::var_os("BOSUN_RECORD_CORPUS").is_some();
    for (name, _, _) in SESSIONS {
        let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", name])).unwrap();
        let job = v["job"].as_str().unwrap().to_owned();
        let out = bosun.ok(repo.path(), &["job", "wait", &job]);
        assert!(out.contains("done"), "{name}: {out}");
        let out = bosun.ok(repo.path(), &["replay", &job]);
        assert!(out.contains("all alike") && !out.contains(" 0 decisions"), "{name}: {out}");
        if record {
            let dir = tempfile::tempdir().unwrap();
            bosun.ok(repo.path(), &["job", "export", &job, "--dir", dir.path().to_str().unwrap()]);
            let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/corpus");
            std::fs::copy(dir.path().join("events.jsonl"), corpus.join(format!("{name}.jsonl"))).unwrap();
        }
    }
}

#[test]
fn a_replay_that_differs_prints_original_and_replayed_and_exits_1() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/corpus/chat.jsonl");
    let text = std::fs::read_to_string(corpus).unwrap();
    // As if an older build had classified "pong" by another rule.
    let altered = text.replacen("\"rule\":\"pong\"", "\"rule\":\"older-rule\"", 1);
    assert_ne!(altered, text, "the chat session has a turn classified by the pong guardrail");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.jsonl");
    std::fs::write(&file, altered).unwrap();
    let bosun = bosun();
    let out = bosun.run(dir.path(), &["replay", "--events", file.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("classification from message \"pong\""), "{stdout}");
    assert!(stdout.contains("original  working (guardrail, rule older-rule)"), "{stdout}");
    assert!(stdout.contains("replayed  working (guardrail, rule pong)"), "{stdout}");
    assert!(stdout.contains("1 differ"), "{stdout}");
    let out = bosun.run(dir.path(), &["replay", "--events", "/definitely/not/here.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /definitely/not/here.jsonl"));
}
