//! Whose spend an agent's ledger is part of: its job, the plan that job runs in (through the jobs
//! it runs as a step of), the worker that took the job's queue item; and the ledgers of all the
//! agents of each.

use crate::budget::Budget;
use crate::usage::Usage;
use crate::{Agent, Job, JobId, State};

/// The most parents followed from a job to the plan or item it runs for (a loop cannot spin).
const DEPTH_MOST: usize = 32;

/// The job the agent runs a step of.
pub fn job_of(agent: &Agent) -> Option<&JobId> {
    agent.step.as_ref().map(|(job, _, _)| job)
}

/// The plan (its id) the job runs in, itself or as a step of a job that does.
pub fn plan_of<'a>(state: &'a State, job: &JobId) -> Option<&'a str> {
    plan_of_job(state, state.jobs.get(job)?)
}

/// The same, of a job maybe not yet in the state.
fn plan_of_job<'a>(state: &'a State, mut job: &'a Job) -> Option<&'a str> {
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
    worker_of_job(state, state.jobs.get(job)?)
}

/// The same, of a job maybe not yet in the state.
fn worker_of_job<'a>(state: &'a State, mut job: &'a Job) -> Option<&'a str> {
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

/// The ledgers of the agents the job's own steps ran.
pub fn of_job<'a>(state: &'a State, job: &'a JobId) -> impl Iterator<Item = &'a Usage> + 'a {
    state.agents.values().filter(move |a| job_of(a) == Some(job)).map(|a| &a.usage)
}

/// A budget over a job's agents: whose it is (`the job's`, `plan p…'s`, `worker w's`), the
/// budget, and what is left of it (none once spent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Over {
    pub whose: String,
    pub budget: Budget,
    pub left: Option<Budget>,
}

/// The budgets over the job's agents: its own, its plan's, its worker's, and the daily budgets
/// over its repository (what is left of them today).
pub fn budgets_over(state: &State, job: &Job, now: crate::Timestamp) -> Vec<Over> {
    let mut over = Vec::new();
    if let Some(budget) = job.spec.budget {
        over.push(Over { whose: "the job's".into(), budget, left: budget.left(of_job(state, &job.spec.id)) });
    }
    let plan = plan_of_job(state, job).and_then(|id| state.plans.get(id));
    if let Some((plan, budget)) = plan.and_then(|p| Some((p, p.budget?))) {
        let left = budget.left(of_plan(state, &plan.id));
        over.push(Over { whose: format!("plan {} ({})'s", plan.id, plan.name), budget, left });
    }
    let worker = worker_of_job(state, job).and_then(|w| state.workers.get(w));
    if let Some((worker, budget)) = worker.and_then(|w| Some((w, w.budget?))) {
        let left = budget.left(of_worker(state, &worker.name));
        over.push(Over { whose: format!("worker {}'s", worker.name), budget, left });
    }
    let ws = job.workspace.as_ref().and_then(|w| state.workspaces.get(w)).map(|w| &w.kind);
    let repo = ws.or(job.spec.workspace.as_ref().map(|w| &w.kind)).and_then(|k| k.repo());
    for daily in crate::daily::over(state, repo) {
        let left = crate::daily::left(state, &daily, now);
        over.push(Over { whose: daily.whose.trim_end_matches(" budget").to_owned(), budget: daily.budget, left });
    }
    over
}
