//! Decisions about plans: the first job is asked for when the plan starts; each job that ends
//! done asks for the next, from the branch it worked on; a failure stops the plan, and a resume
//! runs the failed job again (or asks for it again when it was never made).

use super::{job, Decision};
use crate::{
    Effect, Event, Job, JobId, JobState, Nonce, Origin, Plan, PlanBranch, PlanState, Rejection, State, Timestamp,
};

pub(super) fn start(state: &State, plan: &Plan, d: &mut Decision) -> Result<(), Rejection> {
    if state.plans.contains_key(&plan.id) {
        return Err(Rejection::AlreadyExists(format!("plan {}", plan.id)));
    }
    d.event(Event::PlanStarted { plan: plan.clone() });
    dispatch(plan, 0, plan.base.clone(), d);
    Ok(())
}

/// Asks the daemon for the plan's job at `index`, on its branch from `source`.
fn dispatch(plan: &Plan, index: usize, source: String, d: &mut Decision) {
    let Some(j) = plan.jobs.get(index) else { return };
    let tries = d.events.len() as u64 + plan.jobs.iter().filter(|j| j.job_id.is_some()).count() as u64;
    let bits = job::fnv(&["plan", &plan.id, &index.to_string(), &tries.to_string(), &format!("{:?}", j.job_id)]);
    let job = JobId::new(&Nonce::from_bits(bits));
    let (branch, suffix) = j.wanted_branch();
    d.event(Event::PlanJobDispatched { plan: plan.id.clone(), index, job: job.clone(), source: source.clone() });
    d.effect(Effect::Dispatch {
        origin: Origin::Plan(plan.id.clone(), index),
        job,
        data: j.vars.clone(),
        take: None,
        branch: Some(PlanBranch { base: source, branch, suffix }),
        job_name: j.job.clone(),
        book: plan.book.clone(),
        cwd: plan.cwd.clone(),
    });
}

/// A plan's job ended: done moves the plan on from its branch; anything else stops it.
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
    let done = failure.is_none();
    d.event(Event::PlanJobEnded { plan: id.clone(), index: *index, target: target.clone(), failure });
    if done {
        if let Some(target) = target {
            dispatch(plan, index + 1, target, d);
        }
    }
}

/// After a restart: a running plan whose current job was never made (bosun died while making
/// it) stops there, to be resumed.
pub(super) fn unmade_after_restart(state: &State, d: &mut Decision) {
    for plan in state.plans.values().filter(|p| p.state == PlanState::Running) {
        let current = plan.jobs.iter().enumerate().rev().find(|(_, j)| j.job_id.is_some() && !j.done);
        if let Some((index, j)) = current {
            if j.job_id.as_ref().is_some_and(|id| !state.jobs.contains_key(id)) {
                let failure = Some("bosun stopped while its job was being made: resume the plan".to_owned());
                d.event(Event::PlanJobEnded { plan: plan.id.clone(), index, target: None, failure });
            }
        }
    }
}

/// The job for a plan's place could not be made: the plan stops there.
pub(super) fn dispatch_failed(state: &State, id: &str, index: usize, error: &str, d: &mut Decision) {
    if state.plans.get(id).is_some_and(|p| p.state == PlanState::Running) {
        let failure = Some(error.to_owned());
        d.event(Event::PlanJobEnded { plan: id.to_owned(), index, target: None, failure });
    }
}

pub(super) fn resume(state: &State, id: &str, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let plan = state.plans.get(id).ok_or_else(|| Rejection::NoSuchPlan(id.to_owned()))?;
    let PlanState::Failed { job: failed, .. } = &plan.state else {
        return Err(Rejection::PlanNotFailed(id.to_owned()));
    };
    let index = plan.jobs.iter().position(|j| &j.name == failed).unwrap_or(0);
    let j = &plan.jobs[index];
    let made = j.job_id.as_ref().filter(|job| state.jobs.contains_key(*job));
    d.event(Event::PlanResumed { plan: id.to_owned() });
    let source = j.source.clone().unwrap_or_else(|| plan.base.clone());
    match made.map(|job| job::resume(state, job, now, d)) {
        Some(Ok(())) => {}
        // Its worktree was never made or is gone: a new job, on a new worktree.
        Some(Err(Rejection::JobWorkspaceGone { .. })) | None => dispatch(plan, index, source, d),
        Some(Err(e)) => return Err(e),
    }
    Ok(())
}
