//! Decisions about queues and workers: items pushed, taken by running workers up to their
//! concurrency, each into a job; a failed job puts its item back until its retries run out.

use std::collections::BTreeMap;

use super::Decision;
use crate::{apply, Effect, Event, Item, ItemId, ItemState, JobId, Nonce, Origin, Rejection, State, Timestamp, Worker};

pub(super) fn push(
    state: &State,
    queue: &str,
    data: &BTreeMap<String, String>,
    retry: u32,
    now: Timestamp,
    d: &mut Decision,
) {
    let earlier = d.events.iter().filter(|e| matches!(e, Event::ItemPushed { .. })).count() as u64;
    let id = ItemId(state.items.keys().next_back().map_or(1, |i| i.0 + 1) + earlier);
    let item = Item {
        id,
        queue: queue.to_owned(),
        data: data.clone(),
        state: ItemState::Pending,
        failures: 0,
        tries: 0,
        retry,
        job: None,
        worker: None,
        at: now,
        error: None,
    };
    d.event(Event::ItemPushed { item });
}

pub(super) fn requeue(state: &State, item: ItemId, d: &mut Decision) -> Result<(), Rejection> {
    match state.items.get(&item) {
        None => Err(Rejection::NoSuchItem(item)),
        Some(i) if i.state == ItemState::Dead => {
            d.event(Event::ItemRequeued { item });
            Ok(())
        }
        Some(i) => Err(Rejection::ItemNotDead { item, state: format!("{:?}", i.state).to_lowercase() }),
    }
}

pub(super) fn drop(state: &State, item: ItemId, d: &mut Decision) -> Result<(), Rejection> {
    match state.items.get(&item) {
        None => Err(Rejection::NoSuchItem(item)),
        Some(i) if i.state == ItemState::Taken => {
            Err(Rejection::ItemTaken { item, job: i.job.clone().map(|j| j.to_string()).unwrap_or_default() })
        }
        Some(_) => {
            d.event(Event::ItemDropped { item });
            Ok(())
        }
    }
}

pub(super) fn start_worker(worker: &Worker, d: &mut Decision) {
    d.event(Event::WorkerStarted { worker: Worker { running: true, ..worker.clone() } });
}

pub(super) fn stop_worker(state: &State, name: &str, d: &mut Decision) -> Result<(), Rejection> {
    match state.workers.get(name) {
        Some(w) if w.running => {
            d.event(Event::WorkerStopped { name: name.to_owned() });
            Ok(())
        }
        Some(_) => Err(Rejection::WorkerStopped(name.to_owned())),
        None => Err(Rejection::NoSuchWorker(name.to_owned())),
    }
}

/// A job for an item could not be made: the item counts a failure.
pub(super) fn dispatch_failed(state: &State, item: ItemId, error: &str, d: &mut Decision) {
    if state.items.get(&item).is_some_and(|i| i.state == ItemState::Taken) {
        d.event(Event::ItemFinished { item, ok: false, error: Some(error.to_owned()) });
    }
}

/// After a decision: every running worker takes pending items of its queue, oldest first, until
/// it has `concurrency` of them in jobs.
pub(super) fn dispatch(state: &State, d: &mut Decision) {
    let relevant = d.events.iter().any(|e| {
        matches!(
            e,
            Event::ItemPushed { .. }
                | Event::ItemFinished { .. }
                | Event::ItemRequeued { .. }
                | Event::WorkerStarted { .. }
        )
    });
    if !relevant {
        return;
    }
    // Items and workers as the decision leaves them.
    let mut after = State { items: state.items.clone(), workers: state.workers.clone(), ..State::default() };
    for e in &d.events {
        apply(&mut after, e);
    }
    for w in after.workers.values().filter(|w| w.running) {
        let busy = after
            .items
            .values()
            .filter(|i| i.state == ItemState::Taken && i.worker.as_deref() == Some(&w.name))
            .count();
        let free = (w.concurrency as usize).saturating_sub(busy);
        let pending = after.items.values().filter(|i| i.state == ItemState::Pending && i.queue == w.queue).take(free);
        let taken: Vec<&Item> = pending.collect();
        for item in taken {
            // One job per try of an item: the same decision always gives the same id.
            let bits = item.id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(item.tries).rotate_left(32);
            let job = JobId::new(&Nonce::from_bits(bits));
            d.event(Event::ItemTaken { item: item.id, job: job.clone(), worker: w.name.clone() });
            d.effect(Effect::Dispatch {
                origin: Origin::Item(item.id),
                job,
                data: item.data.clone(),
                job_name: w.job.clone(),
                sources: w.sources.clone(),
                cwd: w.cwd.clone(),
            });
        }
    }
}
