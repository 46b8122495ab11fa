//! How workspace events fold into the state: each workspace's record and its pull request.

use crate::{Event, State, WorkspaceId, WorkspaceState};

pub(super) fn apply(state: &mut State, event: &Event) {
    match event {
        Event::PullRequestOpened { workspace, pr } => {
            state.pull_requests.insert(workspace.clone(), pr.clone());
        }
        Event::WorkspaceCreating { workspace } => {
            state.workspaces.insert(workspace.id.clone(), workspace.clone());
        }
        Event::WorkspaceReady { id, .. } => set_ws(state, id, WorkspaceState::Ready),
        Event::WorkspaceRemoved { id, .. } => {
            state.workspaces.remove(id);
            super::pools::leave_line(state, id);
        }
        Event::WorkspaceCreateFailed { id, error } | Event::WorkspaceStale { id, why: error } => {
            super::pools::leave_line(state, id);
            if let Some(ws) = state.workspaces.get_mut(id) {
                ws.state = WorkspaceState::Stale;
                ws.error = Some(error.clone());
            }
        }
        Event::WorkspaceInUse { id, agent } => set_ws(state, id, WorkspaceState::InUse { agent: agent.clone() }),
        Event::WorkspaceReleased { id, dirty } => set_ws(state, id, released(*dirty)),
        Event::WorkspaceRemoving { id, force, keep_branch } => {
            set_ws(state, id, WorkspaceState::Removing { force: *force, keep_branch: keep_branch.clone() })
        }
        Event::WorkspaceRemoveFailed { id, error, dirty } => {
            if let Some(ws) = state.workspaces.get_mut(id) {
                ws.state = released(*dirty);
                ws.error = Some(error.clone());
            }
        }
        _ => {}
    }
}

fn released(dirty: bool) -> WorkspaceState {
    if dirty {
        WorkspaceState::Dirty
    } else {
        WorkspaceState::Ready
    }
}

fn set_ws(state: &mut State, id: &WorkspaceId, new: WorkspaceState) {
    if let Some(ws) = state.workspaces.get_mut(id) {
        ws.state = new;
    }
}
