//! How pool events fold into the state: each pool, its slots and the workspaces waiting in
//! its line.

use crate::{Event, SlotState, State, Timestamp, WorkspaceId};

pub(super) fn apply(state: &mut State, event: &Event) {
    match event {
        Event::PoolCreated { pool } => {
            state.pools.insert(pool.project.clone(), (**pool).clone());
        }
        Event::PoolResized { project, size } => {
            if let Some(p) = state.pools.get_mut(project) {
                p.size = *size;
            }
        }
        Event::PoolRemoved { project } => {
            state.pools.remove(project);
        }
        Event::SlotCreating { project, slot } => {
            if let (Some(p), Some((_, n))) = (state.pools.get_mut(project), slot.id.parts()) {
                p.slots.insert(n, slot.clone());
            }
        }
        Event::SlotCreated { project, n, commit, at } | Event::SlotReset { project, n, commit, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.commit = Some(commit.clone());
                slot.error = None;
                set_slot(slot, SlotState::Available, *at);
            }
        }
        Event::SlotCreateFailed { project, n, .. } | Event::SlotRemoved { project, n } => {
            if let Some(p) = state.pools.get_mut(project) {
                p.slots.remove(n);
            }
        }
        Event::TaskWaiting { project, workspace } => {
            if let Some(p) = state.pools.get_mut(project) {
                p.waiting.push_back(workspace.clone());
            }
        }
        Event::SlotBound { project, n, workspace, at } => bound(state, project, *n, workspace, *at),
        Event::SlotResetting { project, n, pristine, force, delete_branch, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                let new =
                    SlotState::Resetting { pristine: *pristine, force: *force, delete_branch: delete_branch.clone() };
                set_slot(slot, new, *at);
            }
        }
        Event::SlotDirty { project, n, error, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.error = error.clone();
                set_slot(slot, SlotState::Dirty, *at);
            }
        }
        Event::SlotMissing { project, n, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                set_slot(slot, SlotState::Missing, *at);
            }
        }
        Event::SlotRemoving { project, n, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.error = None;
                set_slot(slot, SlotState::Removing { force: true }, *at);
            }
        }
        Event::SlotRemoveFailed { project, n, error, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.error = Some(error.clone());
                set_slot(slot, SlotState::Dirty, *at);
            }
        }
        _ => {}
    }
}

/// Slot `n` of `project` is bound to `workspace`: the workspace and its agents move into it.
fn bound(state: &mut State, project: &str, n: u32, workspace: &WorkspaceId, at: Timestamp) {
    leave_line(state, workspace);
    let Some(slot) = slot_mut(state, project, n) else { return };
    set_slot(slot, SlotState::Bound { workspace: workspace.clone() }, at);
    let slot = slot.clone();
    if let Some(ws) = state.workspaces.get_mut(workspace) {
        crate::pool::bind(ws, &slot);
    }
    for agent in state.agents.values_mut().filter(|a| &a.workspace == workspace) {
        agent.cwd = slot.path.clone();
        agent.env.insert("BOSUN_WORKSPACE".into(), slot.path.display().to_string());
    }
}

/// The workspace leaves the line of whichever pool it waits for.
pub(super) fn leave_line(state: &mut State, ws: &WorkspaceId) {
    for p in state.pools.values_mut() {
        p.waiting.retain(|w| w != ws);
    }
}

fn slot_mut<'a>(state: &'a mut State, project: &str, n: u32) -> Option<&'a mut crate::Slot> {
    state.pools.get_mut(project)?.slots.get_mut(&n)
}

fn set_slot(slot: &mut crate::Slot, new: SlotState, at: Timestamp) {
    slot.state = new;
    slot.state_since = at;
}
