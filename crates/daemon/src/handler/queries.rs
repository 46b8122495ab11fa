//! The read-only requests: each reads the state (and, for a screen, a diff or the commits
//! ahead, the world) and changes nothing.

use super::*;

pub(super) async fn status(ctx: &Arc<Context>) -> Answer {
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

pub(super) async fn list(ctx: &Arc<Context>) -> Answer {
    let now = now().as_millis();
    query(ctx, move |s| {
        Ok(Response::List(Listing {
            now,
            agents: s.agents.values().map(|a| bosun_wire::AgentSummary::in_state(a, s)).collect(),
            workspaces: s.workspaces.values().cloned().collect(),
        }))
    })
    .await
}

pub(super) async fn show(ctx: &Arc<Context>, agent: String) -> Answer {
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

pub(super) async fn peek(ctx: &Arc<Context>, agent: String, colors: bool, scrollback: u32) -> Answer {
    let session = session_of(ctx, agent).await?;
    let sessions = ctx.sessions.clone();
    let text = blocking(move || sessions.history(&session, colors, scrollback)).await?;
    Ok(Response::Screen { text })
}

pub(super) async fn attach(ctx: &Arc<Context>, agent: String) -> Answer {
    let session = session_of(ctx, agent).await?;
    Ok(Response::Attach { argv: ctx.sessions.attach_command(&session) })
}

pub(super) async fn workspaces(ctx: &Arc<Context>) -> Answer {
    query(ctx, |s| Ok(Response::Workspaces { workspaces: s.workspaces.values().cloned().collect() })).await
}

pub(super) async fn escalations(ctx: &Arc<Context>, all: bool) -> Answer {
    let now = now().as_millis();
    query(ctx, move |s| {
        let escalations = s.escalations.values().filter(|e| all || e.resolved.is_none()).cloned().collect();
        let plans = s.plans.values().flat_map(bosun_core::Plan::asks).collect();
        Ok(Response::Escalations { now, escalations, plans })
    })
    .await
}

pub(super) async fn jobs(ctx: &Arc<Context>) -> Answer {
    let now = now().as_millis();
    query(ctx, move |s| Ok(Response::Jobs { now, jobs: s.jobs.values().cloned().collect() })).await
}

/// The job `job` names, as it is now.
pub(super) async fn job(ctx: &Arc<Context>, job: String) -> Answer {
    let now = now().as_millis();
    query(ctx, move |s| {
        let j = s.find_job(&job)?;
        Ok(Response::Job { now, job: Box::new(j.clone()), over: j.state.is_over() })
    })
    .await
}

pub(super) async fn items(ctx: &Arc<Context>, queue: Option<String>) -> Answer {
    let now = now().as_millis();
    query(ctx, move |s| {
        let items = s.items.values().filter(|i| queue.as_ref().is_none_or(|q| &i.queue == q)).cloned().collect();
        Ok(Response::Items { now, items })
    })
    .await
}

pub(super) async fn workers(ctx: &Arc<Context>) -> Answer {
    query(ctx, |s| Ok(Response::Workers { workers: s.workers.values().cloned().collect() })).await
}

pub(super) async fn crons(ctx: &Arc<Context>) -> Answer {
    query(ctx, |s| Ok(Response::Crons { now: now().as_millis(), crons: s.crons.values().cloned().collect() })).await
}

pub(super) async fn plans(ctx: &Arc<Context>) -> Answer {
    query(ctx, |s| Ok(Response::Plans { plans: s.plans.values().cloned().collect(), warnings: vec![] })).await
}

/// The plan `plan`, as it is now, with `warnings`.
pub(super) async fn plan(ctx: &Arc<Context>, plan: String, warnings: Vec<String>) -> Answer {
    query(ctx, move |s| Ok(Response::Plans { plans: s.plans.get(&plan).cloned().into_iter().collect(), warnings }))
        .await
}

/// A plan's summary, read from the log.
pub(super) async fn plan_summary(ctx: &Arc<Context>, plan: String) -> Answer {
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

/// How many commits of its own each live workspace's branch holds.
pub(super) async fn ahead(ctx: &Arc<Context>) -> Answer {
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

pub(super) async fn diff(ctx: &Arc<Context>, target: String, patch: bool, color: bool, quick: bool) -> Answer {
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

pub(super) async fn session_of(ctx: &Arc<Context>, agent: String) -> Result<SessionName, WireError> {
    query(ctx, move |s| {
        let a = s.find_agent(&agent)?;
        if a.state == SessionState::Starting {
            return Err(WireError::new(ErrorKind::Conflict, format!("agent {} is still starting: try again", a.id)));
        }
        Ok(a.session.clone())
    })
    .await
}
