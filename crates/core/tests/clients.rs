//! What the real Claude Code 2.1 and Codex 0.169 report, read right (issue 9): a prompt on the
//! command line, a resume, the Stop payload's last message, StopFailure, PermissionRequest,
//! Codex's title thread and its failed turns, and escalations that say which dialog asks what.

mod support;

use bosun_core::driver::Driver;
use bosun_core::driver::DriverKind;
use bosun_core::{
    AgentError, AgentId, Effect, Event, Heartbeat, Input, Observation, Policy, SessionState, Source, Step,
};
use support::{claude, spec, Sim};

fn steps(s: &[&str]) -> bosun_core::Chain {
    bosun_core::Chain(s.iter().map(|s| s.parse::<Step>().unwrap()).collect())
}

fn hook(a: &AgentId, raw: &str, event: &str) -> Input {
    let report = DriverKind::Claude.behaviour().take_report(event, raw);
    Input::Report { agent: a.clone(), generation: None, spooled_at: None, report }
}

fn notify(a: &AgentId, payload: &str) -> Input {
    let report = DriverKind::Codex.behaviour().take_report("notify", payload);
    Input::Report { agent: a.clone(), generation: None, spooled_at: None, report }
}

fn spawned_command(effects: &[Effect]) -> Option<Vec<String>> {
    effects.iter().find_map(|e| match e {
        Effect::SpawnSession { command, .. } => Some(command.clone()),
        _ => None,
    })
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|w| (*w).to_owned()).collect()
}

/// A Claude agent started as `claude "fix it"` with `policy`, its session up.
fn claude_with_prompt(sim: &mut Sim, policy: Policy) -> (AgentId, Vec<String>) {
    let spec = bosun_core::AgentSpec { command: words(&["claude", "fix it"]), ..claude(1, policy) };
    let (a, w) = sim.start_with(spec);
    let first = spawned_command(&sim.ok(Input::WorkspaceCreated { id: w })).expect("spawned");
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    (a, first)
}

#[test]
fn a_prompt_on_claudes_command_line_is_working_from_the_first_moment_and_never_sent_again() {
    let mut sim = Sim::new();
    let policy = Policy { on_dead: steps(&["resume:go on"]), ..Policy::default() };
    let (a, first) = claude_with_prompt(&mut sim, policy);
    assert_eq!(first.iter().filter(|w| *w == "fix it").count(), 1, "{first:?}");
    assert_eq!(first.last().map(String::as_str), Some("fix it"), "the prompt ends the command: {first:?}");
    assert_eq!(sim.state.agents[&a].prompt.as_deref(), Some("fix it"));
    sim.ok(hook(&a, r#"{"hook_event_name":"SessionStart","source":"startup"}"#, "SessionStart"));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "not idle before UserPromptSubmit");
    // It dies; the resume sends its own message only.
    let effects = sim.ok(Input::SessionExited {
        session: a.session(),
        status: bosun_core::ExitStatus { code: Some(1), signal: None },
    });
    let resumed = spawned_command(&effects).expect("resumed");
    assert!(!resumed.contains(&"fix it".to_owned()), "the first prompt is not sent again: {resumed:?}");
    assert!(resumed.contains(&"--resume".to_owned()), "{resumed:?}");
    assert_eq!(resumed.last().map(String::as_str), Some("go on"), "{resumed:?}");
    // Its message on the command line, the resumed session's turn runs from the start: never
    // idle before it (a grace of 0 would nudge it there).
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    sim.ok(hook(&a, r#"{"hook_event_name":"SessionStart","source":"resume"}"#, "SessionStart"));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "not idle before its resumed turn");
    sim.ok(hook(&a, r#"{"hook_event_name":"Stop","last_assistant_message":"went on"}"#, "Stop"));
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle, "idle at its end");
}

#[test]
fn codex_started_with_a_positional_prompt_is_working_until_its_turn_ends() {
    let mut sim = Sim::new();
    let spec = bosun_core::AgentSpec { command: words(&["codex", "fix it"]), driver: Driver::Codex, ..spec(2) };
    let (a, w) = sim.start_with(spec);
    let first = spawned_command(&sim.ok(Input::WorkspaceCreated { id: w })).expect("spawned");
    assert_eq!(first.first().map(String::as_str), Some("codex"));
    assert_eq!(first.last().map(String::as_str), Some("fix it"), "{first:?}");
    assert_eq!(first.iter().filter(|w| *w == "fix it").count(), 1, "{first:?}");
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "a turn runs from the start");
    // Codex's title thread finishes first: neither idle nor what the agent said.
    let title = r#"{"type":"agent-turn-complete","thread-id":"t-title","turn-id":"1","input-messages":["Generate a concise, single-line task title for this request"],"last-assistant-message":"Fix it"}"#;
    sim.ok(notify(&a, title));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "the title thread is not the agent's turn");
    assert_eq!(sim.state.agents[&a].said, None);
    let done = r#"{"type":"agent-turn-complete","thread-id":"t-main","turn-id":"2","input-messages":["fix it"],"last-assistant-message":"Fixed."}"#;
    sim.ok(notify(&a, done));
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle);
    assert_eq!(sim.state.agents[&a].said.as_deref(), Some("Fixed."));
}

/// The hook calls recorded for agent `a`, in order.
fn hook_calls(sim: &Sim, a: &AgentId) -> usize {
    sim.log
        .iter()
        .filter(|e| matches!(e, Event::Heartbeat { id, heartbeat: Heartbeat::HookCall, .. } if id == a))
        .count()
}

#[test]
fn a_codex_notify_is_a_hook_call_even_when_its_rollout_log_told_the_turn_s_end_first() {
    let mut sim = Sim::new();
    let spec = bosun_core::AgentSpec { command: words(&["codex", "fix it"]), driver: Driver::Codex, ..spec(4) };
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    // Its rollout log (at the same tier) says the turn ended before its notify arrives.
    let complete = r#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"Fixed."}}"#;
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines: vec![complete.into()] });
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle);
    let told = sim.log.len();
    let done = r#"{"type":"agent-turn-complete","thread-id":"t-main","turn-id":"2","input-messages":["fix it"],"last-assistant-message":"Fixed."}"#;
    sim.ok(notify(&a, done));
    assert_eq!(hook_calls(&sim, &a), 1, "the notify is a sign of life of its own: {:?}", &sim.log[told..]);
    let beats = &sim.state.agents[&a].heartbeats;
    assert!(beats.contains_key(&Heartbeat::HookCall), "{beats:?}");
    let changed = sim.log[told..].iter().any(|e| matches!(e, Event::AgentObserved { .. }));
    assert!(!changed, "a turn's end told twice changes nothing: {:?}", &sim.log[told..]);
}

#[test]
fn the_stop_payloads_last_message_is_what_the_turn_is_judged_on() {
    let mut sim = Sim::new();
    let (a, _) = claude_with_prompt(&mut sim, Policy::default());
    sim.ok(hook(&a, r#"{"hook_event_name":"UserPromptSubmit","prompt":"fix it"}"#, "UserPromptSubmit"));
    sim.ok(hook(&a, r#"{"hook_event_name":"Stop","last_assistant_message":"All fixed. Shall I push?"}"#, "Stop"));
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.state, SessionState::Idle);
    assert_eq!(agent.said.as_deref(), Some("All fixed. Shall I push?"));
}

#[test]
fn stop_failure_is_an_error_and_starts_its_chain() {
    let mut sim = Sim::new();
    let mut policy = Policy::default();
    policy.on_error_kind.insert(AgentError::RateLimited, steps(&["nudge:try again"]));
    let (a, _) = claude_with_prompt(&mut sim, policy);
    sim.ok(hook(&a, r#"{"hook_event_name":"UserPromptSubmit"}"#, "UserPromptSubmit"));
    let effects = sim.ok(hook(&a, r#"{"hook_event_name":"StopFailure","error":"rate_limit"}"#, "StopFailure"));
    assert_eq!(sim.state.agents[&a].state, SessionState::Error { error: AgentError::RateLimited });
    assert!(effects.iter().any(|e| matches!(e, Effect::SendText { text, .. } if text == "try again")), "{effects:?}");
}

#[test]
fn a_permission_request_is_a_prompt_at_once_and_its_escalation_says_what_it_asks() {
    let mut sim = Sim::new();
    let policy = Policy { on_prompt: steps(&["escalate"]), ..Policy::default() };
    let (a, _) = claude_with_prompt(&mut sim, policy);
    sim.ok(hook(&a, r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#, "PreToolUse"));
    let request =
        r#"{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf build"}}"#;
    sim.ok(hook(&a, request, "PermissionRequest"));
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.state.label(), "prompt(permission)");
    assert_eq!(agent.asks.as_deref(), Some("Bash: rm -rf build"));
    let e = sim.state.open_escalations().next().expect("escalated");
    assert!(e.reason.contains("permission dialog") && e.reason.contains("Bash: rm -rf build"), "{}", e.reason);
    // The notification six seconds later changes nothing, nor does one after the answer.
    let late = r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}"#;
    sim.ok(hook(&a, late, "Notification"));
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(permission)");
    sim.ok(hook(&a, r#"{"hook_event_name":"PostToolUse","tool_name":"Bash"}"#, "PostToolUse"));
    assert_eq!(sim.state.agents[&a].asks, None, "answered: nothing asks any more");
    sim.ok(hook(&a, late, "Notification"));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "a late notification never says prompt");
}

#[test]
fn a_plan_dialog_is_not_turned_into_a_question_by_the_notification_after_it() {
    let mut sim = Sim::new();
    let (a, _) = claude_with_prompt(&mut sim, Policy::default());
    let plan = r#"{"hook_event_name":"PreToolUse","tool_name":"ExitPlanMode","tool_input":{"plan":"1. add a test"}}"#;
    sim.ok(hook(&a, plan, "PreToolUse"));
    sim.ok(hook(&a, r#"{"hook_event_name":"Notification","notification_type":"elicitation_dialog"}"#, "Notification"));
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.state.label(), "prompt(plan)");
    assert_eq!(agent.asks.as_deref(), Some("approve the plan: 1. add a test"));
}

#[test]
fn what_a_dialog_asks_is_recorded_with_the_state_it_brings() {
    let mut sim = Sim::new();
    let (a, _) = claude_with_prompt(&mut sim, Policy::default());
    let q = r#"{"hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which DB?","options":[{"label":"pg"}]}]}}"#;
    sim.ok(hook(&a, q, "PreToolUse"));
    let recorded = sim.log.iter().rev().find_map(|e| match e {
        Event::AgentObserved { observation: Some(Observation::Prompt { asks, .. }), source: Source::Hook, .. } => {
            asks.clone()
        }
        _ => None,
    });
    assert_eq!(recorded.as_deref(), Some("Which DB? [pg]"));
}

#[test]
fn the_permission_policy_answers_what_its_rules_cover_and_replays_alike() {
    let mut sim = Sim::new();
    let policy = Policy {
        allow: vec!["Bash(git *)".parse().unwrap()],
        deny: vec!["Bash(git push *)".parse().unwrap()],
        on_prompt: steps(&["escalate"]),
        ..Policy::default()
    };
    let (a, _) = claude_with_prompt(&mut sim, policy);
    sim.ok(hook(&a, r#"{"hook_event_name":"UserPromptSubmit"}"#, "UserPromptSubmit"));
    let request = |command: &str| {
        serde_json::json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": command}})
            .to_string()
    };
    sim.ok(hook(&a, &request("git status"), "PermissionRequest"));
    sim.ok(hook(&a, &request("git push -f"), "PermissionRequest"));
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.state, SessionState::Running, "no dialog shows for an answered request");
    let answers: Vec<(bool, &str)> = agent.permissions.iter().map(|p| (p.answer.allows(), p.answer.rule())).collect();
    assert_eq!(answers, vec![(true, "Bash(git *)"), (false, "Bash(git push *)")]);
    assert_eq!(sim.state.open_escalations().count(), 0);
    sim.ok(hook(&a, &request("make deploy"), "PermissionRequest"));
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(permission)", "no rule: a person decides");
    assert_eq!(sim.state.open_escalations().count(), 1);

    let recorded: Vec<bosun_core::replay::Recorded> = sim
        .log
        .iter()
        .enumerate()
        .map(|(i, e)| bosun_core::replay::Recorded { seq: i as u64 + 1, at: 0, event: e.clone() })
        .collect();
    let replayed = bosun_core::replay::replay(&recorded);
    assert_eq!(replayed.differences, Vec::new());
    // The prompt submitted, the two answers, the dialog.
    assert_eq!(replayed.decisions, 4, "the answers are replayed too");
}

#[test]
fn a_resume_right_after_a_turn_waits_for_the_transcript_to_hold_the_turns_last_words() {
    let mut sim = Sim::new();
    let policy = Policy { on_idle: steps(&["resume:go on"]), on_dead: steps(&["resume:again"]), ..Policy::default() };
    let (a, _) = claude_with_prompt(&mut sim, policy);
    let log = "/claude/projects/-w/00000000-0000-0000-0000-000000000001.jsonl";
    sim.ok(hook(
        &a,
        &format!(r#"{{"hook_event_name":"UserPromptSubmit","transcript_path":"{log}"}}"#),
        "UserPromptSubmit",
    ));
    let stop = r#"{"hook_event_name":"Stop","last_assistant_message":"All fixed, and the tests pass. Shall I push?"}"#;
    let effects = sim.ok(hook(&a, stop, "Stop"));
    let hold = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { replace: Some(_), hold, .. } => Some(hold.clone()),
        _ => None,
    });
    let expected = (std::path::PathBuf::from(log), "All fixed, and the tests pass. Shall I p".to_owned());
    assert_eq!(hold, Some(Some(expected)), "bosun ends the session itself: it waits for the transcript");
    // A session that died on its own wrote what it could: its resume waits for nothing.
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(9) });
    let effects = sim.ok(Input::SessionExited {
        session: sim.state.agents[&a].session.clone(),
        status: bosun_core::ExitStatus { code: Some(1), signal: None },
    });
    let hold = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { hold, .. } => Some(hold.clone()),
        _ => None,
    });
    assert_eq!(hold, Some(None));
}

#[test]
fn a_hook_report_names_a_transcript_only_where_claude_keeps_this_agents_log() {
    let mut sim = Sim::new();
    let mut spec = claude(1, Policy::default());
    spec.env.insert("CLAUDE_CONFIG_DIR".into(), "/home/u/.claude-test".into());
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    let session = "00000000-0000-0000-0000-000000000001";
    let report = |path: &str| {
        let raw = serde_json::json!({"hook_event_name": "UserPromptSubmit", "transcript_path": path}).to_string();
        hook(&a, &raw, "UserPromptSubmit")
    };
    for hostile in [
        "/etc/shadow".to_owned(),
        "/proc/self/environ".to_owned(),
        format!("/tmp/fifo/{session}.jsonl"),
        format!("/home/u/.claude-test/projects/../../../../etc/{session}.jsonl"),
        format!("/home/u/.claude-test/projects/-w/{}.jsonl", "11111111-1111-4111-8111-111111111111"),
        format!("/home/u/elsewhere/projects/-w/{session}.jsonl"),
        format!("projects/-w/{session}.jsonl"),
    ] {
        let effects = sim.feed(report(&hostile)).unwrap();
        assert!(!effects.iter().any(|e| matches!(e, Effect::WatchLog { session_log: true, .. })), "{hostile}");
        assert_eq!(sim.state.agents[&a].log, None, "{hostile}");
    }
    let real = format!("/home/u/.claude-test/projects/-w/{session}.jsonl");
    let effects = sim.feed(report(&real)).unwrap();
    assert!(effects.iter().any(
        |e| matches!(e, Effect::WatchLog { session_log: true, path, .. } if path.to_str() == Some(real.as_str()))
    ));
    assert_eq!(sim.state.agents[&a].log.as_deref().and_then(|p| p.to_str()), Some(real.as_str()));
}

#[test]
fn an_agent_in_a_pod_has_no_transcript_on_this_machine_whatever_its_reports_name() {
    let mut sim = Sim::new();
    let mut spec = claude(1, Policy::default());
    spec.env.remove("CLAUDE_CONFIG_DIR");
    spec.env.remove("HOME");
    spec.runtime = bosun_core::Runtime::K8s(bosun_core::Pod::new("default", "agent:1"));
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    // Where its transcript is in its pod: a path here that names it is not its.
    let path = "/bosun/config/projects/-bosun-workspace/00000000-0000-0000-0000-000000000001.jsonl";
    let raw = serde_json::json!({"hook_event_name": "UserPromptSubmit", "transcript_path": path}).to_string();
    let effects = sim.feed(hook(&a, &raw, "UserPromptSubmit")).unwrap();
    assert!(!effects.iter().any(|e| matches!(e, Effect::WatchLog { session_log: true, .. })), "{effects:?}");
    assert_eq!(sim.state.agents[&a].log, None);
    assert!(sim.state.agents[&a].state.label() == "running", "the report itself is heard");
}

#[test]
fn a_turn_whose_start_report_was_lost_is_still_a_turn_when_its_end_follows_a_message() {
    let mut sim = Sim::new();
    let chain = steps(&["nudge:status one", "nudge:status two", "nudge:status three"]);
    let policy = Policy { on_idle: chain, ..Policy::default() };
    let (a, _) = claude_with_prompt(&mut sim, policy);
    let nudged = |effects: &[Effect], text: &str| {
        effects.iter().any(|e| matches!(e, Effect::SendText { text: t, .. } if t == text))
    };
    let delivered = |sim: &mut Sim, text: &str| {
        let message = sim.state.messages.values().find(|m| m.text == text).map(|m| m.id).unwrap();
        sim.ok(Input::TextDelivered { message });
    };
    sim.ok(hook(&a, r#"{"hook_event_name":"UserPromptSubmit"}"#, "UserPromptSubmit"));
    let stop = r#"{"hook_event_name":"Stop","last_assistant_message":"All tests pass."}"#;
    assert!(nudged(&sim.ok(hook(&a, stop, "Stop")), "status one"));
    delivered(&mut sim, "status one");
    let typed_at = sim.clock;

    // The same Stop told again from the spool (made before the nudge it brought): nothing.
    let replayed = |at: bosun_core::Timestamp| {
        let report = DriverKind::Claude.behaviour().take_report("Stop", stop);
        Input::Report { agent: a.clone(), generation: None, spooled_at: Some(at), report }
    };
    let effects = sim.ok(replayed(bosun_core::Timestamp::from_millis(typed_at.as_millis() - 20)));
    assert!(!effects.iter().any(|e| matches!(e, Effect::SendText { .. })), "{effects:?}");

    // The nudge's turn ran, but its UserPromptSubmit report was lost to a crash of bosun: its
    // Stop (saying the same as before) still ends a turn, and the chain goes on.
    sim.advance(1_000);
    assert!(nudged(&sim.ok(hook(&a, stop, "Stop")), "status two"), "the turn counted");
    delivered(&mut sim, "status two");
    // Its Stop kept in the spool while no daemon ran, made after the nudge: a turn too.
    sim.advance(1_000);
    let effects = sim.ok(replayed(sim.clock));
    assert!(nudged(&effects, "status three"), "{effects:?}");
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle);
}

#[test]
fn a_screen_or_a_log_line_read_late_clears_no_dialog_only_a_fresh_screen_does() {
    let mut sim = Sim::new();
    let spec = bosun_core::AgentSpec { command: words(&["codex"]), driver: Driver::Codex, ..spec(3) };
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(9) });
    let before_dialog = sim.clock;
    sim.advance(100);
    let dialog = "Would you like to run the following command?\n$ touch approved-file\n› 1. Yes, proceed";
    sim.ok(Input::Screen { agent: a.clone(), text: dialog.into(), at: Some(sim.clock), settled: false });
    assert!(matches!(sim.state.agents[&a].state, SessionState::Prompt { .. }), "{:?}", sim.state.agents[&a].state);
    // A slower look, begun before the dialog was seen, ends after it: it says nothing now.
    sim.advance(50);
    sim.ok(Input::Screen { agent: a.clone(), text: "› ".into(), at: Some(before_dialog), settled: false });
    assert!(matches!(sim.state.agents[&a].state, SessionState::Prompt { .. }), "a stale screen clears no dialog");
    // The log's word that the turn goes on, read late (it was written before the dialog), does
    // not end the dialog either.
    let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell"}}"#;
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines: vec![call.into()] });
    assert!(matches!(sim.state.agents[&a].state, SessionState::Prompt { .. }), "a late log line clears no dialog");
    sim.ok(Input::FileWritten { agent: a.clone() });
    assert!(matches!(sim.state.agents[&a].state, SessionState::Prompt { .. }), "a sign of life clears no dialog");
    // A settled look begun after it that shows no dialog: answered, the agent goes on.
    sim.ok(Input::Screen { agent: a.clone(), text: "› ".into(), at: Some(sim.clock), settled: true });
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
}

#[test]
fn codex_moved_elsewhere_with_its_cd_option_has_its_rollout_log_looked_for_there() {
    for (args, under) in [
        (&["codex", "-C", "sub/../pkg", "fix it"][..], Some("pkg")),
        (&["codex", "--cd=/elsewhere", "fix it"][..], None),
        (&["codex", "fix it", "--", "-C", "not-an-option"][..], Some("")),
    ] {
        let mut sim = Sim::new();
        let env = std::collections::BTreeMap::from([("CODEX_HOME".to_owned(), "/codex".to_owned())]);
        let spec = bosun_core::AgentSpec { command: words(args), driver: Driver::Codex, env, ..spec(2) };
        let (a, w) = sim.start_with(spec);
        sim.ok(Input::WorkspaceCreated { id: w });
        let effects = sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
        let cwd = effects.iter().find_map(|e| match e {
            Effect::FindCodexLog { cwd, .. } => Some(cwd.clone()),
            _ => None,
        });
        let own = sim.state.agents[&a].cwd.clone();
        let want = match under {
            Some("") => own,
            Some(sub) => own.join(sub),
            None => std::path::PathBuf::from("/elsewhere"),
        };
        assert_eq!(cwd, Some(want), "{args:?}");
    }
}

#[test]
fn an_agent_with_a_permission_policy_runs_claude_where_its_dialogs_reach_the_policy() {
    let mode = |command: &[String]| {
        let at = command.iter().position(|w| w == "--permission-mode")?;
        command.get(at + 1).cloned()
    };
    // No policy: Claude's own default (auto mode in 2.1.3xx) stands.
    let (_, plain) = claude_with_prompt(&mut Sim::new(), Policy::default());
    assert_eq!(mode(&plain), None, "{plain:?}");
    // A policy: its rules are asked before any classifier of Claude's.
    let allow = vec!["Bash(git *)".parse::<bosun_core::PermissionRule>().unwrap()];
    let (_, ruled) = claude_with_prompt(&mut Sim::new(), Policy { allow, ..Policy::default() });
    assert_eq!(mode(&ruled).as_deref(), Some("default"), "{ruled:?}");
    assert_eq!(ruled.last().map(String::as_str), Some("fix it"), "the prompt still ends the command: {ruled:?}");
    // A mode the user named stands.
    let deny = vec!["Write".parse::<bosun_core::PermissionRule>().unwrap()];
    let spec = bosun_core::AgentSpec {
        command: words(&["claude", "--permission-mode", "plan", "fix it"]),
        ..claude(1, Policy { deny, ..Policy::default() })
    };
    let mut sim = Sim::new();
    let (_, w) = sim.start_with(spec);
    let named = spawned_command(&sim.ok(Input::WorkspaceCreated { id: w })).expect("spawned");
    assert_eq!(named.iter().filter(|w| *w == "--permission-mode").count(), 1, "{named:?}");
    assert_eq!(mode(&named).as_deref(), Some("plan"));
}

/// Gemini CLI reports `SessionStart` before its input takes what is typed: a message waiting for
/// it is typed a second later, not at once (typed at once, it was lost while bosun counted it
/// delivered). Claude's is typed at once.
#[test]
fn a_message_for_a_gemini_that_just_started_waits_until_its_input_is_ready() {
    let mut sim = Sim::new();
    let driver = Driver::Gemini { session_id: "00000000-0000-0000-0000-000000000009".into() };
    let spec = bosun_core::AgentSpec { command: words(&["gemini"]), driver, ..spec(3) };
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(9) });
    let started = DriverKind::Gemini.behaviour().take_report(
        "SessionStart",
        r#"{"hook_event_name":"SessionStart","source":"startup","session_id":"00000000-0000-0000-0000-000000000009"}"#,
    );
    sim.ok(Input::Report { agent: a.clone(), generation: None, spooled_at: None, report: started });
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle);
    let send = |a: &AgentId| Input::SendText { agent: a.clone(), text: "hello".into(), raw: false, now: false };
    let typed = |effects: &[Effect]| effects.iter().any(|e| matches!(e, Effect::SendText { .. }));
    assert!(!typed(&sim.ok(send(&a))), "not typed while its input is not ready");
    assert!(sim.feed(Input::SendText { agent: a.clone(), text: "now".into(), raw: false, now: true }).is_err());
    sim.advance(500);
    assert!(!typed(&sim.fire_due()), "nor half a second later");
    sim.advance(600);
    assert!(typed(&sim.fire_due()), "typed once it is");

    let (c, _) = claude_with_prompt(&mut sim, Policy::default());
    sim.ok(hook(&c, r#"{"hook_event_name":"Stop","last_assistant_message":"done"}"#, "Stop"));
    assert!(typed(&sim.ok(send(&c))), "Claude's is typed at once");
}
