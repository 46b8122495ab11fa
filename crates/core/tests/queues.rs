//! Queues and workers as simulations: items taken up to a worker's concurrency, each into a job;
//! a failed job puts its item back until its retries run out, then it is dead-lettered.

mod support;

use std::collections::BTreeMap;

use bosun_core::{Effect, Input, ItemId, ItemState, JobId, JobSpec, Origin, StepRun, Worker};
use support::{shell_job, Sim};

fn worker(concurrency: u32) -> Worker {
    Worker {
        name: "fixer".into(),
        queue: "bugs".into(),
        job: "fix".into(),
        concurrency,
        running: false,
        book: Default::default(),
        cwd: "/repo".into(),
        external: None,
        error: None,
        budget: None,
    }
}

fn dispatched(effects: &[Effect]) -> Vec<(ItemId, JobId)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch { origin: Origin::Item(item), job, .. } => Some((*item, job.clone())),
            _ => None,
        })
        .collect()
}

fn job_for(item: ItemId, id: JobId, data: BTreeMap<String, String>) -> JobSpec {
    shell_job(id, "fix ${item.title}", Some((item, data)))
}

fn push(sim: &mut Sim, title: &str, retry: u32) -> Vec<Effect> {
    let data = BTreeMap::from([("title".to_owned(), title.to_owned())]);
    sim.ok(Input::QueuePush { queue: "bugs".into(), data, retry })
}

/// Starts the dispatched jobs and ends each with `ok`; returns the effects of the ends.
fn run_jobs(sim: &mut Sim, jobs: &[(ItemId, JobId)], ok: bool) -> Vec<Effect> {
    let mut out = Vec::new();
    for (item, job) in jobs {
        let data = sim.state.items[item].data.clone();
        let effects = sim.ok(Input::StartJob(Box::new(job_for(*item, job.clone(), data))));
        assert!(effects
            .iter()
            .any(|e| matches!(e, Effect::RunStep { run: StepRun::Shell(c), env, .. }
                if c == "fix \"${BOSUN_ITEM_TITLE}\"" && env.get("BOSUN_ITEM_TITLE") == sim.state.items[item].data.get("title"))));
        out.extend(sim.ok(Input::StepFinished { job: job.clone(), step: "fix".into(), attempt: 1, ok, detail: None }));
    }
    out
}

#[test]
fn a_worker_takes_items_up_to_its_concurrency_and_the_next_when_one_is_done() {
    let mut sim = Sim::new();
    for t in ["a", "b", "c"] {
        assert!(dispatched(&push(&mut sim, t, 0)).is_empty(), "no worker yet");
    }
    let first = dispatched(&sim.ok(Input::StartWorker(Box::new(worker(2)))));
    assert_eq!(first.len(), 2);
    let next = dispatched(&run_jobs(&mut sim, &first[..1], true));
    assert_eq!(next.len(), 1, "one done: the third is taken");
    assert_eq!(sim.state.items[&first[0].0].state, ItemState::Done);
    run_jobs(&mut sim, &first[1..], true);
    run_jobs(&mut sim, &next, true);
    assert!(sim.state.items.values().all(|i| i.state == ItemState::Done));
}

#[test]
fn a_failed_item_is_retried_then_dead_lettered_and_can_be_retried_by_hand() {
    let mut sim = Sim::new();
    sim.ok(Input::StartWorker(Box::new(worker(1))));
    let mut jobs = dispatched(&push(&mut sim, "flaky", 1));
    let item = jobs[0].0;
    jobs = dispatched(&run_jobs(&mut sim, &jobs, false));
    assert_eq!(jobs.len(), 1, "tried again");
    let first_job = sim.state.jobs.keys().next().cloned().unwrap();
    assert_ne!(jobs[0].1, first_job, "a new job for the new try");
    assert!(dispatched(&run_jobs(&mut sim, &jobs, false)).is_empty());
    assert_eq!(sim.state.items[&item].state, ItemState::Dead);
    assert_eq!(sim.state.items[&item].failures, 2);
    let again = dispatched(&sim.ok(Input::QueueRetry { item }));
    assert_eq!(again.len(), 1, "back in the queue, taken at once");
    run_jobs(&mut sim, &again, true);
    assert_eq!(sim.state.items[&item].state, ItemState::Done);
    assert!(sim.feed(Input::QueueRetry { item }).is_err(), "only a dead item is retried");
}

#[test]
fn a_stopped_worker_takes_nothing_and_items_can_be_dropped() {
    let mut sim = Sim::new();
    sim.ok(Input::StartWorker(Box::new(worker(1))));
    sim.ok(Input::StopWorker { name: "fixer".into() });
    assert!(dispatched(&push(&mut sim, "later", 0)).is_empty());
    let item = *sim.state.items.keys().next().unwrap();
    sim.ok(Input::QueueDrop { item });
    assert!(sim.state.items.is_empty());
    assert!(sim.feed(Input::StopWorker { name: "fixer".into() }).is_err());
}

fn external_worker() -> Worker {
    let external = bosun_core::External {
        list: "gh issue list".into(),
        take: Some("claim ${item.id}".into()),
        poll_ms: 5_000,
        retry: 0,
    };
    Worker { external: Some(external), ..worker(2) }
}

fn listed(sim: &mut Sim, output: Result<&str, &str>) -> Vec<Effect> {
    let output = output.map(str::to_owned).map_err(str::to_owned);
    sim.ok(Input::Listed { worker: "fixer".into(), output })
}

#[test]
fn an_external_queue_is_listed_each_poll_and_each_item_is_taken_once() {
    let mut sim = Sim::new();
    let effects = sim.ok(Input::StartWorker(Box::new(external_worker())));
    assert!(effects.iter().any(|e| matches!(e, Effect::ListQueue { list, .. } if list == "gh issue list")));
    let effects = listed(&mut sim, Ok("{\"id\": 7, \"title\": \"crash; rm -rf /\"}\n\n{\"id\": 8}\n"));
    let takes: Vec<(String, Option<String>)> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch { take: Some(t), .. } => Some((t.text.clone(), t.env.get("BOSUN_ITEM_ID").cloned())),
            _ => None,
        })
        .collect();
    let claim = |id: &str| ("claim \"${BOSUN_ITEM_ID}\"".to_owned(), Some(id.to_owned()));
    assert_eq!(takes, [claim("7"), claim("8")], "each claimed, its values in the environment");
    assert_eq!(sim.state.items.values().filter_map(|i| i.key.clone()).collect::<Vec<_>>(), ["7", "8"]);
    assert_eq!(sim.state.items.values().next().unwrap().data["title"], "crash; rm -rf /");

    sim.advance(5_000);
    let effects = sim.fire_due();
    assert!(effects.iter().any(|e| matches!(e, Effect::ListQueue { .. })), "polled again");
    let effects = listed(&mut sim, Ok("{\"id\": 7}\n{\"id\": 9}\n"));
    assert!(dispatched(&effects).is_empty(), "two taken already: the worker is full");
    assert_eq!(sim.state.items.len(), 3, "7 is known; 9 is new");

    let effects = listed(&mut sim, Err("exit 1: gh: not logged in"));
    assert!(effects.iter().all(|e| !matches!(e, Effect::Dispatch { .. })));
    assert!(sim.state.workers["fixer"].error.as_deref().is_some_and(|e| e.contains("not logged in")));
    listed(&mut sim, Ok("[1, 2]"));
    assert!(sim.state.workers["fixer"].error.as_deref().is_some_and(|e| e.contains("line 1 is not a JSON object")));
    listed(&mut sim, Ok(""));
    assert_eq!(sim.state.workers["fixer"].error, None, "listed fine again");
    assert_eq!(sim.state.timers.len(), 1, "one poll pending");
    sim.ok(Input::StopWorker { name: "fixer".into() });
    assert!(sim.state.timers.is_empty(), "a stopped worker polls no more");
}

#[test]
fn ids_are_never_reused_and_two_workers_on_one_queue_never_take_the_same_item() {
    let mut sim = Sim::new();
    push(&mut sim, "a", 0);
    let first = *sim.state.items.keys().next().unwrap();
    sim.ok(Input::QueueDrop { item: first });
    push(&mut sim, "b", 0);
    assert_ne!(*sim.state.items.keys().next().unwrap(), first, "a dropped item's id is not handed out again");

    sim.ok(Input::StartWorker(Box::new(worker(1))));
    let second = Worker { name: "fixer-2".into(), ..worker(1) };
    let jobs = dispatched(&sim.ok(Input::StartWorker(Box::new(second))));
    let all: Vec<_> = sim.log.iter().filter(|e| matches!(e, bosun_core::Event::ItemTaken { .. })).collect();
    assert_eq!((all.len(), jobs.len()), (1, 0), "one item, taken once");
}

#[test]
fn an_item_whose_job_was_never_made_goes_back_to_its_queue_after_a_restart() {
    let mut sim = Sim::new();
    sim.ok(Input::StartWorker(Box::new(worker(1))));
    let jobs = dispatched(&push(&mut sim, "a", 1));
    assert_eq!(sim.state.items[&jobs[0].0].state, ItemState::Taken);
    // bosun died before the job was made.
    let again = dispatched(&sim.ok(Input::Reconcile(bosun_core::Reality {
        sessions: vec![],
        missing_dirs: vec![],
        slots: Vec::new(),
    })));
    assert_eq!(again.len(), 1, "taken again at once");
    assert_ne!(again[0].1, jobs[0].1, "as a new job");
    assert_eq!(sim.state.items[&jobs[0].0].failures, 1);
}
