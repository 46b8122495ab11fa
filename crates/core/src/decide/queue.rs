//! Decisions about queues and workers: items pushed, taken by running workers up to their
//! concurrency, each into a job; a failed job puts its item back until its retries run out.

use std::collections::{BTreeMap, BTreeSet};

use super::ground::{set_timer, Decision};
use crate::template::{render_shell, Scope};
use crate::{
    apply, Effect, Event, External, Item, ItemId, ItemState, JobId, Nonce, Origin, Rejection, State, TimerKind,
    Timestamp, Worker,
};

pub(super) fn push(
    state: &State,
    queue: &str,
    data: &BTreeMap<String, String>,
    retry: u32,
    now: Timestamp,
    d: &mut Decision,
) {
    push_keyed(state, queue, data, retry, None, now, d);
}

fn push_keyed(
    state: &State,
    queue: &str,
    data: &BTreeMap<String, String>,
    retry: u32,
    key: Option<String>,
    now: Timestamp,
    d: &mut Decision,
) {
    let id = d.next_item(state);
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
        key,
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

pub(super) fn start_worker(state: &State, worker: &Worker, now: Timestamp, d: &mut Decision) {
    clear_poll(state, &worker.name, d);
    d.event(Event::WorkerStarted { worker: Worker { running: true, error: None, ..worker.clone() } });
    if let Some(ext) = &worker.external {
        list(state, worker, ext, now, d);
    }
}

/// Lists the worker's external queue, with a poll set should the answer never come (a crash).
fn list(state: &State, worker: &Worker, ext: &External, now: Timestamp, d: &mut Decision) {
    d.effect(Effect::ListQueue { worker: worker.name.clone(), list: ext.list.clone(), cwd: worker.cwd.clone() });
    let at = Timestamp::from_millis(now.as_millis() + ext.poll_ms);
    set_timer(state, d, TimerKind::Poll { worker: worker.name.clone() }, at);
}

fn clear_poll(state: &State, worker: &str, d: &mut Decision) {
    for t in state.timers.values().filter(|t| matches!(&t.kind, TimerKind::Poll { worker: w } if w == worker)) {
        d.event(Event::TimerCleared { id: t.id });
    }
}

/// A worker's poll is due: its external queue is listed again.
pub(super) fn poll(state: &State, worker: &str, now: Timestamp, d: &mut Decision) {
    let Some(w) = state.workers.get(worker).filter(|w| w.running) else { return };
    if let Some(ext) = &w.external {
        list(state, w, ext, now, d);
    }
}

/// An external queue was listed: items not seen before are pushed (and taken by the dispatch
/// that follows the decision); the next poll is set.
pub(super) fn listed(state: &State, worker: &str, output: &Result<String, String>, now: Timestamp, d: &mut Decision) {
    let Some(w) = state.workers.get(worker).filter(|w| w.running) else { return };
    let Some(ext) = &w.external else { return };
    let items = output.as_ref().map_err(Clone::clone).and_then(|out| crate::parse_listed(out));
    let error = match items {
        Ok(items) => {
            let seen: BTreeSet<&str> =
                state.items.values().filter(|i| i.queue == w.queue).filter_map(|i| i.key.as_deref()).collect();
            let mut new: BTreeSet<String> = BTreeSet::new();
            for (key, data) in items {
                if !seen.contains(key.as_str()) && new.insert(key.clone()) {
                    push_keyed(state, &w.queue, &data, ext.retry, Some(key), now, d);
                }
            }
            None
        }
        Err(e) => Some(format!("`{}`: {e}", ext.list)),
    };
    if error.is_some() || w.error.is_some() {
        d.event(Event::WorkerListed { name: worker.to_owned(), error });
    }
    clear_poll(state, worker, d);
    set_timer(
        state,
        d,
        TimerKind::Poll { worker: worker.to_owned() },
        Timestamp::from_millis(now.as_millis() + ext.poll_ms),
    );
}

pub(super) fn stop_worker(state: &State, name: &str, d: &mut Decision) -> Result<(), Rejection> {
    match state.workers.get(name) {
        Some(w) if w.running => {
            clear_poll(state, name, d);
            d.event(Event::WorkerStopped { name: name.to_owned(), reason: None });
            Ok(())
        }
        Some(_) => Err(Rejection::WorkerStopped(name.to_owned())),
        None => Err(Rejection::NoSuchWorker(name.to_owned())),
    }
}

/// After a restart: an item taken whose job was never made (bosun died while making it) counts
/// a failure, and so goes back to its queue or is dead-lettered.
pub(super) fn unmade_after_restart(state: &State, d: &mut Decision) {
    for i in state.items.values().filter(|i| i.state == ItemState::Taken) {
        if i.job.as_ref().is_none_or(|j| !state.jobs.contains_key(j)) {
            let error = Some("bosun stopped while its job was being made".to_owned());
            d.event(Event::ItemFinished { item: i.id, ok: false, error });
        }
    }
}

/// A job for an item could not be made: the item counts a failure.
pub(super) fn dispatch_failed(state: &State, item: ItemId, error: &str, d: &mut Decision) {
    if state.items.get(&item).is_some_and(|i| i.state == ItemState::Taken) {
        d.event(Event::ItemFinished { item, ok: false, error: Some(error.to_owned()) });
    }
}

/// Why the worker may take no new item, when its budget is spent.
fn spent(state: &State, w: &Worker) -> Option<String> {
    let budget = w.budget?;
    let ledgers: Vec<&crate::usage::Usage> = crate::ledger::of_worker(state, &w.name).collect();
    if budget.left(ledgers.iter().copied()).is_some() {
        return None;
    }
    let used = ledgers.iter().fold(0u64, |sum, u| sum.saturating_add(budget.spent(u).used));
    Some(format!("its budget of {budget} is spent ({} used): it takes no new item", budget.of_amount(used)))
}

/// The worker stops at its budget: its queue's pending items stay there, for another worker of
/// the queue or for this one once started again with more; a person is told.
fn stopped_at_budget(state: &State, w: &Worker, why: String, now: Timestamp, d: &mut Decision) {
    clear_poll(state, &w.name, d);
    let waiting = state.items.values().filter(|i| i.state == ItemState::Pending && i.queue == w.queue).count();
    let notice = crate::Notice {
        kind: crate::NoticeKind::Budget,
        title: format!("bosun: worker {} stopped", w.name),
        body: format!("{why}; {waiting} item(s) wait in queue {}", w.queue),
        agent: None,
        job: None,
        escalation: None,
        at: now,
    };
    d.effect(Effect::Notify { notice, desktop: true, webhook: None });
    d.event(Event::WorkerStopped { name: w.name.clone(), reason: Some(why) });
}

/// After a decision: every running worker takes pending items of its queue, oldest first, until
/// it has `concurrency` of them in jobs.
pub(super) fn dispatch(state: &State, now: Timestamp, d: &mut Decision) {
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
    // An item one worker takes here is not pending for the next one.
    let mut claimed: BTreeSet<ItemId> = BTreeSet::new();
    for w in after.workers.values().filter(|w| w.running) {
        if let Some(why) = spent(state, w) {
            stopped_at_budget(state, w, why, now, d);
            continue;
        }
        let busy = after
            .items
            .values()
            .filter(|i| i.state == ItemState::Taken && i.worker.as_deref() == Some(&w.name))
            .count();
        let free = (w.concurrency as usize).saturating_sub(busy);
        let pending = after
            .items
            .values()
            .filter(|i| i.state == ItemState::Pending && i.queue == w.queue && !claimed.contains(&i.id))
            .take(free);
        let taken: Vec<&Item> = pending.collect();
        claimed.extend(taken.iter().map(|i| i.id));
        for item in taken {
            // One job per try of an item: the same decision always gives the same id.
            let bits = item.id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(item.tries).rotate_left(32);
            let job = JobId::new(&Nonce::from_bits(bits));
            d.event(Event::ItemTaken { item: item.id, job: job.clone(), worker: w.name.clone() });
            let take = w.external.as_ref().and_then(|e| e.take.as_deref()).map(|t| {
                let mut scope = Scope::new();
                for (k, v) in &item.data {
                    scope.set("item", k, v.as_str());
                }
                render_shell(t, &scope)
            });
            let take = match take.transpose() {
                Ok(take) => take,
                Err(e) => {
                    let error = Some(format!("its take command: {e}"));
                    d.event(Event::ItemFinished { item: item.id, ok: false, error });
                    continue;
                }
            };
            d.effect(Effect::Dispatch {
                origin: Origin::Item(item.id),
                take,
                branch: None,
                job,
                data: item.data.clone(),
                job_name: w.job.clone(),
                book: w.book.clone(),
                cwd: w.cwd.clone(),
            });
        }
    }
}
