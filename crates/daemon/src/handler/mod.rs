//! Answers each request: `answer` routes it, one line a request, to the function that answers
//! it — `queries` for those that only read, a file per family for those that change something
//! (start, pool, outcome, terminal, queue, cron, plan, job, run, merge, fork, pr, doctor,
//! export), and one call for a hook's report. Those resolve ids, gather what the core needs to
//! know from the world (repository, ref, dirtiness), submit the input, and for requests whose
//! outcome the caller waits on (kill, send, remove), wait for it in the state.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bosun_adapters::{AdapterError, Git, Sessions, Survey, Workspaces};
use bosun_core::driver::DriverKind;
use bosun_core::{
    AgentSpec, EscalationId, Event, Input, MessageState, Name, Nonce, SessionName, SessionState, State, WorkspaceId,
    WorkspaceKind, WorkspaceProbe, WorkspaceState,
};
use bosun_wire::{
    AgentDetail, DaemonStatus, ErrorKind, Listing, Pruned, Removed, Request, Response, StartAgent, Started, StateDir,
    WireError,
};
use tokio::sync::{broadcast, Notify};

use crate::engine::{now, EngineError, EngineHandle};
use crate::store::LogReader;
use bosun_core::{RequestId, TermKey};

mod cron;
mod doctor;
pub mod events;
mod export;
mod fork;
mod job;
mod merge;
mod outcome;
mod plan;
mod pool;
mod pr;
mod queries;
mod queue;
mod report;
mod run;
mod start;
mod terminal;

use outcome::{answer_dialog, kill, prune, raise_budget, resolve, resolve_answering, send};
use start::start_agent;

pub struct Context {
    pub engine: EngineHandle,
    /// Where ids are drawn from.
    pub nonces: Arc<crate::nonces::Nonces>,
    /// The shell command prefix agents' hooks call back into bosun with.
    pub hook_command: String,
    /// bosun's own binary: what a session host runs, bound into containers.
    pub exe: PathBuf,
    pub workspaces: Arc<dyn Workspaces>,
    pub git: Arc<dyn Git>,
    pub pools: Arc<dyn bosun_adapters::Pools>,
    pub sessions: Arc<dyn Sessions>,
    /// The container engine agents with `--runtime docker` run in.
    pub containers: Arc<dyn bosun_adapters::Containers>,
    pub cluster: Arc<dyn bosun_k8s::Cluster>,
    pub survey: Arc<dyn Survey>,
    /// Where pull requests are opened.
    pub forge: Arc<dyn bosun_adapters::forge::Forge>,
    /// Whether the agents' programs are logged in, checked once each when a job or plan starts.
    pub readiness: Arc<dyn bosun_adapters::readiness::Readiness>,
    pub dirs: StateDir,
    pub started_at: u64,
    pub shutdown: Arc<Notify>,
    /// Set when the daemon stops on purpose: event streams end with `Response::Stopped`.
    pub stopping: tokio::sync::watch::Sender<bool>,
    /// Held (read) by every event stream, so a stop can wait for their last frames (write).
    pub streams: tokio::sync::RwLock<()>,
}

type Answer = Result<Response, WireError>;

/// A runbook's files, as sent with a request: path and text.
type Sources = Vec<(PathBuf, String)>;

tokio::task_local! {
    /// The request being answered: its id, and the events it recorded if it was carried out
    /// already (it is being sent again after the daemon died).
    static REQUEST: Scope;
}

#[derive(Clone, Default)]
struct Scope {
    id: Option<RequestId>,
    done: Option<Vec<Event>>,
}

pub async fn handle(ctx: &Arc<Context>, request: Request, id: Option<RequestId>) -> Response {
    let done = match id {
        Some(id) => match recorded(ctx, id).await {
            Ok(done) => done,
            Err(e) => return Response::Error(e),
        },
        None => None,
    };
    if let (Some(id), Some(done)) = (id, &done) {
        tracing::info!(%id, events = done.len(), "a request sent again was carried out already: answering from its events");
    }
    REQUEST.scope(Scope { id, done }, answer(ctx, request)).await.unwrap_or_else(Response::Error)
}

/// The events request `id` recorded, if it was carried out.
async fn recorded(ctx: &Arc<Context>, id: RequestId) -> Result<Option<Vec<Event>>, WireError> {
    let Some((first, count)) = ctx.engine.query(move |s, _| s.request(id)).await.map_err(engine_error)? else {
        return Ok(None);
    };
    let db = ctx.dirs.db();
    let read = tokio::task::spawn_blocking(move || LogReader::open(&db)?.events(first, count)).await;
    match read {
        Ok(Ok(events)) => Ok(Some(events)),
        Ok(Err(e)) => Err(WireError::new(ErrorKind::Failed, format!("cannot read what request {id} did: {e}"))),
        Err(e) => Err(WireError::new(ErrorKind::Failed, format!("internal task failed: {e}"))),
    }
}

/// The events of a request carried out before it was sent again, if this one is.
fn done_already() -> Option<Vec<Event>> {
    REQUEST.try_with(|s| s.done.clone()).ok().flatten()
}

/// Submits `input` for the request being answered: recorded as that request's, or, when it was
/// carried out already, not submitted again but answered with the events it recorded.
async fn submit(ctx: &Arc<Context>, input: Input) -> Result<Vec<Event>, WireError> {
    if let Some(events) = done_already() {
        return Ok(events);
    }
    let input = match REQUEST.try_with(|s| s.id).ok().flatten() {
        Some(id) => Input::Requested { id, input: Box::new(input) },
        None => input,
    };
    ctx.engine.submit(input).await.map_err(engine_error)
}

/// Routes each request to the function that answers it: one line a request.
async fn answer(ctx: &Arc<Context>, request: Request) -> Answer {
    match request {
        Request::Status => queries::status(ctx).await,
        Request::Shutdown => shutdown(ctx),
        Request::StartAgent(req) => start_agent(ctx, *req).await,
        // The server streams these itself, on the connection.
        Request::Events(_) => Err(bad("an event stream is answered on its own connection")),
        Request::PoolInit(ask) => pool::init(ctx, *ask).await,
        Request::PoolList => pool::list(ctx).await,
        Request::PoolResize { project, size } => pool::resize(ctx, project, size).await,
        Request::PoolAcquire(ask) => pool::acquire(ctx, *ask).await,
        Request::PoolRelease { workspace, force, pristine } => pool::release(ctx, workspace, force, pristine).await,
        Request::PoolRemove { project, slot, force } => pool::remove(ctx, project, slot, force).await,
        Request::List => queries::list(ctx).await,
        Request::Show { agent } => queries::show(ctx, agent).await,
        Request::Peek { agent, colors, scrollback } => queries::peek(ctx, agent, colors, scrollback).await,
        Request::Attach { agent } => queries::attach(ctx, agent).await,
        Request::Press { agent, keys } => terminal::press(ctx, agent, keys).await,
        Request::Resize { agent, cols, rows } => terminal::resize(ctx, agent, cols, rows).await,
        Request::Send { agent, text, raw, now } => send(ctx, agent, text, raw, now).await,
        Request::Kill { agent } => kill(ctx, agent).await,
        Request::Resume { agent, budget } => raise_budget(ctx, agent, budget).await,
        Request::WorkspaceList => queries::workspaces(ctx).await,
        Request::WorkspaceRemove { workspace, force } => outcome::remove_named(ctx, workspace, force).await,
        Request::WorkspacePrune { dry_run } => prune(ctx, dry_run).await,
        Request::Doctor { fix, cwd } => doctor::doctor(ctx, fix, cwd).await,
        Request::Escalations { all } => queries::escalations(ctx, all).await,
        Request::Resolve { escalation, message, answer: None } => resolve(ctx, escalation, message).await,
        Request::Resolve { escalation, message, answer: Some(a) } => {
            resolve_answering(ctx, escalation, a, message).await
        }
        Request::Answer { agent, answer, message } => answer_dialog(ctx, agent, answer, message).await,
        Request::Run(req) => run::run(ctx, *req).await,
        Request::JobList => queries::jobs(ctx).await,
        Request::JobShow { job } => queries::job(ctx, job).await,
        Request::JobCancel { job } => job::cancel(ctx, job).await,
        Request::JobResume { job } => job::resume(ctx, job).await,
        Request::JobExport { job, dir, force } => export::export(ctx, job, dir, force).await,
        Request::Replay { job } => export::replay(ctx, job).await,
        Request::QueuePush { queue, data, retry } => queue::push(ctx, queue, data, retry).await,
        Request::QueueList { queue } => queries::items(ctx, queue).await,
        Request::QueueRetry { item } => queue::retry(ctx, item).await,
        Request::QueueDrop { item } => queue::drop(ctx, item).await,
        Request::WorkerStart { name, sources, cwd } => queue::start_worker(ctx, name, sources, cwd).await,
        Request::WorkerStop { name } => queue::stop_worker(ctx, name).await,
        Request::WorkerList => queries::workers(ctx).await,
        Request::CronStart { name, sources, cwd } => cron::start(ctx, name, sources, cwd).await,
        Request::CronStop { name } => cron::stop(ctx, name).await,
        Request::CronOnce { name, sources, cwd } => cron::once(ctx, name, sources, cwd).await,
        Request::CronList => queries::crons(ctx).await,
        Request::PlanRun { name, sources, cwd, drop_losers } => plan::start(ctx, name, sources, cwd, drop_losers).await,
        Request::PlanList => queries::plans(ctx).await,
        Request::PlanShow { plan } => queries::plan_summary(ctx, plan).await,
        Request::PlanResume { plan } => plan::resume(ctx, plan).await,
        Request::PlanPick { plan, job, variant } => plan::pick(ctx, plan, job, variant).await,
        Request::Merge(ask) => merge::merge(ctx, *ask).await,
        Request::Pr(ask) => pr::pr(ctx, *ask).await,
        Request::Fork { agent, name, prompt, inherit } => fork::fork(ctx, agent, name, prompt, inherit).await,
        Request::Ahead => queries::ahead(ctx).await,
        Request::Diff { target, patch, color, quick } => queries::diff(ctx, target, patch, color, quick).await,
        Request::Hook(hook) => report::hook(ctx, hook).await,
    }
}

fn shutdown(ctx: &Arc<Context>) -> Answer {
    ctx.shutdown.notify_one();
    Ok(Response::Ok)
}

/// Whether tmux shows `session`, the session of an agent bosun thinks alive, with its process
/// still running (a listing that fails proves nothing: the report is taken).
async fn session_alive(ctx: &Arc<Context>, session: &SessionName) -> bool {
    let name = session.clone();
    let ours = query(ctx, move |s| Ok(s.agent_by_session(&name).is_some_and(|a| !a.state.is_dead()))).await;
    if !ours.unwrap_or(false) {
        return false;
    }
    let sessions = ctx.sessions.clone();
    let listed = tokio::task::spawn_blocking(move || sessions.list()).await;
    let Ok(Ok(listed)) = listed else { return false };
    listed.iter().any(|s| &s.session == session && s.exit.is_none())
}

/// Waits until `f` finds what it looks for in the state, re-checking after every event.
async fn query<R: Send + 'static>(
    ctx: &Arc<Context>,
    f: impl FnOnce(&State) -> Result<R, WireError> + Send + 'static,
) -> Result<R, WireError> {
    ctx.engine.query(move |s, _| f(s)).await.map_err(engine_error)?
}

async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, AdapterError> + Send + 'static,
) -> Result<R, WireError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(adapter_error),
        Err(e) => Err(WireError::new(ErrorKind::Failed, format!("internal task failed: {e}"))),
    }
}

fn bad(message: impl Into<String>) -> WireError {
    WireError::new(ErrorKind::BadRequest, message)
}

fn engine_error(e: EngineError) -> WireError {
    match e {
        EngineError::Rejected(r) => r.into(),
        other => WireError::new(ErrorKind::Failed, other.to_string()),
    }
}

/// The wire's kind of each adapter error, every one named: what the caller asked wrong, what is
/// not there, work a change would lose, or a failure outside.
fn adapter_error(e: AdapterError) -> WireError {
    let kind = match e {
        AdapterError::NotARepo(_)
        | AdapterError::UnknownRef { .. }
        | AdapterError::InvalidBranch { .. }
        | AdapterError::BranchExists { .. }
        | AdapterError::BranchBlocked { .. } => ErrorKind::BadRequest,
        AdapterError::NoBranch { .. } => ErrorKind::NotFound,
        AdapterError::TargetHasChanges { .. } | AdapterError::Dirty(_) => ErrorKind::WouldLoseWork,
        AdapterError::NoCommit(_)
        | AdapterError::NotAWorktree(_)
        | AdapterError::SlotMoved { .. }
        | AdapterError::PoolSlot(_)
        | AdapterError::Setup { .. }
        | AdapterError::TmuxMissing(_)
        | AdapterError::Watch(_)
        | AdapterError::Docker(_)
        | AdapterError::NoImage(_)
        | AdapterError::BadCwd { .. }
        | AdapterError::NoSession(_)
        | AdapterError::MergeConflict { .. }
        | AdapterError::Command { .. }
        | AdapterError::Seed { .. }
        | AdapterError::Io { .. } => ErrorKind::Failed,
    };
    WireError::new(kind, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work a change would lose is refused as such (exit 5 at the CLI), whichever adapter saw it.
    #[test]
    fn a_dirty_workspace_or_target_is_refused_as_work_that_would_be_lost() {
        let dirty = adapter_error(AdapterError::Dirty(PathBuf::from("/w")));
        assert_eq!(dirty.kind, ErrorKind::WouldLoseWork, "{dirty:?}");
        let target = adapter_error(AdapterError::TargetHasChanges { into: "main".into(), dir: PathBuf::from("/r") });
        assert_eq!(target.kind, ErrorKind::WouldLoseWork, "{target:?}");
        let io = adapter_error(AdapterError::io("reading", std::io::Error::other("no")));
        assert_eq!(io.kind, ErrorKind::Failed, "{io:?}");
    }
}
