//! How job events fold into the state: each job's step, attempt and state.

use crate::{Event, JobState, State};

pub(super) fn apply(state: &mut State, event: &Event) {
    match event {
        Event::JobCreated { job } => {
            state.jobs.insert(job.spec.id.clone(), (**job).clone());
        }
        Event::StepEntered { job, step, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                *j.visits.entry(step.clone()).or_default() += 1;
                j.step = Some(step.clone());
                j.attempt = 1;
                j.state = JobState::Running;
                j.state_since = *at;
            }
        }
        Event::StepWaiting { job, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.state = JobState::Waiting;
                j.state_since = *at;
            }
        }
        Event::StepRetried { job, attempt, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.attempt = *attempt;
                j.state = JobState::Running;
                j.state_since = *at;
            }
        }
        Event::JobResumed { job, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.state = JobState::Running;
                j.state_since = *at;
                j.cancelled = false;
                j.visits.clear();
                j.resumes += 1;
                j.resumed_with = None;
            }
        }
        Event::StepResumed { job, step, attempt, agent, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.visits.insert(step.clone(), 1);
                j.step = Some(step.clone());
                j.attempt = *attempt;
                j.state = JobState::Running;
                j.state_since = *at;
                j.resumed_with = Some(agent.clone());
            }
            // Taken up again: whatever ended it before no longer speaks for it.
            if let Some(a) = state.agents.get_mut(agent) {
                a.kill_requested = false;
                a.recovery.clear();
                a.class_recovery.clear();
            }
        }
        Event::JobCancelling { job } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.cancelled = true;
            }
        }
        Event::JobFinished { job, state: s, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.state = s.clone();
                j.state_since = *at;
            }
        }
        _ => {}
    }
}
