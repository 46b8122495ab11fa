//! Decisions about crons: a started cron sets a timer for its next turn; at each turn it starts
//! its job unless the job it started last still runs, and sets the timer for the turn after.

use super::ground::{set_timer, Decision};
use crate::{Cron, Effect, Event, JobId, Nonce, Origin, Rejection, State, TimerKind, Timestamp};

/// How long a job asked for may take to be made before the cron stops waiting for it.
const MAKING_MS: u64 = 10 * 60 * 1000;

pub(super) fn start(state: &State, cron: &Cron, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let next = cron.schedule.next_after(now).ok_or_else(|| Rejection::CronNeverFires(cron.name.clone()))?;
    clear_timer(state, &cron.name, d);
    // A restarted cron keeps its history: what it started last still holds its next turn back.
    let before = state.crons.get(&cron.name);
    d.event(Event::CronStarted {
        cron: Cron {
            running: true,
            next: Some(next),
            fired: before.map_or(0, |c| c.fired),
            last_job: before.and_then(|c| c.last_job.clone()),
            last_started: before.and_then(|c| c.last_started),
            error: None,
            ..cron.clone()
        },
    });
    set_timer(state, d, TimerKind::Cron { name: cron.name.clone() }, next);
    Ok(())
}

pub(super) fn stop(state: &State, name: &str, d: &mut Decision) -> Result<(), Rejection> {
    match state.crons.get(name) {
        Some(c) if c.running => {
            clear_timer(state, name, d);
            d.event(Event::CronStopped { name: name.to_owned() });
            Ok(())
        }
        Some(_) => Err(Rejection::CronStopped(name.to_owned())),
        None => Err(Rejection::NoSuchCron(name.to_owned())),
    }
}

/// The cron's turn: its job starts unless its last one still runs. A turn missed while the
/// daemon was down is taken once, late, and the schedule goes on from now.
pub(super) fn fired(state: &State, name: &str, now: Timestamp, d: &mut Decision) {
    let Some(c) = state.crons.get(name).filter(|c| c.running) else { return };
    let due = c.next.unwrap_or(now);
    let next = c.schedule.next_after(due).filter(|n| *n > now).or_else(|| c.schedule.next_after(now));
    // Its last job runs, or is still being made (for a while: a job bosun died making is not
    // waited for).
    let making = c.error.is_none() && c.last_started.is_some_and(|t| now.millis_since(t) < MAKING_MS);
    let busy = match c.last_job.as_ref().map(|j| state.jobs.get(j)) {
        Some(Some(j)) => !j.state.is_over(),
        Some(None) => making,
        None => false,
    };
    let job = (!busy).then(|| JobId::new(&Nonce::from_bits(turn_bits(name, c.fired))));
    d.event(Event::CronFired { name: name.to_owned(), job: job.clone(), next, at: now });
    if let Some(job) = job {
        d.effect(Effect::Dispatch {
            origin: Origin::Cron(name.to_owned()),
            take: None,
            branch: None,
            job,
            data: Default::default(),
            job_name: c.job.clone(),
            book: c.book.clone(),
            cwd: c.cwd.clone(),
        });
    }
    if let Some(at) = next {
        set_timer(state, d, TimerKind::Cron { name: name.to_owned() }, at);
    }
}

fn clear_timer(state: &State, name: &str, d: &mut Decision) {
    for t in state.timers.values().filter(|t| matches!(&t.kind, TimerKind::Cron { name: n } if n == name)) {
        d.event(Event::TimerCleared { id: t.id });
    }
}

/// The same cron turn always gives the same job id.
fn turn_bits(name: &str, fired: u32) -> u64 {
    crate::id::fnv(&["cron", name, &fired.to_string()])
}
