//! Turn classification as deterministic simulations: guardrails, the classifier command and the
//! heuristic decide what an idle turn means, the verdict is recorded with its source and rule,
//! and `on_idle` follows the class's own chain.

mod support;

use std::collections::BTreeMap;

use bosun_core::{
    ClassSource, Classify, Effect, Event, Input, Observation, Policy, Rule, SessionState, Source, Step, TurnClass,
};
use support::{claude, Sim};

fn chain(steps: &[&str]) -> bosun_core::Chain {
    bosun_core::Chain(steps.iter().map(|s| s.parse::<Step>().unwrap()).collect())
}

fn policy(command: Option<&[&str]>) -> Policy {
    let rules = vec![Rule { name: "asks-db".into(), pattern: r"which database".into(), class: TurnClass::Question }];
    let classify = Classify { rules, command: command.map(|c| c.iter().map(|s| s.to_string()).collect()) };
    let routes = BTreeMap::from([(TurnClass::Question, chain(&["escalate"])), (TurnClass::Done, chain(&["done"]))]);
    Policy { on_idle: chain(&["nudge*5:Go on."]), on_idle_class: routes, classify: Some(classify), ..Policy::default() }
}

/// A running Claude agent with `policy`, idle after its first (unclassified) start.
fn agent(sim: &mut Sim, policy: Policy) -> bosun_core::AgentId {
    let (a, w) = sim.start_with(claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Started);
    a
}

/// The agent works, says `text`, and its turn ends.
fn turn(sim: &mut Sim, a: &bosun_core::AgentId, text: &str) -> Vec<Effect> {
    sim.see(a, Source::Hook, Observation::Working);
    sim.ok(Input::Said { agent: a.clone(), text: text.into() });
    sim.see(a, Source::Hook, Observation::Idle)
}

fn verdicts(sim: &Sim) -> Vec<(TurnClass, ClassSource, Option<String>)> {
    sim.log
        .iter()
        .filter_map(|e| match e {
            Event::TurnClassified { verdict, .. } => Some((verdict.class, verdict.source, verdict.rule.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_guardrail_decides_first_and_its_class_routes_to_its_own_chain() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, policy(None));
    turn(&mut sim, &a, "I set up the schema.\n\nWhich database should I use: Postgres or SQLite?");
    assert_eq!(verdicts(&sim), vec![(TurnClass::Question, ClassSource::Guardrail, Some("asks-db".into()))]);
    assert_eq!(sim.state.open_escalations().count(), 1, "question → escalate");
    assert!(sim.state.messages.is_empty(), "on_idle's nudge is not used for a routed class");
    let recorded = sim.log.iter().find_map(|e| match e {
        Event::TurnClassified { said, turn, .. } => Some((said.clone(), *turn)),
        _ => None,
    });
    let (said, turn_seq) = recorded.unwrap();
    assert!(said.ends_with("Postgres or SQLite?"));
    assert_eq!(turn_seq, sim.state.agents[&a].state_seq, "the turn is the idle state's seq");
}

#[test]
fn without_a_command_the_heuristic_decides_and_an_unrouted_class_follows_on_idle() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, policy(None));
    let effects = turn(&mut sim, &a, "Let me look at the parser next.");
    assert_eq!(verdicts(&sim), vec![(TurnClass::Working, ClassSource::Heuristic, Some("working".into()))]);
    assert!(effects.iter().any(|e| matches!(e, Effect::SendText { text, .. } if text == "Go on.")), "{effects:?}");
    turn(&mut sim, &a, "All tests pass.");
    assert_eq!(verdicts(&sim)[1], (TurnClass::Done, ClassSource::Heuristic, Some("done".into())));
    assert!(sim.state.agents[&a].outcome.is_some(), "done → the agent's work is over");
}

#[test]
fn the_classifier_command_runs_when_no_guardrail_decides_and_its_answer_routes() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, policy(Some(&["classify-turn"])));
    let effects = turn(&mut sim, &a, "The feature is in.");
    let asked = effects.iter().find_map(|e| match e {
        Effect::Classify { command, said, turn, .. } => Some((command.clone(), said.clone(), *turn)),
        _ => None,
    });
    let (command, said, turn_seq) = asked.expect("the classifier is asked");
    assert_eq!((command, said.as_str()), (vec!["classify-turn".to_owned()], "The feature is in."));
    assert!(verdicts(&sim).is_empty(), "nothing is decided before it answers");

    let said = "The feature is in.".to_owned();
    sim.ok(Input::Classified { agent: a.clone(), turn: turn_seq, said, answer: Ok("Class: done\n".into()) });
    assert_eq!(verdicts(&sim), vec![(TurnClass::Done, ClassSource::Classifier, None)]);
    assert!(sim.state.agents[&a].outcome.is_some());
}

#[test]
fn a_failed_classifier_falls_back_to_the_heuristic_and_the_failure_is_recorded() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, policy(Some(&["classify-turn"])));
    turn(&mut sim, &a, "Should I also update the docs?");
    let turn_seq = sim.state.agents[&a].state_seq;
    let said = "Should I also update the docs?".to_owned();
    sim.ok(Input::Classified { agent: a.clone(), turn: turn_seq, said, answer: Err("exit status 1".into()) });
    let verdict = sim.state.agents[&a].verdict.clone().unwrap();
    assert_eq!((verdict.class, verdict.source), (TurnClass::Question, ClassSource::Heuristic));
    assert!(verdict.error.unwrap().contains("exit status 1"));
    assert_eq!(sim.state.open_escalations().count(), 1);
}

#[test]
fn an_answer_for_a_turn_the_agent_has_left_is_recorded_but_not_acted_on() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, policy(Some(&["classify-turn"])));
    turn(&mut sim, &a, "Done, I think.");
    let turn_seq = sim.state.agents[&a].state_seq;
    sim.see(&a, Source::Hook, Observation::Working);
    sim.ok(Input::Classified {
        agent: a.clone(),
        turn: turn_seq,
        said: "Done, I think.".into(),
        answer: Ok("done".into()),
    });
    assert_eq!(verdicts(&sim).len(), 1);
    assert_eq!(sim.state.agents[&a].verdict, None, "a verdict for a turn it left is not its current one");
    assert_eq!(sim.state.agents[&a].outcome, None, "it went back to work: the verdict is moot");
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
}

#[test]
fn an_agent_without_classification_is_never_classified() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, Policy { on_idle: chain(&["nudge:Go on."]), ..Policy::default() });
    let effects = turn(&mut sim, &a, "Which database should I use?");
    assert!(verdicts(&sim).is_empty());
    assert!(effects.iter().any(|e| matches!(e, Effect::SendText { .. })));
}

#[test]
fn a_classifier_cut_off_by_a_crash_runs_again_for_the_turn_the_agent_is_still_idle_in() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, policy(Some(&["classify-turn"])));
    turn(&mut sim, &a, "The feature is in.");
    let session = sim.state.agents[&a].session.clone();
    let seen = bosun_core::SessionSeen { session, pid: Some(7), exit: None };
    let effects = sim.ok(Input::Reconcile(bosun_core::Reality {
        sessions: vec![seen],
        missing_dirs: Vec::new(),
        slots: Vec::new(),
    }));
    let again = effects.iter().any(|e| matches!(e, Effect::Classify { said, .. } if said == "The feature is in."));
    assert!(again, "{effects:?}");
}

#[test]
fn a_resolved_escalation_starts_the_class_chains_again() {
    let mut sim = Sim::new();
    let a = agent(&mut sim, policy(None));
    turn(&mut sim, &a, "Which database should I use?");
    let e = sim.state.open_escalations().next().unwrap().id;
    sim.ok(Input::Resolve { escalation: e, message: None });
    assert!(sim.state.agents[&a].class_recovery.is_empty());
    turn(&mut sim, &a, "And which database for the tests?");
    let open: Vec<_> = sim.state.open_escalations().collect();
    assert_eq!(open.len(), 1, "escalated by its chain, not as a used-up chain");
    assert!(!open[0].reason.contains("used up"), "{}", open[0].reason);
}

#[test]
fn a_class_step_waiting_out_its_cooldown_acts_only_while_the_turn_is_still_of_that_class() {
    let mut sim = Sim::new();
    let mut p = policy(None);
    p.on_idle_class.insert(TurnClass::Working, chain(&["nudge+10s:Keep going."]));
    let a = agent(&mut sim, p);
    turn(&mut sim, &a, "Let me look at the parser next.");
    assert!(sim.state.messages.is_empty(), "the working step waits out its cooldown");
    // Meanwhile the agent goes on by itself and ends a turn of another class.
    turn(&mut sim, &a, "Which database should I use?");
    assert_eq!(sim.state.open_escalations().count(), 1, "the question's own chain is not held up by it");
    sim.advance(10_000);
    let effects = sim.fire_due();
    assert!(!effects.iter().any(|e| matches!(e, Effect::SendText { .. })), "{effects:?}");
    assert!(sim.state.messages.is_empty(), "the working nudge is moot now");
}
