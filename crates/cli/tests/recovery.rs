//! Knowing each agent's state and acting on it, against claudeless: hooks, the session log,
//! nudges, resume, escalations, prompts and errors.

mod support;

use std::time::Duration;

use bosun_core::{MessageKind, MessageState};
use bosun_testkit::poll::{wait_for, wait_until};
use support::*;

/// Waits until `bosun escalations --json` lists something, and returns the list.
fn wait_escalations(bosun: &Bosun) -> Vec<serde_json::Value> {
    wait_for(PATIENCE, || {
        let out = bosun.ok(bosun.state_dir(), &["escalations", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v.as_array().filter(|a| !a.is_empty()).cloned()
    })
    .expect("escalated")
}

fn nudges(bosun: &Bosun, id: &str) -> Vec<bosun_core::Message> {
    bosun.show(id).messages.into_iter().filter(|m| m.kind == MessageKind::Nudge).collect()
}

#[test]
fn idle_then_nudge_then_claudeless_answers_then_idle_again_and_the_used_up_chain_escalates() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let args = claude_args(&cl, &sc, &["--prompt", "ping", "--on-idle", "nudge:status please"]);
    let id = bosun.start(repo.path(), &args);
    bosun.wait_screen(&id, "All tests pass");
    let delivered = wait_until(PATIENCE, || nudges(&bosun, &id).iter().any(|m| m.state == MessageState::Delivered));
    assert!(delivered, "the nudge was typed: {:?}", nudges(&bosun, &id));
    bosun.wait_state(&id, "idle");
    // The chain (one nudge) is used up at the next idle: a person is asked.
    let escalated = wait_escalations(&bosun);
    assert_eq!(escalated[0]["agent"], id.as_str());
    assert!(escalated[0]["reason"].as_str().unwrap().contains("used up"));
    assert_eq!(nudges(&bosun, &id).len(), 1, "nudged once, as the policy says");
}

#[test]
fn a_killed_process_is_resumed_with_the_same_session_and_its_log_grows() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let args = claude_args(&cl, &sc, &["--prompt", "hello", "--on-dead", "resume:ping"]);
    let id = bosun.start(repo.path(), &args);
    bosun.wait_state(&id, "idle");
    let log = wait_for(PATIENCE, || bosun.agent(&id).log).expect("the session log is known from the hooks");
    let before = std::fs::read_to_string(&log).unwrap().lines().count();
    let pid = bosun.agent(&id).pid.expect("pid");

    assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    let resumed = wait_for(PATIENCE, || Some(bosun.agent(&id)).filter(|a| a.restarts == 1 && a.state.is_up()));
    let agent = resumed.unwrap_or_else(|| panic!("not resumed: {:#?}\n{}", bosun.show(&id), bosun.log()));
    assert_eq!(agent.log.as_ref(), Some(&log), "the same session");
    bosun.wait_screen(&id, "pong");
    let grew = wait_until(PATIENCE, || std::fs::read_to_string(&log).unwrap().lines().count() > before);
    assert!(grew, "the same session log continues");
    assert!(std::fs::read_to_string(&log).unwrap().contains("\"ping\""), "the resume message went into it");
}

/// Two idle claudeless agents: one whose policy resumes it when it dies, one without a policy.
fn two_idle_agents(bosun: &Bosun, repo: &TempRepo) -> (String, String) {
    let (cl, sc) = (claudeless(), scenario("chat"));
    let resumable =
        bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "hello", "--on-dead", "resume:ping"]));
    let plain = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "hello"]));
    bosun.wait_state(&resumable, "idle");
    bosun.wait_state(&plain, "idle");
    (resumable, plain)
}

#[test]
fn when_the_tmux_server_dies_with_bosun_down_the_resumable_agent_restarts_and_the_other_is_lost_and_escalated() {
    let (bosun, repo) = (bosun(), TempRepo::new());
    let (resumable, plain) = two_idle_agents(&bosun, &repo);
    let log = wait_for(PATIENCE, || bosun.agent(&resumable).log).expect("the session log is known from the hooks");
    let cwd = bosun.agent(&resumable).cwd;

    // The machine restarts: bosun and its whole tmux server are gone.
    bosun.kill_daemon_hard();
    assert!(bosun.tmux(&["kill-server"]).status.success());

    bosun.list(); // starts a new daemon
    let agent = wait_for(PATIENCE, || Some(bosun.agent(&resumable)).filter(|a| a.restarts == 1 && a.state.is_up()))
        .unwrap_or_else(|| panic!("not restarted: {:#?}\n{}", bosun.show(&resumable), bosun.log()));
    assert_eq!(agent.cwd, cwd, "in its existing workspace");
    assert_eq!(agent.log.as_ref(), Some(&log), "with its conversation");
    bosun.wait_screen(&resumable, "pong");
    assert!(std::fs::read_to_string(&log).unwrap().contains("\"ping\""), "the conversation went on");

    assert_eq!(bosun.agent(&plain).state.label(), "dead(lost)");
    let escalated = wait_escalations(&bosun);
    assert_eq!(escalated.len(), 1, "{escalated:?}");
    assert!(escalated[0]["agent"].as_str().is_some_and(|a| a == plain), "{escalated:?}");
}

#[test]
fn when_the_tmux_server_dies_under_a_running_bosun_the_same_holds() {
    let (bosun, repo) = (bosun(), TempRepo::new());
    let (resumable, plain) = two_idle_agents(&bosun, &repo);

    assert!(bosun.tmux(&["kill-server"]).status.success());
    let restarted = wait_for(PATIENCE, || Some(bosun.agent(&resumable)).filter(|a| a.restarts == 1 && a.state.is_up()));
    assert!(restarted.is_some(), "not restarted: {:#?}\n{}", bosun.show(&resumable), bosun.log());
    bosun.wait_screen(&resumable, "pong");
    bosun.wait_state(&plain, "dead(lost)");
    let escalated = wait_escalations(&bosun);
    assert!(escalated.iter().all(|e| e["agent"].as_str().is_some_and(|a| a == plain)), "{escalated:?}");
}

#[test]
fn a_rate_limit_is_an_error_that_cools_down_then_nudges() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("flaky"));
    let args = claude_args(&cl, &sc, &["--prompt", "rate me", "--on-error", "rate_limited=nudge+1s:ping"]);
    let id = bosun.start(repo.path(), &args);
    let failed_at = bosun.wait_state(&id, "error(rate_limited)").state_since;
    bosun.wait_screen(&id, "pong");
    let n = nudges(&bosun, &id);
    assert_eq!(n.len(), 1);
    assert!(n[0].at.as_millis() >= failed_at.as_millis() + 1_000, "queued a cooldown after the error");
}

#[test]
fn a_permission_dialog_escalates_and_a_resolutions_message_waits_for_its_answer_never_typed_into_it() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("permission"));
    let args = claude_args(&cl, &sc, &["--prompt", "clean up", "--on-prompt", "escalate"]);
    let id = bosun.start(repo.path(), &args);
    bosun.wait_state(&id, "prompt(permission)");
    bosun.wait_screen(&id, "Do you want to proceed?");
    let list = wait_escalations(&bosun);
    let e = list[0]["id"].as_u64().unwrap();
    // "1" typed into the dialog would pick its first option: it waits instead.
    let out = bosun.ok(repo.path(), &["resolve", &format!("e{e}"), "--message", "1"]);
    assert!(out.contains("resolved"), "{out}");
    let queued = |state: MessageState| {
        bosun.show(&id).messages.iter().any(|m| m.kind == MessageKind::Resolve && m.state == state)
    };
    assert!(queued(MessageState::Queued), "not typed while the dialog shows");
    assert!(bosun.ok(repo.path(), &["peek", &id]).contains("Do you want to proceed?"), "the dialog is unanswered");
    // The dialog answered by its option; the message still waits for the agent to wait for input
    // (claudeless sends no Stop after a permission dialog: it counts as working; the core's
    // tests type it at the turn's end).
    bosun.ok(repo.path(), &["answer", &id, "allow"]);
    let answered = wait_until(PATIENCE, || !bosun.ok(repo.path(), &["peek", &id]).contains("Do you want to proceed?"));
    assert!(answered, "the dialog is gone");
    assert!(!bosun.ok(repo.path(), &["peek", &id]).contains("Permission denied"), "answered yes, not by the message");
    assert!(queued(MessageState::Queued), "kept for later, not lost");
}

#[test]
fn ask_user_question_is_a_question_prompt() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("tools"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "ask me"]));
    bosun.wait_state(&id, "prompt(question)");
}

#[test]
fn a_long_tool_call_is_never_taken_for_idle() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("tools"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "slow build", "--on-idle", "nudge:next"]));
    let ws = bosun.show(&id).workspace.unwrap().path;
    assert!(wait_until(PATIENCE, || ws.join("tool-started").exists()), "the tool runs");
    // Sample the state all the while the tool runs (about 2 s).
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + PATIENCE;
    while !ws.join("tool-finished").exists() {
        assert!(std::time::Instant::now() < deadline, "the tool never finished");
        seen.push(bosun.agent(&id).state.label());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!seen.is_empty() && seen.iter().all(|s| s == "running"), "while the tool ran: {seen:?}");
    bosun.wait_state(&id, "idle");
}

#[test]
fn a_trust_dialog_at_start_is_recognised_and_accepted() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("untrusted"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &[]));
    bosun.wait_state(&id, "idle");
    let screen = bosun.ok(repo.path(), &["peek", &id]);
    assert!(!screen.contains("Do you trust"), "{screen}");
    assert!(bosun.agent(&id).source.is_some());
}

#[test]
fn show_reports_heartbeats_and_the_policy() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "ping", "--on-idle", "nudge*2+5s:Go on"]));
    bosun.wait_screen(&id, "pong");
    let shown = wait_for(PATIENCE, || {
        let s = bosun.ok(repo.path(), &["show", &id]);
        (s.contains("HookCall") && s.contains("LogWrite")).then_some(s)
    })
    .expect("hook and log heartbeats");
    assert!(shown.contains("on_idle    nudge*2+5s:Go on"), "{shown}");
}

#[test]
fn a_turn_that_ends_while_bosun_is_down_is_known_when_it_comes_back() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("tools"));
    let id = bosun.start(repo.path(), &claude_args(&cl, &sc, &["--prompt", "slow build"]));
    let ws = bosun.show(&id).workspace.unwrap().path;
    assert!(wait_until(PATIENCE, || ws.join("tool-started").exists()), "the tool runs");
    assert_eq!(bosun.agent(&id).state.label(), "running");
    bosun.kill_daemon_hard();
    // The turn ends while no daemon runs: its Stop hook is spooled.
    let spooled = wait_until(PATIENCE, || {
        std::fs::read_to_string(bosun.state_dir().join("spool/hooks.spool")).is_ok_and(|s| s.contains("Stop"))
    });
    assert!(spooled, "the Stop hook was kept");
    bosun.list(); // a new daemon
    bosun.wait_state(&id, "idle");
    assert!(!bosun.state_dir().join("spool/hooks.spool").exists(), "the spool was read and dropped");
}

/// What a start finds that nothing would move on (here a log that leaves an agent idle under
/// its chain with nothing pending, as a fault of an older bosun could) is put to a person,
/// saying what was lost, and recorded; the agent's process is left running.
#[test]
fn a_start_that_finds_an_agent_nothing_would_move_on_asks_a_person() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--on-idle", "nudge:status please", "--", "sleep", "600"]);
    bosun.wait_state(&id, "running");
    bosun.ok(repo.path(), &["daemon", "stop"]);
    // The log as a fault would leave it: the agent idle, its chain's first step taken, and no
    // timer, message or person left to move it on.
    let db = bosun.state_dir().join("bosun.db");
    let mut store = bosun_daemon::Store::open(&db).unwrap();
    let state = store.load().unwrap();
    let a = state.agents.values().find(|a| a.id.as_str() == id).unwrap().clone();
    let at = bosun_core::Timestamp::from_millis(a.state_since.as_millis() + 1);
    let mut events: Vec<bosun_core::Event> =
        state.timers.keys().map(|t| bosun_core::Event::TimerCleared { id: *t }).collect();
    events.push(bosun_core::Event::AgentObserved {
        id: a.id.clone(),
        state: bosun_core::SessionState::Idle,
        source: bosun_core::Source::Screen,
        at,
        observation: None,
        cause: None,
    });
    events.push(bosun_core::Event::RecoveryStep {
        id: a.id.clone(),
        trigger: bosun_core::Trigger::Idle,
        progress: bosun_core::Progress { step: 0, used: 1 },
        action: bosun_core::Action::Nudge { message: "status please".into() },
        at,
        class: None,
    });
    store.append(at, &events).unwrap();
    drop(store);

    let escalated = wait_escalations(&bosun);
    assert_eq!(escalated.len(), 1, "{escalated:?}");
    let reason = escalated[0]["reason"].as_str().unwrap();
    assert!(reason.contains("bosun lost what would move it on"), "{reason}");
    assert!(reason.contains(&format!("agent {id} is idle with its on_idle chain at step 1 of 1")), "{reason}");
    let events = bosun.ok(repo.path(), &["events", "--json"]);
    assert!(events.contains("escalation_raised") && events.contains("bosun lost what would move it on"), "recorded");
    // Asked, not ended: its process still runs, and a second start asks nothing more.
    assert_eq!(bosun.show(&id).agent.state, bosun_core::SessionState::Idle);
    bosun.ok(repo.path(), &["daemon", "stop"]);
    bosun.ok(repo.path(), &["ls"]);
    let again: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["escalations", "--json"])).unwrap();
    assert_eq!(again.as_array().map(Vec::len), Some(1), "{again}");
    bosun.ok(repo.path(), &["kill", &id]);
}

/// claudeless's answers record their usage: past its budget the agent is paused and its on_idle
/// nudge held back; resolving the escalation with a raised budget lets it go on, told so.
#[test]
fn an_agent_past_its_budget_is_paused_and_resolving_with_a_raised_budget_lets_it_go_on() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let args = claude_args(&cl, &sc, &["--prompt", "ping", "--budget", "1tok", "--on-idle", "nudge:status please"]);
    let id = bosun.start(repo.path(), &args);
    let paused = wait_for(PATIENCE, || bosun.agent(&id).paused);
    assert!(paused.is_some(), "paused:\n{}", bosun.log());
    bosun.wait_screen(&id, "pong");
    let escalated = wait_escalations(&bosun);
    let e = match &escalated[0]["id"] {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    assert!(escalated[0]["reason"].as_str().unwrap().contains("reached its budget of 1tok"), "{escalated:?}");
    assert!(nudges(&bosun, &id).is_empty(), "no nudge while paused");
    let shown = bosun.ok(repo.path(), &["show", &id]);
    assert!(shown.contains("paused(budget)") && shown.contains("budget     1tok:"), "{shown}");
    // A budget it has spent already is refused and changes nothing.
    let err = bosun.fails(repo.path(), &["resolve", &e, "--budget", "1tok"]);
    assert!(err.contains("give more"), "{err}");
    assert!(bosun.agent(&id).paused.is_some());
    let out = bosun.ok(repo.path(), &["resolve", &e, "--budget", "1Mtok"]);
    assert!(out.contains("goes on"), "{out}");
    let told = wait_until(PATIENCE, || {
        let messages = bosun.show(&id).messages;
        messages.iter().any(|m| m.text.contains("budget was raised") && m.state == MessageState::Delivered)
    });
    assert!(told, "told to go on: {:?}", bosun.show(&id).messages);
    bosun.wait_screen(&id, "Understood.");
    let agent = bosun.agent(&id);
    assert!(agent.paused.is_none() && agent.policy.budget.is_some_and(|b| b.to_string() == "1Mtok"));
    let open: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["escalations", "--json"])).unwrap();
    let budget = open.as_array().unwrap().iter().filter(|x| x["trigger"] == "budget").count();
    assert_eq!(budget, 0, "resolved: {open}");
}
