//! Answers each request: resolves ids, gathers what the core needs to know from the world
//! (repository, ref, dirtiness), submits the input, and for requests whose outcome the caller
//! waits on (kill, send, remove), waits for it in the state.

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
    WireError, WorkspaceChoice,
};
use tokio::sync::{broadcast, Notify};

use crate::engine::{now, EngineError, EngineHandle};
use crate::store::LogReader;
use bosun_core::{RequestId, TermKey};

mod doctor;
pub mod events;
mod export;
mod fork;
mod merge;
mod outcome;
mod pool;
mod pr;
mod report;
mod run;
mod start;

use outcome::{answer_dialog, kill, prune, remove_workspace, resolve, resolve_answering, send};
use start::start_agent;

pub struct Context {
    pub engine: EngineHandle,
    /// Where ids are drawn from.
    pub nonces: Arc<crate::nonces::Nonces>,
    /// The shell command prefix agents' hooks call back into bosun with.
    pub hook_command: String,
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

async fn answer(ctx: &Arc<Context>, request: Request) -> Answer {
    match request {
        Request::Status => status(ctx).await,
        Request::Shutdown => {
            ctx.shutdown.notify_one();
            Ok(Response::Ok)
        }
        Request::StartAgent(req) => start_agent(ctx, *req).await,
        // The server streams these itself, on the connection.
        Request::Events(_) => Err(bad("an event stream is answered on its own connection")),
        Request::PoolInit(ask) => pool::init(ctx, *ask).await,
        Request::PoolList => pool::list(ctx).await,
        Request::PoolResize { project, size } => {
            submit(ctx, Input::PoolResize { project, size }).await?;
            pool::list(ctx).await
        }
        Request::PoolAcquire(ask) => pool::acquire(ctx, *ask).await,
        Request::PoolRelease { workspace, force, pristine } => pool::release(ctx, workspace, force, pristine).await,
        Request::PoolRemove { project, slot, force } => pool::remove(ctx, project, slot, force).await,
        Request::List => {
            let now = now().as_millis();
            query(ctx, move |s| {
                Ok(Response::List(Listing {
                    now,
                    agents: s.agents.values().map(Into::into).collect(),
                    workspaces: s.workspaces.values().cloned().collect(),
                }))
            })
            .await
        }
        Request::Show { agent } => {
            let now = now().as_millis();
            query(ctx, move |s| {
                let a = s.find_agent(&agent)?;
                Ok(Response::Agent(Box::new(AgentDetail {
                    now,
                    agent: a.clone(),
                    workspace: s.workspaces.get(&a.workspace).cloned(),
                    messages: s.messages.values().filter(|m| m.agent == a.id).cloned().collect(),
                    escalations: s.escalations.values().filter(|e| e.agent == a.id).cloned().collect(),
                    pull_request: s.pull_requests.get(&a.workspace).cloned(),
                    permission_mode: a.driver.behaviour().runs_in(a),
                })))
            })
            .await
        }
        Request::Peek { agent, colors, scrollback } => {
            let session = session_of(ctx, agent).await?;
            let sessions = ctx.sessions.clone();
            let text = blocking(move || sessions.history(&session, colors, scrollback)).await?;
            Ok(Response::Screen { text })
        }
        Request::Attach { agent } => {
            let session = session_of(ctx, agent).await?;
            Ok(Response::Attach { argv: ctx.sessions.attach_command(&session) })
        }
        Request::Press { agent, keys } => {
            TermKey::check(&keys).map_err(|e| bad(e.to_string()))?;
            let session = session_of(ctx, agent).await?;
            let sessions = ctx.sessions.clone();
            blocking(move || sessions.press(&session, &keys)).await?;
            Ok(Response::Ok)
        }
        Request::Resize { agent, cols, rows } => {
            bosun_core::check_size(cols, rows).map_err(|e| bad(e.to_string()))?;
            let session = session_of(ctx, agent).await?;
            let sessions = ctx.sessions.clone();
            let before = blocking(move || {
                let before = sessions.size(&session)?;
                sessions.resize(&session, cols, rows).map(|()| before)
            })
            .await?;
            Ok(Response::Resized { before })
        }
        Request::Send { agent, text, raw, now } => send(ctx, agent, text, raw, now).await,
        Request::Kill { agent } => kill(ctx, agent).await,
        Request::WorkspaceList => {
            query(ctx, |s| Ok(Response::Workspaces { workspaces: s.workspaces.values().cloned().collect() })).await
        }
        Request::WorkspaceRemove { workspace, force } => {
            let id = query(ctx, move |s| Ok(s.find_workspace(&workspace)?.id.clone())).await?;
            Ok(Response::Removed(remove_workspace(ctx, id, force).await?))
        }
        Request::WorkspacePrune { dry_run } => prune(ctx, dry_run).await,
        Request::Doctor { fix, cwd } => doctor::doctor(ctx, fix, cwd).await,
        Request::Escalations { all } => {
            let now = now().as_millis();
            query(ctx, move |s| {
                let escalations = s.escalations.values().filter(|e| all || e.resolved.is_none()).cloned().collect();
                let plans = s.plans.values().flat_map(bosun_core::Plan::asks).collect();
                Ok(Response::Escalations { now, escalations, plans })
            })
            .await
        }
        Request::Resolve { escalation, message, answer: None } => resolve(ctx, escalation, message).await,
        Request::Resolve { escalation, message, answer: Some(answer) } => {
            resolve_answering(ctx, escalation, answer, message).await
        }
        Request::Answer { agent, answer, message } => answer_dialog(ctx, agent, answer, message).await,
        Request::Run(req) => run::run(ctx, *req).await,
        Request::JobList => {
            let now = now().as_millis();
            query(ctx, move |s| Ok(Response::Jobs { now, jobs: s.jobs.values().cloned().collect() })).await
        }
        Request::JobShow { job } => {
            let now = now().as_millis();
            query(ctx, move |s| {
                let j = s.find_job(&job)?;
                Ok(Response::Job { now, job: Box::new(j.clone()), over: j.state.is_over() })
            })
            .await
        }
        Request::JobCancel { job } => job_input(ctx, job, |job| Input::CancelJob { job }).await,
        Request::JobResume { job } => job_input(ctx, job, |job| Input::ResumeJob { job }).await,
        Request::JobExport { job, dir, force } => export::export(ctx, job, dir, force).await,
        Request::Replay { job } => export::replay(ctx, job).await,
        Request::QueuePush { queue, data, retry } => {
            submit(ctx, Input::QueuePush { queue, data, retry }).await?;
            Ok(Response::Ok)
        }
        Request::QueueList { queue } => {
            let now = now().as_millis();
            query(ctx, move |s| {
                let items =
                    s.items.values().filter(|i| queue.as_ref().is_none_or(|q| &i.queue == q)).cloned().collect();
                Ok(Response::Items { now, items })
            })
            .await
        }
        Request::QueueRetry { item } => {
            let item = item_id(&item)?;
            submit(ctx, Input::QueueRetry { item }).await?;
            Ok(Response::Ok)
        }
        Request::QueueDrop { item } => {
            let item = item_id(&item)?;
            submit(ctx, Input::QueueDrop { item }).await?;
            Ok(Response::Ok)
        }
        Request::WorkerStart { name, sources, cwd } => {
            let worker = run::lowered(&sources)?.worker(&name, cwd).map_err(run::lower_error)?;
            submit(ctx, Input::StartWorker(Box::new(worker))).await?;
            Ok(Response::Ok)
        }
        Request::WorkerStop { name } => {
            submit(ctx, Input::StopWorker { name }).await?;
            Ok(Response::Ok)
        }
        Request::WorkerList => {
            query(ctx, |s| Ok(Response::Workers { workers: s.workers.values().cloned().collect() })).await
        }
        Request::CronStart { name, sources, cwd } => {
            let cron = run::lowered(&sources)?.cron(&name, cwd).map_err(run::lower_error)?;
            submit(ctx, Input::StartCron(Box::new(cron))).await?;
            query(ctx, |s| Ok(Response::Crons { now: now().as_millis(), crons: s.crons.values().cloned().collect() }))
                .await
        }
        Request::CronStop { name } => {
            submit(ctx, Input::StopCron { name }).await?;
            Ok(Response::Ok)
        }
        Request::CronOnce { name, sources, cwd } => {
            let cron = run::lowered(&sources)?.cron(&name, cwd).map_err(run::lower_error)?;
            run::start_job(ctx, cron.book, cron.job, Default::default(), cron.cwd).await
        }
        Request::PlanRun { name, sources, cwd, drop_losers } => {
            let id = format!("p{}", ctx.nonces.nonce().as_str());
            let mut plan = run::lowered(&sources)?.plan(&name, id.clone(), cwd).map_err(run::lower_error)?;
            plan.drop_losers = drop_losers;
            let (git, readiness) = (ctx.git.clone(), ctx.readiness.clone());
            let (plan, warnings) = tokio::task::spawn_blocking(move || {
                let warnings = run::preflight_plan(&*git, &*readiness, &plan)?;
                let repo = git.repo_root(&plan.cwd).map_err(adapter_error)?;
                git.resolve_commit(&repo, &plan.base).map_err(adapter_error)?;
                // The current branch, by name: what its first jobs start from, as the seed says.
                if plan.base == "HEAD" {
                    if let Some(branch) = git.current_branch(&repo).map_err(adapter_error)? {
                        plan.base = branch;
                    }
                }
                Ok::<_, WireError>((plan, warnings))
            })
            .await
            .map_err(|e| WireError::new(ErrorKind::Failed, format!("internal task failed: {e}")))??;
            submit(ctx, Input::StartPlan(Box::new(plan))).await?;
            query(ctx, move |s| {
                Ok(Response::Plans { plans: s.plans.get(&id).cloned().into_iter().collect(), warnings })
            })
            .await
        }
        Request::PlanList => {
            query(ctx, |s| Ok(Response::Plans { plans: s.plans.values().cloned().collect(), warnings: vec![] })).await
        }
        Request::PlanResume { plan } => {
            submit(ctx, Input::ResumePlan { plan: plan.clone() }).await?;
            query(ctx, move |s| {
                Ok(Response::Plans { plans: s.plans.get(&plan).cloned().into_iter().collect(), warnings: vec![] })
            })
            .await
        }
        Request::PlanPick { plan, job, variant } => {
            submit(ctx, Input::PickVariant { plan: plan.clone(), job, variant }).await?;
            query(ctx, move |s| {
                Ok(Response::Plans { plans: s.plans.get(&plan).cloned().into_iter().collect(), warnings: vec![] })
            })
            .await
        }
        Request::Merge(ask) => merge::merge(ctx, *ask).await,
        Request::Pr(ask) => pr::pr(ctx, *ask).await,
        Request::Fork { agent, name, prompt, inherit } => fork::fork(ctx, agent, name, prompt, inherit).await,
        Request::Ahead => {
            let kinds = query(ctx, |s| {
                let live = s
                    .workspaces
                    .values()
                    .filter(|w| w.kind.local_branch().is_ok() && !matches!(w.state, WorkspaceState::Removing { .. }));
                Ok(live.map(|w| (w.id.clone(), w.kind.clone())).collect::<Vec<_>>())
            })
            .await?;
            let git = ctx.git.clone();
            let ahead = blocking(move || {
                // A workspace git cannot count (a folder, a branch gone) is left out.
                Ok(kinds.into_iter().filter_map(|(id, kind)| Some((id, git.commits_ahead(&kind).ok()?))).collect())
            })
            .await?;
            Ok(Response::Ahead { ahead })
        }
        Request::Diff { target, patch, color, quick } => {
            let ws = query(ctx, move |s| Ok(s.find_work(&target)?.clone())).await?;
            let (git, workspaces) = (ctx.git.clone(), ctx.workspaces.clone());
            let diff = blocking(move || {
                // A volume's work, uncommitted too, is read back here to be compared; when it
                // cannot be, its branch as last brought back is.
                let message = "bosun diff: work not committed";
                let read_back = ws.kind.read_back() && !quick;
                let tip = read_back.then(|| workspaces.snapshot(&ws.path, &ws.kind, &ws.owned_files(), message));
                let tip = match tip {
                    Some(Err(e)) => {
                        tracing::warn!(workspace = %ws.id, "its diff is its branch's only: {e}");
                        None
                    }
                    other => other.and_then(Result::ok),
                };
                git.diff(&ws, tip.as_deref(), patch, color)
            })
            .await?;
            Ok(Response::Diff { diff: Box::new(diff) })
        }
        Request::PlanShow { plan } => {
            let id = plan.clone();
            query(ctx, move |s| {
                s.plans.contains_key(&id).then_some(()).ok_or(bosun_core::Rejection::NoSuchPlan(id.clone()).into())
            })
            .await?;
            let db = ctx.dirs.db();
            let found = tokio::task::spawn_blocking(move || crate::plan_log::summary(&db, &plan)).await;
            match found {
                Ok(Ok(Some(summary))) => Ok(Response::PlanSummary { summary: Box::new(summary) }),
                Ok(Ok(None)) => Err(WireError::new(ErrorKind::Failed, "the log holds no start of that plan")),
                Ok(Err(e)) => Err(WireError::new(ErrorKind::Failed, format!("cannot read the log: {e}"))),
                Err(e) => Err(WireError::new(ErrorKind::Failed, format!("internal task failed: {e}"))),
            }
        }
        Request::CronList => {
            query(ctx, |s| Ok(Response::Crons { now: now().as_millis(), crons: s.crons.values().cloned().collect() }))
                .await
        }
        Request::Hook(hook) => report::hook(ctx, hook).await,
    }
}

async fn status(ctx: &Arc<Context>) -> Answer {
    let (state_dir, started_at) = (ctx.dirs.root().to_owned(), ctx.started_at);
    ctx.engine
        .query(move |s, events| {
            Response::Status(DaemonStatus {
                version: bosun_wire::VERSION.to_owned(),
                pid: std::process::id(),
                state_dir,
                started_at,
                agents: s.agents.len(),
                live_agents: s.agents.values().filter(|a| !a.state.is_dead()).count(),
                workspaces: s.workspaces.len(),
                events,
            })
        })
        .await
        .map_err(engine_error)
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

async fn session_of(ctx: &Arc<Context>, agent: String) -> Result<SessionName, WireError> {
    query(ctx, move |s| {
        let a = s.find_agent(&agent)?;
        if a.state == SessionState::Starting {
            return Err(WireError::new(ErrorKind::Conflict, format!("agent {} is still starting: try again", a.id)));
        }
        Ok(a.session.clone())
    })
    .await
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

/// Submits what `input` makes of the job `job` names, and answers with the job as it is then.
async fn job_input(ctx: &Arc<Context>, job: String, input: impl FnOnce(bosun_core::JobId) -> Input) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_job(&job)?.spec.id.clone())).await?;
    submit(ctx, input(id.clone())).await?;
    let now = now().as_millis();
    query(ctx, move |s| {
        let j = s.find_job(id.as_str())?;
        Ok(Response::Job { now, job: Box::new(j.clone()), over: j.state.is_over() })
    })
    .await
}

fn item_id(text: &str) -> Result<bosun_core::ItemId, WireError> {
    text.trim_start_matches('i')
        .parse()
        .map(bosun_core::ItemId)
        .map_err(|_| bad(format!("{text:?} is not a queue item id (such as i3): see `bosun queue ls`")))
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

fn adapter_error(e: AdapterError) -> WireError {
    let kind = match e {
        AdapterError::NotARepo(_)
        | AdapterError::UnknownRef { .. }
        | AdapterError::InvalidBranch { .. }
        | AdapterError::BranchExists { .. }
        | AdapterError::BranchBlocked { .. } => ErrorKind::BadRequest,
        AdapterError::NoBranch { .. } => ErrorKind::NotFound,
        AdapterError::TargetHasChanges { .. } => ErrorKind::WouldLoseWork,
        _ => ErrorKind::Failed,
    };
    WireError::new(kind, e.to_string())
}
