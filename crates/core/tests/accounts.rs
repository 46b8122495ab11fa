//! Accounts named in bosun's config: the config recorded when it changes, an agent started on a
//! named account, and `switch`, which moves a rate-limited agent to another account of its
//! client with its conversation.

mod support;

use bosun_core::config::Config;
use bosun_core::{Event, Input};
use support::Sim;

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
