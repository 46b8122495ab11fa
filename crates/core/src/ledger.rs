//! Whose spend an agent's ledger is part of: its job, the plan that job runs in (through the jobs
//! it runs as a step of), the worker that took the job's queue item; and the ledgers of all the
//! agents of each.

use crate::usage::Usage;
use crate::{Agent, JobId, State};

/// The most parents followed from a job to the plan or item it runs for (a loop cannot spin).
const DEPTH_MOST: usize = 32;

/// The job the agent runs a step of.
pub fn job_of(agent: &Agent) -> Option<&JobId> {
    agent.step.as_ref().map(|(job, _, _)| job)
}

/// The plan (its id) the job runs in, itself or as a step of a job that does.
pub fn plan_of<'a>(state: &'a State, job: &JobId) -> Option<&'a str> {
    let mut job = state.jobs.get(job)?;
    for _ in 0..DEPTH_MOST {
        if let Some((plan, _)) = &job.spec.plan {
            return Some(plan);
        }
        job = state.jobs.get(&job.spec.parent.as_ref()?.0)?;
    }
    None
}

/// The worker that took the queue item the job works on, itself or as a step of a job that does.
pub fn worker_of<'a>(state: &'a State, job: &JobId) -> Option<&'a str> {
    let mut job = state.jobs.get(job)?;
    for _ in 0..DEPTH_MOST {
        if let Some((item, _)) = &job.spec.item {
            return state.items.get(item)?.worker.as_deref();
        }
        job = state.jobs.get(&job.spec.parent.as_ref()?.0)?;
    }
    None
}

/// The ledgers of the agents of the plan's jobs.
pub fn of_plan<'a>(state: &'a State, plan: &'a str) -> impl Iterator<Item = &'a Usage> + 'a {
    state.agents.values().filter(move |a| job_of(a).and_then(|j| plan_of(state, j)) == Some(plan)).map(|a| &a.usage)
}

/// The ledgers of the agents of the jobs the worker started.
pub fn of_worker<'a>(state: &'a State, worker: &'a str) -> impl Iterator<Item = &'a Usage> + 'a {
    state.agents.values().filter(move |a| job_of(a).and_then(|j| worker_of(state, j)) == Some(worker)).map(|a| &a.usage)
}
