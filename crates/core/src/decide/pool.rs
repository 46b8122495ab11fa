//! Decisions about workspace pools: a task's workspace (or one a script acquires) is bound to the
//! first available slot of its repository's pool, or waits in line (a slot is made for it while
//! the pool is under its size); a task's workspace found clean once its task is over, or removed,
//! goes back to its pool; a released slot is reset in the background and handed to the next in
//! line. One decision at a time, so no slot is ever bound twice.

use super::ground::{create, kill, Decision};
use crate::{
    BranchKept, Effect, Event, Pool, PoolAsk, PoolSpec, Rejection, Slot, SlotId, SlotProbe, SlotReset, SlotState,
    State, Timestamp, Workspace, WorkspaceId, WorkspaceKind, WorkspaceProbe, WorkspaceState,
};
use crate::{PoolTask, WorkBranch};

/// The pool of the repository `spec` names, made (with a project name no other pool has) when
/// there is none; its project.
fn ensure(state: &State, spec: &PoolSpec, now: Timestamp, d: &mut Decision) -> String {
    if let Some(pool) = state.pools.values().find(|p| p.repo == spec.repo) {
        return pool.project.clone();
    }
    let taken = |name: &str| state.pools.contains_key(name);
    let project = std::iter::once(spec.project.clone())
        .chain((2..).map(|n| format!("{}-{n}", spec.project)))
        .find(|p| !taken(p))
        .unwrap_or_else(|| spec.project.clone());
    let pool = Pool {
        project: project.clone(),
        repo: spec.repo.clone(),
        size: spec.size.max(1),
        base: spec.base.clone(),
        root: spec.root.clone(),
        setup: spec.setup.clone(),
        slots: Default::default(),
        waiting: Default::default(),
        created_at: now,
    };
    d.event(Event::PoolCreated { pool: Box::new(pool) });
    project
}

/// `bosun pool init`: the pool, grown to its size with slots made now.
pub(super) fn init(state: &State, spec: &PoolSpec, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let project = ensure(state, spec, now, d);
    if d.state(state).pools.get(&project).is_some_and(|p| p.size != spec.size) {
        resize(state, &project, spec.size, now, d)?;
    } else {
        fill(state, &project, now, d);
    }
    Ok(())
}

/// `bosun pool resize`: slots made up to `size`, available ones beyond it removed now (bound
/// ones once released).
pub(super) fn resize(
    state: &State,
    project: &str,
    size: u32,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    if size == 0 {
        return Err(Rejection::PoolSizeZero(project.to_owned()));
    }
    let pool = d.state(state).pools.get(project).cloned().ok_or_else(|| Rejection::NoSuchPool(project.to_owned()))?;
    d.event(Event::PoolResized { project: project.to_owned(), size });
    let mut kept = pool.kept();
    for slot in pool.slots.values().rev().filter(|s| s.state == SlotState::Available) {
        if kept <= size as usize {
            break;
        }
        remove_slot(&pool, slot, now, d);
        kept -= 1;
    }
    fill(state, project, now, d);
    Ok(())
}

/// Makes slots until the pool holds its size.
fn fill(state: &State, project: &str, now: Timestamp, d: &mut Decision) {
    let Some(pool) = d.state(state).pools.get(project).cloned() else { return };
    let missing = (pool.size as usize).saturating_sub(pool.kept());
    make_slots(&pool, missing, now, d);
}

fn make_slots(pool: &Pool, count: usize, now: Timestamp, d: &mut Decision) {
    let mut n = pool.free_number();
    for _ in 0..count {
        while pool.slots.contains_key(&n) {
            n += 1;
        }
        let id = SlotId::new(&pool.project, n);
        let path = pool.root.join(id.as_str());
        let slot = Slot {
            id,
            path: path.clone(),
            state: SlotState::Creating,
            commit: None,
            created_at: now,
            state_since: now,
            error: None,
        };
        d.event(Event::SlotCreating { project: pool.project.clone(), slot });
        d.effect(create_slot(pool, n, path));
        n += 1;
    }
}

fn create_slot(pool: &Pool, n: u32, path: std::path::PathBuf) -> Effect {
    Effect::CreateSlot {
        project: pool.project.clone(),
        n,
        repo: pool.repo.clone(),
        path,
        base_ref: pool.base.base_ref.clone(),
        setup: pool.setup.clone(),
    }
}

/// A new task's workspace (of kind `Pool`) joins its pool's line and is served at once when a
/// slot is free; refused when none is and it may not wait.
pub(super) fn place(
    state: &State,
    ws: Workspace,
    ask: &PoolAsk,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let project = ensure(state, &ask.spec, now, d);
    if let Some(pool) = d.state(state).pools.get(&project) {
        let exhausted = pool.available().is_none() && pool.waiting.len() + pool.kept() >= pool.size as usize;
        if exhausted && !ask.wait {
            return Err(Rejection::PoolExhausted { project, size: pool.size });
        }
    }
    let id = ws.id.clone();
    d.event(Event::WorkspaceCreating { workspace: Workspace { state: WorkspaceState::Waiting, ..ws } });
    d.event(Event::TaskWaiting { project: project.clone(), workspace: id });
    serve(state, &project, now, d);
    Ok(())
}

/// Hands the pool's available slots to the tasks in line, first come first, and makes slots
/// for those still waiting while the pool is under its size.
pub(super) fn serve(state: &State, project: &str, now: Timestamp, d: &mut Decision) {
    let Some(pool) = d.state(state).pools.get(project).cloned() else { return };
    let free = pool.slots.iter().filter(|(_, s)| s.state == SlotState::Available);
    let mut served = 0;
    for ((n, slot), ws) in free.zip(&pool.waiting) {
        // The task as it waits (its record made in this decision, maybe).
        let Some(mut bound) = d.state(state).workspaces.get(ws).cloned() else { continue };
        crate::pool::bind(&mut bound, slot);
        d.event(Event::SlotBound { project: project.to_owned(), n: *n, workspace: ws.clone(), at: now });
        d.effect(create(&bound, false));
        served += 1;
    }
    let left = pool.waiting.len().saturating_sub(served);
    let coming = pool.slots.values().filter(|s| s.state == SlotState::Creating).count();
    let room = (pool.size as usize).saturating_sub(pool.kept());
    make_slots(&pool, left.saturating_sub(coming).min(room), now, d);
}

pub(super) fn slot_created(state: &State, project: &str, n: u32, commit: &str, now: Timestamp, d: &mut Decision) {
    if slot_in(state, project, n, |s| *s == SlotState::Creating).is_none() {
        return;
    }
    d.event(Event::SlotCreated { project: project.to_owned(), n, commit: commit.to_owned(), at: now });
    serve(state, project, now, d);
}

/// A slot could not be made: it is forgotten, and the tasks no slot will serve any more fail.
pub(super) fn slot_create_failed(state: &State, project: &str, n: u32, error: &str, now: Timestamp, d: &mut Decision) {
    if slot_in(state, project, n, |s| *s == SlotState::Creating).is_none() {
        return;
    }
    d.event(Event::SlotCreateFailed { project: project.to_owned(), n, error: error.to_owned() });
    let Some(pool) = d.state(state).pools.get(project).cloned() else { return };
    let serving = pool
        .slots
        .values()
        .filter(|s| {
            matches!(
                s.state,
                SlotState::Creating | SlotState::Available | SlotState::Bound { .. } | SlotState::Resetting { .. }
            )
        })
        .count();
    let error = format!("its pool workspace could not be made: {error}");
    for ws in pool.waiting.iter().skip(serving).rev() {
        super::workspace::create_failed(state, ws, &error, false, now, d);
    }
}

/// `bosun pool acquire`: a pool's workspace for a script, owned by no agent or job.
pub(super) fn acquire(
    state: &State,
    ask: &crate::PoolWorkspace,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let id = WorkspaceId::new(&ask.name, &ask.nonce);
    if state.workspaces.contains_key(&id) {
        return Err(Rejection::AlreadyExists(format!("workspace {id}")));
    }
    if let Some(branch) = ask.kind.branch() {
        if let Some(other) = state.workspaces.values().find(|w| w.branch() == Some(branch)) {
            return Err(Rejection::BranchTaken { branch: branch.to_owned(), workspace: other.id.clone() });
        }
    }
    let workspace = Workspace {
        id,
        name: ask.name.clone(),
        nonce: ask.nonce.clone(),
        path: std::path::PathBuf::new(),
        kind: ask.kind.clone(),
        state: WorkspaceState::Waiting,
        created_at: now,
        settings_from: None,
        settings_folder: None,
        error: None,
    };
    place(state, workspace, &ask.ask, now, d)
}

/// The workspace of an agent (or job) that ended was checked; `None` means it could not be,
/// which counts as dirty: never lose work. A pool's workspace whose task is over goes back to
/// its pool when it holds no uncommitted work.
pub(super) fn inspected(
    state: &State,
    id: &WorkspaceId,
    dirty: Option<bool>,
    ahead: u32,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(ws) = state.workspaces.get(id) else { return };
    let in_use_by_dead = match &ws.state {
        WorkspaceState::InUse { agent } => state.agents.get(agent).is_none_or(|a| a.state.is_dead()),
        _ => false,
    };
    let pooled = matches!(ws.kind, WorkspaceKind::Pool(_));
    let idle = in_use_by_dead || ws.state == WorkspaceState::Ready;
    if pooled && idle && dirty == Some(false) && task_over(state, id) {
        release(state, ws, ahead, false, false, now, d);
    } else if in_use_by_dead {
        d.event(Event::WorkspaceReleased { id: id.clone(), dirty: dirty.unwrap_or(true) });
    }
}

/// The task's workspace is done with its slot (its agent or job ended, or `pool release`): the
/// workspace record goes, its branch is kept when it holds commits of its own (else deleted),
/// and the slot is reset in the background.
pub(super) fn release(
    state: &State,
    ws: &Workspace,
    ahead: u32,
    force: bool,
    pristine: bool,
    now: Timestamp,
    d: &mut Decision,
) {
    let WorkspaceKind::Pool(PoolTask { git: WorkBranch { branch, .. }, slot: Some(slot_id), .. }) = &ws.kind else {
        return;
    };
    let Some((pool, slot)) = find_slot(state, slot_id) else { return };
    let branch_kept = (ahead > 0).then(|| BranchKept { branch: branch.clone(), commits: ahead });
    let delete_branch = branch_kept.is_none().then(|| branch.clone());
    d.event(Event::WorkspaceRemoved { id: ws.id.clone(), branch_kept });
    // The sessions of its (dead) agents were kept for `peek`; the next task gets the place.
    for a in state.agents.values().filter(|a| a.workspace == ws.id) {
        d.effect(kill(a));
    }
    reset(pool, slot, pristine, force, delete_branch, now, d);
}

fn reset(
    pool: &Pool,
    slot: &Slot,
    pristine: bool,
    force: bool,
    delete_branch: Option<String>,
    now: Timestamp,
    d: &mut Decision,
) {
    let (project, n) = (pool.project.clone(), number(pool, slot));
    d.event(Event::SlotResetting {
        project: project.clone(),
        n,
        pristine,
        force,
        delete_branch: delete_branch.clone(),
        at: now,
    });
    d.effect(reset_effect(pool, slot, n, pristine, force, delete_branch));
}

fn reset_effect(
    pool: &Pool,
    slot: &Slot,
    n: u32,
    pristine: bool,
    force: bool,
    delete_branch: Option<String>,
) -> Effect {
    let reset = SlotReset {
        repo: pool.repo.clone(),
        path: slot.path.clone(),
        base: pool.base.clone(),
        pristine,
        force,
        delete_branch,
        setup: pool.setup.clone(),
    };
    Effect::ResetSlot { project: pool.project.clone(), n, reset }
}

pub(super) fn slot_reset(state: &State, project: &str, n: u32, commit: &str, now: Timestamp, d: &mut Decision) {
    if slot_in(state, project, n, |s| matches!(s, SlotState::Resetting { .. })).is_none() {
        return;
    }
    d.event(Event::SlotReset { project: project.to_owned(), n, commit: commit.to_owned(), at: now });
    let Some(pool) = d.state(state).pools.get(project).cloned() else { return };
    // A pool made smaller while the slot was bound gives it up now.
    if pool.kept() > pool.size as usize && pool.waiting.is_empty() {
        if let Some(slot) = pool.slots.get(&n) {
            remove_slot(&pool, slot, now, d);
        }
        return;
    }
    serve(state, project, now, d);
}

pub(super) fn slot_reset_failed(state: &State, project: &str, n: u32, error: &str, now: Timestamp, d: &mut Decision) {
    if slot_in(state, project, n, |s| matches!(s, SlotState::Resetting { .. })).is_none() {
        return;
    }
    let error = Some(format!("its reset failed: {error}"));
    d.event(Event::SlotDirty { project: project.to_owned(), n, error, at: now });
}

/// `bosun workspace rm` of a pool's workspace: it goes back to its pool, which keeps the
/// worktree; any other workspace is removed.
pub(super) fn remove_workspace(
    state: &State,
    id: &WorkspaceId,
    force: bool,
    probe: WorkspaceProbe,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    match state.workspaces.get(id).map(|ws| &ws.kind) {
        Some(WorkspaceKind::Pool(PoolTask { slot: Some(slot), .. })) => {
            release_request(state, slot, force, false, probe, now, d)
        }
        _ => super::workspace::remove(state, id, force, probe, d),
    }
}

/// `bosun pool release SLOT`: its task's workspace released (refused while an agent or a job
/// uses it, or while it holds work, unless forced), or a dirty slot reset by force.
pub(super) fn release_request(
    state: &State,
    id: &SlotId,
    force: bool,
    pristine: bool,
    probe: WorkspaceProbe,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let (pool, slot) = find_slot(state, id).ok_or_else(|| Rejection::NoSuchSlot(id.to_string()))?;
    let busy = |hint| Rejection::SlotBusy { slot: id.clone(), state: slot.state.label(), hint };
    match &slot.state {
        SlotState::Bound { workspace } => {
            let ws = state.workspaces.get(workspace).ok_or_else(|| busy("its task's workspace is gone"))?;
            if let Some(job) =
                state.jobs.values().find(|j| j.workspace.as_ref() == Some(workspace) && !j.state.is_over())
            {
                return Err(Rejection::WorkspaceOfJob { id: workspace.clone(), job: job.spec.id.clone() });
            }
            if let Some(live) = state.living_in(workspace).next() {
                return Err(Rejection::WorkspaceInUse { id: workspace.clone(), agent: live.id.clone() });
            }
            if matches!(ws.state, WorkspaceState::Creating | WorkspaceState::Waiting) {
                return Err(busy("it is still being bound: try again in a moment"));
            }
            if probe.dirty && !force {
                return Err(Rejection::WorkspaceDirty(workspace.clone()));
            }
            release(state, ws, probe.commits_ahead, force, pristine, now, d);
        }
        SlotState::Dirty if !force => {
            return Err(busy("it holds work no task owns: look at it, then pass --force to reset it"))
        }
        SlotState::Dirty | SlotState::Available => reset(pool, slot, pristine, force, None, now, d),
        SlotState::Missing => return Err(busy("its directory is gone: remove it with `bosun pool rm`")),
        SlotState::Creating | SlotState::Resetting { .. } | SlotState::Removing { .. } => {
            return Err(busy("wait until it is done"))
        }
    }
    Ok(())
}

/// `bosun pool rm`: the slot, or every slot and then the pool; never one that holds a task or
/// (without force) work.
pub(super) fn remove_request(
    state: &State,
    project: &str,
    id: Option<&SlotId>,
    force: bool,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let pool = state.pools.get(project).ok_or_else(|| Rejection::NoSuchPool(project.to_owned()))?;
    let slots: Vec<&Slot> = match id {
        Some(id) => vec![pool.slot(id).ok_or_else(|| Rejection::NoSuchSlot(id.to_string()))?],
        None => pool.slots.values().collect(),
    };
    for slot in &slots {
        let busy = |hint| Rejection::SlotBusy { slot: slot.id.clone(), state: slot.state.label(), hint };
        match slot.state {
            SlotState::Available | SlotState::Missing | SlotState::Removing { .. } => {}
            SlotState::Dirty if force => {}
            SlotState::Dirty => return Err(busy("it holds work no task owns: look at it, then pass --force")),
            SlotState::Bound { .. } => return Err(busy("release it first (`bosun pool release`)")),
            SlotState::Creating | SlotState::Resetting { .. } => return Err(busy("wait until it is done")),
        }
    }
    if id.is_none() {
        if !pool.waiting.is_empty() {
            return Err(Rejection::SlotBusy {
                slot: SlotId::new(project, 0),
                state: "waited for",
                hint: "tasks wait for this pool: kill them first",
            });
        }
        // Size 0 marks the pool for removal once its last slot is gone.
        d.event(Event::PoolResized { project: project.to_owned(), size: 0 });
        if slots.is_empty() {
            d.event(Event::PoolRemoved { project: project.to_owned() });
        }
    }
    for slot in slots.into_iter().filter(|s| !matches!(s.state, SlotState::Removing { .. })) {
        remove_slot(pool, slot, now, d);
    }
    Ok(())
}

fn remove_slot(pool: &Pool, slot: &Slot, now: Timestamp, d: &mut Decision) {
    let n = number(pool, slot);
    d.event(Event::SlotRemoving { project: pool.project.clone(), n, at: now });
    d.effect(Effect::RemoveSlot { project: pool.project.clone(), n, repo: pool.repo.clone(), path: slot.path.clone() });
}

pub(super) fn slot_removed(state: &State, project: &str, n: u32, d: &mut Decision) {
    if slot_in(state, project, n, |s| matches!(s, SlotState::Removing { .. })).is_none() {
        return;
    }
    d.event(Event::SlotRemoved { project: project.to_owned(), n });
    if d.state(state).pools.get(project).is_some_and(|p| p.size == 0 && p.slots.is_empty()) {
        d.event(Event::PoolRemoved { project: project.to_owned() });
    }
}

pub(super) fn slot_remove_failed(state: &State, project: &str, n: u32, error: &str, now: Timestamp, d: &mut Decision) {
    if slot_in(state, project, n, |s| matches!(s, SlotState::Removing { .. })).is_none() {
        return;
    }
    d.event(Event::SlotRemoveFailed { project: project.to_owned(), n, error: error.to_owned(), at: now });
}

/// After a restart: what was being made, reset or removed is done again (each is safe to
/// repeat); an available slot found gone or holding work is marked so and never handed out.
pub(super) fn reconcile(state: &State, probes: &[(SlotId, SlotProbe)], now: Timestamp, d: &mut Decision) {
    for pool in state.pools.values() {
        for (n, slot) in &pool.slots {
            let project = pool.project.clone();
            match &slot.state {
                SlotState::Creating => d.effect(create_slot(pool, *n, slot.path.clone())),
                SlotState::Resetting { pristine, force, delete_branch } => {
                    d.effect(reset_effect(pool, slot, *n, *pristine, *force, delete_branch.clone()))
                }
                SlotState::Removing { .. } => {
                    d.effect(Effect::RemoveSlot { project, n: *n, repo: pool.repo.clone(), path: slot.path.clone() })
                }
                SlotState::Available => match probes.iter().find(|(id, _)| id == &slot.id).map(|(_, p)| p) {
                    Some(p) if !p.exists => d.event(Event::SlotMissing { project, n: *n, at: now }),
                    Some(p) if p.dirty => d.event(Event::SlotDirty {
                        project,
                        n: *n,
                        error: Some("found holding changes at a restart".into()),
                        at: now,
                    }),
                    _ => {}
                },
                SlotState::Bound { .. } | SlotState::Dirty | SlotState::Missing => {}
            }
        }
        serve(state, &pool.project, now, d);
    }
}

/// Whether the pool workspace `ws` is done with its slot: its agents dead and no running job
/// owning it.
pub(super) fn task_over(state: &State, ws: &WorkspaceId) -> bool {
    let job_runs = state.jobs.values().any(|j| j.workspace.as_ref() == Some(ws) && !j.state.is_over());
    let agent_lives = state.living_in(ws).next().is_some();
    !job_runs && !agent_lives
}

/// The pool and slot `id` names.
pub(super) fn find_slot<'a>(state: &'a State, id: &SlotId) -> Option<(&'a Pool, &'a Slot)> {
    let (project, n) = id.parts()?;
    let pool = state.pools.get(project)?;
    Some((pool, pool.slots.get(&n).filter(|s| &s.id == id)?))
}

fn slot_in<'a>(state: &'a State, project: &str, n: u32, ok: impl Fn(&SlotState) -> bool) -> Option<&'a Slot> {
    state.pools.get(project)?.slots.get(&n).filter(|s| ok(&s.state))
}

fn number(pool: &Pool, slot: &Slot) -> u32 {
    pool.slots.iter().find(|(_, s)| s.id == slot.id).map_or(0, |(n, _)| *n)
}
