//! A request's id is recorded with the events it caused, so that the daemon can answer a
//! request sent again (after it died) from what the first one did.

mod support;

use bosun_core::{Event, Input, RequestId, REQUESTS_KEPT};
use support::*;

#[test]
fn a_requests_events_are_found_by_its_id() {
    let mut sim = Sim::new();
    sim.start(1);
    let before = sim.log.len() as u64;
    sim.ok(Input::Requested { id: RequestId(7), input: Box::new(Input::StartAgent(Box::new(spec(2)))) });
    let (first, count) = sim.state.request(RequestId(7)).expect("recorded");
    assert_eq!(first, before + 1, "from the first event it caused");
    let caused = &sim.log[(first - 1) as usize..(first - 1 + u64::from(count)) as usize];
    assert!(caused.iter().any(|e| matches!(e, Event::AgentCreated { .. })), "{caused:?}");
    assert!(matches!(sim.log.last(), Some(Event::RequestDone { id: RequestId(7), .. })));
    assert_eq!(sim.state.request(RequestId(8)), None);
}

#[test]
fn a_refused_request_records_nothing_and_old_ids_are_let_go() {
    let mut sim = Sim::new();
    sim.start(1);
    let refused = Input::Requested { id: RequestId(1), input: Box::new(Input::StartAgent(Box::new(spec(1)))) };
    assert!(sim.feed(refused).is_err());
    assert_eq!(sim.state.request(RequestId(1)), None);
    for n in 0..=REQUESTS_KEPT as u64 {
        let push = Input::QueuePush { queue: "q".into(), data: Default::default(), retry: 0 };
        sim.ok(Input::Requested { id: RequestId(100 + n), input: Box::new(push) });
    }
    assert_eq!(sim.state.requests.len(), REQUESTS_KEPT);
    assert_eq!(sim.state.request(RequestId(100)), None, "the oldest is let go");
    assert!(sim.state.request(RequestId(100 + REQUESTS_KEPT as u64)).is_some());
}
