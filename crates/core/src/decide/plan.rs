//! Decisions about plans: when a plan starts, and whenever one of its jobs ends, every job whose
//! `using` are all done is asked for, as many as its concurrency lets run at once, each on its
//! own branch from where `Plan::start_of` says. A job with variants is asked for that many times
//! at once; when all ended, its judge picks the winner (a gate or a command the daemon runs, or
//! a person told to pick), whose branch is the job's, and the losers go when the plan drops
//! them. A failure stops only what depends on it; a job that cannot be made (its merge
//! conflicts, say) fails and a person is told; a resume runs the failed jobs again.

use super::ground::{remove, Cx, Decision};
use super::job;
use crate::{
    Effect, Event, Job, JobId, JobState, Judge, Nonce, Notice, NoticeKind, Origin, Plan, PlanBranch, PlanJobState,
    PlanState, Rejection, State, Timestamp, VariantCandidate, WorkspaceState,
};

pub(super) fn start(state: &State, plan: &Plan, d: &mut Decision) -> Result<(), Rejection> {
    if state.plans.contains_key(&plan.id) {
        return Err(Rejection::AlreadyExists(format!("plan {}", plan.id)));
    }
    d.event(Event::PlanStarted { plan: plan.clone() });
    advance(state, plan.clone(), d);
    Ok(())
}

/// Asks for every job of `plan` (as it is once this decision's events are applied) that may
/// start now; a plan that ends here has its summary written. Once its budget is spent, a job
/// that may start fails instead, saying so, and the plan ends failed when nothing runs.
fn advance(state: &State, mut plan: Plan, d: &mut Decision) {
    while let Some(index) = plan.to_start().first().copied() {
        if let Some(why) = spent(state, &plan) {
            d.event(Event::PlanJobEnded { plan: plan.id.clone(), index, target: None, failure: Some(why.clone()) });
            plan.ended(index, None, Some(&why));
            continue;
        }
        ask(&mut plan, index, d);
    }
    if plan.state != PlanState::Running {
        d.effect(Effect::SummarizePlan { plan: plan.id.clone() });
    }
}

/// Why no job of the plan may start, when its budget is spent.
fn spent(state: &State, plan: &Plan) -> Option<String> {
    let budget = plan.budget?;
    let ledgers: Vec<&crate::usage::Usage> = crate::ledger::of_plan(state, &plan.id).collect();
    if budget.left(ledgers.iter().copied()).is_some() {
        return None;
    }
    let used = ledgers.iter().fold(0u64, |sum, u| sum.saturating_add(budget.spent(u).used));
    Some(format!("not started: the plan's budget of {budget} is spent ({} used)", budget.of_amount(used)))
}

/// Asks for the plan's job at `index`: once, or once per variant.
fn ask(plan: &mut Plan, index: usize, d: &mut Decision) {
    let (source, merged) = plan.start_of(index);
    let j = &plan.jobs[index];
    let variants: Vec<Option<u32>> = if j.has_variants() { (1..=j.variants).map(Some).collect() } else { vec![None] };
    for variant in variants {
        let job = dispatch(plan, index, variant, d);
        plan.dispatched(index, variant, &job, &source, &merged);
    }
}

/// Asks the daemon for the plan's job at `index` (its variant `variant`), on its branch.
fn dispatch(plan: &Plan, index: usize, variant: Option<u32>, d: &mut Decision) -> JobId {
    let j = &plan.jobs[index];
    let (source, merged) = plan.start_of(index);
    let tries = d.events.len() as u64 + plan.jobs.iter().filter(|j| j.job_id.is_some()).count() as u64;
    let bits = crate::id::fnv(&[
        "plan",
        &plan.id,
        &index.to_string(),
        &tries.to_string(),
        &format!("{:?}", j.job_id),
        &format!("{variant:?}"),
    ]);
    let job = JobId::new(&Nonce::from_bits(bits));
    let ((branch, suffix), origin) = match variant {
        Some(n) => (j.variant_branch(n), Origin::PlanVariant(plan.id.clone(), index, n)),
        None => (j.wanted_branch(), Origin::Plan(plan.id.clone(), index)),
    };
    d.event(Event::PlanJobDispatched {
        plan: plan.id.clone(),
        index,
        job: job.clone(),
        source: source.clone(),
        merged: merged.clone(),
        variant,
    });
    d.effect(Effect::Dispatch {
        origin,
        job: job.clone(),
        data: j.vars.clone(),
        take: None,
        branch: Some(PlanBranch { base: source, branch, suffix, merge: merged }),
        job_name: j.job.clone(),
        book: plan.job_book(index).into_owned(),
        cwd: plan.cwd.clone(),
    });
    job
}

/// A plan's job ended (`JobFinished`): done lets what uses it start; anything else stops only
/// that. A variant's end is weighed with its siblings' once all ended.
pub(super) fn job_finished(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::JobFinished { job, state: end, .. } = e else { return };
    // The job may have been made in this very decision.
    let Some(job) = d.job(cx.state, job).filter(|j| j.spec.plan.is_some()).cloned() else { return };
    job_ended(cx.state, &job, end, cx.now, d);
}

fn job_ended(state: &State, job: &Job, end: &JobState, now: Timestamp, d: &mut Decision) {
    let Some((id, index)) = &job.spec.plan else { return };
    let Some(plan) = state.plans.get(id).filter(|p| p.state == PlanState::Running) else { return };
    let target =
        job.workspace.as_ref().and_then(|w| state.workspaces.get(w)).and_then(|w| w.branch()).map(str::to_owned);
    let failure = match end {
        JobState::Done => None,
        JobState::Failed { reason } => Some(reason.clone()),
        other => Some(format!("its job ended {}", other.label())),
    };
    match plan.variant_of(*index, &job.spec.id) {
        Some(n) => variant_ended(Cx { state, now }, plan, *index, n, target, failure, d),
        None => ended(state, plan, *index, target, failure, d),
    }
}

/// Records the end of the plan's job at `index` and starts what may start after it.
fn ended(state: &State, plan: &Plan, index: usize, target: Option<String>, failure: Option<String>, d: &mut Decision) {
    d.event(Event::PlanJobEnded { plan: plan.id.clone(), index, target: target.clone(), failure: failure.clone() });
    let mut plan = plan.clone();
    plan.ended(index, target.as_deref(), failure.as_deref());
    advance(state, plan, d);
}

/// Records the end of variant `n` of the plan's job at `index`; the last to end has the
/// variants judged.
fn variant_ended(
    cx: Cx,
    plan: &Plan,
    index: usize,
    n: u32,
    target: Option<String>,
    failure: Option<String>,
    d: &mut Decision,
) {
    d.event(Event::PlanVariantEnded {
        plan: plan.id.clone(),
        index,
        variant: n,
        target: target.clone(),
        failure: failure.clone(),
    });
    let mut after = plan.clone();
    after.variant_ended(index, n, target.as_deref(), failure.as_deref());
    if after.job_state(index) == PlanJobState::Judging {
        judge(cx.state, &after, index, cx.now, d);
    }
}

/// All the variants of the plan's job at `index` ended: none done fails it; else its judge is
/// run (or a person is asked).
fn judge(state: &State, plan: &Plan, index: usize, now: Timestamp, d: &mut Decision) {
    let j = &plan.jobs[index];
    let candidates: Vec<VariantCandidate> = j
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.done)
        .filter_map(|(at, r)| {
            let job = state.jobs.get(r.job_id.as_ref()?)?;
            let ws = state.workspaces.get(job.workspace.as_ref()?)?;
            Some(VariantCandidate { variant: at as u32 + 1, branch: r.target.clone()?, path: ws.path.clone() })
        })
        .collect();
    if candidates.is_empty() {
        let why: Vec<String> = j
            .runs
            .iter()
            .enumerate()
            .map(|(at, r)| format!("v{}: {}", at + 1, r.failure.as_deref().unwrap_or("no branch")))
            .collect();
        return ended(
            state,
            plan,
            index,
            None,
            Some(format!("none of its {} variants is done ({})", j.variants, why.join("; "))),
            d,
        );
    }
    match j.judge.clone().unwrap_or(Judge::Person) {
        Judge::Person => {
            let listed: Vec<String> = candidates.iter().map(|c| format!("v{} on {}", c.variant, c.branch)).collect();
            let notice = Notice {
                kind: NoticeKind::Escalation,
                title: format!("bosun: plan {} ({}) job {}: pick a variant", plan.name, plan.id, j.name),
                body: format!("{}; pick one with `bosun plan pick {} {} N`", listed.join(", "), plan.id, j.name),
                agent: None,
                job: None,
                escalation: None,
                at: now,
            };
            d.effect(Effect::Notify { notice, desktop: true, webhook: None });
        }
        judge => d.effect(Effect::JudgeVariants {
            plan: plan.id.clone(),
            index,
            judge,
            repo: plan.cwd.clone(),
            source: j.source.clone().unwrap_or_else(|| plan.base.clone()),
            candidates,
        }),
    }
}

/// The judge of the variants of the plan's job at `index` spoke: its winner's branch is the
/// job's; none, and the job fails.
pub(super) fn judged(state: &State, id: &str, index: usize, winner: Option<u32>, detail: &str, d: &mut Decision) {
    let Some(plan) = state.plans.get(id).filter(|p| p.job_state(index) == PlanJobState::Judging) else { return };
    match winner {
        Some(n) => choose(state, plan, index, n, detail, d),
        None => ended(state, plan, index, None, Some(format!("no variant was picked: {detail}")), d),
    }
}

/// A person picks variant `variant` of the plan job named `job`.
pub(super) fn pick(state: &State, id: &str, job: &str, variant: u32, d: &mut Decision) -> Result<(), Rejection> {
    let plan = state.plans.get(id).ok_or_else(|| Rejection::NoSuchPlan(id.to_owned()))?;
    let bad = |why: String| Err(Rejection::CannotPick(why));
    let Some(index) = plan.jobs.iter().position(|j| j.name == job) else {
        return bad(format!("plan {id} has no job {job:?}"));
    };
    if plan.job_state(index) != PlanJobState::Judging {
        return bad(format!(
            "job {job:?} of plan {id} is {}: only a job whose variants all ended is picked for",
            plan.job_state(index).label()
        ));
    }
    let done = plan.jobs[index].runs.get(variant.saturating_sub(1) as usize).is_some_and(|r| r.done);
    if !done {
        return bad(format!("job {job:?} has no done variant v{variant}: see `bosun plan show {id}`"));
    }
    choose(state, plan, index, variant, "picked by a person", d);
    Ok(())
}

/// Keeps variant `n` of the plan's job at `index`: the job is done on its branch; the others go
/// when the plan drops losers (a workspace with work not committed stays).
fn choose(state: &State, plan: &Plan, index: usize, n: u32, by: &str, d: &mut Decision) {
    let j = &plan.jobs[index];
    let Some(target) = j.runs.get(n.saturating_sub(1) as usize).and_then(|r| r.target.clone()) else { return };
    d.event(Event::PlanVariantChosen { plan: plan.id.clone(), index, variant: n, by: by.to_owned() });
    if plan.drop_losers {
        for (_, run) in j.runs.iter().enumerate().filter(|(at, _)| *at as u32 + 1 != n) {
            let ws = run.job_id.as_ref().and_then(|job| state.jobs.get(job)?.workspace.clone());
            let Some(ws) = ws.and_then(|w| state.workspaces.get(&w)) else { continue };
            // A loser's run is over, so its agent is done with it, even while its session is
            // still being ended, and even when a look that raced its last step found it dirty.
            // The removal is never forced: git refuses to remove a worktree that holds work
            // not committed, and then it stays.
            let idle = match &ws.state {
                WorkspaceState::Ready | WorkspaceState::Dirty => true,
                WorkspaceState::InUse { agent } => {
                    state.agents.get(agent).is_none_or(|a| a.state.is_dead() || a.kill_requested)
                }
                _ => false,
            };
            if !idle {
                continue;
            }
            d.event(Event::WorkspaceRemoving { id: ws.id.clone(), force: false, keep_branch: None });
            d.effect(remove(state, ws, false, true));
        }
    }
    ended(state, plan, index, Some(target), None, d);
}

/// After a restart: a running plan's job (or variant) that was never made (bosun died while
/// making it) fails, to be resumed; a judge that was running is run again.
pub(super) fn unmade_after_restart(state: &State, now: Timestamp, d: &mut Decision) {
    for plan in state.plans.values().filter(|p| p.state == PlanState::Running) {
        let mut plan = plan.clone();
        for index in 0..plan.jobs.len() {
            let failure = Some("bosun stopped while its job was being made: resume the plan".to_owned());
            if plan.jobs[index].has_variants() {
                let unmade: Vec<u32> = plan.jobs[index]
                    .runs
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !r.done && r.failure.is_none())
                    .filter(|(_, r)| r.job_id.as_ref().is_some_and(|id| !state.jobs.contains_key(id)))
                    .map(|(at, _)| at as u32 + 1)
                    .collect();
                for n in unmade {
                    d.event(Event::PlanVariantEnded {
                        plan: plan.id.clone(),
                        index,
                        variant: n,
                        target: None,
                        failure: failure.clone(),
                    });
                    plan.variant_ended(index, n, None, failure.as_deref());
                }
                if plan.job_state(index) == PlanJobState::Judging && plan.jobs[index].judge != Some(Judge::Person) {
                    judge(state, &plan, index, now, d);
                }
                continue;
            }
            let j = &plan.jobs[index];
            let unmade = j.job_id.as_ref().is_some_and(|id| !state.jobs.contains_key(id));
            if unmade && plan.job_state(index) == PlanJobState::Running {
                d.event(Event::PlanJobEnded { plan: plan.id.clone(), index, target: None, failure: failure.clone() });
                plan.ended(index, None, failure.as_deref());
            }
        }
        if plan.state != PlanState::Running {
            d.effect(Effect::SummarizePlan { plan: plan.id.clone() });
        }
    }
}

/// The job for a plan's place (or a variant of it) could not be made: it fails there, and a
/// person is told why (a merge that conflicts lists its files).
pub(super) fn dispatch_failed(
    state: &State,
    id: &str,
    index: usize,
    variant: Option<u32>,
    error: &str,
    now: Timestamp,
    d: &mut Decision,
) {
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
    match variant {
        Some(n) => variant_ended(Cx { state, now }, plan, index, n, None, Some(error.to_owned()), d),
        None => ended(state, plan, index, None, Some(error.to_owned()), d),
    }
}

pub(super) fn resume(state: &State, id: &str, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let plan = state.plans.get(id).ok_or_else(|| Rejection::NoSuchPlan(id.to_owned()))?;
    if !matches!(plan.state, PlanState::Failed { .. }) {
        return Err(Rejection::PlanNotFailed(id.to_owned()));
    }
    if let Some(why) = spent(state, plan) {
        let why = why.trim_start_matches("not started: ").to_owned();
        return Err(Rejection::PlanBudgetSpent { plan: id.to_owned(), why });
    }
    let failed = plan.failed();
    d.event(Event::PlanResumed { plan: id.to_owned() });
    let mut after = plan.clone();
    after.resumed();
    for index in failed {
        // A job run as variants runs them all again.
        if after.jobs[index].has_variants() {
            ask(&mut after, index, d);
            continue;
        }
        let made = plan.jobs[index].job_id.as_ref().filter(|job| state.jobs.contains_key(*job));
        match made.map(|job| job::resume(state, job, now, d)) {
            Some(Ok(())) => {}
            // Its worktree was never made or is gone: a new job, on a new worktree.
            Some(Err(Rejection::JobWorkspaceGone { .. })) | None => ask(&mut after, index, d),
            Some(Err(e)) => return Err(e),
        }
    }
    // Jobs that waited on none of the failed ones, and places freed, start too.
    advance(state, after, d);
    Ok(())
}
