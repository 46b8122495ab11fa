//! Accounts named in bosun's config: the config recorded when it changes, an agent started on a
//! named account, and `switch`, which moves a rate-limited agent to another account of its
//! client with its conversation.

mod support;

use std::path::PathBuf;

use bosun_core::config::Config;
use bosun_core::rate_limit::SWITCHED_MESSAGE;
use bosun_core::{AgentError, AgentId, Chain, Effect, Event, Input, Observation, Policy, Source, TimerKind};
use support::{claude, sent_texts, Sim};

fn config(text: &str) -> Config {
    Config::parse(text, "config.toml").unwrap()
}

const TWO: &str = "[accounts.one]\nclient = \"claude\"\nconfig = \"/acct/one\"\n\n\
                   [accounts.two]\nclient = \"claude\"\nconfig = \"/acct/two\"\n";

#[test]
fn the_config_is_recorded_only_when_it_differs_from_the_one_recorded() {
    let mut sim = Sim::new();
    sim.ok(Input::ConfigRead(Config::default()));
    assert!(sim.log.is_empty(), "no file, none recorded before: nothing to record");
    sim.ok(Input::ConfigRead(config(TWO)));
    sim.ok(Input::ConfigRead(config(TWO)));
    let set = sim.log.iter().filter(|e| matches!(e, Event::ConfigSet { .. })).count();
    assert_eq!(set, 1, "the same config again records nothing");
    assert_eq!(sim.state.config.accounts.len(), 2);
    sim.ok(Input::ConfigRead(Config::default()));
    assert!(sim.state.config.accounts.is_empty(), "a config emptied is recorded too");
}

/// A Claude agent `n` on the account whose config directory is `config`, working, its
/// transcript found there.
fn on_account(sim: &mut Sim, n: u64, config: &str, policy: Policy) -> AgentId {
    let mut spec = claude(n, policy);
    spec.env.insert("CLAUDE_CONFIG_DIR".into(), config.into());
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    let transcript = PathBuf::from(format!("{config}/projects/-ws/00000000-0000-0000-0000-{n:012}.jsonl"));
    let log = Some(transcript);
    sim.ok(Input::Observed {
        agent: a.clone(),
        source: Source::Hook,
        observation: Observation::Started,
        log,
        generation: None,
    });
    sim.see(&a, Source::Hook, Observation::Working);
    a
}

fn switching() -> Policy {
    let mut policy = Policy::default();
    policy.on_error_kind.insert(AgentError::RateLimited, Chain(vec!["switch".parse().unwrap()]));
    policy
}

fn limited(sim: &mut Sim, a: &AgentId) -> Vec<Effect> {
    sim.see(a, Source::Log, Observation::Error { error: AgentError::RateLimited })
}

/// `switch`: a limited agent is restarted on the next account of its client, its transcript
/// copied where Claude looks under that account's directory, its conversation resumed with a
/// message; the account it left stays shut (its other agents' nudges held) until its reset.
#[test]
fn a_limited_agent_switches_to_the_next_account_with_its_conversation_and_the_one_it_left_stays_shut() {
    let mut sim = Sim::new();
    sim.ok(Input::ConfigRead(config(TWO)));
    let nudging = Policy { on_idle: Chain(vec!["nudge:Continue".parse().unwrap()]), ..Policy::default() };
    let a = on_account(&mut sim, 1, "/acct/one", switching());
    let sibling = on_account(&mut sim, 2, "/acct/one", nudging);
    let effects = limited(&mut sim, &a);
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.env["CLAUDE_CONFIG_DIR"], "/acct/two", "on the other account now");
    assert!(sim.log.iter().any(|e| matches!(e, Event::AgentSwitched { account, .. } if account == "two")));
    let Some(Effect::SpawnSession { env, copies, command, replace, .. }) =
        effects.iter().find(|e| matches!(e, Effect::SpawnSession { .. }))
    else {
        panic!("restarted: {effects:?}")
    };
    assert_eq!(env["CLAUDE_CONFIG_DIR"], "/acct/two");
    assert!(replace.is_some(), "its limited session is ended");
    let name = "00000000-0000-0000-0000-000000000001.jsonl";
    let slug = agent.cwd.display().to_string().replace(['/', '.'], "-");
    let from = PathBuf::from(format!("/acct/one/projects/-ws/{name}"));
    let copy = PathBuf::from(format!("/acct/two/projects/{slug}/{name}"));
    assert_eq!(copies, &vec![(from, copy.clone())]);
    // The copy is its log now: followed from its end when the session is up, so the limit it
    // ends on is not read again as new.
    assert_eq!(sim.state.agents[&a].log.as_ref(), Some(&copy));
    let resumed = command.windows(2).any(|w| w == ["--resume", "00000000-0000-0000-0000-000000000001"]);
    assert!(resumed && command.last().map(String::as_str) == Some(SWITCHED_MESSAGE), "{command:?}");
    // The account it left is shut: its other agent's nudge waits for the reset.
    let window = sim.state.timers.values().find(|t| matches!(t.kind, TimerKind::Window { .. })).expect("shut").at;
    assert!(sent_texts(&sim.see(&sibling, Source::Hook, Observation::Idle)).is_empty(), "held back");
    sim.advance(window.as_millis() - sim.clock.as_millis());
    assert_eq!(sent_texts(&sim.fire_due()), vec!["Continue".to_owned()], "it goes out at the reset");
}

/// When every other account of its client is shut, `switch` waits as `wait` does; an agent on
/// no account the config names switches to the first.
#[test]
fn with_no_account_free_a_switch_waits_and_an_agent_on_no_named_account_takes_the_first() {
    let mut sim = Sim::new();
    sim.ok(Input::ConfigRead(config(TWO)));
    let first = on_account(&mut sim, 1, "/acct/two", switching());
    let second = on_account(&mut sim, 2, "/acct/one", switching());
    let elsewhere = on_account(&mut sim, 3, "/acct/elsewhere", switching());
    limited(&mut sim, &first);
    assert_eq!(sim.state.agents[&first].env["CLAUDE_CONFIG_DIR"], "/acct/one", "two's next, around, is one");
    limited(&mut sim, &elsewhere);
    assert_eq!(sim.state.agents[&elsewhere].env["CLAUDE_CONFIG_DIR"], "/acct/one", "the first named");
    // two is shut: `second`, on one, has nowhere to go.
    let effects = limited(&mut sim, &second);
    assert!(!effects.iter().any(|e| matches!(e, Effect::SpawnSession { .. })), "not restarted");
    assert_eq!(sim.state.agents[&second].env["CLAUDE_CONFIG_DIR"], "/acct/one");
    let waits = |t: &&bosun_core::Timer| matches!(&t.kind, TimerKind::Wake { agent, .. } if *agent == second);
    assert!(sim.state.timers.values().any(|t| waits(&t)), "it waits");
}
