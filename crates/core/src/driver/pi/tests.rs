//! The pi driver's reading of its extension's reports, its errors, its screen and its command
//! line, on payloads as the real pi 1.6.0 sent them through bosun's extension.

use super::*;

/// An agent of `driver` working in `/w`, its files in `/s/agents/a-…`.
fn agent(driver: Driver) -> crate::Agent {
    let nonce = crate::Nonce::from_bits(1);
    let name = crate::Name::parse("t").expect("a name");
    let new = crate::NewAgent {
        id: crate::AgentId::new(&nonce),
        workspace: crate::WorkspaceId::new(&name, &nonce),
        name,
        cwd: "/w".into(),
        command: vec!["pi".into()],
        env: [("HOME".to_owned(), "/h".to_owned())].into(),
        inherits: Vec::new(),
        driver,
        policy: crate::Policy::default(),
        prompt: None,
        dir: "/s/agents/a".into(),
        hook_command: "'/bin/bosun' hook".into(),
        step: None,
        backend: crate::SessionBackend::default(),
        runtime: crate::Runtime::default(),
    };
    crate::Agent::starting(new, crate::Timestamp::from_millis(0))
}

fn read(payload: &str) -> Observation {
    observation(&PiReport::parse(payload, ""))
}

#[test]
fn reports_mean_what_pi_1_6_says() {
    let file = "/h/.pi/agent/sessions/--tmp-w--/2026-11-28T04-25-50-272Z_55555555-2222-3333-4444-555555555555.jsonl";
    let start = format!(r#"{{"event":"session_start","reason":"startup","session_file":"{file}"}}"#);
    assert_eq!(read(&start), Observation::Started);
    let activity = Observation::Activity { heartbeat: Heartbeat::HookCall };
    assert_eq!(read(r#"{"event":"session_start","reason":"new"}"#), activity, "a /new is no start");
    assert_eq!(read(r#"{"event":"before_agent_start","prompt":"hello"}"#), Observation::Working);
    let tool = r#"{"event":"tool_call","tool_name":"bash","subject":"touch made-by-pi"}"#;
    assert_eq!(read(tool), Observation::Working);
    assert_eq!(permission(&PiReport::parse(tool, "")), Some(("bash".into(), Some("touch made-by-pi".into()))));
    let done = r#"{"event":"agent_settled","aborted":false,"stop_reason":"stop","text":"Hi from pi."}"#;
    assert_eq!(read(done), Observation::Idle);
    assert_eq!(PiReport::parse(done, "").said().as_deref(), Some("Hi from pi."));
    let failed = r#"{"event":"agent_settled","aborted":false,"stop_reason":"error","error_message":"429 {\"error\":{\"message\":\"This request would exceed the rate limit for your organization.\",\"type\":\"rate_limit_error\"},\"request_id\":\"req_01\",\"type\":\"error\"}","text":""}"#;
    assert_eq!(read(failed), Observation::Error { error: AgentError::RateLimited });
    assert_eq!(PiReport::parse(failed, "").said(), None, "a failed run said nothing");
    let aborted = r#"{"event":"agent_settled","aborted":true,"stop_reason":"aborted"}"#;
    assert_eq!(read(aborted), Observation::Idle, "an aborted run waits for input");
    let asked = r#"{"event":"ui_prompt_start","kind":"select","title":"Dangerous command:\n\n  sudo ls\n\nAllow?"}"#;
    let question =
        Observation::Prompt { kind: PromptKind::Question, asks: Some("Dangerous command: sudo ls Allow?".into()) };
    assert_eq!(read(asked), question);
    let gate = r#"{"event":"ui_prompt_start","kind":"select","title":"Run this?\n\n  touch x\n","tool":true}"#;
    let permission = Observation::Prompt { kind: PromptKind::Permission, asks: Some("Run this? touch x".into()) };
    assert_eq!(read(gate), permission, "a dialog about a tool call waiting to run");
    assert_eq!(read(r#"{"event":"ui_prompt_end","kind":"select","idle":true}"#), Observation::Idle);
    assert_eq!(read(r#"{"event":"ui_prompt_end","kind":"select","idle":false}"#), Observation::Working);
    assert_eq!(read(r#"{"event":"project_trust","cwd":"/tmp/w"}"#), activity, "pi may not ask: its screen says");
    assert_eq!(read(r#"{"event":"session_shutdown","reason":"quit"}"#), activity);
}

#[test]
fn errors_are_errors_of_their_kind() {
    let auth = r#"401 {"error":{"message":"invalid x-api-key","type":"authentication_error"},"type":"error"}"#;
    assert_eq!(error_category(auth), AgentError::Unauthorized);
    assert_eq!(error_category("403 Forbidden"), AgentError::Unauthorized);
    let limit = r#"429 {"error":{"message":"This request would exceed the rate limit for your organization.","type":"rate_limit_error"}}"#;
    assert_eq!(error_category(limit), AgentError::RateLimited);
    let credits = r#"429 {"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#;
    assert_eq!(error_category(credits), AgentError::OutOfCredits, "a spent quota is out of credits, not a wait");
    let net = "Connection error.: connect ECONNREFUSED 127.0.0.1:33961";
    assert_eq!(error_category(net), AgentError::NoInternet);
    assert_eq!(error_category("500 Internal server error"), AgentError::Other);
    assert_eq!(error_category("the model said 429 times hello"), AgentError::Other, "a number in the text");
}

#[test]
fn hostile_payloads_are_bounded_and_read_as_data() {
    let huge = "x".repeat(1_000_000);
    let payload = serde_json::json!({"event": "e".repeat(10_000), "tool_name": huge, "subject": huge,
        "title": huge, "error_message": huge, "text": format!("start{huge}end"), "session_file": "../../etc/passwd"})
    .to_string();
    let report = Pi.take_report("agent_settled", &payload);
    assert!(report.payload.len() < 20_000, "kept: {} bytes", report.payload.len());
    assert_eq!(report.event.len(), super::super::EVENT_MAX);
    let p = kept(&report).unwrap_or_default();
    assert!(p.text.as_deref().unwrap_or_default().ends_with("end"), "what it said keeps its end");
    for raw in ["[]", "null", "\"agent_settled\"", "{\"event\": 7, \"idle\": \"yes\"}", "\u{0}"] {
        let r = Pi.take_report("ui_prompt_end", raw);
        assert_eq!(r.event, "ui_prompt_end", "{raw}");
        let reading = Pi.read_report(None, &r).expect("read");
        assert_eq!(reading.observation, Some((Source::Hook, Observation::Working)), "{raw}");
    }
    let claude = DriverKind::Claude.behaviour().take_report("Stop", "{}");
    assert_eq!(Pi.read_report(None, &claude), None);
}

#[test]
fn only_this_agents_session_file_in_a_sessions_folder_is_taken() {
    let spec = Pi.record((1, 2), super::super::generic::Patterns::default());
    let Driver::Pi { session_id } = &spec else { panic!("{spec:?}") };
    let a = agent(spec.clone());
    let at = |path: &str| session_file(&a, &PiReport { session_file: Some(path.into()), ..PiReport::default() });
    let good = format!("/h/.pi/agent/sessions/--w--/2026-11-28T04-25-50-272Z_{session_id}.jsonl");
    assert_eq!(at(&good), Some(PathBuf::from(&good)));
    for bad in [
        format!("/h/.pi/agent/sessions/--w--/../../../etc/x_{session_id}.jsonl"),
        format!("h/sessions/--w--/t_{session_id}.jsonl"),
        format!("/h/secrets/t_{session_id}.jsonl"),
        format!("/elsewhere/sessions/--w--/t_{session_id}.jsonl"),
        format!("/h/.pi/agent/sessions/--w--/deeper/t_{session_id}.jsonl"),
        "/h/.pi/agent/sessions/--w--/t_other.jsonl".to_owned(),
    ] {
        assert_eq!(at(&bad), None, "{bad}");
    }
}

#[test]
fn a_policy_denial_blocks_the_call_and_an_allowance_lets_it_run() {
    let deny = permission_reply(&crate::PermissionAnswer::Deny { rule: "bash(rm *)".into() });
    let deny: Value = serde_json::from_str(&deny).unwrap_or_default();
    assert_eq!(deny["block"], true);
    assert!(deny["reason"].as_str().unwrap_or_default().contains("bash(rm *)"));
    let allow = crate::PermissionAnswer::Allow { rule: "x".into() };
    let tool = Pi.take_report("tool_call", r#"{"event":"tool_call","tool_name":"bash"}"#);
    assert_eq!(Pi.permission_reply(&tool, &allow).as_deref(), Some(r#"{"block":false}"#));
    let settled = Pi.take_report("agent_settled", "{}");
    assert_eq!(Pi.permission_reply(&settled, &allow), None, "only a tool call is answered");
}

#[test]
fn its_screen_shows_the_trust_dialog_whose_options_bosun_reads() {
    // As pi 1.6 draws it (trimmed).
    let screen = " Trust project folder?\n /tmp/pix/work\n This allows pi to load .pi settings and resources.\n → Trust\n   Trust parent folder (/tmp/pix)\n   Trust (this session only)\n   Do not trust\n   Do not trust (this session only)\n ↑↓ navigate  enter select  escape/ctrl+c cancel";
    assert!(is_trust_dialog(screen));
    let seen = Pi.screen(screen).and_then(|s| s.seen);
    assert!(matches!(seen, Some(Observation::Prompt { kind: PromptKind::Setup, .. })), "{seen:?}");
    let menu = super::super::dialog::menu(screen).expect("its options read");
    assert_eq!((menu.options.len(), menu.selected), (5, Some(0)));
    assert_eq!(menu.options[2].text, "Trust (this session only)");
    assert_eq!(Pi.screen(" Hi from pi.\n → not a dialog").and_then(|s| s.seen), None);
    let select =
        " Dangerous command:\n   sudo ls\n Allow?\n → Yes\n   No\n ↑↓ navigate  enter select  escape/ctrl+c cancel";
    let menu = super::super::dialog::menu(select).expect("an extension's dialog reads");
    use super::super::dialog::{DialogAnswer, Want};
    assert_eq!(menu.find(Want::Person { answer: DialogAnswer::Deny }), Ok(1));
}

#[test]
fn its_command_line_names_the_extension_and_the_session_and_resumes_it() {
    let spec = Pi.record((1, 2), super::super::generic::Patterns::default());
    let Driver::Pi { session_id } = spec.clone() else { panic!() };
    let (command, prompt) = spec.split_prompt(vec!["pi".into(), "--model".into(), "m".into(), "fix it".into()], None);
    assert_eq!((command.len(), prompt.as_deref()), (3, Some("fix it")));
    let (_, none) = spec.split_prompt(vec!["pi".into(), "auth".into(), "check".into()], None);
    assert_eq!(none, None, "a subcommand is no prompt");
    let mut a = agent(spec);
    a.command = command;
    a.prompt = prompt;
    let settings = Path::new("/s/agents/a/settings.json");
    let words = |w: &[&str]| w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
    let ext = "/s/agents/a/bosun-pi.js";
    assert_eq!(
        Pi.command_line(&a, settings, None),
        words(&["pi", "--model", "m", "-e", ext, "--session-id", &session_id, "fix it"])
    );
    assert_eq!(
        Pi.command_line(&a, settings, Some(Some("-go on"))),
        words(&["pi", "--model", "m", "-e", ext, "--session-id", &session_id, "--", "-go on"])
    );
    assert_eq!(
        Pi.command_line(&a, settings, Some(None)),
        words(&["pi", "--model", "m", "-e", ext, "--session-id", &session_id])
    );
    a.fork = Some(crate::Fork {
        agent: crate::AgentId::new(&crate::Nonce::from_bits(2)),
        conversation: "c".into(),
        transcript: Some("/h/s/--w--/t_c.jsonl".into()),
        said: None,
    });
    let forked = Pi.command_line(&a, settings, None);
    assert_eq!(&forked[5..7], &words(&["--fork", "/h/s/--w--/t_c.jsonl"])[..]);
    let files = Pi.files(&a, settings);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, Path::new(ext));
    let hook = format!(r#"const HOOK = "'/bin/bosun' hook report pi {} --generation 0";"#, a.id);
    assert!(files[0].1.contains(&hook), "{}", files[0].1);
    assert!(files[0].1.contains("const TRUST = true;"), "bosun's policy trusts its workspaces by default");
}

#[test]
fn the_extension_holds_its_hook_as_a_string_whatever_it_says() {
    let text = extension("'/opt/my \"bosun\"/bosun' hook report pi a-1 --generation 3\n`rm -rf /`", false);
    assert!(text.contains(r#"const HOOK = "'/opt/my \"bosun\"/bosun' hook report pi a-1 --generation 3\n`rm -rf /`";"#));
    assert!(text.contains("const TRUST = false;"));
    assert!(!text.contains("__BOSUN_"), "everything filled in");
    assert!(extension("x", true).contains("const TRUST = true;"));
}
