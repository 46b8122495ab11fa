//! Daily budgets (bosun's config, `[budget]`), as simulations: once a day's spend (UTC) by a
//! repository's agents reaches its daily budget, each of them is paused as at its own budget
//! (its turn stopped, an escalation naming the daily budget), no new agent starts on it that
//! day, and the next day new agents start while the paused ones wait for a person.

mod support;

use bosun_core::config::{Config, DailyBudgets, RepoBudget};
use bosun_core::{AgentId, Effect, Event, Input, Observation, Policy, Rejection, Source, WorkBranch, WorkspaceKind};
use support::{claude, Sim};

fn line(id: &str, input: u64) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"{id}","model":"claude-opus-5-5","usage":{{"input_tokens":{input},"output_tokens":10}}}}}}"#
    )
}

/// A Claude agent `n` on repository `repo`, working.
fn working(sim: &mut Sim, n: u64, repo: &str) -> AgentId {
    let mut spec = claude(n, Policy::default());
    if let WorkspaceKind::Worktree(WorkBranch { repo: r, .. }) = &mut spec.kind {
        *r = repo.into();
    }
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    sim.see(&a, Source::Hook, Observation::Working);
    a
}

#[test]
fn a_repositorys_agents_are_paused_at_its_daily_budget_and_none_starts_on_it_until_the_next_day() {
    let mut sim = Sim::new();
    let budget =
        DailyBudgets { daily: None, repos: [("/repo".into(), RepoBudget { daily: "1ktok".parse().unwrap() })].into() };
    sim.ok(Input::ConfigRead(Config { budget, ..Config::default() }));
    let (a, b, other) = (working(&mut sim, 1, "/repo"), working(&mut sim, 2, "/repo"), working(&mut sim, 3, "/other"));
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines: vec![line("m1", 600)] });
    assert!(sim.state.agents[&a].paused.is_none(), "610 of 1,000");
    let effects = sim.ok(Input::LogLines { agent: b.clone(), session_log: true, lines: vec![line("m2", 500)] });
    for id in [&a, &b] {
        let pause = sim.state.agents[id].paused.clone().unwrap_or_else(|| panic!("{id} paused"));
        assert_eq!(pause.of.as_deref(), Some("repository /repo's daily budget"));
        assert_eq!(pause.spent, 1120, "both agents' spend together");
        let stopped = effects
            .iter()
            .any(|e| matches!(e, Effect::PressKeys { session, .. } if *session == sim.state.agents[id].session));
        assert!(stopped, "{id}'s turn is stopped");
        let said = sim.state.escalations.values().find(|e| e.agent == *id).map(|e| e.reason.clone()).unwrap();
        assert!(said.contains("repository /repo's daily budget of 1ktok is spent (1120 tokens today, UTC"), "{said}");
    }
    assert!(sim.state.agents[&other].paused.is_none(), "another repository's agent goes on");
    // No new agent on it today; one on another repository starts.
    let refused = sim.feed(Input::StartAgent(Box::new(claude(4, Policy::default())))).unwrap_err();
    assert!(matches!(refused, Rejection::DailyBudgetSpent { .. }), "{refused}");
    assert!(refused.to_string().contains("repository /repo's daily budget of 1ktok is spent for today (UTC)"));
    working(&mut sim, 5, "/other");
    // The next day (UTC): new agents start; the paused ones wait for a person.
    sim.advance(bosun_core::daily::DAY_MS);
    working(&mut sim, 6, "/repo");
    assert!(sim.state.agents[&a].paused.is_some() && sim.state.agents[&b].paused.is_some());
    let paused = sim.log.iter().filter(|e| matches!(e, Event::AgentPaused { .. })).count();
    assert_eq!(paused, 2, "each once");
}
