//! Decisions about plans: when a plan starts, and whenever one of its jobs ends, every job whose
//! `using` are all done is asked for, as many as its concurrency lets run at once, each on its
//! own branch from where `Plan::start_of` says. A failure stops only what depends on it; a job
//! that cannot be made (its merge conflicts, say) fails and a person is told; a resume runs the
//! failed jobs again (or asks for them again when they were never made).

use super::{job, Decision};
use crate::{
    Effect, Event, Job, JobId, JobState, Nonce, Notice, NoticeKind, Origin, Plan, PlanBranch, PlanState, Rejection,
    State, Timestamp,
};

pub(super) fn start(state: &State, plan: &Plan, d: &mut Decision) -> Result<(), Rejection> {
    if state.plans.contains_key(&plan.id) {
        return Err(Rejection::AlreadyExists(format!("plan {}", plan.id)));
    }
    d.event(Event::PlanStarted { plan: plan.clone() });
    advance(plan.clone(), d);
    Ok(())
}

/// Asks for every job of `plan` (as it is once this decision's events are applied) that may
/// start now; a plan that ends here has its summary written.
fn advance(mut plan: Plan, d: &mut Decision) {
    while let Some(index) = plan.to_start().first().copied() {
        let job = dispatch(&plan, index, d);
        let (source, merged) = plan.start_of(index);
        plan.dispatched(index, &job, &source, &merged);
    }
    if plan.state != PlanState::Running {
        d.effect(Effect::SummarizePlan { plan: plan.id.clone() });
    }
}

/// Asks the daemon for the plan's job at `index`, on its branch from where it starts.
fn dispatch(plan: &Plan, index: usize, d: &mut Decision) -> JobId {
    let j = &plan.jobs[index];
    let (source, merged) = plan.start_of(index);
    let tries = d.events.len() as u64 + plan.jobs.iter().filter(|j| j.job_id.is_some()).count() as u64;
    let bits = job::fnv(&["plan", &plan.id, &index.to_string(), &tries.to_string(), &format!("{:?}", j.job_id)]);
    let job = JobId::new(&Nonce::from_bits(bits));
    let (branch, suffix) = j.wanted_branch();
    d.event(Event::PlanJobDispatched {
        plan: plan.id.clone(),
        index,
        job: job.clone(),
        source: source.clone(),
        merged: merged.clone(),
    });
    d.effect(Effect::Dispatch {
        origin: Origin::Plan(plan.id.clone(), index),
        job: job.clone(),
        data: j.vars.clone(),
        take: None,
        branch: Some(PlanBranch { base: source, branch, suffix, merge: merged }),
        job_name: j.job.clone(),
        book: match &j.engine {
            Some(engine) => plan.book.with_engine(engine),
            None => plan.book.clone(),
        },
        cwd: plan.cwd.clone(),
    });
    job
}

/// A plan's job ended: done lets what uses it start; anything else stops only that.
pub(super) fn job_ended(state: &State, job: &Job, end: &JobState, d: &mut Decision) {
    let Some((id, index)) = &job.spec.plan else { return };
    let Some(plan) = state.plans.get(id).filter(|p| p.state == PlanState::Running) else { return };
    let target =
        job.workspace.as_ref().and_then(|w| state.workspaces.get(w)).and_then(|w| w.branch()).map(str::to_owned);
    let failure = match end {
        JobState::Done => None,
        JobState::Failed { reason } => Some(reason.clone()),
        other => Some(format!("its job ended {}", other.label())),
    };
    ended(plan, *index, target, failure, d);
}

/// Records the end of the plan's job at `index` and starts what may start after it.
fn ended(plan: &Plan, index: usize, target: Option<String>, failure: Option<String>, d: &mut Decision) {
    d.event(Event::PlanJobEnded { plan: plan.id.clone(), index, target: target.clone(), failure: failure.clone() });
    let mut plan = plan.clone();
    plan.ended(index, target.as_deref(), failure.as_deref());
    advance(plan, d);
}

/// After a restart: a running plan's job that was never made (bosun died while making it)
/// fails, to be resumed.
pub(super) fn unmade_after_restart(state: &State, d: &mut Decision) {
    for plan in state.plans.values().filter(|p| p.state == PlanState::Running) {
        let mut plan = plan.clone();
        for index in 0..plan.jobs.len() {
            let j = &plan.jobs[index];
            let unmade = j.job_id.as_ref().is_some_and(|id| !state.jobs.contains_key(id));
            if unmade && plan.job_state(index) == crate::PlanJobState::Running {
                let failure = Some("bosun stopped while its job was being made: resume the plan".to_owned());
                d.event(Event::PlanJobEnded { plan: plan.id.clone(), index, target: None, failure: failure.clone() });
                plan.ended(index, None, failure.as_deref());
            }
        }
        if plan.state != PlanState::Running {
            d.effect(Effect::SummarizePlan { plan: plan.id.clone() });
        }
    }
}

/// The job for a plan's place could not be made: it fails there, and a person is told why (a
/// merge that conflicts lists its files).
pub(super) fn dispatch_failed(state: &State, id: &str, index: usize, error: &str, now: Timestamp, d: &mut Decision) {
    let Some(plan) = state.plans.get(id).filter(|p| p.state == PlanState::Running) else { return };
    let name = plan.jobs.get(index).map_or("?", |j| j.name.as_str());
    let notice = Notice {
        kind: NoticeKind::JobFailed,
        title: format!("bosun: plan {} ({}) cannot start job {name}", plan.name, plan.id),
        body: error.to_owned(),
        agent: None,
        job: None,
        escalation: None,
        at: now,
    };
    d.effect(Effect::Notify { notice, desktop: true, webhook: None });
    ended(plan, index, None, Some(error.to_owned()), d);
}

pub(super) fn resume(state: &State, id: &str, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let plan = state.plans.get(id).ok_or_else(|| Rejection::NoSuchPlan(id.to_owned()))?;
    if !matches!(plan.state, PlanState::Failed { .. }) {
        return Err(Rejection::PlanNotFailed(id.to_owned()));
    }
    let failed = plan.failed();
    d.event(Event::PlanResumed { plan: id.to_owned() });
    let mut after = plan.clone();
    after.resumed();
    for index in failed {
        let made = plan.jobs[index].job_id.as_ref().filter(|job| state.jobs.contains_key(*job));
        match made.map(|job| job::resume(state, job, now, d)) {
            Some(Ok(())) => {}
            // Its worktree was never made or is gone: a new job, on a new worktree.
            Some(Err(Rejection::JobWorkspaceGone { .. })) | None => {
                let job = dispatch(&after, index, d);
                let (source, merged) = after.start_of(index);
                after.dispatched(index, &job, &source, &merged);
            }
            Some(Err(e)) => return Err(e),
        }
    }
    // Jobs that waited on none of the failed ones, and places freed, start too.
    advance(after, d);
    Ok(())
}
