//! The opencode driver's reading of its plugin's reports (payloads as the plugin sent them for
//! the real opencode 1.18.33), of its screen, and its command lines.

use super::*;

fn read(event: &str, payload: &str, failed: bool) -> Option<Observation> {
    observation(&OpencodeReport::parse(payload, event), failed)
}

const SESSION: &str = "ses_ddf9bd9f8ffe2mXtUj9tIhl7d9";

fn with(rest: &str, event: &str) -> String {
    format!(r#"{{"type":"{event}","sessionID":"{SESSION}",{rest}}}"#)
}

#[test]
fn reports_mean_what_opencode_1_18_says() {
    assert_eq!(read("started", r#"{"type":"started"}"#, false), Some(Observation::Started));
    let busy = with(r#""status":{"type":"busy"}"#, "session.status");
    assert_eq!(read("session.status", &busy, false), Some(Observation::Working));
    let retry = with(
        r#""status":{"type":"retry","attempt":1,"message":"This request would exceed the rate limit for your organization."}"#,
        "session.status",
    );
    assert_eq!(read("session.status", &retry, false), Some(Observation::Error { error: AgentError::RateLimited }));
    let auth = with(r#""error":{"name":"APIError","message":"invalid x-api-key","statusCode":401}"#, "session.error");
    assert_eq!(read("session.error", &auth, false), Some(Observation::Error { error: AgentError::Unauthorized }));
    let aborted = with(r#""error":{"name":"MessageAbortedError","message":"Aborted"}"#, "session.error");
    assert_eq!(read("session.error", &aborted, false), None, "an interrupted turn ends as its idle says");
    let asked = with(
        r#""request":{"id":"per_22064378c001NT7MUuKh9DQCzU","permission":"bash","patterns":["touch made-file"]}"#,
        "permission.asked",
    );
    assert_eq!(
        read("permission.asked", &asked, false),
        Some(Observation::Prompt { kind: PromptKind::Permission, asks: Some("bash: touch made-file".into()) })
    );
    let question = with(r#""question":"Which database?""#, "question.asked");
    assert_eq!(
        read("question.asked", &question, false),
        Some(Observation::Prompt { kind: PromptKind::Question, asks: Some("Which database?".into()) })
    );
    assert_eq!(read("permission.replied", &with("\"x\":1", "permission.replied"), false), Some(Observation::Working));
    let done = with(r#""said":"All done.""#, "session.idle");
    assert_eq!(read("session.idle", &done, false), Some(Observation::Idle));
    assert_eq!(read("session.idle", &done, true), Some(Observation::Idle), "a turn with text ended");
    let silent = with(r#""x":1"#, "session.idle");
    assert_eq!(read("session.idle", &silent, false), Some(Observation::Idle));
    assert_eq!(read("session.idle", &silent, true), None, "the failed turn's error stands");
    assert_eq!(read("mystery", "not json", false), Some(Observation::Activity { heartbeat: Heartbeat::HookCall }));
}

#[test]
fn a_report_says_what_it_said_its_permission_and_its_session_log() {
    let asked = with(r#""request":{"id":"per_1","permission":"bash","patterns":["rm -rf x"]}"#, "permission.asked");
    let reading = Opencode.read_report(None, &Opencode.take_report("permission.asked", &asked)).unwrap();
    assert_eq!(reading.permission, Some(("bash".into(), Some("rm -rf x".into()))));
    let done = Opencode.take_report("session.idle", &with(r#""said":"Made it.""#, "session.idle"));
    assert_eq!(Opencode.read_report(None, &done).and_then(|r| r.said).as_deref(), Some("Made it."));
    let deny = crate::PermissionAnswer::Deny { rule: "bash(rm *)".into() };
    let allow = crate::PermissionAnswer::Allow { rule: "bash".into() };
    let reply = |report: &Report, answer| Opencode.permission_reply(report, answer);
    let asked = Opencode.take_report("permission.asked", &asked);
    let denied: Value = serde_json::from_str(&reply(&asked, &deny).unwrap_or_default()).unwrap_or_default();
    assert_eq!(denied["reply"], "reject");
    assert!(denied["message"].as_str().unwrap_or_default().contains("bash(rm *)"), "{denied}");
    assert_eq!(reply(&asked, &allow).as_deref(), Some(r#"{"reply":"once"}"#));
    assert_eq!(reply(&done, &allow), None, "only a permission request is answered");
}

#[test]
fn hostile_payloads_are_bounded_and_read_as_data() {
    let huge = "x".repeat(1_000_000);
    let payload = serde_json::json!({"sessionID": "../../etc/passwd", "said": format!("start{huge}end"),
        "request": {"permission": huge, "patterns": [huge]}, "error": {"name": huge, "message": huge, "statusCode": 1e30},
        "status": {"type": huge, "message": huge}})
    .to_string();
    let report = Opencode.take_report(&"e".repeat(10_000), &payload);
    assert!(report.payload.len() < 20_000, "kept: {} bytes", report.payload.len());
    assert_eq!(report.event.len(), super::super::EVENT_MAX);
    let r = kept(&report).unwrap_or_default();
    assert_eq!(r.session, None, "a session id that is a path is no session");
    assert_eq!(r.code, None);
    assert!(r.said.as_deref().unwrap_or_default().ends_with("end"), "what it said keeps its end");
    for raw in ["[]", "null", "\"session.idle\"", "{\"sessionID\": 7}", "\u{0}"] {
        let r = Opencode.take_report("session.idle", raw);
        assert_eq!(r.event, "session.idle", "{raw}");
        assert!(Opencode.read_report(None, &r).is_some());
    }
    let claude = DriverKind::Claude.behaviour().take_report("Stop", "{}");
    assert_eq!(Opencode.read_report(None, &claude), None);
    assert!(!is_session_id("ses_a/b") && !is_session_id("ses_a.jsonl") && is_session_id(SESSION));
}

#[test]
fn errors_are_errors_of_their_kind() {
    let kind = |code: Option<u16>, name: &str, message: &str| {
        OpencodeReport { code, error: Some(name.into()), message: Some(message.into()), ..OpencodeReport::default() }
            .error_kind()
    };
    assert_eq!(kind(Some(429), "APIError", "x"), AgentError::RateLimited);
    assert_eq!(kind(Some(402), "APIError", "x"), AgentError::OutOfCredits);
    assert_eq!(kind(None, "ProviderAuthError", "x"), AgentError::Unauthorized);
    assert_eq!(kind(None, "APIError", "Overloaded"), AgentError::RateLimited);
    assert_eq!(kind(Some(400), "APIError", "Your credit balance is too low"), AgentError::OutOfCredits);
    assert_eq!(
        kind(None, "UnknownError", "Unable to connect. Is the computer able to access the url?"),
        AgentError::NoInternet
    );
    assert_eq!(kind(Some(500), "APIError", "Internal server error"), AgentError::Other);
}

#[test]
fn the_screen_shows_its_permission_dialog() {
    // As opencode 1.18.33 draws it (trimmed).
    let dialog = "  ┃\n  ┃  △ Permission required\n  ┃    # Shell command\n  ┃\n  ┃  $ touch made-file\n  ┃\n  ┃   Allow once   Allow always   Reject        ctrl+f fullscreen  ⇆ select  enter confirm\n";
    assert_eq!(
        screen_observation(dialog),
        Some(Observation::Prompt { kind: PromptKind::Permission, asks: Some("$ touch made-file".into()) })
    );
    assert_eq!(
        screen_observation("  ┃  make the file\n     Permission required to go on"),
        None,
        "words are no dialog"
    );
}

#[test]
fn a_resume_drops_the_prompt_its_command_gave() {
    let command: Vec<String> =
        ["opencode", "--prompt", "old", "-m", "x/y", "--prompt=older", "proj"].map(String::from).into();
    assert_eq!(without_prompt(&command), ["opencode", "-m", "x/y", "proj"]);
}

#[test]
fn the_plugin_names_its_report_command_and_its_sessions_folder_as_data() {
    let code = plugin("'/bin/bosun' hook report opencode a-1 --generation 2", Path::new("/s/a \"b\"/sessions"));
    let mut lines = code.lines();
    assert_eq!(lines.next(), Some(r#"const HOOK = "'/bin/bosun' hook report opencode a-1 --generation 2";"#));
    assert_eq!(lines.next(), Some(r#"const SESSIONS = "/s/a \"b\"/sessions";"#));
    assert!(code.contains("export const BosunPlugin"));
}

/// A report names the session a resume continues, a sub-agent's or a hostile one never; an
/// agent recorded before the driver kept it reads as one with none.
#[test]
fn a_report_names_its_session_for_the_record_and_an_old_record_reads_as_none() {
    let busy = format!(r#"{{"type":"session.status","sessionID":"{SESSION}","status":{{"type":"busy"}}}}"#);
    let named = Opencode.named_conversation(&Opencode.take_report("session.status", &busy));
    assert_eq!(named.as_deref(), Some(SESSION));
    for hostile in [r#"{"sessionID":"../../etc/passwd"}"#, r#"{"sessionID":"ses_a b"}"#, r#"{"sessionID":7}"#, "{"] {
        assert_eq!(Opencode.named_conversation(&Opencode.take_report("session.status", hostile)), None, "{hostile}");
    }
    let old: Driver = serde_json::from_str(r#"{"driver":"opencode"}"#).unwrap();
    assert_eq!(old, Driver::Opencode { session: None });
    let mut found = old.clone();
    found.found_conversation("ses_1");
    assert_eq!(found.found(), Some("ses_1"));
    let mut gemini = Driver::Gemini { session_id: "s".into() };
    gemini.found_conversation("ses_1");
    assert_eq!(gemini, Driver::Gemini { session_id: "s".into() }, "bosun picks Gemini CLI's");
}
