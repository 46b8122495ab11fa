//! Decisions about jobs: entering steps (and failing a job whose step is entered too often),
//! following a step's outcome, trying a failed step again after its backoff, and cancelling.

use super::{set_timer, Decision};
use crate::{Effect, Event, Job, JobId, JobSpec, JobState, Next, Rejection, State, TimerKind, Timestamp};

pub(super) fn start(state: &State, spec: &JobSpec, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    if state.jobs.contains_key(&spec.id) {
        return Err(Rejection::AlreadyExists(format!("job {}", spec.id)));
    }
    let job = Job {
        spec: spec.clone(),
        state: JobState::Running,
        step: None,
        attempt: 0,
        visits: Default::default(),
        cancelled: false,
        created_at: now,
        state_since: now,
    };
    d.event(Event::JobCreated { job: Box::new(job.clone()) });
    match spec.steps.first() {
        Some(first) => enter(&job, &first.name, now, d),
        None => finish(&job, JobState::Done, now, d),
    }
    Ok(())
}

/// Enters `step` — unless it has been entered as often as the job allows, which fails the job.
fn enter(job: &Job, step: &str, now: Timestamp, d: &mut Decision) {
    let Some(spec) = job.spec.step(step) else {
        return finish(job, JobState::Failed { reason: format!("no step {step:?}") }, now, d);
    };
    let visits = job.visits.get(step).copied().unwrap_or(0);
    if visits >= job.spec.max_step_visits {
        let reason = format!("step {step:?} was entered {visits} times, the most this job allows (max_step_visits)");
        return finish(job, JobState::Failed { reason }, now, d);
    }
    d.event(Event::StepEntered { job: job.spec.id.clone(), step: step.to_owned(), at: now });
    d.effect(Effect::RunStep { job: job.spec.id.clone(), step: step.to_owned(), attempt: 1, run: spec.run.clone() });
}

fn finish(job: &Job, end: JobState, now: Timestamp, d: &mut Decision) {
    let end = if job.cancelled && !matches!(end, JobState::Failed { .. }) { JobState::Cancelled } else { end };
    d.event(Event::JobFinished { job: job.spec.id.clone(), state: end, at: now });
}

/// How a step's run ended.
pub(super) struct StepOutcome<'a> {
    pub step: &'a str,
    pub attempt: u32,
    pub ok: bool,
    pub detail: Option<&'a str>,
}

/// A step's run ended. A report about another step or try than the current one is stale.
pub(super) fn step_finished(state: &State, job: &JobId, outcome: StepOutcome<'_>, now: Timestamp, d: &mut Decision) {
    let StepOutcome { step, attempt, ok, detail } = outcome;
    let Some(j) = state.jobs.get(job).filter(|j| j.state == JobState::Running) else { return };
    if j.step.as_deref() != Some(step) || j.attempt != attempt {
        return;
    }
    let Some(spec) = j.spec.step(step) else { return };
    if ok {
        return follow(j, spec.on_done.as_ref(), None, now, d);
    }
    if attempt < spec.attempts.max(1) && !j.cancelled {
        if spec.backoff_ms > 0 {
            d.event(Event::StepWaiting { job: job.clone(), at: now });
            let at = Timestamp::from_millis(now.as_millis() + spec.backoff_ms);
            set_timer(state, d, TimerKind::Backoff { job: job.clone() }, at);
        } else {
            retry(j, now, d);
        }
        return;
    }
    let reason = detail.map_or_else(|| format!("step {step:?} failed"), |why| format!("step {step:?} failed: {why}"));
    follow(j, spec.on_fail.as_ref(), Some(reason), now, d);
}

/// Where the job goes after a step: the named step, or its end. A step with no `on_done` ends
/// the job done (or its job-level `on_done` step); with no `on_fail`, failed.
fn follow(j: &Job, next: Option<&Next>, failure: Option<String>, now: Timestamp, d: &mut Decision) {
    let next = match (next, &failure) {
        (Some(n), _) => n.clone(),
        (None, None) => j.spec.on_done.clone().unwrap_or(Next::Done),
        (None, Some(_)) => j.spec.on_fail.clone().unwrap_or(Next::Fail),
    };
    match next {
        Next::Step(s) => enter(j, &s, now, d),
        Next::Done => finish(j, JobState::Done, now, d),
        Next::Fail => finish(j, JobState::Failed { reason: failure.unwrap_or_else(|| "failed".into()) }, now, d),
    }
}

fn retry(j: &Job, now: Timestamp, d: &mut Decision) {
    let (Some(step), attempt) = (j.step.clone(), j.attempt + 1) else { return };
    let Some(spec) = j.spec.step(&step) else { return };
    d.event(Event::StepRetried { job: j.spec.id.clone(), attempt, at: now });
    d.effect(Effect::RunStep { job: j.spec.id.clone(), step, attempt, run: spec.run.clone() });
}

/// The backoff is over: the step's next try.
pub(super) fn backoff_over(state: &State, job: &JobId, now: Timestamp, d: &mut Decision) {
    if let Some(j) = state.jobs.get(job).filter(|j| j.state == JobState::Waiting) {
        retry(j, now, d);
    }
}

/// Cancels the job: its current step is stopped; its `on_cancel` step, if any, runs, after which
/// the job ends as cancelled.
pub(super) fn cancel(state: &State, job: &JobId, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let j = state.jobs.get(job).ok_or_else(|| Rejection::NoSuchJob(job.to_string()))?;
    if j.state.is_over() {
        return Err(Rejection::JobOver { id: job.clone(), state: j.state.label() });
    }
    if j.cancelled {
        return Ok(());
    }
    d.event(Event::JobCancelling { job: job.clone() });
    let cancelling = Job { cancelled: true, ..j.clone() };
    let step = j.step.as_deref().and_then(|s| j.spec.step(s));
    if let Some(s) = step {
        d.effect(Effect::CancelStep { job: job.clone(), step: s.name.clone() });
    }
    match step.and_then(|s| s.on_cancel.clone()) {
        Some(Next::Step(cleanup)) => enter(&cancelling, &cleanup, now, d),
        _ => finish(&cancelling, JobState::Cancelled, now, d),
    }
    Ok(())
}
