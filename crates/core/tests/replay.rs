//! Replay: detection and classification run again over what the log recorded. The corpus of
//! recorded claudeless sessions (`tests/corpus/*.jsonl`, written by `bosun job export`) must
//! replay without a difference: a change to detection or classification that alters a decision
//! fails here until the corpus is deliberately recorded again (see `tests/corpus/README.md`).

mod support;

use bosun_core::driver::DriverKind;
use bosun_core::replay::{replay, Decided, Recorded};
use bosun_core::{Classify, Event, Input, Observation, Policy, Rule, TurnClass};
use support::{claude, Sim};

fn hook(sim: &mut Sim, a: &bosun_core::AgentId, event: &str) {
    let report = DriverKind::Claude.behaviour().take_report(event, "{}");
    sim.ok(Input::Report { agent: a.clone(), generation: None, spooled_at: None, report });
}

fn recorded(sim: &Sim) -> Vec<Recorded> {
    sim.log.iter().enumerate().map(|(i, e)| Recorded { seq: i as u64 + 1, at: 0, event: e.clone() }).collect()
}

/// A classified Claude agent through two turns, reported by its hooks.
fn session() -> Sim {
    let mut sim = Sim::new();
    let rules = vec![Rule { name: "asks".into(), pattern: r"\?\s*$".into(), class: TurnClass::Question }];
    let policy = Policy { classify: Some(Classify { rules, command: None }), ..Policy::default() };
    let (a, w) = sim.start_with(claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    hook(&mut sim, &a, "SessionStart");
    for said in ["Shall I go on?", "All tests pass."] {
        hook(&mut sim, &a, "UserPromptSubmit");
        sim.ok(Input::Said { agent: a.clone(), text: said.into() });
        hook(&mut sim, &a, "Stop");
    }
    sim
}

#[test]
fn a_session_replays_without_a_difference() {
    let r = replay(&recorded(&session()));
    assert_eq!(r.differences, Vec::new());
    assert_eq!(r.decisions, 7, "5 state changes read from hooks, 2 classified turns");
}

#[test]
fn a_recorded_decision_this_build_would_not_make_is_reported_original_beside_replayed() {
    let mut events = recorded(&session());
    for r in &mut events {
        match &mut r.event {
            Event::TurnClassified { verdict, said, .. } if said == "All tests pass." => {
                verdict.class = TurnClass::Blocked
            }
            Event::AgentObserved { observation: Some(o), .. } if *o == Observation::Idle => *o = Observation::Working,
            _ => {}
        }
    }
    let r = replay(&events);
    let kinds: Vec<_> = r.differences.iter().map(|d| d.decided).collect();
    assert_eq!(kinds.iter().filter(|k| **k == Decided::Detection).count(), 2, "{:#?}", r.differences);
    let c = r.differences.iter().find(|d| d.decided == Decided::Classification).expect("a classification differs");
    assert_eq!(
        (c.original.as_str(), c.replayed.as_str()),
        ("blocked (heuristic, rule done)", "done (heuristic, rule done)")
    );
    let d = r.differences.iter().find(|d| d.decided == Decided::Detection).unwrap();
    assert_eq!((d.from.as_str(), d.original.as_str(), d.replayed.as_str()), ("hook Stop", "Working", "Idle"));
}

#[test]
fn the_corpus_of_recorded_claudeless_sessions_replays_without_a_difference() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    assert!(files.len() >= 3, "the corpus is in {}", dir.display());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let events: Vec<Recorded> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let r = replay(&events);
        assert!(r.decisions > 0, "{} records no decision", file.display());
        assert!(r.differences.is_empty(), "{}: {:#?}", file.display(), r.differences);
    }
}

#[test]
fn codex_notifications_and_generic_output_replay_too() {
    use bosun_core::driver::{generic::Patterns, Driver};
    let mut sim = Sim::new();
    let patterns = Patterns { prompt: Some(r"\? $".into()), error: Some("FATAL".into()), working: None };
    let generic = support::spec(1);
    let generic = bosun_core::AgentSpec { driver: Driver::Generic { patterns }, ..generic };
    let (g, w) = sim.start_with(generic);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: g.clone(), pid: Some(7) });
    let lines = vec!["compiling".to_owned(), "FATAL: out of disk".to_owned()];
    sim.ok(Input::LogLines { agent: g.clone(), session_log: false, lines });

    let codex = bosun_core::AgentSpec { driver: Driver::Codex, command: vec!["codex".into()], ..support::spec(2) };
    let (c, w) = sim.start_with(codex);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: c.clone(), pid: Some(8) });
    sim.see(&c, bosun_core::Source::Log, Observation::Working);
    let done = r#"{"type":"agent-turn-complete","last-assistant-message":"Done."}"#;
    let report = DriverKind::Codex.behaviour().take_report("notify", done);
    sim.ok(Input::Report { agent: c.clone(), generation: None, spooled_at: None, report });

    let events = recorded(&sim);
    let r = replay(&events);
    assert_eq!(r.differences, Vec::new());
    let causes: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.event {
            Event::AgentObserved { cause: Some(cause), .. } => Some(format!("{cause:?}")),
            _ => None,
        })
        .collect();
    assert!(causes.iter().any(|c| c.contains("FATAL")), "{causes:?}");
    assert!(causes.iter().any(|c| c.contains("agent-turn-complete")), "{causes:?}");
    assert!(r.decisions >= 2);
}
