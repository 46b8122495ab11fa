//! Rate-limit windows waited out: a reset read from the client's log (clamped when absurd), the
//! default `wait` step's durable timer, which wakes the agent just after the reset (or after a
//! bounded backoff when no time was given) with a message that says the limit has reset, and
//! the same timer after a replay of the log.

mod support;

use bosun_core::driver::Driver;
use bosun_core::rate_limit::{clamp, AFTER_RESET_MS, RESET_JITTER_MS, RESET_MOST_MS, WOKEN_MESSAGE};
use bosun_core::{
    AgentError, AgentId, Effect, Event, Input, Observation, Policy, SessionState, Source, State, TimerKind, Timestamp,
};
use support::{claude, sent_texts, spec, Sim};

/// Codex's `token_count` line when its plan's window is used up, resetting at `resets_at`.
fn reached(resets_at: i64) -> String {
    format!(
        r#"{{"type":"event_msg","payload":{{"type":"token_count","info":null,"rate_limits":{{"limit_id":"codex","primary":{{"used_percent":100.0,"window_minutes":300,"resets_at":{resets_at}}},"secondary":null}}}}}}"#
    )
}

/// Codex's end of a turn its usage limit cut short.
const LIMITED: &str = r#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":null,"error":{"message":"You've hit your usage limit. Try again at 10:29 AM.","codex_error_info":"usage_limit_exceeded"}}}"#;

fn codex(sim: &mut Sim) -> AgentId {
    let words = ["codex", "fix it"].map(str::to_owned).to_vec();
    let (a, w) = sim.start_with(bosun_core::AgentSpec { command: words, driver: Driver::Codex, ..spec(1) });
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    let started = r#"{"type":"event_msg","payload":{"type":"task_started"}}"#;
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines: vec![started.into()] });
    a
}

fn lines(sim: &mut Sim, a: &AgentId, lines: &[&str]) -> Vec<Effect> {
    let lines = lines.iter().map(|l| (*l).to_owned()).collect();
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines })
}

fn wake(state: &State, a: &AgentId) -> Option<(Timestamp, Option<String>)> {
    state.timers.values().find_map(|t| match &t.kind {
        TimerKind::Wake { agent, message } if agent == a => Some((t.at, message.clone())),
        _ => None,
    })
}

#[test]
fn a_reset_the_client_logs_is_waited_out_and_the_agent_told_just_after_it() {
    let mut sim = Sim::new();
    let a = codex(&mut sim);
    let reset_s = sim.clock.as_millis() / 1_000 + 30;
    let until = Timestamp::from_millis(reset_s * 1_000);
    lines(&mut sim, &a, &[&reached(reset_s as i64), LIMITED]);
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.state, SessionState::Error { error: AgentError::RateLimited });
    assert_eq!(agent.limited_until, Some(until));
    let label = agent.state.label_until(agent.limited_until);
    assert!(label.starts_with("error(rate_limited until "), "{label}");
    // The default chain (the policy says nothing): a wait, timed just after the reset.
    let (at, message) = wake(&sim.state, &a).expect("a wake is timed");
    assert!(at.as_millis() >= until.as_millis() + AFTER_RESET_MS, "never before the reset");
    assert!(at.as_millis() < until.as_millis() + AFTER_RESET_MS + RESET_JITTER_MS);
    assert_eq!(message, None);
    // Nothing before it.
    sim.advance(at.as_millis() - sim.clock.as_millis() - 1);
    assert!(sent_texts(&sim.fire_due()).is_empty(), "nothing typed before the wake");
    sim.advance(1);
    assert_eq!(sent_texts(&sim.fire_due()), vec![WOKEN_MESSAGE.to_owned()]);
    assert_eq!(wake(&sim.state, &a), None, "woken once");
    // Its new turn is past the limit.
    lines(&mut sim, &a, &[r#"{"type":"event_msg","payload":{"type":"task_started"}}"#]);
    assert_eq!(sim.state.agents[&a].limited_until, None);
}

#[test]
fn a_reset_in_the_past_or_years_away_is_clamped_and_the_clamping_recorded() {
    let mut sim = Sim::new();
    let a = codex(&mut sim);
    let now_s = (sim.clock.as_millis() / 1_000) as i64;
    let years = now_s + 5 * 365 * 86_400;
    lines(&mut sim, &a, &[&reached(years), LIMITED]);
    let until = sim.state.agents[&a].limited_until.expect("a reset");
    assert_eq!(until.as_millis(), sim.clock.as_millis() + RESET_MOST_MS, "a day at most");
    let given = sim.log.iter().find_map(|e| match e {
        Event::RateLimitReset { given, until: u, .. } if *u == until => Some(*given),
        _ => None,
    });
    assert_eq!(given, Some(Some(Timestamp::from_millis(years as u64 * 1_000))), "the time given is kept in the log");
    assert_eq!(clamp(Timestamp::from_millis(5), sim.clock), sim.clock, "a past reset is now");
    let (at, _) = wake(&sim.state, &a).expect("a wake");
    assert!(at.as_millis() <= until.as_millis() + AFTER_RESET_MS + RESET_JITTER_MS);
}

#[test]
fn with_no_reset_given_the_wait_backs_off_doubling_and_an_error_told_twice_times_one_wake() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(claude(1, Policy::default()));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Started);
    let mut waits = Vec::new();
    for _ in 0..3 {
        sim.see(&a, Source::Hook, Observation::Working);
        let from = sim.clock.as_millis();
        sim.see(&a, Source::Log, Observation::Error { error: AgentError::RateLimited });
        let (at, _) = wake(&sim.state, &a).expect("a wake is timed");
        waits.push(at.as_millis() - from);
        // The error told again (its hook, then its log) times no second wake.
        sim.see(&a, Source::Hook, Observation::Error { error: AgentError::RateLimited });
        let wakes = sim.state.timers.values().filter(|t| matches!(t.kind, TimerKind::Wake { .. })).count();
        assert_eq!(wakes, 1);
        sim.advance(at.as_millis() - sim.clock.as_millis());
        assert_eq!(sent_texts(&sim.fire_due()), vec![WOKEN_MESSAGE.to_owned()]);
        for m in sim.in_flight() {
            sim.ok(Input::TextDelivered { message: m });
        }
    }
    assert!((30_000..36_100).contains(&waits[0]), "{waits:?}");
    assert!((60_000..72_100).contains(&waits[1]), "{waits:?}");
    assert!((120_000..144_100).contains(&waits[2]), "{waits:?}");
    // A turn that ends is past the limit: the next limit's backoff starts from the first again.
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    sim.see(&a, Source::Hook, Observation::Working);
    let from = sim.clock.as_millis();
    sim.see(&a, Source::Log, Observation::Error { error: AgentError::RateLimited });
    let (at, _) = wake(&sim.state, &a).expect("a wake is timed");
    assert!((30_000..36_100).contains(&(at.as_millis() - from)), "{}", at.as_millis() - from);
}

#[test]
fn the_wait_is_in_the_log_replayed_it_wakes_at_the_same_time_and_work_resumed_otherwise_ends_it() {
    let mut sim = Sim::new();
    let a = codex(&mut sim);
    let reset_s = sim.clock.as_millis() / 1_000 + 600;
    lines(&mut sim, &a, &[&reached(reset_s as i64), LIMITED]);
    let before = wake(&sim.state, &a).expect("a wake");
    // A restarted daemon rebuilds its state from the log: the same timer, at the same time.
    let mut replayed = State::default();
    for e in &sim.log {
        bosun_core::apply(&mut replayed, e);
    }
    assert_eq!(wake(&replayed, &a), Some(before.clone()));
    assert_eq!(replayed.agents[&a].limited_until, sim.state.agents[&a].limited_until);
    // The agent went back to work by other means before the wake (a person's message): its wait
    // is over, and nothing is typed at its time.
    lines(&mut sim, &a, &[r#"{"type":"event_msg","payload":{"type":"task_started"}}"#]);
    assert_eq!(wake(&sim.state, &a), None, "the wait ended");
    sim.advance(before.0.as_millis() - sim.clock.as_millis());
    assert!(sent_texts(&sim.fire_due()).is_empty());
}

#[test]
fn a_wait_step_of_the_policys_own_says_its_message_and_a_policy_that_names_rate_limits_is_followed() {
    let mut sim = Sim::new();
    let mut policy = Policy::default();
    policy.on_error_kind.insert(AgentError::RateLimited, bosun_core::Chain(vec!["wait:Go on now".parse().unwrap()]));
    let (a, w) = sim.start_with(claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Started);
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Log, Observation::Error { error: AgentError::RateLimited });
    let (at, message) = wake(&sim.state, &a).expect("a wake");
    assert_eq!(message.as_deref(), Some("Go on now"));
    sim.advance(at.as_millis() - sim.clock.as_millis());
    assert_eq!(sent_texts(&sim.fire_due()), vec!["Go on now".to_owned()]);
    // A policy whose on_error says what to do gets no wait.
    let mut sim = Sim::new();
    let policy = Policy { on_error: bosun_core::Chain(vec!["escalate".parse().unwrap()]), ..Policy::default() };
    let (b, w) = sim.start_with(claude(2, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: b.clone(), pid: Some(7) });
    sim.see(&b, Source::Hook, Observation::Started);
    sim.see(&b, Source::Hook, Observation::Working);
    sim.see(&b, Source::Log, Observation::Error { error: AgentError::RateLimited });
    assert_eq!(wake(&sim.state, &b), None);
    assert_eq!(sim.state.open_escalations().count(), 1);
}

/// A Claude agent `n` signed in with the config directory `config`, its policy `policy`, idle.
fn on_account(sim: &mut Sim, n: u64, config: &str, policy: Policy) -> AgentId {
    let mut spec = claude(n, policy);
    spec.env.insert("CLAUDE_CONFIG_DIR".into(), config.into());
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Started);
    a
}

fn spawns(effects: &[Effect]) -> Vec<AgentId> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::SpawnSession { agent, .. } => Some(agent.clone()),
            _ => None,
        })
        .collect()
}

/// While one agent of an account waits out a rate limit, its account's other agents get no
/// nudge of bosun's and no new agent of it starts; another account's go on. Once the wait is
/// over, the nudge held goes out and the new agent starts.
#[test]
fn agents_of_one_account_share_its_window_and_another_accounts_do_not() {
    let mut sim = Sim::new();
    let nudging = Policy { on_idle: bosun_core::Chain(vec!["nudge:Continue".parse().unwrap()]), ..Policy::default() };
    let limited = on_account(&mut sim, 1, "/accounts/one", Policy::default());
    let sibling = on_account(&mut sim, 2, "/accounts/one", nudging.clone());
    let other = on_account(&mut sim, 3, "/accounts/two", nudging.clone());
    sim.see(&limited, Source::Hook, Observation::Working);
    sim.see(&limited, Source::Log, Observation::Error { error: AgentError::RateLimited });
    let (wake_at, _) = wake(&sim.state, &limited).expect("the limited agent waits");
    // Both others end a turn: only the other account's nudge goes out.
    for a in [&sibling, &other] {
        sim.see(a, Source::Hook, Observation::Working);
    }
    assert!(sent_texts(&sim.see(&sibling, Source::Hook, Observation::Idle)).is_empty(), "held back");
    assert_eq!(sent_texts(&sim.see(&other, Source::Hook, Observation::Idle)), vec!["Continue".to_owned()]);
    // A new agent of the account does not start; one of the other account does.
    let mut spec = claude(4, Policy::default());
    spec.env.insert("CLAUDE_CONFIG_DIR".into(), "/accounts/one".into());
    let (held, w) = sim.start_with(spec);
    assert!(spawns(&sim.ok(Input::WorkspaceCreated { id: w })).is_empty(), "its start is held");
    let mut spec = claude(5, Policy::default());
    spec.env.insert("CLAUDE_CONFIG_DIR".into(), "/accounts/two".into());
    let (free, w) = sim.start_with(spec);
    assert_eq!(spawns(&sim.ok(Input::WorkspaceCreated { id: w })), vec![free]);
    // The wait is over: the limited agent is told, the held nudge goes out.
    sim.advance(wake_at.as_millis() - sim.clock.as_millis());
    let texts = sent_texts(&sim.fire_due());
    assert_eq!(texts, vec![WOKEN_MESSAGE.to_owned(), "Continue".to_owned()]);
    assert_eq!(sim.state.agents[&held].state, SessionState::Starting, "not before the reset and its jitter");
    // The held start goes on just after.
    sim.advance(AFTER_RESET_MS + RESET_JITTER_MS);
    assert_eq!(spawns(&sim.fire_due()), vec![held]);
}

/// The limited agent back at work by other means (a person's message) ends its account's wait:
/// the nudge held for the other agent of the account goes out then.
#[test]
fn a_limited_agent_back_at_work_releases_its_accounts_held_nudges() {
    let mut sim = Sim::new();
    let nudging = Policy { on_idle: bosun_core::Chain(vec!["nudge:Continue".parse().unwrap()]), ..Policy::default() };
    let limited = on_account(&mut sim, 1, "/accounts/one", Policy::default());
    let sibling = on_account(&mut sim, 2, "/accounts/one", nudging);
    sim.see(&limited, Source::Hook, Observation::Working);
    sim.see(&limited, Source::Log, Observation::Error { error: AgentError::RateLimited });
    sim.see(&sibling, Source::Hook, Observation::Working);
    assert!(sent_texts(&sim.see(&sibling, Source::Hook, Observation::Idle)).is_empty(), "held back");
    let effects = sim.see(&limited, Source::Hook, Observation::Working);
    assert_eq!(sent_texts(&effects), vec!["Continue".to_owned()]);
}

/// The session log read whole after a restart of bosun (`UsageLines`): a usage limit Codex
/// logged while bosun was down is taken, with its reset, and waited out; one it saw before, or a
/// log that goes on past its error, or a log cut short by the read's bound, changes nothing.
#[test]
fn an_error_logged_while_bosun_was_down_is_read_from_the_log_read_whole_at_restart() {
    let mut sim = Sim::new();
    let a = codex(&mut sim);
    let reset_s = sim.clock.as_millis() / 1_000 + 30;
    let started = r#"{"type":"event_msg","payload":{"type":"task_started"}}"#;
    let log: Vec<String> = [started, &reached(reset_s as i64), LIMITED].iter().map(|l| (*l).to_owned()).collect();
    let read = |lines: &[String], whole| Input::UsageLines { agent: a.clone(), lines: lines.to_vec(), whole };
    // Cut short: its end is not known.
    sim.ok(read(&log, false));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
    // Going on past the error: the error is past.
    let mut on = log.clone();
    on.push(started.to_owned());
    sim.ok(read(&on, true));
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
    // Ending on it: taken, with its reset, and waited out.
    sim.ok(read(&log, true));
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.state, SessionState::Error { error: AgentError::RateLimited });
    assert_eq!(agent.limited_until, Some(Timestamp::from_millis(reset_s * 1_000)));
    let (at, _) = wake(&sim.state, &a).expect("a wake is timed");
    // Read again (bosun down once more): nothing new.
    let seen = sim.state.agents[&a].state_seq;
    sim.ok(read(&log, true));
    assert_eq!(sim.state.agents[&a].state_seq, seen);
    assert_eq!(wake(&sim.state, &a).map(|(t, _)| t), Some(at));
}

/// Only an agent bosun has working takes an error its log ends on: one it knows idle (resumed
/// with no message, which writes nothing in its log) has moved past it. And the reset taken is
/// the last turn's, not one an earlier turn met.
#[test]
fn an_error_the_log_ends_on_is_taken_only_for_a_working_agent_with_its_own_turns_reset() {
    let mut sim = Sim::new();
    let a = codex(&mut sim);
    let old_reset = (sim.clock.as_millis() / 1_000 + 30) as i64;
    let started = r#"{"type":"event_msg","payload":{"type":"task_started"}}"#;
    let failed = r#"{"type":"event_msg","payload":{"type":"error","message":"You've hit your usage limit.","codex_error_info":"usage_limit_exceeded"}}"#;
    let log: Vec<String> =
        [started, &reached(old_reset), LIMITED, started, failed].iter().map(|l| (*l).to_owned()).collect();
    let read = |whole| Input::UsageLines { agent: a.clone(), lines: log.clone(), whole };
    sim.see(&a, Source::Log, Observation::Idle);
    sim.ok(read(true));
    assert_eq!(sim.state.agents[&a].state, SessionState::Idle, "an idle agent is left idle");
    sim.see(&a, Source::Log, Observation::Working);
    sim.ok(read(true));
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.state, SessionState::Error { error: AgentError::RateLimited });
    assert_eq!(agent.limited_until, None, "the earlier turn's reset is not this one's");
}
