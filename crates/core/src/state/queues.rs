//! How queue, worker and cron events fold into the state: what starts jobs on its own.

use crate::{Event, ItemState, State};

pub(super) fn apply(state: &mut State, event: &Event) {
    match event {
        Event::ItemPushed { item } => {
            state.last_item = state.last_item.max(item.id.0);
            state.items.insert(item.id, item.clone());
        }
        Event::ItemTaken { item, job, worker } => {
            if let Some(i) = state.items.get_mut(item) {
                i.state = ItemState::Taken;
                i.tries += 1;
                i.job = Some(job.clone());
                i.worker = Some(worker.clone());
            }
        }
        Event::ItemFinished { item, ok, error } => {
            if let Some(i) = state.items.get_mut(item) {
                if *ok {
                    i.state = ItemState::Done;
                } else {
                    i.failures += 1;
                    i.state = if i.failures > i.retry { ItemState::Dead } else { ItemState::Pending };
                }
                i.error = error.clone();
            }
        }
        Event::ItemRequeued { item } => {
            if let Some(i) = state.items.get_mut(item) {
                i.state = ItemState::Pending;
                i.failures = 0;
                i.error = None;
            }
        }
        Event::ItemDropped { item } => {
            state.items.remove(item);
        }
        Event::WorkerStarted { worker } => {
            state.workers.insert(worker.name.clone(), worker.clone());
        }
        Event::WorkerStopped { name, reason } => {
            if let Some(w) = state.workers.get_mut(name) {
                w.running = false;
                if reason.is_some() {
                    w.error = reason.clone();
                }
            }
        }
        Event::WorkerListed { name, error } => {
            if let Some(w) = state.workers.get_mut(name) {
                w.error = error.clone();
            }
        }
        Event::CronStarted { cron } => {
            state.crons.insert(cron.name.clone(), cron.clone());
        }
        Event::CronStopped { name } => {
            if let Some(c) = state.crons.get_mut(name) {
                c.running = false;
                c.next = None;
            }
        }
        Event::CronFired { name, job, next, at } => {
            if let Some(c) = state.crons.get_mut(name) {
                c.fired += 1;
                c.next = *next;
                if job.is_some() {
                    c.last_job = job.clone();
                    c.last_started = Some(*at);
                    c.error = None;
                }
            }
        }
        Event::CronFailed { name, error } => {
            if let Some(c) = state.crons.get_mut(name) {
                c.error = Some(error.clone());
            }
        }
        _ => {}
    }
}
