//! Budgets and cost: each response costed at the prices of its time (unknown for a model with
//! none), a person told at 80 % of an agent's budget, the agent paused at 100 % — its turn
//! interrupted, an escalation raised, nothing more delivered — and going on with its
//! conversation once a person raises the budget.

mod support;

use bosun_core::budget::Budget;
use bosun_core::price::Prices;
use bosun_core::{
    Effect, Event, Input, NoticeKind, Observation, Policy, Rejection, SessionState, Source, State, TermKey,
};
use support::{claude, Sim};

/// A transcript line of response `id` of `model`: `input` fresh tokens and 10 of output.
fn line(id: &str, model: &str, input: u64) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"{id}","model":"{model}","content":[],"usage":{{"input_tokens":{input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10}}}}}}"#
    )
}

fn with_budget(budget: &str) -> Policy {
    Policy {
        budget: Some(budget.parse().unwrap()),
        on_idle: bosun_core::Chain(vec!["nudge:Continue".parse().unwrap()]),
        ..Policy::default()
    }
}

/// A Claude agent with `policy`, working.
fn working(sim: &mut Sim, policy: Policy) -> bosun_core::AgentId {
    let (a, w) = sim.start_with(claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    sim.see(&a, Source::Hook, Observation::Working);
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
    a
}

fn usage(sim: &mut Sim, a: &bosun_core::AgentId, lines: Vec<String>) -> Vec<Effect> {
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines })
}

#[test]
fn each_response_is_costed_at_the_prices_of_its_time_and_a_model_without_one_is_unknown() {
    let mut sim = Sim::new();
    sim.ok(Input::PricesRead(Prices::shipped().clone()));
    assert!(sim.log.is_empty(), "bosun's own prices, none set before: nothing to record");
    let a = working(&mut sim, Policy::default());
    // claude-opus-5-5 at Claude Code 2.1.332's prices: $4 per million input, $20 output.
    usage(&mut sim, &a, vec![line("m1", "claude-opus-5-5", 1000)]);
    assert_eq!(sim.state.agents[&a].usage.cost(), (1000 * 4000 + 10 * 20_000, false));
    // The user's prices, from now on; what was recorded keeps its cost.
    let mine = Prices::parse("[models.\"claude-opus-5-5\"]\ninput = 1\noutput = 1\n", "mine").unwrap();
    sim.ok(Input::PricesRead(Prices::shipped().clone().with(mine.clone())));
    assert!(sim.log.iter().any(|e| matches!(e, Event::PricesSet { .. })));
    usage(&mut sim, &a, vec![line("m2", "claude-opus-5-5", 1000)]);
    assert_eq!(sim.state.agents[&a].usage.cost().0, 1000 * 4000 + 10 * 20_000 + 1010 * 1000);
    let before = sim.log.len();
    sim.ok(Input::PricesRead(Prices::shipped().clone().with(mine)));
    assert_eq!(sim.log.len(), before, "the same prices again record nothing");
    usage(&mut sim, &a, vec![line("m3", "llama-9", 1000)]);
    let ledger = &sim.state.agents[&a].usage;
    assert!(ledger.unpriced.contains("llama-9") && ledger.cost().1, "its cost is unknown, not zero");
    assert_eq!(ledger.by_model["llama-9"].input, 1000, "its tokens are counted");
    let mut replayed = State::default();
    for e in &sim.log {
        bosun_core::apply(&mut replayed, e);
    }
    assert_eq!(replayed.agents[&a].usage, sim.state.agents[&a].usage, "replay gives the same ledger");
}

#[test]
fn a_person_is_told_at_80_percent_and_the_agent_paused_at_its_budget_its_turn_stopped() {
    let mut sim = Sim::new();
    let a = working(&mut sim, with_budget("10ktok"));
    let effects = usage(&mut sim, &a, vec![line("m1", "claude-opus-5-5", 7000)]);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Notify { .. })), "70 %: nothing yet");
    let effects = usage(&mut sim, &a, vec![line("m2", "claude-opus-5-5", 1000)]);
    let told = effects.iter().find_map(|e| match e {
        Effect::Notify { notice, .. } if notice.kind == NoticeKind::Budget => Some(notice.clone()),
        _ => None,
    });
    let told = told.expect("told at 80 %");
    assert!(told.title.contains("80%"), "{}", told.title);
    let effects = usage(&mut sim, &a, vec![line("m3", "claude-opus-5-5", 100)]);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Notify { .. })), "told once");
    // The crossing: paused, its turn interrupted with Escape, a person asked.
    let effects = usage(&mut sim, &a, vec![line("m4", "claude-opus-5-5", 2000)]);
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.paused.as_ref().map(|p| p.budget), Some(Budget::Tokens(10_000)));
    assert_eq!(agent.state_label(), "paused(budget)");
    assert!(
        effects.iter().any(|e| matches!(e, Effect::PressKeys { keys, .. } if keys == &[TermKey::Esc])),
        "its turn stopped: {effects:?}"
    );
    let escalation = sim.state.open_escalations().find(|e| e.agent == a).expect("a person is asked");
    assert!(
        escalation.reason.contains("budget of 10ktok")
            && escalation.reason.contains("10140 tokens spent (140 tokens over"),
        "{}",
        escalation.reason
    );
    assert!(escalation.reason.contains("bosun resume"), "{}", escalation.reason);
    // More usage (the response in flight) pauses it no second time.
    usage(&mut sim, &a, vec![line("m5", "claude-opus-5-5", 10)]);
    assert_eq!(sim.log.iter().filter(|e| matches!(e, Event::AgentPaused { .. })).count(), 1);
}

/// A paused agent still working a while after its interrupt (its client did not take the key)
/// is interrupted again, twice at most; one that stopped, or whose budget was raised, is not.
#[test]
fn a_paused_agent_still_working_is_interrupted_again_and_one_that_stopped_is_not() {
    let escapes = |effects: &[Effect]| effects.iter().filter(|e| matches!(e, Effect::PressKeys { .. })).count();
    let mut sim = Sim::new();
    let a = working(&mut sim, with_budget("1ktok"));
    assert_eq!(escapes(&usage(&mut sim, &a, vec![line("m1", "claude-opus-5-5", 2000)])), 1);
    let mut again = Vec::new();
    for _ in 0..4 {
        sim.advance(bosun_core::INTERRUPT_AGAIN_MS);
        again.push(escapes(&sim.fire_due()));
    }
    assert_eq!(again, [1, 1, 0, 0], "pressed again twice, then left to the person asked");
    // Stopped at once: not pressed again.
    let mut sim = Sim::new();
    let b = working(&mut sim, with_budget("1ktok"));
    assert_eq!(escapes(&usage(&mut sim, &b, vec![line("m2", "claude-opus-5-5", 2000)])), 1);
    sim.see(&b, Source::Hook, Observation::Idle);
    sim.advance(bosun_core::INTERRUPT_AGAIN_MS);
    assert_eq!(escapes(&sim.fire_due()), 0);
}

#[test]
fn a_paused_agent_is_given_nothing_until_its_budget_is_raised_then_goes_on() {
    let mut sim = Sim::new();
    let a = working(&mut sim, with_budget("1ktok"));
    usage(&mut sim, &a, vec![line("m1", "claude-opus-5-5", 2000)]);
    assert!(sim.state.agents[&a].paused.is_some());
    // Its interrupted turn ends: its on_idle nudge does not fire, a person's message is refused.
    let effects = sim.see(&a, Source::Hook, Observation::Idle);
    assert!(!effects.iter().any(|e| matches!(e, Effect::SendText { .. })), "{effects:?}");
    sim.advance(120_000);
    assert!(!sim.fire_due().iter().any(|e| matches!(e, Effect::SendText { .. })));
    let refused = sim.feed(Input::SendText { agent: a.clone(), text: "hi".into(), raw: false, now: false });
    assert!(matches!(refused, Err(Rejection::Paused { .. })), "{refused:?}");
    // A budget already spent is refused, and changes nothing.
    let low = sim.feed(Input::RaiseBudget { agent: a.clone(), budget: Some("2ktok".parse().unwrap()) });
    assert!(matches!(low, Err(Rejection::BudgetSpent { .. })), "{low:?}");
    assert!(sim.state.agents[&a].paused.is_some());
    // Raised: the escalation is resolved and it is told to go on, in the same session.
    let effects = sim.ok(Input::RaiseBudget { agent: a.clone(), budget: Some("5ktok".parse().unwrap()) });
    let agent = &sim.state.agents[&a];
    assert!(agent.paused.is_none() && agent.policy.budget == Some(Budget::Tokens(5_000)));
    assert_eq!(agent.state_label(), "idle");
    assert!(sim.state.open_escalations().all(|e| e.agent != a));
    let sent = effects.iter().find_map(|e| match e {
        Effect::SendText { text, .. } => Some(text.clone()),
        _ => None,
    });
    assert!(sent.is_some_and(|t| t.contains("budget was raised")), "{effects:?}");
    assert!(!effects.iter().any(|e| matches!(e, Effect::SpawnSession { .. })), "its session goes on");
    let again = sim.feed(Input::RaiseBudget { agent: a.clone(), budget: None });
    assert!(matches!(again, Err(Rejection::NotPaused { .. })), "{again:?}");
}

#[test]
fn a_paused_agent_that_died_is_not_brought_back_until_raised_and_then_resumed() {
    let mut sim = Sim::new();
    let policy = Policy { on_dead: bosun_core::Chain(vec!["resume".parse().unwrap()]), ..with_budget("1ktok") };
    let a = working(&mut sim, policy);
    usage(&mut sim, &a, vec![line("m1", "claude-opus-5-5", 2000)]);
    let session = sim.state.agents[&a].session.clone();
    let effects =
        sim.ok(Input::SessionExited { session, status: bosun_core::ExitStatus { code: Some(1), signal: None } });
    assert!(!effects.iter().any(|e| matches!(e, Effect::SpawnSession { .. })), "no resume while paused");
    assert!(sim.state.agents[&a].state.is_dead());
    let effects = sim.ok(Input::RaiseBudget { agent: a.clone(), budget: Some("5ktok".parse().unwrap()) });
    let resumed = effects
        .iter()
        .any(|e| matches!(e, Effect::SpawnSession { command, .. } if command.iter().any(|c| c == "--resume")));
    assert!(resumed, "resumed with its conversation: {effects:?}");
}

#[test]
fn a_dollar_budget_counts_the_cost_of_priced_responses() {
    let mut sim = Sim::new();
    let a = working(&mut sim, with_budget("0.01usd"));
    // 2000 input tokens at $4 per million and 10 output at $20: $0.0082, 82 %.
    let effects = usage(&mut sim, &a, vec![line("m1", "claude-opus-5-5", 2000)]);
    assert!(effects.iter().any(|e| matches!(e, Effect::Notify { notice, .. } if notice.kind == NoticeKind::Budget)));
    usage(&mut sim, &a, vec![line("m2", "claude-opus-5-5", 500)]);
    let escalation = sim.state.open_escalations().find(|e| e.agent == a).expect("paused");
    assert!(escalation.reason.contains("$0.0100") && escalation.reason.contains("$0.0104"), "{}", escalation.reason);
}

#[test]
fn a_dollar_budget_that_cannot_count_a_models_responses_tells_a_person_once() {
    let unseen = |effects: &[Effect]| {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Notify { notice, .. } if notice.title.contains("cannot see all it spends") => {
                    Some((notice.kind, notice.body.clone()))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let mut sim = Sim::new();
    let a = working(&mut sim, with_budget("5usd"));
    assert!(unseen(&usage(&mut sim, &a, vec![line("m1", "claude-opus-4-5", 100)])).is_empty(), "priced: seen");
    let told = unseen(&usage(&mut sim, &a, vec![line("m2", "mystery-model", 100)]));
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, NoticeKind::Budget);
    assert!(told[0].1.contains("mystery-model") && told[0].1.contains("not counted against its budget of $5.00"));
    let recorded = |sim: &Sim| sim.log.iter().filter(|e| matches!(e, Event::BudgetUnseen { .. })).count();
    assert_eq!(recorded(&sim), 1);
    assert!(unseen(&usage(&mut sim, &a, vec![line("m3", "other-mystery", 100)])).is_empty(), "once");
    assert_eq!(recorded(&sim), 1);
    // A budget in tokens counts every response: nothing to tell.
    let mut sim = Sim::new();
    let b = working(&mut sim, with_budget("1Mtok"));
    assert!(unseen(&usage(&mut sim, &b, vec![line("m1", "mystery-model", 100)])).is_empty());
    assert_eq!(recorded(&sim), 0);
}
