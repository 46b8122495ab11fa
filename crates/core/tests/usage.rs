//! The usage ledger: what an agent's model calls used, read from its client's session log line
//! by line, each response once at its largest count, hostile counts left out, and the same after
//! a replay of the log.

mod support;

use bosun_core::usage::Tokens;
use bosun_core::{Event, Input, Policy, State};
use support::{claude, Sim};

fn line(id: &str, input: &str, output: u64) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"{id}","model":"claude-opus-5-5","content":[],"usage":{{"input_tokens":{input},"cache_creation_input_tokens":3,"cache_read_input_tokens":4,"output_tokens":{output}}}}}}}"#
    )
}

#[test]
fn each_response_counts_once_at_its_largest_count_and_hostile_counts_are_left_out() {
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(claude(1, Policy::default()));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(8) });
    let lines = vec![
        line("msg_1", "10", 1),
        // Its next block, the message's count not yet final; then final.
        line("msg_1", "10", 1),
        line("msg_1", "10", 20),
        line("msg_2", "5", 5),
        // Hostile: negative, absurd, not a number, no id, not JSON, and a huge line.
        line("msg_3", "-5", 1),
        line("msg_4", "99999999999999", 1),
        line("msg_5", "\"many\"", 1),
        r#"{"type":"assistant","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}"#.to_owned(),
        "{not json".to_owned(),
        format!("{}{}", line("msg_6", "1", 1), " ".repeat(100_000)),
    ];
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines: lines.clone() });
    let usage = &sim.state.agents[&a].usage;
    assert_eq!(usage.by_model["claude-opus-5-5"], Tokens { input: 16, output: 26, cache_write: 9, cache_read: 12 });
    let recorded = |sim: &Sim| sim.log.iter().filter(|e| matches!(e, Event::UsageRecorded { .. })).count();
    assert_eq!(recorded(&sim), 4, "msg_1 twice (its count grew), msg_2, msg_6");
    // The same lines read again (a log read from its start) change nothing.
    sim.ok(Input::LogLines { agent: a.clone(), session_log: true, lines });
    assert_eq!(recorded(&sim), 4);
    // The ledger is the log's: replayed, it is the same.
    let mut replayed = State::default();
    for event in &sim.log {
        bosun_core::apply(&mut replayed, event);
    }
    assert_eq!(replayed.agents[&a].usage, sim.state.agents[&a].usage);
}
