//! Answers each request: resolves ids, gathers what the core needs to know from the world
//! (repository, ref, dirtiness), submits the input, and for requests whose outcome the caller
//! waits on (kill, send, remove), waits for it in the state.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bosun_adapters::{AdapterError, Sessions, Workspaces};
use bosun_core::{
    AgentSpec, Event, Input, MessageState, Name, Nonce, SessionName, SessionState, State, WorkspaceId, WorkspaceKind,
    WorkspaceProbe, WorkspaceState,
};
use bosun_wire::{
    AgentDetail, DaemonStatus, ErrorKind, HookEvent, Listing, Pruned, Removed, Request, Response, StartAgent, Started,
    StateDir, WireError, WorkspaceChoice,
};
use tokio::sync::{broadcast, Notify};

use crate::engine::{now, EngineError, EngineHandle};

/// How long a request waits for the outcome of what it asked for.
const OUTCOME_WAIT: Duration = Duration::from_secs(60);

pub struct Context {
    pub engine: EngineHandle,
    pub workspaces: Arc<dyn Workspaces>,
    pub sessions: Arc<dyn Sessions>,
    pub dirs: StateDir,
    pub started_at: u64,
    pub shutdown: Arc<Notify>,
}

type Answer = Result<Response, WireError>;

pub async fn handle(ctx: &Arc<Context>, request: Request) -> Response {
    answer(ctx, request).await.unwrap_or_else(Response::Error)
}

async fn answer(ctx: &Arc<Context>, request: Request) -> Answer {
    match request {
        Request::Status => status(ctx).await,
        Request::Shutdown => {
            ctx.shutdown.notify_one();
            Ok(Response::Ok)
        }
        Request::StartAgent(req) => start_agent(ctx, req).await,
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
                })))
            })
            .await
        }
        Request::Peek { agent, colors } => {
            let session = session_of(ctx, agent).await?;
            let sessions = ctx.sessions.clone();
            let text = blocking(move || sessions.capture(&session, colors)).await?;
            Ok(Response::Screen { text })
        }
        Request::Attach { agent } => {
            let session = session_of(ctx, agent).await?;
            Ok(Response::Attach { argv: ctx.sessions.attach_command(&session) })
        }
        Request::Send { agent, text } => send(ctx, agent, text).await,
        Request::Kill { agent } => kill(ctx, agent).await,
        Request::WorkspaceList => {
            query(ctx, |s| Ok(Response::Workspaces { workspaces: s.workspaces.values().cloned().collect() })).await
        }
        Request::WorkspaceRemove { workspace, force } => {
            let id = query(ctx, move |s| Ok(s.find_workspace(&workspace)?.id.clone())).await?;
            Ok(Response::Removed(remove_workspace(ctx, id, force).await?))
        }
        Request::WorkspacePrune { dry_run } => prune(ctx, dry_run).await,
        Request::Hook(hook) => {
            let input = match hook {
                HookEvent::PaneDied { session, status, signal } => Input::SessionExited {
                    session: SessionName::from_reported(&session),
                    status: bosun_core::ExitStatus { code: status, signal },
                },
                HookEvent::SessionClosed { session } => {
                    Input::SessionClosed { session: SessionName::from_reported(&session) }
                }
            };
            ctx.engine.submit(input).await.map_err(engine_error)?;
            Ok(Response::Ok)
        }
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

async fn start_agent(ctx: &Arc<Context>, req: StartAgent) -> Answer {
    let program = req
        .command
        .first()
        .ok_or_else(|| bad("no command to run: give it after `--`, e.g. `bosun agent start -- claude`"))?;
    let name = match &req.name {
        Some(n) => Name::parse(n).map_err(|e| bad(e.to_string()))?,
        None => Name::derive(&Path::new(program).file_name().map_or("agent".into(), |f| f.to_string_lossy())),
    };
    let nonce = Nonce::from_bits(fastrand::u64(..));
    let root = ctx.dirs.workspaces();
    let (workspaces, sessions) = (ctx.workspaces.clone(), ctx.sessions.clone());
    let (n, nc) = (name.clone(), nonce.clone());
    let spec = blocking(move || prepare(&*workspaces, &*sessions, req, n, nc, root)).await?;
    let events = ctx.engine.submit(Input::StartAgent(spec)).await.map_err(engine_error)?;
    // Report what the core recorded.
    let (mut agent, mut workspace) = (None, None);
    for e in events {
        match e {
            Event::AgentCreated { agent: a } => agent = Some(a.id),
            Event::WorkspaceCreating { workspace: w } => workspace = Some(w),
            _ => {}
        }
    }
    let (Some(agent), Some(w)) = (agent, workspace) else {
        return Err(WireError::new(ErrorKind::Failed, "the start recorded no agent"));
    };
    Ok(Response::Started(Started { agent, branch: w.branch().map(str::to_owned), workspace: w.id, path: w.path }))
}

/// Checks everything a start needs before anything is recorded or created.
fn prepare(
    workspaces: &dyn Workspaces,
    sessions: &dyn Sessions,
    req: StartAgent,
    name: Name,
    nonce: Nonce,
    workspaces_root: std::path::PathBuf,
) -> Result<AgentSpec, AdapterError> {
    sessions.check_available()?;
    let source = req.repo.clone().unwrap_or_else(|| req.cwd.clone());
    if !source.is_dir() {
        return Err(AdapterError::io(
            format!("{} is not a directory", source.display()),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    let (kind, settings_root) = match req.workspace {
        WorkspaceChoice::Worktree => {
            let repo = workspaces.repo_root(&source)?;
            let base_ref = req.base_ref.unwrap_or_else(|| "HEAD".to_owned());
            let base = workspaces.resolve_commit(&repo, &base_ref)?;
            let branch = req.branch.unwrap_or_else(|| nonce.default_branch());
            workspaces.check_new_branch(&repo, &branch)?;
            (WorkspaceKind::Worktree { repo: repo.clone(), branch, base_ref, base }, repo)
        }
        WorkspaceChoice::Folder => (WorkspaceKind::Folder, source),
    };
    let settings = settings_root.join(".claude/settings.json");
    let mut env = req.env;
    env.remove("TMUX");
    env.remove("TMUX_PANE");
    Ok(AgentSpec {
        name,
        nonce,
        workspaces_root,
        kind,
        settings_from: settings.is_file().then_some(settings),
        command: req.command,
        env,
    })
}

async fn send(ctx: &Arc<Context>, agent: String, text: String) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_agent(&agent)?.id.clone())).await?;
    let rx = ctx.engine.subscribe();
    let events = ctx.engine.submit(Input::SendText { agent: id, text }).await.map_err(engine_error)?;
    let message = events
        .iter()
        .find_map(|e| match e {
            Event::MessageQueued { message } => Some(message.id),
            _ => None,
        })
        .ok_or_else(|| WireError::new(ErrorKind::Failed, "the message was not queued"))?;
    let outcome = wait_state(ctx, rx, move |s| match s.messages.get(&message).map(|m| &m.state) {
        Some(MessageState::Delivered) => Some(Ok(Response::Sent { message })),
        Some(MessageState::Failed { error }) => {
            Some(Err(WireError::new(ErrorKind::Failed, format!("message not delivered: {error}"))))
        }
        _ => None,
    })
    .await;
    match outcome {
        Ok(answer) => answer,
        // It stays queued and will be typed: say so, so nobody sends it again.
        Err(e) => Err(WireError::new(e.kind, format!("{message} is still queued, not yet typed ({e})"))),
    }
}

async fn kill(ctx: &Arc<Context>, agent: String) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_agent(&agent)?.id.clone())).await?;
    let rx = ctx.engine.subscribe();
    ctx.engine.submit(Input::KillAgent { agent: id.clone() }).await.map_err(engine_error)?;
    let failed = id.clone();
    wait_outcome(
        ctx,
        rx,
        move |s| {
            let a = s.agents.get(&id)?;
            a.state.is_dead().then(|| Ok(Response::Killed { agent: a.id.clone(), state: a.state.clone() }))
        },
        move |e| match e {
            Event::AgentKillFailed { id, error } if id == &failed => {
                Some(Err(WireError::new(ErrorKind::Failed, format!("could not kill {id}: {error}"))))
            }
            _ => None,
        },
    )
    .await?
}

async fn remove_workspace(ctx: &Arc<Context>, id: WorkspaceId, force: bool) -> Result<Removed, WireError> {
    let wid = id.clone();
    let ws = query(ctx, move |s| Ok(s.find_workspace(wid.as_str())?.clone())).await?;
    let (workspaces, w) = (ctx.workspaces.clone(), ws.clone());
    let probe = blocking(move || {
        Ok(WorkspaceProbe {
            dirty: workspaces.is_dirty(&w.path, &w.kind, &w.owned_files())?,
            commits_ahead: workspaces.commits_ahead(&w.kind)?,
        })
    })
    .await?;
    let rx = ctx.engine.subscribe();
    let events =
        ctx.engine.submit(Input::RemoveWorkspace { id: id.clone(), force, probe }).await.map_err(engine_error)?;
    // The core decided the branch's fate; report what it decided.
    let branch_kept = events.iter().find_map(|e| match e {
        bosun_core::Event::WorkspaceRemoving { keep_branch, .. } => keep_branch.clone(),
        _ => None,
    });
    let removed = Removed {
        workspace: id.clone(),
        path: ws.path.clone(),
        branch_deleted: ws.branch().filter(|_| branch_kept.is_none()).map(str::to_owned),
        branch_kept,
    };
    wait_state(ctx, rx, move |s| match s.workspaces.get(&id) {
        None => Some(Ok(removed.clone())),
        Some(w) if !matches!(w.state, WorkspaceState::Removing { .. }) => Some(Err(WireError::new(
            ErrorKind::Failed,
            format!("could not remove {id}: {}", w.error.clone().unwrap_or_default()),
        ))),
        Some(_) => None,
    })
    .await?
}

async fn prune(ctx: &Arc<Context>, dry_run: bool) -> Answer {
    let (candidates, mut skipped) = query(ctx, |s: &State| {
        let prunable = s.prunable();
        let (take, keep): (Vec<_>, Vec<_>) = s.workspaces.values().partition(|w| prunable.contains(&w.id));
        let take: Vec<_> = take.into_iter().map(|w| (w.id.clone(), w.path.clone())).collect();
        let keep: Vec<_> = keep.into_iter().map(|w| (w.id.clone(), w.state.label().to_owned())).collect();
        Ok((take, keep))
    })
    .await?;
    let mut out = Pruned { dry_run, ..Pruned::default() };
    for (id, path) in candidates {
        if dry_run {
            out.removed.push(Removed { workspace: id, path, branch_deleted: None, branch_kept: None });
            continue;
        }
        match remove_workspace(ctx, id.clone(), false).await {
            Ok(r) => out.removed.push(r),
            Err(e) => skipped.push((id, e.message)),
        }
    }
    out.skipped = skipped;
    Ok(Response::Pruned(out))
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
async fn wait_state<T: Send + 'static>(
    ctx: &Arc<Context>,
    rx: broadcast::Receiver<Arc<Event>>,
    f: impl Fn(&State) -> Option<T> + Send + Sync + 'static,
) -> Result<T, WireError> {
    wait_outcome(ctx, rx, f, |_| None).await
}

/// Waits until `in_state` finds the outcome in the state (checked now and after every event)
/// or `in_event` finds it in an event. `rx` must be subscribed before the input was submitted.
async fn wait_outcome<T: Send + 'static>(
    ctx: &Arc<Context>,
    mut rx: broadcast::Receiver<Arc<Event>>,
    in_state: impl Fn(&State) -> Option<T> + Send + Sync + 'static,
    in_event: impl Fn(&Event) -> Option<T>,
) -> Result<T, WireError> {
    let in_state = Arc::new(in_state);
    let deadline = tokio::time::Instant::now() + OUTCOME_WAIT;
    loop {
        let f = in_state.clone();
        if let Some(t) = ctx.engine.query(move |s, _| f(s)).await.map_err(engine_error)? {
            return Ok(t);
        }
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) => {
                return Err(WireError::new(
                    ErrorKind::Failed,
                    format!("no outcome after {}s; see `bosun daemon logs`", OUTCOME_WAIT.as_secs()),
                ))
            }
            Ok(Err(broadcast::error::RecvError::Closed)) => return Err(engine_error(EngineError::Stopped)),
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Ok(event)) => {
                if let Some(t) = in_event(&event) {
                    return Ok(t);
                }
            }
        }
    }
}

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

fn adapter_error(e: AdapterError) -> WireError {
    let kind = match e {
        AdapterError::NotARepo(_)
        | AdapterError::UnknownRef { .. }
        | AdapterError::InvalidBranch { .. }
        | AdapterError::BranchExists { .. } => ErrorKind::BadRequest,
        _ => ErrorKind::Failed,
    };
    WireError::new(kind, e.to_string())
}
