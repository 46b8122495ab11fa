//! The recovery chains of seed 002 as deterministic simulations with a fake clock: hooks and
//! logs report, the policy acts, timers fire.

mod support;

use bosun_core::{
    AgentError, DeathReason, Effect, Event, ExitStatus, Heartbeat, Input, MessageState, Observation, Policy,
    PromptKind, Reality, SessionState, Source, Step,
};
use support::{claude, sent_texts, Sim};

fn policy(on_idle: &[&str]) -> Policy {
    Policy { on_idle: steps(on_idle), ..Policy::default() }
}

fn steps(s: &[&str]) -> bosun_core::Chain {
    bosun_core::Chain(s.iter().map(|s| s.parse::<Step>().unwrap()).collect())
}

/// A running Claude agent with `policy` that has reported in and is idle.
fn idle_claude(sim: &mut Sim, policy: Policy) -> bosun_core::AgentId {
    let (a, w) = sim.start_with(claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Started);
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle, "a fresh session waits");
    a
}

fn deliver_all(sim: &mut Sim) {
    for m in sim.in_flight() {
        sim.ok(Input::TextDelivered { message: m });
    }
}

#[test]
fn the_first_idle_of_a_session_nudges_nobody_but_the_end_of_a_turn_does() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["nudge*2:Continue"]));
    assert!(sim.state.messages.is_empty(), "no nudge for a fresh session");
    sim.see(&a, Source::Hook, Observation::Working);
    let effects = sim.see(&a, Source::Hook, Observation::Idle);
    assert_eq!(sent_texts(&effects), vec!["Continue"]);
}

#[test]
fn idle_nudge_answer_idle_again_then_the_chain_runs_out_and_escalates() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["nudge*2:Continue", "escalate"]));
    for round in 1..=2 {
        sim.see(&a, Source::Hook, Observation::Working);
        let effects = sim.see(&a, Source::Hook, Observation::Idle);
        assert_eq!(sent_texts(&effects), vec!["Continue"], "nudge {round}");
        deliver_all(&mut sim);
    }
    sim.see(&a, Source::Hook, Observation::Working);
    let effects = sim.see(&a, Source::Hook, Observation::Idle);
    assert!(sent_texts(&effects).is_empty());
    assert!(effects.iter().any(|e| matches!(e, Effect::Notify { .. })), "a person is told");
    let open: Vec<_> = sim.state.open_escalations().collect();
    assert_eq!(open.len(), 1);
    // Used up: a further idle raises nothing new.
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    assert_eq!(sim.state.open_escalations().count(), 1, "one escalation, not one per idle");
}

#[test]
fn a_chain_with_no_escalate_step_escalates_when_used_up() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["nudge:Go on"]));
    for _ in 0..2 {
        sim.see(&a, Source::Hook, Observation::Working);
        sim.see(&a, Source::Hook, Observation::Idle);
        deliver_all(&mut sim);
    }
    let e = sim.state.open_escalations().next().expect("escalated");
    assert!(e.reason.contains("used up"), "{}", e.reason);
}

#[test]
fn a_nudge_to_a_working_agent_waits_for_idle() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, Policy::default());
    sim.see(&a, Source::Hook, Observation::Working);
    let effects = sim.ok(Input::SendText { agent: a.clone(), text: "later".into(), raw: false, now: false });
    assert!(sent_texts(&effects).is_empty(), "not typed while working");
    let effects = sim.see(&a, Source::Hook, Observation::Idle);
    assert_eq!(sent_texts(&effects), vec!["later"]);
}

#[test]
fn a_nudge_that_does_not_start_a_turn_gets_one_more_enter() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, Policy::default());
    sim.ok(Input::SendText { agent: a.clone(), text: "go".into(), raw: false, now: false });
    deliver_all(&mut sim);
    sim.advance(3_000);
    let effects = sim.fire_due();
    assert!(effects.iter().any(|e| matches!(e, Effect::PressEnter { .. })), "{effects:?}");

    // One that does start a turn gets none.
    sim.ok(Input::SendText { agent: a.clone(), text: "again".into(), raw: false, now: false });
    deliver_all(&mut sim);
    sim.see(&a, Source::Hook, Observation::Working);
    sim.advance(3_000);
    assert!(!sim.fire_due().iter().any(|e| matches!(e, Effect::PressEnter { .. })));
}

#[test]
fn after_a_reboot_an_agent_whose_policy_resumes_is_restarted_and_the_rest_are_lost_and_escalated() {
    let mut sim = Sim::new();
    let resumed = {
        let (a, w) = sim.start_with(claude(1, Policy { on_dead: steps(&["resume"]), ..Policy::default() }));
        sim.ok(Input::WorkspaceCreated { id: w });
        sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
        a
    };
    let (lost, _) = sim.running(2);
    // The machine restarted: bosun's tmux server, and every session on it, is gone.
    let effects =
        sim.ok(Input::Reconcile(Reality { sessions: Vec::new(), missing_dirs: Vec::new(), slots: Vec::new() }));

    let restarted = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { agent, command, cwd, .. } if agent == &resumed => Some((command.clone(), cwd.clone())),
        _ => None,
    });
    let (command, cwd) = restarted.expect("the agent whose policy resumes is restarted");
    assert_eq!(cwd, sim.state.agents[&resumed].cwd, "in its existing workspace");
    assert!(command.windows(2).any(|w| w == ["--resume", "00000000-0000-0000-0000-000000000001"]), "{command:?}");
    assert_eq!(sim.state.agents[&resumed].state, SessionState::Starting);
    assert!(sim.state.open_escalations().all(|e| e.agent != resumed));

    assert_eq!(sim.state.agents[&lost].state, SessionState::Dead { reason: DeathReason::Lost });
    let escalated: Vec<_> = sim.state.open_escalations().filter(|e| e.agent == lost).collect();
    assert_eq!(escalated.len(), 1, "the lost agent is escalated once");
    assert!(escalated[0].reason.contains("lost"), "{}", escalated[0].reason);
    assert!(effects.iter().any(|e| matches!(e, Effect::Notify { .. })), "a person is told");
}

fn seen(a: &bosun_core::AgentId, sim: &Sim) -> bosun_core::SessionSeen {
    bosun_core::SessionSeen { session: sim.state.agents[a].session.clone(), pid: Some(7), exit: None }
}

fn restart_bosun(sim: &mut Sim, alive: &[&bosun_core::AgentId]) -> Vec<Effect> {
    let sessions = alive.iter().map(|a| seen(a, sim)).collect();
    sim.ok(Input::Reconcile(Reality { sessions, missing_dirs: Vec::new(), slots: Vec::new() }))
}

#[test]
fn a_nudge_cut_off_by_a_crash_is_not_retyped_and_an_agent_still_idle_after_the_grace_goes_on_with_its_chain() {
    let mut sim = Sim::new();
    let p = Policy { grace_ms: 2_000, ..policy(&["nudge:status please", "resume:carry on"]) };
    let a = idle_claude(&mut sim, p);
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    assert_eq!(sim.in_flight().len(), 1, "the nudge is being typed when bosun dies");

    let effects = restart_bosun(&mut sim, &[&a]);
    assert!(sent_texts(&effects).is_empty(), "not typed twice: {effects:?}");
    assert!(sim.in_flight().is_empty());
    sim.advance(1_999);
    assert!(sim.fire_due().is_empty(), "the grace has not passed");
    sim.advance(1);
    let effects = sim.fire_due();
    assert!(
        effects.iter().any(|e| matches!(e, Effect::SpawnSession { replace: Some(_), .. })),
        "the chain's next step (resume) acts: {effects:?}"
    );
}

#[test]
fn a_nudge_cut_off_by_a_crash_that_did_reach_the_agent_does_not_make_the_chain_act_twice() {
    let mut sim = Sim::new();
    let p = Policy { grace_ms: 2_000, ..policy(&["nudge:status please", "resume:carry on"]) };
    let a = idle_claude(&mut sim, p);
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    restart_bosun(&mut sim, &[&a]);
    // It had arrived: the agent works on it (its hooks say so), then ends its turn.
    sim.see(&a, Source::Hook, Observation::Working);
    let effects = sim.see(&a, Source::Hook, Observation::Idle);
    assert!(effects.iter().any(|e| matches!(e, Effect::SpawnSession { .. })), "resumed once: {effects:?}");
    sim.advance(10_000);
    let again = sim.fire_due();
    assert!(!again.iter().any(|e| matches!(e, Effect::SpawnSession { .. })), "{again:?}");
}

#[test]
fn a_restart_cut_off_by_a_crash_ends_the_old_session_and_gives_the_new_one_its_message() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["resume:carry on"]));
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    assert_eq!(sim.state.agents[&a].state, SessionState::Starting, "the restart is recorded");
    // bosun died before it ended the old session and started the new one.
    let old = bosun_core::SessionSeen { session: a.session(), pid: Some(7), exit: None };
    let effects =
        sim.ok(Input::Reconcile(Reality { sessions: vec![old], missing_dirs: Vec::new(), slots: Vec::new() }));
    let spawn = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { replace, command, session, .. } => {
            Some((replace.clone(), command.clone(), session.clone()))
        }
        _ => None,
    });
    let (replace, command, session) = spawn.expect("the restart is carried out");
    assert_eq!(replace, Some(a.session()), "the old session is ended");
    assert_eq!(session.as_str(), "bosun-10000000-r1");
    assert_eq!(command.last().map(String::as_str), Some("carry on"), "{command:?}");
}

#[test]
fn a_spooled_hook_report_older_than_the_agents_last_change_is_passed_over() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, Policy::default());
    let hook = |event: &str, at: u64| Input::Report {
        agent: a.clone(),
        generation: None,
        spooled_at: Some(bosun_core::Timestamp::from_millis(at)),
        report: bosun_core::driver::DriverKind::Claude.behaviour().take_report(event, "{}"),
    };
    let since = sim.state.agents[&a].state_since.as_millis();
    // Kept while bosun was down, replayed after a live report already said the agent is idle.
    sim.ok(hook("UserPromptSubmit", since - 1));
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle, "stale: passed over");
    sim.ok(hook("UserPromptSubmit", since + 1));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "newer than what bosun knows: taken");
}

#[test]
fn work_done_just_before_a_crash_has_its_session_ended_at_the_restart() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["done"]));
    sim.see(&a, Source::Hook, Observation::Working);
    let done = sim.see(&a, Source::Hook, Observation::Idle);
    assert!(done.iter().any(|e| matches!(e, Effect::KillSession { .. })));
    // The kill never ran: bosun died first.
    let effects = restart_bosun(&mut sim, &[&a]);
    assert!(effects.iter().any(|e| matches!(e, Effect::KillSession { agent, .. } if agent == &a)), "{effects:?}");
}

#[test]
fn the_process_killed_is_resumed_with_the_same_session_id() {
    let mut sim = Sim::new();
    let p = Policy { on_dead: steps(&["resume:Carry on"]), ..Policy::default() };
    let a = idle_claude(&mut sim, p);
    let session = sim.state.agents[&a].session.clone();
    let effects = sim.ok(Input::SessionExited { session, status: ExitStatus { code: None, signal: Some(9) } });
    let spawn = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { command, replace: Some(_), .. } => Some(command.clone()),
        _ => None,
    });
    let command = spawn.expect("respawned");
    assert_eq!(
        &command[command.len() - 5..],
        [
            "--resume",
            "00000000-0000-0000-0000-000000000001",
            "--settings",
            "/state/agents/10000000/settings.json",
            "Carry on"
        ]
    );
    assert_eq!(sim.state.agents[&a].state, SessionState::Starting);
    assert_eq!(sim.state.agents[&a].restarts, 1);
    assert_eq!(sim.state.agents[&a].session.as_str(), "bosun-10000000-r1", "a new session name");
    // The old session's end, reported late, is not taken for the new one's.
    sim.ok(Input::SessionClosed { session: bosun_core::SessionName::from_reported("bosun-10000000") });
    assert_eq!(sim.state.agents[&a].state, SessionState::Starting);
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
}

#[test]
fn a_rate_limit_cools_down_then_nudges() {
    let mut sim = Sim::new();
    let p = Policy { on_error: steps(&["nudge+30s:Try again"]), ..Policy::default() };
    let a = idle_claude(&mut sim, p);
    sim.see(&a, Source::Hook, Observation::Working);
    let effects = sim.see(&a, Source::Log, Observation::Error { error: AgentError::RateLimited });
    assert_eq!(sim.state.agents[&a].state, SessionState::Error { error: AgentError::RateLimited });
    assert!(sent_texts(&effects).is_empty(), "waits out the cooldown");
    sim.advance(29_000);
    assert!(sent_texts(&sim.fire_due()).is_empty());
    sim.advance(1_000);
    assert_eq!(sent_texts(&sim.fire_due()), vec!["Try again"]);
}

#[test]
fn errors_have_their_own_chains() {
    let mut sim = Sim::new();
    let mut p = Policy { on_error: steps(&["escalate"]), ..Policy::default() };
    p.on_error_kind.insert(AgentError::RateLimited, steps(&["nudge:wait done"]));
    let a = idle_claude(&mut sim, p);
    let effects = sim.see(&a, Source::Log, Observation::Error { error: AgentError::RateLimited });
    assert_eq!(sent_texts(&effects), vec!["wait done"]);
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Log, Observation::Error { error: AgentError::Unauthorized });
    assert_eq!(sim.state.open_escalations().count(), 1);
}

#[test]
fn a_permission_dialog_escalates_and_the_resolutions_message_waits_until_the_dialog_is_gone() {
    let mut sim = Sim::new();
    let p = Policy { on_prompt: steps(&["escalate"]), ..Policy::default() };
    let a = idle_claude(&mut sim, p);
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Prompt { kind: PromptKind::Permission, asks: None });
    assert_eq!(sim.state.agents[&a].state, SessionState::Prompt { kind: PromptKind::Permission });
    let e = sim.state.open_escalations().next().expect("escalated").id;
    let effects = sim.ok(Input::Resolve { escalation: e, message: Some("use the other file".into()) });
    assert_eq!(sent_texts(&effects), Vec::<String>::new(), "never typed into a dialog: its Enter would pick an option");
    assert_eq!(sim.state.open_escalations().count(), 0);
    sim.see(&a, Source::Hook, Observation::Working);
    let effects = sim.see(&a, Source::Hook, Observation::Idle);
    assert_eq!(sent_texts(&effects), vec!["use the other file"], "typed once it waits for input");
    assert!(sim.feed(Input::Resolve { escalation: e, message: None }).is_err(), "resolved once");
}

#[test]
fn ask_user_question_and_plans_are_prompts() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, Policy::default());
    sim.see(&a, Source::Hook, Observation::Prompt { kind: PromptKind::Question, asks: None });
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(question)");
    sim.see(&a, Source::Hook, Observation::Prompt { kind: PromptKind::Plan, asks: None });
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(plan)");
}

#[test]
fn a_long_tool_call_never_looks_idle() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["nudge:Continue"]));
    sim.see(&a, Source::Hook, Observation::Working);
    let from = sim.log.len();
    for _ in 0..10 {
        sim.advance(30_000);
        sim.see(&a, Source::Screen, Observation::Activity { heartbeat: Heartbeat::TerminalOutput });
        sim.see(&a, Source::Log, Observation::Activity { heartbeat: Heartbeat::LogWrite });
        sim.fire_due();
    }
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
    assert!(sim.state.messages.is_empty(), "no nudge during a long tool call");
    assert!(!sim.log[from..].iter().any(|e| matches!(e, Event::AgentObserved { state: SessionState::Idle, .. })));
}

#[test]
fn a_lower_source_never_overrides_a_higher_one_but_the_log_reports_errors_and_interrupts() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, Policy::default());
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Screen, Observation::Idle);
    sim.see(&a, Source::Process, Observation::Idle);
    sim.see(&a, Source::Log, Observation::Working);
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
    assert_eq!(sim.state.agents[&a].source, Some(Source::Hook), "still the hooks' word");
    sim.see(&a, Source::Log, Observation::Error { error: AgentError::OutOfCredits });
    assert_eq!(sim.state.agents[&a].state.label(), "error(out_of_credits)");
}

#[test]
fn without_hooks_idle_must_last_the_grace_and_activity_starts_it_again() {
    let mut sim = Sim::new();
    let p = Policy { grace_ms: 60_000, ..policy(&["nudge:Continue"]) };
    let (a, w) = sim.start_with(bosun_core::AgentSpec { policy: p, ..support::spec(1) });
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    sim.see(&a, Source::Screen, Observation::Idle);
    sim.advance(40_000);
    sim.see(&a, Source::Screen, Observation::Activity { heartbeat: Heartbeat::TerminalOutput });
    sim.see(&a, Source::Screen, Observation::Idle);
    sim.advance(30_000);
    assert!(sent_texts(&sim.fire_due()).is_empty(), "activity 30 s ago: not yet");
    sim.advance(30_000);
    assert_eq!(sent_texts(&sim.fire_due()), vec!["Continue"]);
}

#[test]
fn a_gate_that_passes_is_done_and_one_that_fails_hands_on() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["gate:cargo test", "nudge:Fix the tests"]));
    sim.see(&a, Source::Hook, Observation::Working);
    let effects = sim.see(&a, Source::Hook, Observation::Idle);
    assert!(effects.iter().any(|e| matches!(e, Effect::RunGate { run, .. } if run == "cargo test")));
    let effects = sim.ok(Input::GateFinished { agent: a.clone(), run: "cargo test".into(), code: Some(1) });
    assert_eq!(sent_texts(&effects), vec!["Fix the tests"], "a failed gate goes on to the next step");

    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, policy(&["gate:true"]));
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    let effects = sim.ok(Input::GateFinished { agent: a.clone(), run: "true".into(), code: Some(0) });
    assert!(effects.iter().any(|e| matches!(e, Effect::KillSession { .. })), "done ends the session");
    let session = sim.state.agents[&a].session.clone();
    sim.ok(Input::SessionClosed { session });
    assert_eq!(sim.state.agents[&a].state, SessionState::Dead { reason: DeathReason::Completed });
    assert_eq!(sim.state.agents[&a].outcome, Some(bosun_core::Outcome::Done));
}

#[test]
fn a_trust_dialog_at_start_is_accepted() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(claude(1, Policy::default()));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.advance(1_500);
    let effects = sim.fire_due();
    assert!(effects.iter().any(|e| matches!(e, Effect::CaptureScreen { .. })), "{effects:?}");
    let trust = "Do you trust the files in this folder?\n ❯ Yes, proceed\n   No, exit\n";
    let effects = sim.ok(Input::Screen { agent: a.clone(), text: trust.into(), at: None, settled: true });
    let enter = vec![bosun_core::TermKey::Enter];
    assert!(effects.iter().any(|e| matches!(e, Effect::PressKeys { keys, .. } if *keys == enter)), "{effects:?}");
    assert_eq!(sim.state.agents[&a].state.label(), "running", "accepted: no prompt for anybody");
    sim.see(&a, Source::Hook, Observation::Started);
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle);
    sim.advance(10_000);
    assert!(!sim.fire_due().iter().any(|e| matches!(e, Effect::CaptureScreen { .. })), "no more screen checks");
    let _ = MessageState::Queued;
}

#[test]
fn a_hook_call_that_says_nothing_new_does_not_undo_a_dialog() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, Policy::default());
    sim.see(&a, Source::Hook, Observation::Prompt { kind: PromptKind::Question, asks: None });
    sim.see(&a, Source::Hook, Observation::Activity { heartbeat: Heartbeat::HookCall });
    sim.see(&a, Source::Screen, Observation::Activity { heartbeat: Heartbeat::TerminalOutput });
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(question)");
}

#[test]
fn a_generic_agent_whose_output_stops_is_idle_after_the_grace() {
    let mut sim = Sim::new();
    let p = Policy { grace_ms: 20_000, ..policy(&["nudge:Continue"]) };
    let (a, w) = sim.start_with(bosun_core::AgentSpec { policy: p, ..support::spec(1) });
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    sim.ok(Input::LogLines { agent: a.clone(), session_log: false, lines: vec!["compiling".into()] });
    for _ in 0..3 {
        sim.advance(4_000);
        sim.ok(Input::LogLines { agent: a.clone(), session_log: false, lines: vec!["still compiling".into()] });
        sim.fire_due();
    }
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "output keeps it working");
    sim.advance(10_000);
    sim.fire_due();
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle, "quiet for a while: idle");
    assert!(sim.state.messages.is_empty(), "the grace has not passed");
    sim.advance(20_000);
    let effects = sim.fire_due();
    assert_eq!(sent_texts(&effects), vec!["Continue"]);
}

#[test]
fn an_interrupted_turn_seen_in_the_log_is_idle_even_though_no_stop_hook_came() {
    let mut sim = Sim::new();
    let a = idle_claude(&mut sim, Policy::default());
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Log, Observation::Idle);
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle);
}

#[test]
fn a_generic_agent_goes_idle_again_after_working_again() {
    let mut sim = Sim::new();
    let p = Policy { grace_ms: 1_000, ..policy(&["nudge*forever:Continue"]) };
    let (a, w) = sim.start_with(bosun_core::AgentSpec { policy: p, ..support::spec(1) });
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    for round in 1..=2 {
        sim.ok(Input::LogLines { agent: a.clone(), session_log: false, lines: vec!["$ ".into()] });
        assert_eq!(sim.state.agents[&a].state, SessionState::Running, "round {round}: output means working");
        sim.advance(11_000);
        sim.fire_due();
        assert_eq!(sim.state.agents[&a].state, SessionState::Idle, "round {round}: quiet means idle");
        sim.advance(1_000);
        let effects = sim.fire_due();
        assert_eq!(sent_texts(&effects), vec!["Continue"], "round {round}");
        deliver_all(&mut sim);
        sim.ok(Input::FileWritten { agent: a.clone() });
    }
}

#[test]
fn a_late_hook_from_a_replaced_process_is_ignored() {
    let mut sim = Sim::new();
    let p = Policy { on_dead: steps(&["resume:go on"]), ..Policy::default() };
    let a = idle_claude(&mut sim, p);
    let session = sim.state.agents[&a].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus::code(1) });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(9) });
    sim.see(&a, Source::Hook, Observation::Working);
    let late = Input::Observed {
        agent: a.clone(),
        source: Source::Hook,
        observation: Observation::Idle,
        log: None,
        generation: Some(0),
    };
    sim.ok(late);
    assert_eq!(sim.state.agents[&a].state, SessionState::Running, "the old process's Stop does not count");
}

#[test]
fn a_trigger_firing_again_during_a_cooldown_does_not_act_twice() {
    let mut sim = Sim::new();
    let p = Policy { on_error: steps(&["nudge*3+10s:retry"]), ..Policy::default() };
    let a = idle_claude(&mut sim, p);
    sim.see(&a, Source::Log, Observation::Error { error: AgentError::RateLimited });
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Log, Observation::Error { error: AgentError::RateLimited });
    sim.advance(10_000);
    assert_eq!(sent_texts(&sim.fire_due()), vec!["retry"], "one nudge for the one cooldown");
    assert_eq!(sim.state.agents[&a].recovery[&bosun_core::Trigger::Error].used, 1);
}

#[test]
fn a_fork_starts_from_its_agents_conversation_copied_where_claude_looks_and_resumes_as_itself() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(claude(1, Policy::default()));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    let transcript = std::path::PathBuf::from("/cfg/projects/-ws-one/00000000-0000-0000-0000-000000000001.jsonl");
    sim.ok(Input::Observed {
        agent: a.clone(),
        source: Source::Log,
        observation: bosun_core::Observation::Started,
        log: Some(transcript.clone()),
        generation: None,
    });
    sim.ok(Input::Said { agent: a.clone(), text: "First answer, in full.".into() });
    let (generic, _) = sim.running(3);
    let refused = sim.feed(Input::ForkAgent { spec: Box::new(claude(4, Policy::default())), from: generic });
    assert!(refused.is_err_and(|e| e.to_string().contains("cannot be forked")), "a generic agent's is not");
    let spec = bosun_core::AgentSpec {
        policy: Policy { on_dead: steps(&["resume"]), ..Policy::default() },
        ..claude(2, Policy::default())
    };
    sim.ok(Input::ForkAgent { spec: Box::new(spec), from: a.clone() });
    let fork = sim.state.agents.keys().find(|id| **id != a).cloned().expect("the fork");
    let ws = sim.state.agents[&fork].workspace.clone();
    let effects = sim.ok(Input::WorkspaceCreated { id: ws });
    let (command, copies, cwd, hold) = effects
        .iter()
        .find_map(|e| match e {
            Effect::SpawnSession { command, copies, cwd, hold, .. } => {
                Some((command.clone(), copies.clone(), cwd.clone(), hold.clone()))
            }
            _ => None,
        })
        .expect("the fork starts");
    // Claude writes its transcript after its turn's end: it is copied once it holds the last words.
    let (held, piece) = hold.expect("the copy waits for the forked agent's last words");
    assert!(held == transcript && "First answer, in full.".contains(piece.as_str()), "{piece:?}");
    let joined = command.join(" ");
    assert!(
        joined.contains("--resume 00000000-0000-0000-0000-000000000001 --fork-session --session-id 00000000-0000-0000-0000-000000000002"),
        "{joined}"
    );
    assert_eq!(cwd, std::path::PathBuf::from("/state/workspaces/ws-agent-20000000"));
    // Claude's project directory of its cwd: its `/` and `.` as `-`.
    let to = std::path::PathBuf::from(
        "/cfg/projects/-state-workspaces-ws-agent-20000000/00000000-0000-0000-0000-000000000001.jsonl",
    );
    assert_eq!(copies, [(transcript, to)], "its conversation where Claude looks from its own directory");

    // Died and resumed, it is its own conversation.
    sim.ok(Input::SessionSpawned { agent: fork.clone(), pid: Some(8) });
    let session = sim.state.agents[&fork].session.clone();
    let effects = sim.ok(Input::SessionClosed { session });
    let again = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { command, copies, .. } => Some((command.join(" "), copies.is_empty())),
        _ => None,
    });
    let (again, no_copies) = again.expect("resumed");
    assert!(
        again.contains("--resume 00000000-0000-0000-0000-000000000002") && !again.contains("--fork-session"),
        "{again}"
    );
    assert!(no_copies);
}
