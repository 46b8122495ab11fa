//! `decide`: given what bosun knows and what just happened, the facts to record and the effects
//! to carry out. Pure and total: the same state, input and time always give the same decision.
//! An input about a record that is gone, or a fact already recorded, decides nothing.
//!
//! Each input goes to the domain it is about; a domain calls only the domains below it (agents:
//! dialog → observe → classify → recovery → escalation → session; work: plan → job → pool →
//! workspace → session, and merge → pool; all of them on `ground`). What follows in a higher domain from a fact a
//! lower one records reacts to that event (`react`), until nothing more follows.

mod budget;
mod classify;
mod cron;
mod dialog;
mod escalation;
mod grace;
mod ground;
mod job;
mod merge;
mod observe;
mod plan;
mod pod;
mod pool;
mod queue;
mod react;
mod reconcile;
mod recovery;
mod report;
mod session;
mod start;
mod step;
mod switch;
mod timers;
mod window;
mod workspace;

pub use budget::INTERRUPT_AGAIN_MS;
pub use dialog::PRESSES_MAX as DIALOG_PRESSES_MAX;

pub use ground::Decision;

use crate::{Event, Input, Origin, Rejection, State, Timestamp};
use ground::Cx;

pub fn decide(state: &State, input: &Input, now: Timestamp) -> Result<Decision, Rejection> {
    let mut d = Decision::new(state);
    match input {
        Input::Requested { id, input } => {
            let mut d = decide(state, input, now)?;
            if !d.events.is_empty() {
                let events = u32::try_from(d.events.len()).unwrap_or(u32::MAX);
                d.event(Event::RequestDone { id: *id, events });
            }
            return Ok(d);
        }
        Input::StartJob(_)
        | Input::StepFinished { .. }
        | Input::PrStepDone { .. }
        | Input::CancelJob { .. }
        | Input::ResumeJob { .. }
        | Input::QueuePush { .. }
        | Input::QueueRetry { .. }
        | Input::QueueDrop { .. }
        | Input::StartWorker(_)
        | Input::Listed { .. }
        | Input::StopWorker { .. }
        | Input::StartCron(_)
        | Input::StopCron { .. }
        | Input::StartPlan(_)
        | Input::ResumePlan { .. }
        | Input::DispatchFailed { .. }
        | Input::PullRequestOpened { .. }
        | Input::WorkMerged { .. }
        | Input::VariantsJudged { .. }
        | Input::PickVariant { .. } => work(state, input, now, &mut d)?,
        Input::RemoveWorkspace { .. }
        | Input::WorkspaceCreated { .. }
        | Input::WorkspaceCreateFailed { .. }
        | Input::WorkspaceInspected { .. }
        | Input::WorkspaceRemoved { .. }
        | Input::WorkspaceRemoveFailed { .. }
        | Input::PoolInit(_)
        | Input::PoolResize { .. }
        | Input::PoolAcquire { .. }
        | Input::PoolRelease { .. }
        | Input::PoolRemove { .. }
        | Input::SlotCreated { .. }
        | Input::SlotCreateFailed { .. }
        | Input::SlotReset { .. }
        | Input::SlotResetFailed { .. }
        | Input::SlotRemoved { .. }
        | Input::SlotRemoveFailed { .. } => workspaces(state, input, now, &mut d)?,
        Input::StartAgent(_)
        | Input::ForkAgent { .. }
        | Input::KillAgent { .. }
        | Input::Answer { .. }
        | Input::SendText { .. }
        | Input::Resolve { .. }
        | Input::RaiseBudget { .. }
        | Input::SessionSpawned { .. }
        | Input::SessionSpawnFailed { .. }
        | Input::SessionExited { .. }
        | Input::PodEnded { .. }
        | Input::SessionClosed { .. }
        | Input::SessionKilled { .. }
        | Input::SessionKillFailed { .. }
        | Input::TextDelivered { .. }
        | Input::TextFailed { .. } => sessions(state, input, now, &mut d)?,
        Input::Observed { .. }
        | Input::Report { .. }
        | Input::Said { .. }
        | Input::Classified { .. }
        | Input::FileWritten { .. }
        | Input::LogLines { .. }
        | Input::UsageLines { .. }
        | Input::Screen { .. }
        | Input::GateFinished { .. } => observations(state, input, now, &mut d),
        Input::TimerFired { id } => timers::fired(state, *id, now, &mut d),
        Input::WebhookSent { notice, attempts, error } => {
            d.event(Event::WebhookSent { notice: *notice, attempts: *attempts, error: error.clone() })
        }
        Input::SessionsObserved { sessions, as_of } => reconcile::observed(state, sessions, *as_of, now, &mut d),
        Input::Reconcile(reality) => reconcile::at_start(state, reality, now, &mut d),
        Input::CheckLiveness => reconcile::stuck_after_start(state, now, &mut d),
        // bosun's own prices, where none were set, record nothing.
        Input::PricesRead(prices) => {
            let now = if state.prices.is_empty() { crate::price::Prices::shipped() } else { &state.prices };
            if now != prices {
                d.event(Event::PricesSet { prices: prices.clone() });
            }
        }
        Input::ConfigRead(config) if *config != state.config => d.event(Event::ConfigSet { config: config.clone() }),
        Input::ConfigRead(_) => {}
    }
    react::settle(Cx { state, now }, &mut d);
    Ok(d)
}

/// What a runbook's work asks or is told: jobs and their steps, queues and workers, crons and
/// plans.
fn work(state: &State, input: &Input, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    match input {
        Input::StartJob(spec) => job::start(state, spec, now, d)?,
        Input::StepFinished { job, step, attempt, ok, detail } => {
            let outcome = job::StepOutcome { step, attempt: *attempt, ok: *ok, detail: detail.as_deref() };
            job::step_finished(state, job, outcome, now, d)
        }
        Input::PrStepDone { job, step, attempt, workspace, result } => {
            let detail = match result {
                Ok(pr) => {
                    d.event(Event::PullRequestOpened { workspace: workspace.clone(), pr: pr.clone() });
                    pr.url.clone()
                }
                Err(why) => why.clone(),
            };
            let outcome = job::StepOutcome { step, attempt: *attempt, ok: result.is_ok(), detail: Some(&detail) };
            job::step_finished(state, job, outcome, now, d)
        }
        Input::CancelJob { job } => job::cancel(state, job, now, d)?,
        Input::ResumeJob { job } => job::resume(state, job, now, d)?,
        Input::QueuePush { queue, data, retry } => queue::push(state, queue, data, *retry, now, d),
        Input::QueueRetry { item } => queue::requeue(state, *item, d)?,
        Input::QueueDrop { item } => queue::drop(state, *item, d)?,
        Input::StartWorker(w) => queue::start_worker(state, w, now, d),
        Input::Listed { worker, output } => queue::listed(state, worker, output, now, d),
        Input::StopWorker { name } => queue::stop_worker(state, name, d)?,
        Input::StartCron(c) => cron::start(state, c, now, d)?,
        Input::StopCron { name } => cron::stop(state, name, d)?,
        Input::StartPlan(p) => plan::start(state, p, d)?,
        Input::ResumePlan { plan: id } => plan::resume(state, id, now, d)?,
        Input::DispatchFailed { origin, error } => match origin {
            Origin::Plan(id, index) => plan::dispatch_failed(state, id, *index, None, error, now, d),
            Origin::PlanVariant(id, index, n) => plan::dispatch_failed(state, id, *index, Some(*n), error, now, d),
            Origin::Item(item) => queue::dispatch_failed(state, *item, error, d),
            Origin::Cron(name) => d.event(Event::CronFailed { name: name.clone(), error: error.clone() }),
        },
        Input::PullRequestOpened { workspace, pr } => {
            if !state.workspaces.contains_key(workspace) {
                return Err(Rejection::NoSuchWorkspace(workspace.to_string()));
            }
            d.event(Event::PullRequestOpened { workspace: workspace.clone(), pr: pr.clone() });
        }
        Input::WorkMerged { workspace, merged } => merge::merged(state, workspace, merged, now, d)?,
        Input::VariantsJudged { plan: id, index, winner, detail } => {
            plan::judged(state, id, *index, *winner, detail, d)
        }
        Input::PickVariant { plan: id, job, variant } => plan::pick(state, id, job, *variant, d)?,
        _ => {}
    }
    Ok(())
}

/// What is asked of or told about workspaces and pools.
fn workspaces(state: &State, input: &Input, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    match input {
        Input::RemoveWorkspace { id, force, probe } => pool::remove_workspace(state, id, *force, *probe, now, d)?,
        Input::WorkspaceCreated { id } => workspace::created(state, id, now, d),
        Input::WorkspaceCreateFailed { id, error, nothing_left } => {
            workspace::create_failed(state, id, error, *nothing_left, now, d)
        }
        Input::WorkspaceInspected { id, dirty, ahead } => merge::inspected(state, id, *dirty, *ahead, now, d),
        Input::WorkspaceRemoved { id } => workspace::removed(state, id, d),
        Input::WorkspaceRemoveFailed { id, error, dirty } => workspace::remove_failed(state, id, error, *dirty, d),
        Input::PoolInit(spec) => pool::init(state, spec, now, d)?,
        Input::PoolResize { project, size } => pool::resize(state, project, *size, now, d)?,
        Input::PoolAcquire { workspace } => pool::acquire(state, workspace, now, d)?,
        Input::PoolRelease { slot, force, pristine, probe } => {
            pool::release_request(state, slot, *force, *pristine, *probe, now, d)?
        }
        Input::PoolRemove { project, slot, force } => {
            pool::remove_request(state, project, slot.as_ref(), *force, now, d)?
        }
        Input::SlotCreated { project, n, commit } => pool::slot_created(state, project, *n, commit, now, d),
        Input::SlotCreateFailed { project, n, error } => pool::slot_create_failed(state, project, *n, error, now, d),
        Input::SlotReset { project, n, commit } => pool::slot_reset(state, project, *n, commit, now, d),
        Input::SlotResetFailed { project, n, error, dirty: _ } => {
            pool::slot_reset_failed(state, project, *n, error, now, d)
        }
        Input::SlotRemoved { project, n } => pool::slot_removed(state, project, *n, d),
        Input::SlotRemoveFailed { project, n, error } => pool::slot_remove_failed(state, project, *n, error, now, d),
        _ => {}
    }
    Ok(())
}

/// What is asked of an agent or told about its session: start, fork, kill, answer, send, and
/// how its session, process and messages went.
fn sessions(state: &State, input: &Input, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    match input {
        Input::StartAgent(spec) => start::start_agent(state, spec, None, now, d)?,
        Input::ForkAgent { spec, from } => start::fork(state, spec, from, now, d)?,
        Input::KillAgent { agent } => session::kill(state, agent, now, d)?,
        Input::Answer { agent, answer, message, screen } => {
            dialog::person_answers(state, agent, *answer, message.as_deref(), screen, now, d)?
        }
        Input::SendText { agent, text, raw, now: at_once } => {
            session::send_text(state, agent, text, *raw, *at_once, now, d)?
        }
        Input::Resolve { escalation, message } => escalation::resolve(state, *escalation, message.as_deref(), now, d)?,
        Input::RaiseBudget { agent, budget } => budget::raise(state, agent, *budget, now, d)?,
        Input::SessionSpawned { agent, pid } => session::spawned(state, agent, *pid, now, d),
        Input::SessionSpawnFailed { agent, error } => session::spawn_failed(state, agent, error, now, d),
        Input::SessionExited { session, status } => session::exited(state, session, *status, now, d),
        Input::PodEnded { session, status, saved } => session::pod_ended(state, session, *status, saved, now, d),
        Input::SessionClosed { session } => session::exited(state, session, crate::ExitStatus::UNKNOWN, now, d),
        Input::SessionKilled { agent } => session::killed(state, agent, now, d),
        Input::SessionKillFailed { agent, error } => session::kill_failed(state, agent, error, d),
        Input::TextDelivered { message } => session::text_done(state, *message, None, now, d),
        Input::TextFailed { message, error } => session::text_done(state, *message, Some(error), now, d),
        _ => {}
    }
    Ok(())
}

/// What is seen of an agent: its reports, log lines, screen, what it said, the verdict on its
/// turn, its gates.
fn observations(state: &State, input: &Input, now: Timestamp, d: &mut Decision) {
    match input {
        Input::Observed { agent, source, observation, log, generation } => {
            let current = |a: &&crate::Agent| generation.is_none_or(|g| g == a.restarts);
            if let Some(a) = state.agents.get(agent).filter(current) {
                observe::observed(Cx { state, now }, a, *source, observation, log.as_ref(), None, d)
            }
        }
        Input::Report { agent, generation, spooled_at, report } => {
            let fresh = |a: &crate::Agent| spooled_at.is_none_or(|t| t >= a.state_since);
            let current = |a: &&crate::Agent| generation.is_none_or(|g| g == a.restarts) && fresh(a);
            if let Some(a) = state.agents.get(agent).filter(current) {
                report::read(state, a, report, spooled_at.unwrap_or(now), now, d)
            }
        }
        Input::Said { agent, text } => classify::said(state, agent, text, d),
        Input::Classified { agent, turn, said, answer } => {
            classify::answered(state, agent, *turn, said, answer.clone(), now, d)
        }
        Input::FileWritten { agent } => {
            if let Some(a) = state.agents.get(agent) {
                let beat = crate::Observation::Activity { heartbeat: crate::Heartbeat::FileWrite };
                observe::observed(Cx { state, now }, a, crate::Source::Screen, &beat, None, None, d)
            }
        }
        Input::LogLines { agent, session_log, lines } => observe::log_lines(state, agent, *session_log, lines, now, d),
        Input::UsageLines { agent, lines, whole } => {
            if let Some(a) = state.agents.get(agent) {
                observe::usage(state, a, lines, now, d);
                if *whole {
                    observe::missed_error(state, agent, lines, now, d);
                }
            }
        }
        Input::Screen { agent, text, at, settled } => dialog::screen(state, agent, text, *at, *settled, now, d),
        Input::GateFinished { agent, run, code } => recovery::gate_finished(state, agent, run, *code, now, d),
        _ => {}
    }
}
