//! `bosun pool …`: a repository's pool asked for (its base found by git when it is new), listed
//! with who holds each workspace, resized, acquired by scripts, released and removed. The
//! core decides; this gathers what it needs (the repository, the workspace's dirtiness and the
//! commits only its branch holds).

use std::collections::BTreeMap;

use bosun_core::{PoolSpec, PoolWorkspace, SlotId, SlotState};
use bosun_wire::{PoolAsk, Pools, Removed};

use super::*;
use bosun_core::{PoolTask, WorkBranch};

/// What a task (or `pool init`) asks of the pool of the repository holding `dir`: the pool as
/// it is when there is one, else one with the base git finds.
pub(super) async fn ask(
    ctx: &Arc<Context>,
    dir: PathBuf,
    size: Option<u32>,
    setup: Option<String>,
    wait: bool,
) -> Result<bosun_core::PoolAsk, WireError> {
    let git = ctx.git.clone();
    let repo = blocking(move || git.repo_root(&dir)).await?;
    let known = repo.clone();
    let existing = query(ctx, move |s| Ok(s.pools.values().find(|p| p.repo == known).cloned())).await?;
    let spec = match existing {
        Some(p) => PoolSpec {
            repo,
            project: p.project,
            size: size.unwrap_or(p.size),
            base: p.base,
            root: p.root,
            setup: setup.or(p.setup),
        },
        None => {
            let (pools, root) = (ctx.pools.clone(), ctx.dirs.workspaces());
            blocking(move || crate::jobs::new_pool(&*pools, repo, root, size, setup)).await?
        }
    };
    Ok(bosun_core::PoolAsk { spec, wait })
}

pub(super) async fn init(ctx: &Arc<Context>, req: PoolAsk) -> Answer {
    if req.size == Some(0) {
        return Err(bad("a pool keeps at least one workspace: give --size 1 or more"));
    }
    let ask = ask(ctx, req.repo, req.size, req.setup, true).await?;
    submit(ctx, Input::PoolInit(Box::new(ask.spec))).await?;
    list(ctx).await
}

pub(super) async fn list(ctx: &Arc<Context>) -> Answer {
    let now = now().as_millis();
    query(ctx, move |s| {
        let (mut holders, mut workspaces) = (BTreeMap::new(), BTreeMap::new());
        for pool in s.pools.values() {
            let bound = pool.slots.values().filter_map(|slot| match &slot.state {
                SlotState::Bound { workspace } => Some(workspace),
                _ => None,
            });
            for ws in bound.clone().chain(&pool.waiting) {
                holders.insert(ws.clone(), holder(s, ws));
            }
            workspaces.extend(bound.filter_map(|ws| Some((ws.clone(), s.workspaces.get(ws)?.state.clone()))));
        }
        Ok(Response::Pools(Pools { now, pools: s.pools.values().cloned().collect(), holders, workspaces }))
    })
    .await
}

/// Who holds a pool's workspace: its agent, its job, or a script.
fn holder(s: &State, ws: &WorkspaceId) -> String {
    if let Some(a) = s.agents.values().filter(|a| &a.workspace == ws).max_by_key(|a| a.created_at) {
        return format!("agent {} ({})", a.id, a.name);
    }
    if let Some(j) = s.jobs.values().find(|j| j.workspace.as_ref() == Some(ws)) {
        return format!("job {} ({})", j.spec.id, j.spec.name);
    }
    "acquired".to_owned()
}

/// `bosun pool acquire`: answers once the workspace is ready — at once when a slot is free,
/// else when one is handed to it, as a lock is taken.
pub(super) async fn resize(ctx: &Arc<Context>, project: String, size: u32) -> Answer {
    submit(ctx, Input::PoolResize { project, size }).await?;
    list(ctx).await
}

pub(super) async fn acquire(ctx: &Arc<Context>, req: PoolAsk) -> Answer {
    if let Some(done) = done_already() {
        return acquired(ctx, done).await;
    }
    let ask = ask(ctx, req.repo, None, req.setup, !req.no_wait).await?;
    let nonce = ctx.nonces.nonce();
    let branch = req.branch.unwrap_or_else(|| nonce.default_branch());
    let (git, repo, checked) = (ctx.git.clone(), ask.spec.repo.clone(), branch.clone());
    blocking(move || git.check_new_branch(&repo, &checked)).await?;
    let name = Name::derive(&ask.spec.project);
    let kind = WorkspaceKind::Pool(PoolTask {
        git: WorkBranch { repo: ask.spec.repo.clone(), branch, base: String::new(), base_ref: String::new() },
        slot: None,
        task: req.task,
    });
    let rx = ctx.engine.subscribe();
    let events =
        submit(ctx, Input::PoolAcquire { workspace: Box::new(PoolWorkspace { name, nonce, kind, ask }) }).await?;
    ready(ctx, rx, &events).await
}

/// A retried acquire, carried out already: the workspace once it is ready.
async fn acquired(ctx: &Arc<Context>, events: Vec<Event>) -> Answer {
    ready(ctx, ctx.engine.subscribe(), &events).await
}

/// Waits until the workspace the events made is ready (or could not be made).
async fn ready(ctx: &Arc<Context>, rx: broadcast::Receiver<Arc<Event>>, events: &[Event]) -> Answer {
    let id = events
        .iter()
        .find_map(|e| match e {
            Event::WorkspaceCreating { workspace } => Some(workspace.id.clone()),
            _ => None,
        })
        .ok_or_else(|| WireError::new(ErrorKind::Failed, "the acquire recorded no workspace"))?;
    let failed = |why: String| Some(Err(WireError::new(ErrorKind::Failed, why)));
    super::outcome::wait_state(ctx, rx, move |s| match s.workspaces.get(&id) {
        None => failed(format!("workspace {id} went before it was ready")),
        Some(w) if w.state == WorkspaceState::Stale => {
            failed(format!("workspace {id} could not be made: {}", w.error.clone().unwrap_or_default()))
        }
        Some(w) if matches!(w.state, WorkspaceState::Waiting | WorkspaceState::Creating) => None,
        Some(w) => Some(Ok(Response::Acquired {
            workspace: w.id.clone(),
            path: w.path.clone(),
            branch: w.branch().map(str::to_owned),
        })),
    })
    .await?
}

/// The slot `query` names (`<project>--<n>`, or the workspace bound to it), and the workspace
/// bound to it, if any.
fn find(s: &State, query: &str) -> Result<(SlotId, Option<bosun_core::Workspace>), WireError> {
    let slot = s.pools.values().flat_map(|p| p.slots.values()).find(|slot| slot.id.as_str() == query);
    let slot = match slot {
        Some(slot) => slot.id.clone(),
        None => match &s.find_workspace(query)?.kind {
            WorkspaceKind::Pool(PoolTask { slot: Some(slot), .. }) => slot.clone(),
            _ => return Err(bad(format!("{query:?} is not a pool workspace: see `bosun pool ls`"))),
        },
    };
    let bound = s.pools.values().flat_map(|p| p.slots.values()).find(|x| x.id == slot).and_then(|x| match &x.state {
        SlotState::Bound { workspace } => s.workspaces.get(workspace).cloned(),
        _ => None,
    });
    Ok((slot, bound))
}

pub(super) async fn release(ctx: &Arc<Context>, query_text: String, force: bool, pristine: bool) -> Answer {
    let (slot, bound) = query(ctx, move |s| find(s, &query_text)).await?;
    let bound_path = bound.as_ref().map(|w| w.path.clone());
    let bound_branch = bound.as_ref().and_then(|w| w.branch().map(str::to_owned));
    let probe = match bound {
        Some(ws) => {
            let (workspaces, git) = (ctx.workspaces.clone(), ctx.git.clone());
            blocking(move || {
                let dirty = workspaces.is_dirty(&ws.path, &ws.kind, &ws.owned_files())?;
                let commits_ahead = git.commits_ahead(&ws.kind)?;
                Ok(WorkspaceProbe { dirty, commits_ahead })
            })
            .await?
        }
        None => WorkspaceProbe::default(),
    };
    let events = submit(ctx, Input::PoolRelease { slot: slot.clone(), force, pristine, probe }).await?;
    let removed = events.iter().find_map(|e| match e {
        Event::WorkspaceRemoved { id, branch_kept } => Some(Removed {
            workspace: id.clone(),
            path: bound_path.clone().unwrap_or_default(),
            branch_deleted: bound_branch.clone().filter(|_| branch_kept.is_none()),
            branch_kept: branch_kept.clone(),
        }),
        _ => None,
    });
    Ok(Response::Released { slot, removed })
}

pub(super) async fn remove(ctx: &Arc<Context>, project: String, slot: Option<String>, force: bool) -> Answer {
    let slot = match slot {
        Some(text) => Some(query(ctx, move |s| find(s, &text).map(|(slot, _)| slot)).await?),
        None => None,
    };
    submit(ctx, Input::PoolRemove { project, slot, force }).await?;
    list(ctx).await
}
