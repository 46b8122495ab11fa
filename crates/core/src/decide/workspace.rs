//! Decisions about workspaces: made (or not) for the agent or job waiting for them, released when
//! their agent ends, and removed without ever losing work.

use super::ground::{inspect, kill, remove as remove_effect, spawn, Decision};
use super::session::died;
use crate::{
    BranchKept, DeathReason, Event, Rejection, SessionState, State, Timestamp, Workspace, WorkspaceId, WorkspaceKind,
    WorkspaceProbe, WorkspaceState,
};
use crate::{PodClone, VolumeClone, WorkBranch};

pub(super) fn created(state: &State, id: &WorkspaceId, now: Timestamp, d: &mut Decision) {
    if creating(state, id).is_none() {
        return;
    }
    d.event(Event::WorkspaceReady { id: id.clone(), at: now });
    let waiting =
        state.agents.values().find(|a| &a.workspace == id && a.state == SessionState::Starting && !a.kill_requested);
    if let Some(agent) = waiting {
        d.event(Event::WorkspaceInUse { id: id.clone(), agent: agent.id.clone() });
        d.effect(spawn(agent, None));
    }
    // Killed while its workspace was being made: it never starts, and is dead now.
    let killed = state.agents.values().filter(|a| &a.workspace == id && a.state == SessionState::Starting);
    for agent in killed.filter(|a| a.kill_requested) {
        died(state, agent, DeathReason::Killed, None, now, d);
    }
}

/// Creation failed: whatever part of it was made stays recorded (as Stale, with the error) so
/// `bosun workspace rm` can clean it up; a record with nothing behind it goes. Its agent never
/// starts.
pub(super) fn create_failed(
    state: &State,
    id: &WorkspaceId,
    error: &str,
    nothing_left: bool,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(ws) = creating(state, id) else { return };
    d.event(Event::WorkspaceCreateFailed { id: id.clone(), error: error.to_owned() });
    for agent in state.living_in(id) {
        let error = Some(format!("workspace could not be created: {error}"));
        died(state, agent, DeathReason::FailedToStart, error, now, d);
    }
    // A pool's workspace holds its slot until released.
    if nothing_left && !matches!(ws.kind, WorkspaceKind::Pool(_)) {
        d.event(Event::WorkspaceRemoved { id: id.clone(), branch_kept: None });
    }
}

pub(super) fn remove(
    state: &State,
    id: &WorkspaceId,
    force: bool,
    probe: WorkspaceProbe,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let ws = state.workspaces.get(id).ok_or_else(|| Rejection::NoSuchWorkspace(id.to_string()))?;
    match &ws.state {
        WorkspaceState::Waiting | WorkspaceState::Creating | WorkspaceState::Removing { .. } => {
            return Err(Rejection::WorkspaceBusy { id: id.clone(), state: ws.state.label() })
        }
        WorkspaceState::InUse { agent } => {
            return Err(Rejection::WorkspaceInUse { id: id.clone(), agent: agent.clone() })
        }
        // What the probe finds now decides, not the mark left when its agent ended: work a
        // person committed since is no longer at risk. Where no look reaches, the mark stands.
        WorkspaceState::Dirty if !force && !ws.kind.seen_from_here() => {
            return Err(Rejection::WorkspaceDirty(id.clone()))
        }
        _ if probe.dirty && !force => return Err(Rejection::WorkspaceDirty(id.clone())),
        _ => {}
    }
    if let Some(job) = state.jobs.values().find(|j| j.workspace.as_ref() == Some(id) && !j.state.is_over()) {
        return Err(Rejection::WorkspaceOfJob { id: id.clone(), job: job.spec.id.clone() });
    }
    if let Some(live) = state.living_in(id).next() {
        return Err(Rejection::WorkspaceInUse { id: id.clone(), agent: live.id.clone() });
    }
    removing(state, ws, force, probe.commits_ahead, d);
    Ok(())
}

/// Removes the workspace, whose removal was checked: its branch kept when `commits_ahead` of
/// its commits would be lost with it.
pub(super) fn removing(state: &State, ws: &Workspace, force: bool, commits_ahead: u32, d: &mut Decision) {
    let id = &ws.id;
    let keep_branch = match (&ws.kind, commits_ahead) {
        (
            WorkspaceKind::Worktree(WorkBranch { branch, .. })
            | WorkspaceKind::Volume(VolumeClone { git: WorkBranch { branch, .. }, .. })
            // With no remote, its branch is here, where its pods' work came back to.
            | WorkspaceKind::Pod(PodClone { git: WorkBranch { branch, .. }, remote: None, .. }),
            n,
        ) if n > 0 => {
            Some(BranchKept { branch: branch.clone(), commits: n })
        }
        _ => None,
    };
    d.event(Event::WorkspaceRemoving { id: id.clone(), force, keep_branch: keep_branch.clone() });
    d.effect(remove_effect(state, ws, force, keep_branch.is_none()));
    // The sessions of its (dead) agents were kept for `peek`; they go with the workspace.
    for a in state.agents.values().filter(|a| &a.workspace == id) {
        d.effect(kill(a));
    }
}

pub(super) fn removed(state: &State, id: &WorkspaceId, d: &mut Decision) {
    if let Some(WorkspaceState::Removing { keep_branch, .. }) = state.workspaces.get(id).map(|w| &w.state) {
        d.event(Event::WorkspaceRemoved { id: id.clone(), branch_kept: keep_branch.clone() });
    }
}

pub(super) fn remove_failed(state: &State, id: &WorkspaceId, error: &str, dirty: bool, d: &mut Decision) {
    if state.workspaces.get(id).is_some_and(|ws| matches!(ws.state, WorkspaceState::Removing { .. })) {
        d.event(Event::WorkspaceRemoveFailed { id: id.clone(), error: error.to_owned(), dirty });
    }
}

pub(super) fn inspect_if_released(state: &State, ws: &Workspace, d: &mut Decision) {
    if let WorkspaceState::InUse { agent } = &ws.state {
        if state.agents.get(agent).is_none_or(|a| a.state.is_dead()) {
            d.effect(inspect(state, ws));
        }
    }
}

fn creating<'a>(state: &'a State, id: &WorkspaceId) -> Option<&'a Workspace> {
    state.workspaces.get(id).filter(|ws| ws.state == WorkspaceState::Creating)
}
